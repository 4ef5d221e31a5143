/**
 * @module
 * A BullMQ worker that runs codecall jobs: the BullMQ queue adapter of the one job loop
 * (`job-processor.ts`), with job state (run journals, approvals) in the queue's Redis. It takes
 * jobs from the queue (up to `concurrency` at once), reports progress and logs to the job, and
 * stores the result. Delivery is at-least-once:
 *
 * - an infrastructure fault fails the attempt, and BullMQ retries the
 *   job with exponential backoff until its attempts are used up; a fault no retry can fix (an
 *   unknown configuration, a rejected API key) fails the job at once (`UnrecoverableError`);
 * - a worker that dies (`kill -9`, a lost machine) stops renewing its job's lock; after
 *   `lockDurationMs` another worker's stalled-job check (every `stalledIntervalMs`) puts the job
 *   back in the queue and it runs again from the start, up to `maxStalledCount` times;
 * - `close()` (SIGTERM) stops taking jobs, lets running ones finish for `shutdownGraceMs`, then
 *   aborts them and hands them back to the queue (`moveToWait`) for another worker.
 */
import { hostname } from 'node:os';
import { DelayedError, UnrecoverableError, WaitingError, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import {
  DEFAULT_JOBS_CONNECT_TIMEOUT_MS,
  DEFAULT_JOBS_LOCK_DURATION_MS,
  DEFAULT_JOBS_MAX_STALLED_COUNT,
  DEFAULT_JOBS_SHUTDOWN_GRACE_MS,
  DEFAULT_JOBS_STALLED_INTERVAL_MS,
  DEFAULT_JOBS_WORKER_CONCURRENCY,
} from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import { RedisJobStateStore } from '../store/job-state-redis.js';
import { setLongTimeout } from '../util/long-timeout.js';
import {
  cancelChannel,
  cancelKey,
  jobStatePrefix,
  queueName,
  redisConnection,
  withTimeout,
  type JobConnectionOptions,
} from './bullmq-shared.js';
import { cutLogLine, jobStateKey } from './job-helpers.js';
import {
  startQueueWorker,
  type ClaimedJob,
  type JobProcessor,
  type JobWorkerHandle,
  type QueueAdapter,
} from './job-processor.js';
import type { JobResult } from './job-types.js';
import { JOB_ABORT_REASONS } from './run-job.js';
import { RedisHistoryStore } from '../store/redis-history-store.js';
import { RuntimeRegistry, type RuntimeRegistryOptions } from './runtime-registry.js';

/** Options of {@link startJobWorker}. */
export interface JobWorkerOptions extends JobConnectionOptions {
  /** The configurations jobs may name. */
  runtimes: RuntimeRegistryOptions;
  /** Jobs run at once. @defaultValue {@link DEFAULT_JOBS_WORKER_CONCURRENCY} */
  concurrency?: number;
  /** @defaultValue {@link DEFAULT_JOBS_LOCK_DURATION_MS} */
  lockDurationMs?: number;
  /** @defaultValue {@link DEFAULT_JOBS_STALLED_INTERVAL_MS} */
  stalledIntervalMs?: number;
  /** @defaultValue {@link DEFAULT_JOBS_MAX_STALLED_COUNT} */
  maxStalledCount?: number;
  /** Time running jobs get to finish on `close()` before they are handed back. @defaultValue {@link DEFAULT_JOBS_SHUTDOWN_GRACE_MS} */
  shutdownGraceMs?: number;
  /** Name shown in job logs. @defaultValue `<hostname>:<pid>` */
  name?: string;
  /** Environment of model providers. @defaultValue `process.env` */
  env?: NodeJS.ProcessEnv;
  /**
   * Keep usage history in the queue's Redis (one tool graph per configuration name, fed by every
   * worker) instead of each configuration's local store. @defaultValue false
   */
  sharedHistory?: boolean;
  /**
   * Time an exec job's call waits for `codecall jobs approve` before the job ends.
   * @defaultValue the job's configuration's `jobs.approvalTimeoutMs`, else `DEFAULT_JOBS_APPROVAL_TIMEOUT_MS` (one day)
   */
  approvalTimeoutMs?: number;
  /** One line per job event (started, finished, failed, handed back), for the operator. */
  onLog?: (line: string) => void;
}

/**
 * Starts a worker on the queue; resolves once it is connected.
 *
 * @example
 * ```ts
 * await using worker = await startJobWorker({
 *   connection: 'redis://127.0.0.1:6379',
 *   runtimes: { configs: { default: 'codecall.json' } },
 * });
 * ```
 */
export async function startJobWorker(options: JobWorkerOptions): Promise<JobWorkerHandle> {
  const connection = redisConnection(options.connection);
  const queue = queueName(options.queue);
  const name = options.name ?? `${hostname()}:${process.pid}`;
  const log = (line: string): void => options.onLog?.(line);
  const runtimes = new RuntimeRegistry({
    env: options.env ?? process.env,
    ...options.runtimes,
    ...(options.sharedHistory
      ? {
          history: (config: string) =>
            RedisHistoryStore.open({ connection: connection.url, namespace: `${queue}.${config}` }),
        }
      : {}),
  });
  const commands = new Redis(connection.url, { maxRetriesPerRequest: null });
  commands.on('error', () => {});
  const state = await RedisJobStateStore.open({ redis: commands, prefix: jobStatePrefix(queue) });
  return startQueueWorker({
    adapter: bullmqAdapter({ ...options, connection, queue, name, commands, log }),
    state,
    runtimes,
    worker: name,
    env: options.env,
    approvalTimeoutMs: options.approvalTimeoutMs,
    onLog: options.onLog,
    shutdownGraceMs: options.shutdownGraceMs ?? DEFAULT_JOBS_SHUTDOWN_GRACE_MS,
    closeAlso: () =>
      commands.quit().then(
        () => {},
        () => commands.disconnect(),
      ),
  });
}

interface BullmqAdapterOptions extends Omit<JobWorkerOptions, 'connection' | 'queue'> {
  connection: { url: string; maxRetriesPerRequest: null };
  queue: string;
  name: string;
  /** Commands (cancel keys); the worker closes it. */
  commands: Redis;
  log: (line: string) => void;
}

/** What a settled attempt tells BullMQ: a return value, or an error to throw. */
type Outcome = { result: JobResult } | { error: Error };

/**
 * The BullMQ queue adapter: a BullMQ `Worker` claims jobs (locks renewed while they run, stalled
 * ones of dead workers put back); an attempt's outcome becomes the processor function's return
 * value (complete) or the error it throws (`UnrecoverableError` for no retry, `DelayedError`
 * after `moveToDelayed`, `WaitingError` after `moveToWait`). Cancels come over pub/sub.
 */
function bullmqAdapter(options: BullmqAdapterOptions): QueueAdapter {
  const { queue, name, commands, log } = options;
  const subscriber = new Redis(options.connection.url, { maxRetriesPerRequest: null });
  subscriber.on('error', () => {});
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;

  const claimed = (
    job: Job,
    token: string | undefined,
    signal: AbortSignal,
    settle: (o: Outcome) => void,
  ) => {
    const id = job.id ?? '';
    const it: ClaimedJob = {
      id,
      data: job.data,
      attempt: Math.max(1, job.attemptsStarted),
      stateKey: jobStateKey(id, job.timestamp),
      signal,
      cancelRequested: async () => (await commands.exists(cancelKey(queue, id))) === 1,
      log: (line) => void job.log(cutLogLine(line)).catch(() => {}),
      progress: (progress) => void job.updateProgress(progress).catch(() => {}),
      complete: (result) => {
        settle({ result });
        return Promise.resolve();
      },
      fail: (error, retry) => {
        settle({ error: retry ? error : new UnrecoverableError(error.message) });
        return Promise.resolve();
      },
      delayUntil: async (at) => {
        await job.moveToDelayed(at, token);
        settle({ error: new DelayedError() });
      },
      promote: () => job.promote().catch(() => {}),
      handBack: async () => {
        await job.moveToWait(token);
        settle({ error: new WaitingError() });
      },
    };
    return it;
  };

  return {
    async claim(processor: JobProcessor) {
      const handle = async (job: Job, token?: string, signal?: AbortSignal): Promise<JobResult> => {
        let outcome: Outcome | undefined;
        await processor.process(
          claimed(job, token, signal ?? new AbortController().signal, (o) => (outcome = o)),
        );
        if (!outcome) throw new Error('The attempt ended without an outcome.');
        if ('error' in outcome) throw outcome.error;
        return outcome.result;
      };
      const bull = new Worker(queue, handle, {
        connection: options.connection,
        name,
        concurrency: options.concurrency ?? DEFAULT_JOBS_WORKER_CONCURRENCY,
        lockDuration: options.lockDurationMs ?? DEFAULT_JOBS_LOCK_DURATION_MS,
        stalledInterval: options.stalledIntervalMs ?? DEFAULT_JOBS_STALLED_INTERVAL_MS,
        maxStalledCount: options.maxStalledCount ?? DEFAULT_JOBS_MAX_STALLED_COUNT,
        autorun: false,
      });
      worker = bull;
      const ended = (job: Job | undefined): void => {
        if (job?.id !== undefined) processor.ended(jobStateKey(job.id, job.timestamp));
      };
      bull.on('completed', (job) => ended(job));
      // `finishedOn` is set only when the failure is final (no attempt left, or unrecoverable).
      bull.on('failed', (job) => {
        if (job?.finishedOn) ended(job);
      });
      bull.on('error', (error) => log(`worker error: ${error.message}`));
      bull.on('stalled', (jobId) => log(`job ${jobId} stalled (its worker died); back in the queue`));
      subscriber.on('message', (_channel: string, id: string) => {
        bull.cancelJob(id, JOB_ABORT_REASONS.cancel);
      });
      try {
        await withTimeout(
          Promise.all([bull.waitUntilReady(), subscriber.subscribe(cancelChannel(queue))]),
          DEFAULT_JOBS_CONNECT_TIMEOUT_MS,
          'connecting',
        );
      } catch (error) {
        await bull.close(true).catch(() => {});
        subscriber.disconnect();
        throw new CodecallError(
          'JOBS_BACKEND_UNAVAILABLE',
          `Cannot reach Redis at ${new URL(options.connection.url).host}: ${(error as Error)?.message ?? String(error)}.`,
          { cause: error },
        );
      }
      running = bull.run().catch((error: unknown) => log(`worker stopped: ${(error as Error)?.message}`));
    },
    async stop(graceMs: number) {
      const bull = worker;
      if (!bull) return;
      const timer = setLongTimeout(() => bull.cancelAllJobs(JOB_ABORT_REASONS.shutdown), graceMs);
      try {
        await bull.close();
        await running;
      } finally {
        timer.cancel();
        subscriber.disconnect();
      }
    },
  };
}
