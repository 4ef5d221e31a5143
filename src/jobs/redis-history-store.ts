/**
 * @module
 * Usage history for a fleet of workers, in the same Redis as the queue: every worker's runs feed
 * one tool graph. One run is one `MULTI … EXEC` transaction (the run counter and each of its
 * transitions), so a worker killed mid-write loses at most that run and never leaves half of
 * one. A worker loads the graph when it opens a configuration; runs of other workers reach its
 * search the next time it opens it. Query feedback (a search query and the tools the run then
 * called) is a capped list beside the counters: the newest {@link DEFAULT_MAX_SERIALIZED_USES}
 * uses per namespace, pushed and trimmed in one transaction. The local SQLite store stays the
 * default for one machine.
 */
import { Redis } from 'ioredis';
import { DEFAULT_JOBS_HISTORY_MAX_TRANSITIONS } from '../config/defaults.js';
import {
  checkSequence,
  checkUsage,
  DEFAULT_MAX_SERIALIZED_USES,
  transitionsOf,
  type ToolSearchState,
  type ToolUsage,
  type UsageHistoryStore,
} from '../search/index.js';
import { CodecallError } from '../errors.js';
import { checkSharedHistoryOptions } from './job-helpers.js';
import { JOBS_KEY_PREFIX } from './bullmq-shared.js';

/** Options of {@link RedisHistoryStore.open}. */
export interface RedisHistoryStoreOptions {
  /** Redis URL. */
  connection: string;
  /** Namespace of this history (e.g. the configuration name); one graph per namespace. */
  namespace: string;
  /** @defaultValue {@link DEFAULT_JOBS_HISTORY_MAX_TRANSITIONS} */
  maxTransitions?: number;
  /** Query-feedback uses kept and loaded (the newest). @defaultValue {@link DEFAULT_MAX_SERIALIZED_USES} */
  maxUsages?: number;
}

/** Separator of `from` and `to` in a hash field (cannot occur in a tool name JSON string). */
const FIELD_SEPARATOR = '\n';

/** A {@link UsageHistoryStore} in Redis: counters in one hash, updated atomically per run. */
export class RedisHistoryStore implements UsageHistoryStore {
  readonly #redis: Redis;
  readonly #runs: string;
  readonly #transitions: string;
  readonly #usages: string;
  readonly #max: number;
  readonly #maxUses: number;
  #closed = false;

  private constructor(redis: Redis, namespace: string, max: number, maxUses: number) {
    this.#redis = redis;
    this.#runs = `${JOBS_KEY_PREFIX}:codecall:history:${namespace}:sequences`;
    this.#transitions = `${JOBS_KEY_PREFIX}:codecall:history:${namespace}:transitions`;
    this.#usages = `${JOBS_KEY_PREFIX}:codecall:history:${namespace}:usages`;
    this.#max = max;
    this.#maxUses = maxUses;
  }

  /** Connects; throws `HISTORY_STORE_FAILED` when Redis cannot be reached. */
  static async open(options: RedisHistoryStoreOptions): Promise<RedisHistoryStore> {
    const max = options.maxTransitions ?? DEFAULT_JOBS_HISTORY_MAX_TRANSITIONS;
    const maxUses = options.maxUsages ?? DEFAULT_MAX_SERIALIZED_USES;
    checkSharedHistoryOptions(options.namespace, { maxTransitions: max, maxUsages: maxUses });
    const redis = new Redis(options.connection, { maxRetriesPerRequest: 2, lazyConnect: true });
    redis.on('error', () => {});
    try {
      await redis.connect();
    } catch (error) {
      redis.disconnect();
      throw new CodecallError(
        'HISTORY_STORE_FAILED',
        `Cannot reach the usage-history Redis: ${(error as Error).message}.`,
        { cause: error },
      );
    }
    return new RedisHistoryStore(redis, options.namespace, max, maxUses);
  }

  async load(): Promise<ToolSearchState> {
    this.#assertOpen();
    const sequences = Number((await this.#redis.get(this.#runs)) ?? 0);
    const transitions: ToolSearchState['transitions'] = [];
    let cursor = '0';
    do {
      const [next, flat] = await this.#redis.hscan(this.#transitions, cursor, 'COUNT', 1_000);
      cursor = next;
      for (let i = 0; i + 1 < flat.length && transitions.length < this.#max; i += 2) {
        const [from, to] = flat[i]!.split(FIELD_SEPARATOR);
        const count = Number(flat[i + 1]);
        if (from && to && Number.isSafeInteger(count) && count > 0) transitions.push([from, to, count]);
      }
    } while (cursor !== '0' && transitions.length < this.#max);
    const state: ToolSearchState = {
      version: 1,
      sequences: Number.isSafeInteger(sequences) ? sequences : 0,
      transitions,
    };
    // Newest first in the list; the state lists them oldest first, as the other stores do.
    const usages: Array<[string, string[]]> = [];
    for (const raw of (await this.#redis.lrange(this.#usages, 0, this.#maxUses - 1)).reverse()) {
      try {
        const [query, tools] = JSON.parse(raw) as unknown[];
        if (typeof query === 'string' && Array.isArray(tools) && tools.every((t) => typeof t === 'string'))
          usages.push([query, tools as string[]]);
      } catch {
        // an entry not written by this store: skip it
      }
    }
    if (usages.length > 0) state.usages = usages;
    return state;
  }

  async appendUsage(usage: ToolUsage): Promise<void> {
    this.#assertOpen();
    const { query, tools } = checkUsage(usage);
    const results = await this.#redis
      .multi()
      .lpush(this.#usages, JSON.stringify([query, tools]))
      .ltrim(this.#usages, 0, this.#maxUses - 1)
      .exec();
    const failed = results?.find(([error]) => error !== null)?.[0];
    if (results === null || failed)
      throw new CodecallError(
        'HISTORY_STORE_FAILED',
        `Recording query feedback in Redis failed: ${failed?.message ?? 'transaction aborted'}.`,
      );
  }

  async append(sequence: readonly string[]): Promise<void> {
    this.#assertOpen();
    const pairs = transitionsOf(checkSequence(sequence));
    const multi = this.#redis.multi().incr(this.#runs);
    for (const [from, to] of pairs) {
      if (from.includes(FIELD_SEPARATOR) || to.includes(FIELD_SEPARATOR)) continue;
      multi.hincrby(this.#transitions, `${from}${FIELD_SEPARATOR}${to}`, 1);
    }
    const results = await multi.exec();
    const failed = results?.find(([error]) => error !== null)?.[0];
    if (results === null || failed)
      throw new CodecallError(
        'HISTORY_STORE_FAILED',
        `Recording usage history in Redis failed: ${failed?.message ?? 'transaction aborted'}.`,
      );
  }

  #assertOpen(): void {
    if (this.#closed) throw new CodecallError('CLOSED', 'The usage history store is closed. Open a new one.');
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }
}
