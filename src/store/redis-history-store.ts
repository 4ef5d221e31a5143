/**
 * @module
 * Usage history for a fleet of workers, in the same Redis as the queue: every worker's runs feed
 * one tool graph, every worker's searches one query feedback, and the approval audit and script
 * values are shared the same way. One write is one `MULTI … EXEC` transaction (or one Lua
 * script), so a worker killed mid-write loses at most that write and never leaves half of one. A
 * worker loads the graph and the feedback when it opens a configuration; what other workers
 * learned reaches its search the next time it opens it. Query feedback and the audit are capped
 * lists (newest first) trimmed in the same transaction as the push. `ioredis` is imported when
 * a store is opened, never before.
 */
import type * as IoRedis from 'ioredis';
import type { Redis } from 'ioredis';
import {
  DEFAULT_APPROVALS_MAX_KEPT,
  DEFAULT_JOBS_HISTORY_MAX_TRANSITIONS,
  DEFAULT_RESULT_SHAPE_MAX_TOOLS,
  DEFAULT_STORE_MAX_USAGES,
} from '../config/defaults.js';
import { CodecallError, isCodecallError } from '../errors.js';
import { transitionsOf } from '../util/call-transitions.js';
import { importOptional } from '../util/optional-package.js';
import {
  approvalFields,
  checkApprovalEntry,
  checkApprovalsLimit,
  checkSequence,
  checkSharedHistoryOptions,
  checkUsage,
  checkUsagesLimit,
  closedError,
  namespaceLimitError,
  parseUsage,
  redisExecError,
} from './checks.js';
import type { UsageHistoryStore } from './contracts.js';
import { checkShapeArgs, mergeWithRetry, parseShapeRow, type ShapeWrite } from './shape-merge.js';
import type { ResultShape } from '../util/result-shape.js';
import type {
  ApprovalAuditEntry,
  GraphCounts,
  LearnedShape,
  ListApprovalsOptions,
  ListUsagesOptions,
  QueryUsage,
  StoreValueLimits,
} from './types.js';

/** Redis key prefix of the history keys: BullMQ's default, so a fleet's queue and history sit together. */
export const REDIS_STORE_KEY_PREFIX = 'bull';

/** Options of {@link RedisHistoryStore.open}. */
export interface RedisHistoryStoreOptions {
  /** Redis URL. */
  connection: string;
  /** Namespace of this history (e.g. the configuration name); one graph per namespace. */
  namespace: string;
  /** @defaultValue {@link DEFAULT_JOBS_HISTORY_MAX_TRANSITIONS} */
  maxTransitions?: number;
  /** Query-feedback uses kept and loaded (the newest). @defaultValue {@link DEFAULT_STORE_MAX_USAGES} */
  maxUsages?: number;
}

/** Separator of `from` and `to` in a hash field (cannot occur in a tool name JSON string). */
const FIELD_SEPARATOR = '\n';

/**
 * One `store.set`, atomic against every other client: KEYS = the namespace's hash of values and
 * its byte counter; ARGV = key, JSON (empty with `delete`), limit, `set` or `delete`. Answers
 * `{0}` when written, `{1, used, adding}` when the limit refused it. Lengths are bytes in Lua.
 */
const SET_VALUE_SCRIPT = `
local key, json, limit, op = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
local old = redis.call('HGET', KEYS[1], key)
local oldBytes = 0
if old then oldBytes = string.len(key) + string.len(old) end
if op == 'delete' then
  if old then
    redis.call('HDEL', KEYS[1], key)
    redis.call('DECRBY', KEYS[2], oldBytes)
  end
  return {0}
end
local used = tonumber(redis.call('GET', KEYS[2]) or '0')
local adding = string.len(key) + string.len(json) - oldBytes
if adding > 0 and used + adding > limit then return {1, used, adding} end
redis.call('HSET', KEYS[1], key, json)
redis.call('INCRBY', KEYS[2], adding)
return {0}
`;

function failed(action: string, error: unknown): CodecallError {
  return new CodecallError(
    'HISTORY_STORE_FAILED',
    `${action} in Redis failed: ${(error as Error)?.message ?? String(error)}.`,
    { details: { backend: 'redis' }, cause: error },
  );
}

/**
 * The compare-and-set of one tool's learned shape, atomic in Redis: a hash field per tool holding
 * `<version>:<shape JSON>`. Writes only when the kept version is `ARGV[2]` (`0`: none kept), and a
 * new tool only while the hash has fewer than `ARGV[4]` tools.
 */
const PUT_SHAPE_SCRIPT = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
local version = 0
if current then version = tonumber(string.match(current, '^(%d+):')) or 0 end
if version ~= tonumber(ARGV[2]) then return 'conflict' end
if version == 0 and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[4]) then return 'full' end
redis.call('HSET', KEYS[1], ARGV[1], tostring(version + 1) .. ':' .. ARGV[3])
return 'written'
`;

/** A kept shape field, `<version>:<JSON>`, split. */
function splitShapeField(raw: string): { version: number; json: string } | undefined {
  const colon = raw.indexOf(':');
  const version = Number(raw.slice(0, colon));
  return colon < 1 || !Number.isSafeInteger(version) ? undefined : { version, json: raw.slice(colon + 1) };
}

/** Throws when a `MULTI … EXEC` was aborted or one of its commands failed. */
function checkExec(action: string, results: Array<[Error | null, unknown]> | null): void {
  const error = redisExecError(results);
  if (error) throw failed(action, error);
}

/** A {@link UsageHistoryStore} in Redis: counters in one hash, capped lists, a hash of values per namespace. */
export class RedisHistoryStore implements UsageHistoryStore {
  readonly #redis: Redis;
  readonly #base: string;
  readonly #max: number;
  readonly #maxUses: number;
  #closed = false;

  private constructor(redis: Redis, namespace: string, max: number, maxUses: number) {
    this.#redis = redis;
    this.#base = `${REDIS_STORE_KEY_PREFIX}:codecall:history:${namespace}`;
    this.#max = max;
    this.#maxUses = maxUses;
  }

  /**
   * Connects; throws `HISTORY_STORE_FAILED` when Redis cannot be reached, `PACKAGE_MISSING` when
   * `ioredis` is not installed.
   */
  static async open(options: RedisHistoryStoreOptions): Promise<RedisHistoryStore> {
    const max = options.maxTransitions ?? DEFAULT_JOBS_HISTORY_MAX_TRANSITIONS;
    const maxUses = options.maxUsages ?? DEFAULT_STORE_MAX_USAGES;
    checkSharedHistoryOptions(options.namespace, { maxTransitions: max, maxUsages: maxUses });
    const { Redis } = await importOptional<typeof IoRedis>('ioredis', 'The Redis store');
    const redis = new Redis(options.connection, { maxRetriesPerRequest: 2, lazyConnect: true });
    redis.on('error', () => {});
    try {
      await redis.connect();
    } catch (error) {
      redis.disconnect();
      throw new CodecallError(
        'HISTORY_STORE_FAILED',
        `Cannot reach the usage-history Redis: ${(error as Error).message}.`,
        { details: { backend: 'redis' }, cause: error },
      );
    }
    return new RedisHistoryStore(redis, options.namespace, max, maxUses);
  }

  #key(part: string): string {
    return `${this.#base}:${part}`;
  }

  #assertOpen(): void {
    if (this.#closed) throw closedError();
  }

  async loadCounts(): Promise<GraphCounts> {
    this.#assertOpen();
    const sequences = Number((await this.#redis.get(this.#key('sequences'))) ?? 0);
    const transitions: GraphCounts['transitions'] = [];
    let cursor = '0';
    do {
      const [next, flat] = await this.#redis.hscan(this.#key('transitions'), cursor, 'COUNT', 1_000);
      cursor = next;
      for (let i = 0; i + 1 < flat.length && transitions.length < this.#max; i += 2) {
        const [from, to] = flat[i]!.split(FIELD_SEPARATOR);
        const count = Number(flat[i + 1]);
        if (from && to && Number.isSafeInteger(count) && count > 0) transitions.push([from, to, count]);
      }
    } while (cursor !== '0' && transitions.length < this.#max);
    return { sequences: Number.isSafeInteger(sequences) ? sequences : 0, transitions };
  }

  async appendSequence(sequence: readonly string[]): Promise<void> {
    this.#assertOpen();
    const pairs = transitionsOf(checkSequence(sequence));
    const multi = this.#redis.multi().incr(this.#key('sequences'));
    for (const [from, to] of pairs) {
      if (from.includes(FIELD_SEPARATOR) || to.includes(FIELD_SEPARATOR)) continue;
      multi.hincrby(this.#key('transitions'), `${from}${FIELD_SEPARATOR}${to}`, 1);
    }
    checkExec('Recording usage history', await multi.exec());
  }

  async appendUsage(usage: QueryUsage): Promise<void> {
    this.#assertOpen();
    const { query, tools } = checkUsage(usage);
    const key = this.#key('usages');
    checkExec(
      'Recording query feedback',
      await this.#redis
        .multi()
        .lpush(key, JSON.stringify([query, tools]))
        .ltrim(key, 0, this.#maxUses - 1)
        .exec(),
    );
  }

  async listUsages(options: ListUsagesOptions = {}): Promise<QueryUsage[]> {
    this.#assertOpen();
    const limit = checkUsagesLimit(options.limit);
    const out: QueryUsage[] = [];
    for (const raw of await this.#redis.lrange(this.#key('usages'), 0, limit - 1)) {
      try {
        const [query, tools] = JSON.parse(raw) as unknown[];
        const usage = typeof query === 'string' ? parseUsage(query, tools) : undefined;
        if (usage) out.push(usage);
      } catch {
        // an entry not written by this store: skip it
      }
    }
    return out;
  }

  async appendApproval(entry: ApprovalAuditEntry): Promise<void> {
    this.#assertOpen();
    const checked = approvalFields(checkApprovalEntry(entry));
    const key = this.#key('approvals');
    checkExec(
      'Recording an approval',
      await this.#redis
        .multi()
        .lpush(key, JSON.stringify(checked))
        .ltrim(key, 0, DEFAULT_APPROVALS_MAX_KEPT - 1)
        .exec(),
    );
  }

  async listApprovals(options: ListApprovalsOptions = {}): Promise<ApprovalAuditEntry[]> {
    this.#assertOpen();
    const limit = checkApprovalsLimit(options.limit);
    const out: ApprovalAuditEntry[] = [];
    for (const raw of await this.#redis.lrange(this.#key('approvals'), 0, limit - 1)) {
      try {
        out.push(approvalFields(checkApprovalEntry(JSON.parse(raw))));
      } catch {
        // an entry not written by this store: skip it
      }
    }
    return out;
  }

  async getValue(namespace: string, key: string): Promise<string | undefined> {
    this.#assertOpen();
    try {
      return (await this.#redis.hget(this.#valuesKey(namespace), key)) ?? undefined;
    } catch (error) {
      throw failed('Reading a stored value', error);
    }
  }

  async setValue(
    namespace: string,
    key: string,
    json: string | undefined,
    limits: StoreValueLimits,
  ): Promise<void> {
    this.#assertOpen();
    let answer: unknown;
    try {
      answer = await this.#redis.eval(
        SET_VALUE_SCRIPT,
        2,
        this.#valuesKey(namespace),
        `${this.#valuesKey(namespace)}:bytes`,
        key,
        json ?? '',
        String(limits.maxNamespaceBytes),
        json === undefined ? 'delete' : 'set',
      );
    } catch (error) {
      throw failed('Storing a value', error);
    }
    const [refused, used, adding] = answer as number[];
    if (refused === 1) throw namespaceLimitError(key, used ?? 0, adding ?? 0, limits.maxNamespaceBytes);
  }

  async loadShapes(): Promise<LearnedShape[]> {
    this.#assertOpen();
    const shapes: LearnedShape[] = [];
    try {
      let cursor = '0';
      do {
        const [next, flat] = await this.#redis.hscan(this.#key('shapes'), cursor, 'COUNT', 500);
        cursor = next;
        for (let i = 0; i + 1 < flat.length; i += 2) {
          const field = splitShapeField(flat[i + 1]!);
          const learned = field === undefined ? undefined : parseShapeRow(flat[i]!, field.json);
          if (learned) shapes.push(learned);
        }
      } while (cursor !== '0' && shapes.length < DEFAULT_RESULT_SHAPE_MAX_TOOLS);
    } catch (error) {
      throw failed('Reading learned shapes', error);
    }
    return shapes.slice(0, DEFAULT_RESULT_SHAPE_MAX_TOOLS);
  }

  async mergeShape(tool: string, shape: ResultShape): Promise<void> {
    this.#assertOpen();
    const clean = checkShapeArgs(tool, shape);
    const key = this.#key('shapes');
    try {
      await mergeWithRetry(
        'redis',
        tool,
        clean,
        async () => {
          const raw = await this.#redis.hget(key, tool);
          const field = raw === null ? undefined : splitShapeField(raw);
          return field === undefined ? { json: undefined, version: 0 } : field;
        },
        async (json, version) =>
          (await this.#redis.eval(
            PUT_SHAPE_SCRIPT,
            1,
            key,
            tool,
            String(version),
            json,
            String(DEFAULT_RESULT_SHAPE_MAX_TOOLS),
          )) as ShapeWrite,
      );
    } catch (error) {
      throw isCodecallError(error) ? error : failed('Recording a learned shape', error);
    }
  }

  /** The hash of one value namespace (JSON-quoted: any string is a namespace). */
  #valuesKey(namespace: string): string {
    return this.#key(`values:${JSON.stringify(namespace)}`);
  }

  /** Disconnects; idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
