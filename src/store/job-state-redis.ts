/**
 * @module
 * Job state in Redis (the BullMQ backend's): per job, one list for the run journal
 * (`<prefix>journal:<key>`, one JSON entry per element, appended with RPUSH) and one hash for its
 * approvals (`<prefix>approvals:<key>`: field `pending`, and `d:<call index>` per decision), each
 * with the jobs' retention age as TTL. A write is durable once Redis has acknowledged it (as
 * durable as that Redis is configured to be: `appendfsync` decides what survives a Redis crash).
 * A decision is recorded atomically (a Lua script): two approvers racing on one request, one wins.
 * `ioredis` is loaded when a store is opened on a URL, never before.
 */
import type * as IoRedis from 'ioredis';
import type { ChainableCommander, Redis } from 'ioredis';
import { redisExecError } from './checks.js';
import { DEFAULT_JOBS_KEEP_AGE_MS } from '../config/defaults.js';
import type { RunJournal, RunJournalEntry } from './run-journal.js';
import { importOptional } from '../util/optional-package.js';
import {
  answerLogKey,
  toDecision,
  type JobApprovalDecision,
  type JobDecisionInput,
  type JobApprovalStore,
  type JobStateStore,
  type PendingApproval,
} from './job-state.js';

/** Options of {@link RedisJobStateStore.open}. */
export interface RedisJobStateStoreOptions {
  /** A Redis URL (the store opens and closes its own connection), or an open client (borrowed). */
  redis: string | Redis;
  /** Prefix of every key, e.g. `bull:<queue>:codecall:`. */
  prefix: string;
  /** Time a job's state is kept after its last write. @defaultValue {@link DEFAULT_JOBS_KEEP_AGE_MS} */
  ttlMs?: number;
}

/** Sets field ARGV[3] to ARGV[2] when `pending` is still ARGV[1]; clears `pending`. */
const DECIDE_SCRIPT = `
local pending = redis.call('HGET', KEYS[1], 'pending')
if not pending or pending ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], ARGV[3], ARGV[2])
redis.call('HDEL', KEYS[1], 'pending')
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
`;

/** Runs a `MULTI … EXEC`; rejects unless every command succeeded (so a write resolves only once Redis took it). */
async function execOrThrow(multi: ChainableCommander, action: string): Promise<void> {
  const error = redisExecError(await multi.exec());
  if (error) throw new Error(`Redis refused to ${action} of a job: ${error.message}`, { cause: error });
}

class RedisJobJournal implements RunJournal {
  /** When this journal last set its key's TTL (0: never). */
  #expirySetAt = 0;

  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly ttlMs: number,
  ) {}

  async append(entry: RunJournalEntry): Promise<void> {
    const text = JSON.stringify(entry);
    const now = Date.now();
    // One RPUSH per entry; the key's TTL is set with the first entry and renewed once a quarter
    // of it has passed (a MULTI with PEXPIRE on every entry doubled the commands of a tool call).
    if (now - this.#expirySetAt < this.ttlMs / 4) {
      await this.redis.rpush(this.key, text);
      return;
    }
    await execOrThrow(
      this.redis.multi().rpush(this.key, text).pexpire(this.key, this.ttlMs),
      'append to the run journal',
    );
    this.#expirySetAt = now;
  }

  async entries(): Promise<readonly RunJournalEntry[]> {
    const lines = await this.redis.lrange(this.key, 0, -1);
    return lines.map((line) => JSON.parse(line) as RunJournalEntry);
  }
}

class RedisJobApprovalStore implements JobApprovalStore {
  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly ttlMs: number,
  ) {}

  async pending(): Promise<PendingApproval | undefined> {
    const text = await this.redis.hget(this.key, 'pending');
    return text === null ? undefined : (JSON.parse(text) as PendingApproval);
  }

  async setPending(request: PendingApproval): Promise<void> {
    await execOrThrow(
      this.redis.multi().hset(this.key, 'pending', JSON.stringify(request)).pexpire(this.key, this.ttlMs),
      'record the pending approval',
    );
  }

  async decision(callIndex: number): Promise<JobApprovalDecision | undefined> {
    const text = await this.redis.hget(this.key, `d:${callIndex}`);
    return text === null ? undefined : (JSON.parse(text) as JobApprovalDecision);
  }

  async decide(decision: JobDecisionInput): Promise<JobApprovalDecision | false> {
    const text = await this.redis.hget(this.key, 'pending');
    if (text === null) return false;
    const recorded = toDecision(JSON.parse(text) as PendingApproval, decision);
    const done = await this.redis.eval(
      DECIDE_SCRIPT,
      1,
      this.key,
      text,
      JSON.stringify(recorded),
      `d:${recorded.callIndex}`,
      String(this.ttlMs),
    );
    return done === 1 ? recorded : false;
  }
}

/** Job state in Redis. */
export class RedisJobStateStore implements JobStateStore {
  readonly #redis: Redis;
  readonly #owned: boolean;
  readonly #prefix: string;
  readonly #ttlMs: number;
  #closing: Promise<void> | undefined;

  private constructor(redis: Redis, owned: boolean, options: RedisJobStateStoreOptions) {
    this.#redis = redis;
    this.#owned = owned;
    this.#prefix = options.prefix;
    this.#ttlMs = options.ttlMs ?? DEFAULT_JOBS_KEEP_AGE_MS;
  }

  /** Opens the store on a URL (loads `ioredis`) or over a client the caller keeps open. */
  static async open(options: RedisJobStateStoreOptions): Promise<RedisJobStateStore> {
    if (typeof options.redis !== 'string') return new RedisJobStateStore(options.redis, false, options);
    const { Redis: Client } = await importOptional<typeof IoRedis>(
      'ioredis',
      'Job state in Redis (the BullMQ jobs backend)',
    );
    const redis = new Client(options.redis, { maxRetriesPerRequest: null });
    redis.on('error', () => {});
    return new RedisJobStateStore(redis, true, options);
  }

  /** The key of a job's journal list (for tests and operators). */
  journalKey(key: string): string {
    return `${this.#prefix}journal:${key}`;
  }

  /** The key of a job's approvals hash. */
  approvalsKey(key: string): string {
    return `${this.#prefix}approvals:${key}`;
  }

  journal(key: string): RunJournal {
    return new RedisJobJournal(this.#redis, this.journalKey(key), this.#ttlMs);
  }

  approvals(key: string): JobApprovalStore {
    return new RedisJobApprovalStore(this.#redis, this.approvalsKey(key), this.#ttlMs);
  }

  async forget(key: string): Promise<void> {
    await this.#redis.del(this.journalKey(key), this.approvalsKey(key), this.journalKey(answerLogKey(key)));
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
