/**
 * @module
 * The run journal of an `exec` job in the queue's Redis: one list per job
 * (`bull:<queue>:codecall:journal:<id>:<created at>`), one JSON entry per element, with a TTL equal to the
 * jobs' retention age, so a retried attempt on any worker replays the calls an earlier attempt
 * made (see `ExecuteOptions.replay`). An entry is durable once Redis has acknowledged it (as
 * durable as that Redis is configured to be: `appendfsync` decides what survives a Redis crash).
 */
import type { Redis } from 'ioredis';
import { DEFAULT_JOBS_KEEP_AGE_MS } from '../config/defaults.js';
import type { RunJournal, RunJournalEntry } from '../execute/index.js';
import { JOBS_KEY_PREFIX } from './bullmq-shared.js';

/**
 * The Redis key of a job's run journal. `createdAt` (the job's timestamp) keeps a job submitted
 * again under the same id (same idempotency key, after the first was removed) from replaying the
 * journal of the first.
 */
export function journalKey(queue: string, id: string, createdAt: number): string {
  return `${JOBS_KEY_PREFIX}:${queue}:codecall:journal:${id}:${createdAt}`;
}

/** A job's run journal in Redis (a list, appended with RPUSH and kept for `ttlMs`). */
export class RedisRunJournal implements RunJournal {
  readonly #redis: Redis;
  readonly #key: string;
  readonly #ttlMs: number;

  constructor(redis: Redis, key: string, ttlMs: number = DEFAULT_JOBS_KEEP_AGE_MS) {
    this.#redis = redis;
    this.#key = key;
    this.#ttlMs = ttlMs;
  }

  async append(entry: RunJournalEntry): Promise<void> {
    await this.#redis.multi().rpush(this.#key, JSON.stringify(entry)).pexpire(this.#key, this.#ttlMs).exec();
  }

  async entries(): Promise<readonly RunJournalEntry[]> {
    const lines = await this.#redis.lrange(this.#key, 0, -1);
    return lines.map((line) => JSON.parse(line) as RunJournalEntry);
  }
}
