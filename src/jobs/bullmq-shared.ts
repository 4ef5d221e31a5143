/**
 * @module
 * What the BullMQ job client and the BullMQ worker agree on: how a connection is written, the
 * job options every submitted job gets (attempts, exponential backoff, retention), the Redis
 * keys of cancel requests, and how a BullMQ job becomes a {@link JobRecord}. Loaded only by the
 * BullMQ backend (which itself is imported lazily): `bullmq` and `ioredis` live here and
 * nowhere else.
 */
import type { Job, JobsOptions } from 'bullmq';
import {
  DEFAULT_JOBS_ATTEMPTS,
  DEFAULT_JOBS_BACKOFF_MS,
  DEFAULT_JOBS_KEEP_AGE_MS,
  DEFAULT_JOBS_KEEP_COMPLETED,
  DEFAULT_JOBS_KEEP_FAILED,
  DEFAULT_JOBS_MAX_LOG_LINES,
  DEFAULT_JOBS_QUEUE,
} from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import type { JobSpec } from './job-spec.js';
import type { JobProgress, JobRecord, JobResult, JobState } from './job-types.js';

/** Redis key prefix of codecall's queues (BullMQ's own default). */
export const JOBS_KEY_PREFIX = 'bull';

/** Where the queue lives: a Redis URL (`redis://[:password@]host:port[/db]`). */
export interface JobConnectionOptions {
  /** Redis URL. Use `${VAR}` in configuration files for a password. */
  connection: string;
  /** Queue name. @defaultValue {@link DEFAULT_JOBS_QUEUE} */
  queue?: string;
}

/** Retention of finished jobs. */
export interface JobRetentionOptions {
  /** Completed jobs kept. @defaultValue {@link DEFAULT_JOBS_KEEP_COMPLETED} */
  keepCompleted?: number;
  /** Failed jobs kept. @defaultValue {@link DEFAULT_JOBS_KEEP_FAILED} */
  keepFailed?: number;
  /** Age after which finished jobs go. @defaultValue {@link DEFAULT_JOBS_KEEP_AGE_MS} */
  keepAgeMs?: number;
  /** First retry delay; doubles per attempt. @defaultValue {@link DEFAULT_JOBS_BACKOFF_MS} */
  backoffMs?: number;
}

/** Resolves with `promise`, or rejects once `ms` have passed (for connects that retry forever). */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Checks the URL and returns BullMQ's connection options. Throws `INVALID_ARGUMENT`. */
export function redisConnection(url: string): { url: string; maxRetriesPerRequest: null } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `The Redis connection "${url}" is not a URL; write e.g. redis://127.0.0.1:6379.`,
      {
        details: { field: 'connection' },
      },
    );
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `The Redis connection must start with redis:// or rediss://, not ${parsed.protocol}//.`,
      { details: { field: 'connection' } },
    );
  }
  return { url, maxRetriesPerRequest: null };
}

/** Queue name, checked (BullMQ keys use ":" as separator). */
export function queueName(name: string | undefined): string {
  const queue = name ?? DEFAULT_JOBS_QUEUE;
  if (!/^[A-Za-z0-9_.-]{1,128}$/.test(queue))
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `The queue name "${queue}" must be 1-128 letters, digits, "_", "." or "-".`,
      {
        details: { field: 'queue' },
      },
    );
  return queue;
}

/** Key whose presence means "cancel this job". */
export function cancelKey(queue: string, id: string): string {
  return `${JOBS_KEY_PREFIX}:${queue}:codecall:cancel:${id}`;
}

/** Channel on which cancel requests are announced to running workers. */
export function cancelChannel(queue: string): string {
  return `${JOBS_KEY_PREFIX}:${queue}:codecall:cancel`;
}

/** Prefix of the Redis keys of a queue's job state (run journals, approvals). */
export function jobStatePrefix(queue: string): string {
  return `${JOBS_KEY_PREFIX}:${queue}:codecall:`;
}

/** BullMQ options of a submitted job. */
export function jobOptions(spec: JobSpec, id: string, retention: JobRetentionOptions = {}): JobsOptions {
  const age = Math.ceil((retention.keepAgeMs ?? DEFAULT_JOBS_KEEP_AGE_MS) / 1_000);
  return {
    jobId: id,
    attempts: spec.attempts ?? DEFAULT_JOBS_ATTEMPTS,
    backoff: { type: 'exponential', delay: retention.backoffMs ?? DEFAULT_JOBS_BACKOFF_MS },
    removeOnComplete: { count: retention.keepCompleted ?? DEFAULT_JOBS_KEEP_COMPLETED, age },
    removeOnFail: { count: retention.keepFailed ?? DEFAULT_JOBS_KEEP_FAILED, age },
    keepLogs: DEFAULT_JOBS_MAX_LOG_LINES,
    ...(spec.priority !== undefined ? { priority: spec.priority } : {}),
  };
}

/** BullMQ's states in codecall's words. */
export function mapState(state: string): JobState {
  switch (state) {
    case 'active':
    case 'completed':
    case 'failed':
    case 'delayed':
      return state;
    default:
      return 'waiting';
  }
}

/** A BullMQ job (and its state) as a {@link JobRecord}. */
export function toRecord(job: Job, state: string, cancelRequested: boolean): JobRecord {
  const spec = job.data as Partial<JobSpec>;
  const progress = job.progress;
  const record: JobRecord = {
    id: job.id ?? '',
    kind: spec.kind === 'run' ? 'run' : 'exec',
    config: typeof spec.config === 'string' ? spec.config : '',
    state: mapState(state),
    attemptsMade: job.attemptsStarted ?? job.attemptsMade,
    attempts: job.opts.attempts ?? 1,
    createdAt: job.timestamp,
  };
  if (record.state === 'completed' && job.returnvalue) record.result = job.returnvalue as JobResult;
  if (record.state === 'failed' && job.failedReason) record.failedReason = job.failedReason;
  if (job.opts.priority) record.priority = job.opts.priority;
  if (typeof spec.deadline === 'number') record.deadline = spec.deadline;
  if (spec.labels) record.labels = spec.labels;
  if (job.processedOn) record.startedAt = job.processedOn;
  if (job.finishedOn) record.finishedAt = job.finishedOn;
  if (typeof progress === 'object' && progress !== null && 'type' in progress)
    record.progress = progress as JobProgress;
  if (cancelRequested) record.cancelRequested = true;
  return record;
}
