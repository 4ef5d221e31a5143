/**
 * @module
 * The approvals of a BullMQ job in the queue's Redis: one hash per job
 * (`bull:<queue>:codecall:approvals:<id>:<created at>`), field `pending` (the request the job
 * waits on) and one field `d:<call index>` per decision, with the jobs' retention age as TTL.
 * A decision is recorded atomically (a Lua script): two approvers racing on one request, one wins.
 */
import type { Redis } from 'ioredis';
import { DEFAULT_JOBS_KEEP_AGE_MS } from '../config/defaults.js';
import { JOBS_KEY_PREFIX } from './bullmq-shared.js';
import {
  toDecision,
  type JobApprovalDecision,
  type JobApprovalStore,
  type PendingApproval,
} from './job-approvals.js';

/** The Redis key of a job's approvals (`createdAt`: see `journalKey`). */
export function approvalsKey(queue: string, id: string, createdAt: number): string {
  return `${JOBS_KEY_PREFIX}:${queue}:codecall:approvals:${id}:${createdAt}`;
}

/** Sets field d:<index> to ARGV[2] when `pending` is still ARGV[1]; clears `pending`. */
const DECIDE_SCRIPT = `
local pending = redis.call('HGET', KEYS[1], 'pending')
if not pending or pending ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], ARGV[3], ARGV[2])
redis.call('HDEL', KEYS[1], 'pending')
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
`;

/** A job's approvals in Redis. */
export class RedisJobApprovalStore implements JobApprovalStore {
  readonly #redis: Redis;
  readonly #key: string;
  readonly #ttlMs: number;

  constructor(redis: Redis, key: string, ttlMs: number = DEFAULT_JOBS_KEEP_AGE_MS) {
    this.#redis = redis;
    this.#key = key;
    this.#ttlMs = ttlMs;
  }

  async pending(): Promise<PendingApproval | undefined> {
    const text = await this.#redis.hget(this.#key, 'pending');
    return text === null ? undefined : (JSON.parse(text) as PendingApproval);
  }

  async setPending(request: PendingApproval): Promise<void> {
    await this.#redis
      .multi()
      .hset(this.#key, 'pending', JSON.stringify(request))
      .pexpire(this.#key, this.#ttlMs)
      .exec();
  }

  async decision(callIndex: number): Promise<JobApprovalDecision | undefined> {
    const text = await this.#redis.hget(this.#key, `d:${callIndex}`);
    return text === null ? undefined : (JSON.parse(text) as JobApprovalDecision);
  }

  async decide(decision: { approved: boolean; reason?: string }): Promise<JobApprovalDecision | false> {
    const text = await this.#redis.hget(this.#key, 'pending');
    if (text === null) return false;
    const pending = JSON.parse(text) as PendingApproval;
    const recorded = toDecision(pending, decision);
    const done = await this.#redis.eval(
      DECIDE_SCRIPT,
      1,
      this.#key,
      text,
      JSON.stringify(recorded),
      `d:${pending.callIndex}`,
      String(this.#ttlMs),
    );
    return done === 1 ? recorded : false;
  }
}
