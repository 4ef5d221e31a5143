/**
 * @module
 * A BullMQ worker that runs codecall jobs: it takes jobs from the queue (up to `concurrency` at
 * once), runs each with the runtime of the configuration it names, reports progress and logs
 * to the job, and stores the result. Delivery is at-least-once:
 *
 * - an infrastructure fault (thrown by {@link runJob}) fails the attempt, and BullMQ retries the
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
import { setLongTimeout } from '../util/long-timeout.js';
import {
  cancelChannel,
  cancelKey,
  queueName,
  redisConnection,
  withTimeout,
  type JobConnectionOptions,
} from './bullmq-shared.js';
import { JobWaitingApprovalError } from './job-approvals.js';
import { cutLogLine } from './job-helpers.js';
import { parseJobSpec } from './job-spec.js';
import type { JobResult } from './job-types.js';
import { isRetryableJobError, JOB_ABORT_REASONS, JobHandBackError, runJob } from './run-job.js';
import { RedisHistoryStore } from './redis-history-store.js';
import { approvalsKey, RedisJobApprovalStore } from './redis-job-approvals.js';
import { journalKey, RedisRunJournal } from './redis-run-journal.js';
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

/** A running worker. */
export interface JobWorkerHandle {
  readonly name: string;
  /** Jobs running now. */
  running(): number;
  /** Stops taking jobs, finishes or hands back running ones, closes runtimes. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
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
  const subscriber = new Redis(connection.url, { maxRetriesPerRequest: null });
  commands.on('error', () => {});
  subscriber.on('error', () => {});
  let active = 0;

  const processor = async (job: Job, token?: string, signal?: AbortSignal): Promise<JobResult> => {
    const id = job.id ?? '';
    let spec;
    try {
      spec = parseJobSpec(job.data);
    } catch (error) {
      throw new UnrecoverableError((error as Error).message);
    }
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(signal?.reason);
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    if ((await commands.exists(cancelKey(queue, id))) === 1) controller.abort(JOB_ABORT_REASONS.cancel);
    active++;
    const attempt = Math.max(1, job.attemptsStarted);
    log(`job ${id} (${spec.kind}) attempt ${attempt} started`);
    // Every worker reads it: an attempt after a crash replays the calls the dead one finished.
    const journal =
      spec.kind === 'exec' ? new RedisRunJournal(commands, journalKey(queue, id, job.timestamp)) : undefined;
    const approvals =
      spec.kind === 'exec'
        ? new RedisJobApprovalStore(commands, approvalsKey(queue, id, job.timestamp))
        : undefined;
    try {
      const result = await runJob({
        spec,
        runtimes,
        attempt,
        worker: name,
        signal: controller.signal,
        ...(options.env ? { env: options.env } : {}),
        onProgress: (progress) => void job.updateProgress(progress).catch(() => {}),
        onLog: (line) => void job.log(cutLogLine(line)).catch(() => {}),
        ...(journal ? { journal } : {}),
        ...(approvals ? { approvals: { store: approvals, timeoutMs: options.approvalTimeoutMs } } : {}),
      });
      // The journal and approvals stay until the queue has recorded the job's end (see `forget`).
      log(`job ${id} ${result.status}`);
      return result;
    } catch (error) {
      if (error instanceof JobHandBackError) {
        log(`job ${id} handed back to the queue`);
        await job.log(`handed back by ${name} (shutting down)`).catch(() => {});
        await job.moveToWait(token);
        throw new WaitingError();
      }
      if (error instanceof JobWaitingApprovalError && approvals) {
        // The job waits without a worker: delayed until the request times out (or the deadline),
        // promoted earlier by the decision. A decision that landed before the move promotes it here.
        const { request } = error;
        const wake = Math.min(request.expiresAt, spec.deadline ?? Number.POSITIVE_INFINITY);
        await job.moveToDelayed(wake, token);
        const still = await approvals.pending();
        if (still?.callIndex !== request.callIndex) await job.promote().catch(() => {});
        log(`job ${id} waits for the approval of ${request.tool} (call ${request.callIndex})`);
        throw new DelayedError();
      }
      const message = (error as Error)?.message ?? String(error);
      await job.log(cutLogLine(`attempt ${attempt} failed: ${message}`)).catch(() => {});
      log(`job ${id} attempt ${attempt} failed: ${message}`);
      if (!isRetryableJobError(error)) throw new UnrecoverableError(message);
      throw error;
    } finally {
      active--;
      signal?.removeEventListener('abort', onAbort);
    }
  };

  const worker = new Worker(queue, processor, {
    connection,
    name,
    concurrency: options.concurrency ?? DEFAULT_JOBS_WORKER_CONCURRENCY,
    lockDuration: options.lockDurationMs ?? DEFAULT_JOBS_LOCK_DURATION_MS,
    stalledInterval: options.stalledIntervalMs ?? DEFAULT_JOBS_STALLED_INTERVAL_MS,
    maxStalledCount: options.maxStalledCount ?? DEFAULT_JOBS_MAX_STALLED_COUNT,
    autorun: false,
  });
  /**
   * Deletes a job's run journal and approvals once the queue has recorded the job's end. Not
   * before: a worker killed between deleting them and the queue's record (the processor returns
   * first, BullMQ then records the completion) leaves the job to a retry that must find them. A
   * worker that dies after the record leaves them to expire with the job's retention age.
   */
  const forget = (job: Job | undefined): void => {
    if (job?.id === undefined) return;
    void commands
      .del(journalKey(queue, job.id, job.timestamp), approvalsKey(queue, job.id, job.timestamp))
      .catch(() => {});
  };
  worker.on('completed', (job) => forget(job));
  // `finishedOn` is set only when the failure is final (no attempt left, or unrecoverable).
  worker.on('failed', (job) => {
    if (job?.finishedOn) forget(job);
  });
  worker.on('error', (error) => log(`worker error: ${error.message}`));
  worker.on('stalled', (jobId) => log(`job ${jobId} stalled (its worker died); back in the queue`));
  subscriber.on('message', (_channel: string, id: string) => {
    worker.cancelJob(id, JOB_ABORT_REASONS.cancel);
  });
  try {
    await withTimeout(
      Promise.all([worker.waitUntilReady(), subscriber.subscribe(cancelChannel(queue))]),
      DEFAULT_JOBS_CONNECT_TIMEOUT_MS,
      'connecting',
    );
  } catch (error) {
    await Promise.allSettled([worker.close(true), runtimes.close()]);
    subscriber.disconnect();
    commands.disconnect();
    throw new CodecallError(
      'JOBS_BACKEND_UNAVAILABLE',
      `Cannot reach Redis at ${new URL(options.connection).host}: ${(error as Error)?.message ?? String(error)}.`,
      { cause: error },
    );
  }
  const running = worker.run().catch((error: unknown) => log(`worker stopped: ${(error as Error)?.message}`));

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      const grace = options.shutdownGraceMs ?? DEFAULT_JOBS_SHUTDOWN_GRACE_MS;
      const timer = setLongTimeout(() => worker.cancelAllJobs(JOB_ABORT_REASONS.shutdown), grace);
      try {
        await worker.close();
        await running;
      } finally {
        timer.cancel();
        subscriber.disconnect();
        await commands.quit().catch(() => commands.disconnect());
        await runtimes.close();
      }
    })();
    return closing;
  };
  return { name, running: () => active, close, [Symbol.asyncDispose]: close };
}
