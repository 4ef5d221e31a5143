/**
 * @module
 * Paused runs in Redis, shared by every serve process on that Redis: per run, one list of journal
 * entries (`<prefix>run:<runId>`, RPUSH, `PEXPIREAT` at the run's expiry) and a lease key while a
 * process runs a turn of it (`SET NX PX`); one sorted set indexes the runs by expiry
 * (`<prefix>runs`). Opening a new run removes expired index entries and, past the count bound,
 * the runs that expire first, in one Lua script (atomic). Keys share one hash tag, so the script
 * also runs on a Redis Cluster. `ioredis` is loaded when the store opens.
 */
import { randomUUID } from 'node:crypto';
import type * as IoRedis from 'ioredis';
import type { Redis } from 'ioredis';
import { DEFAULT_VENDOR_MAX_PAUSED_RUNS, DEFAULT_VENDOR_PAUSED_LEASE_MS } from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import { importOptional } from '../util/optional-package.js';
import { redisExecError } from './checks.js';
import type { OpenedRunJournal, OpenPausedRunOptions, PausedRunStore } from './paused-run-store.js';
import type { RunJournal, RunJournalEntry } from './run-journal.js';

/** Prefix of the keys of {@link RedisPausedRunStore} (`{…}` is the Cluster hash tag). */
export const REDIS_PAUSED_RUNS_PREFIX = 'codecall:{vendor-paused}:';

/** Options of {@link RedisPausedRunStore.open}. */
export interface RedisPausedRunStoreOptions {
  /** A Redis URL (the store opens and closes its connection), or an open client (borrowed). */
  redis: string | Redis;
  /** @defaultValue {@link REDIS_PAUSED_RUNS_PREFIX} */
  prefix?: string;
  /** Runs kept (the ones that expire first are removed past it). @defaultValue {@link DEFAULT_VENDOR_MAX_PAUSED_RUNS} */
  maxRuns?: number;
  /** @defaultValue {@link DEFAULT_VENDOR_PAUSED_LEASE_MS} */
  leaseMs?: number;
}

/**
 * KEYS: index, run list. ARGV: runId, expiresAt, now, create (1/0), max, list prefix.
 * Returns 0 when the run is gone (not created), 1 otherwise.
 */
const OPEN_SCRIPT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
local current = redis.call('ZSCORE', KEYS[1], ARGV[1])
if ARGV[4] ~= '1' and (not current or redis.call('EXISTS', KEYS[2]) == 0) then return 0 end
local expires = tonumber(ARGV[2])
if current and tonumber(current) > expires then expires = tonumber(current) end
redis.call('ZADD', KEYS[1], expires, ARGV[1])
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('PEXPIREAT', KEYS[2], expires) end
if ARGV[4] == '1' then
  local excess = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[5])
  if excess > 0 then
    local oldest = redis.call('ZRANGE', KEYS[1], 0, -1)
    for i = 1, #oldest do
      if excess <= 0 then break end
      if oldest[i] ~= ARGV[1] then
        redis.call('ZREM', KEYS[1], oldest[i])
        redis.call('DEL', ARGV[6] .. oldest[i])
        excess = excess - 1
      end
    end
  end
end
return 1
`;

/** Deletes the lease KEYS[1] when it is still ARGV[1]. */
const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

class RedisPausedJournal implements RunJournal {
  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly expiresAt: () => number,
  ) {}

  async append(entry: RunJournalEntry): Promise<void> {
    const error = redisExecError(
      await this.redis
        .multi()
        .rpush(this.key, JSON.stringify(entry))
        .pexpireat(this.key, this.expiresAt())
        .exec(),
    );
    if (error)
      throw new Error(`Redis refused to append to a paused run's journal: ${error.message}`, {
        cause: error,
      });
  }

  async entries(): Promise<readonly RunJournalEntry[]> {
    const lines = await this.redis.lrange(this.key, 0, -1);
    return lines.map((line) => JSON.parse(line) as RunJournalEntry);
  }
}

/** Paused runs in Redis. */
export class RedisPausedRunStore implements PausedRunStore {
  readonly #redis: Redis;
  readonly #owned: boolean;
  readonly #prefix: string;
  readonly #max: number;
  readonly #leaseMs: number;
  #closing: Promise<void> | undefined;

  private constructor(redis: Redis, owned: boolean, options: RedisPausedRunStoreOptions) {
    this.#redis = redis;
    this.#owned = owned;
    this.#prefix = options.prefix ?? REDIS_PAUSED_RUNS_PREFIX;
    this.#max = options.maxRuns ?? DEFAULT_VENDOR_MAX_PAUSED_RUNS;
    this.#leaseMs = options.leaseMs ?? DEFAULT_VENDOR_PAUSED_LEASE_MS;
  }

  /** Opens the store on a URL (loads `ioredis`) or over a client the caller keeps open. */
  static async open(options: RedisPausedRunStoreOptions): Promise<RedisPausedRunStore> {
    if (typeof options.redis !== 'string') return new RedisPausedRunStore(options.redis, false, options);
    const { Redis: Client } = await importOptional<typeof IoRedis>(
      'ioredis',
      'Paused vendor scripts in Redis (jobs.backend "bullmq")',
    );
    const redis = new Client(options.redis, { maxRetriesPerRequest: 3 });
    redis.on('error', () => {});
    return new RedisPausedRunStore(redis, true, options);
  }

  /** The key of a run's journal list (for tests and operators). */
  runKey(runId: string): string {
    return `${this.#prefix}run:${runId}`;
  }

  /** The key of the index of runs by expiry. */
  indexKey(): string {
    return `${this.#prefix}runs`;
  }

  #leaseKey(runId: string): string {
    return `${this.#prefix}lease:${runId}`;
  }

  async open(runId: string, options: OpenPausedRunOptions): Promise<OpenedRunJournal | undefined> {
    const lease = this.#leaseKey(runId);
    const token = randomUUID();
    if ((await this.#redis.set(lease, token, 'PX', this.#leaseMs, 'NX')) === null)
      throw new CodecallError(
        'JOURNAL_LOCKED',
        `The paused run ${runId} is in use by another serve process (a turn of it is running there); send the continuation again once that turn has answered.`,
        { details: { path: this.runKey(runId), lockPath: lease } },
      );
    const release = async (): Promise<void> => {
      await this.#redis.eval(RELEASE_SCRIPT, 1, lease, token);
    };
    let expiresAt = options.expiresAt;
    try {
      const there = await this.#redis.eval(
        OPEN_SCRIPT,
        2,
        this.indexKey(),
        this.runKey(runId),
        runId,
        String(options.expiresAt),
        String(Date.now()),
        options.create ? '1' : '0',
        String(this.#max),
        `${this.#prefix}run:`,
      );
      if (there !== 1) {
        await release();
        return undefined;
      }
      const score = await this.#redis.zscore(this.indexKey(), runId);
      if (score !== null) expiresAt = Math.max(expiresAt, Number(score));
    } catch (error) {
      await release().catch(() => {});
      throw error;
    }
    return { journal: new RedisPausedJournal(this.#redis, this.runKey(runId), () => expiresAt), release };
  }

  async drop(runId: string): Promise<void> {
    await this.#redis.multi().zrem(this.indexKey(), runId).del(this.runKey(runId)).exec();
  }

  close(): Promise<void> {
    this.#closing ??= this.#owned
      ? this.#redis.quit().then(
          () => {},
          () => this.#redis.disconnect(),
        )
      : Promise.resolve();
    return this.#closing;
  }
}
