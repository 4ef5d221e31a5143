/**
 * @module
 * The one job worker loop, whichever queue holds the jobs. A {@link QueueAdapter} (BullMQ, pg-boss,
 * the embedded in-memory queue) claims jobs and hands each attempt over as a {@link ClaimedJob}:
 * what the queue knows (id, data, attempt, the signal it aborts on a cancel or a shutdown) and
 * what it can do with the attempt (complete, fail with retry, delay until, promote, hand back,
 * read a cancel, append a log line). The processor here owns everything else, once:
 *
 * - the job's run journal and approvals from one {@link JobStateStore}, so a retry on any worker
 *   replays the calls an earlier attempt finished;
 * - a call that needs approval parks the job (`delayUntil` its request's timeout or the job's
 *   deadline) without holding a worker; a decision recorded meanwhile promotes it;
 * - a cancel (read before the attempt starts, then through the signal), the deadline and a
 *   shutdown (hand-back) via {@link runJob};
 * - which failures are retried ({@link isRetryableJobError}), the job's log lines and the
 *   operator's.
 *
 * A job's state is forgotten only once the queue has recorded its end (the adapter calls
 * {@link JobProcessor.ended}): a worker killed between the two leaves the retry what it needs.
 */
import type { JobStateStore, PendingApproval } from '../store/job-state.js';
import { describePending, JobWaitingApprovalError } from './job-approvals.js';
import { answerLogKey } from './job-inputs.js';
import { parseJobSpec, type JobSpec } from './job-spec.js';
import type { JobProgress, JobResult } from './job-types.js';
import { isRetryableJobError, JOB_ABORT_REASONS, JobHandBackError, runJob } from './run-job.js';
import type { RuntimeRegistry } from './runtime-registry.js';

/** One claimed attempt of a job, as its queue adapter hands it to the processor. */
export interface ClaimedJob {
  readonly id: string;
  /** The job's data as queued (a job spec, checked by the processor). */
  readonly data: unknown;
  /** 1-based attempt number. */
  readonly attempt: number;
  /** Key of the job's journal and approvals in the state store (unique per submission). */
  readonly stateKey: string;
  /** Aborted by the queue with {@link JOB_ABORT_REASONS} `cancel` or `shutdown`. */
  readonly signal: AbortSignal;
  /** True when a cancel was asked before the attempt started. */
  cancelRequested(): Promise<boolean>;
  /** Appends a line to the job's log (never throws). */
  log(line: string): void;
  /** Reports progress (never throws; a queue without progress ignores it). */
  progress(progress: JobProgress): void;
  /** Ends the job with `result`. */
  complete(result: JobResult): Promise<void>;
  /** Fails the attempt: with `retry`, the queue runs it again after its backoff while attempts are left. */
  fail(error: Error, retry: boolean): Promise<void>;
  /** Parks the job without a worker until `at` (epoch ms), for the decision on `approval`. */
  delayUntil(at: number, approval: PendingApproval): Promise<void>;
  /** Wakes a parked job now. */
  promote(): Promise<void>;
  /** Puts the job back in the queue for another worker (this one shuts down), using no attempt. */
  handBack(): Promise<void>;
}

/** What a queue adapter drives. */
export interface JobProcessor {
  /** Runs one attempt and settles it through the claimed job's methods (rejects only with what they throw). */
  process(job: ClaimedJob): Promise<void>;
  /** The queue has recorded the end of the job under `stateKey`: its state can go. */
  ended(stateKey: string): void;
  /** Attempts running now. */
  running(): number;
}

/** A queue a worker consumes. */
export interface QueueAdapter {
  /** Starts claiming jobs for `processor`; resolves once consuming. */
  claim(processor: JobProcessor): Promise<void>;
  /**
   * Stops claiming; running attempts get `graceMs` to finish, then their signal aborts with
   * `shutdown` (they hand their jobs back). Resolves once none runs.
   */
  stop(graceMs: number): Promise<void>;
}

/** Options of {@link createJobProcessor}. */
export interface JobProcessorOptions {
  runtimes: RuntimeRegistry;
  state: JobStateStore;
  /** Name of the worker, for logs. */
  worker: string;
  /** Environment of model providers. @defaultValue `process.env` */
  env?: NodeJS.ProcessEnv | undefined;
  /** @defaultValue the job's configuration's `jobs.approvalTimeoutMs`, else `DEFAULT_JOBS_APPROVAL_TIMEOUT_MS` */
  approvalTimeoutMs?: number | undefined;
  /** One line per job event, for the operator. */
  onLog?: ((line: string) => void) | undefined;
}

const messageOf = (error: unknown): string => (error as Error)?.message ?? String(error);

/** The processor every backend's worker runs. */
export function createJobProcessor(options: JobProcessorOptions): JobProcessor {
  const { state, worker } = options;
  const log = (line: string): void => options.onLog?.(line);
  let active = 0;

  const attempt = async (job: ClaimedJob, spec: JobSpec): Promise<void> => {
    const { id } = job;
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(job.signal.reason);
    if (job.signal.aborted) onAbort();
    else job.signal.addEventListener('abort', onAbort, { once: true });
    if (!controller.signal.aborted && (await job.cancelRequested()))
      controller.abort(JOB_ABORT_REASONS.cancel);
    log(`job ${id} (${spec.kind}) attempt ${job.attempt} started`);
    const journal = spec.kind === 'exec' ? state.journal(job.stateKey) : undefined;
    const approvals = spec.kind === 'exec' ? state.approvals(job.stateKey) : undefined;
    try {
      const result = await runJob({
        spec,
        runtimes: options.runtimes,
        attempt: job.attempt,
        worker,
        signal: controller.signal,
        ...(options.env ? { env: options.env } : {}),
        onProgress: (progress) => job.progress(progress),
        onLog: (line) => job.log(line),
        ...(journal ? { journal } : {}),
        ...(approvals
          ? {
              approvals: {
                store: approvals,
                timeoutMs: options.approvalTimeoutMs,
                answers: state.journal(answerLogKey(job.stateKey)),
              },
            }
          : {}),
      });
      log(`job ${id} ${result.status}`);
      await job.complete(result);
    } catch (error) {
      if (error instanceof JobHandBackError) {
        log(`job ${id} handed back to the queue`);
        job.log(`handed back by ${worker} (shutting down)`);
        await job.handBack();
        return;
      }
      if (error instanceof JobWaitingApprovalError && approvals) {
        // Parked until the request times out (or the deadline); a decision promotes it earlier,
        // and one that landed before the park is seen here.
        const { request } = error;
        await job.delayUntil(Math.min(request.expiresAt, spec.deadline ?? Number.POSITIVE_INFINITY), request);
        const still = await approvals.pending();
        if (
          still?.callIndex !== request.callIndex ||
          still.input?.requestHash !== request.input?.requestHash ||
          still.input?.ask !== request.input?.ask
        )
          await job.promote();
        log(`job ${id} waits for ${describePending(request)}`);
        return;
      }
      const message = messageOf(error);
      job.log(`attempt ${job.attempt} failed: ${message}`);
      log(`job ${id} attempt ${job.attempt} failed: ${message}`);
      await job.fail(error instanceof Error ? error : new Error(message), isRetryableJobError(error));
    } finally {
      job.signal.removeEventListener('abort', onAbort);
    }
  };

  return {
    async process(job) {
      let spec: JobSpec;
      try {
        spec = parseJobSpec(job.data);
      } catch (error) {
        log(`job ${job.id}: ${messageOf(error)}`);
        await job.fail(error instanceof Error ? error : new Error(messageOf(error)), false);
        return;
      }
      active++;
      try {
        await attempt(job, spec);
      } finally {
        active--;
      }
    },
    ended(stateKey) {
      void state.forget(stateKey).catch(() => {});
    },
    running: () => active,
  };
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

/** Options of {@link startQueueWorker}. */
export interface QueueWorkerOptions extends JobProcessorOptions {
  adapter: QueueAdapter;
  /** Time running jobs get to finish on `close()` before they are handed back. */
  shutdownGraceMs: number;
  /** Also closed by `close()`, after the state store (connections the adapter does not own). */
  closeAlso?: () => Promise<void>;
}

/**
 * Starts consuming `adapter` with the processor; `close()` stops the adapter, then closes the
 * state store and the runtimes (owned by the worker).
 */
export async function startQueueWorker(options: QueueWorkerOptions): Promise<JobWorkerHandle> {
  const processor = createJobProcessor(options);
  const shut = async (): Promise<void> => {
    await Promise.allSettled([options.state.close(), options.closeAlso?.()]);
    await options.runtimes.close();
  };
  try {
    await options.adapter.claim(processor);
  } catch (error) {
    await shut();
    throw error;
  }
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      try {
        await options.adapter.stop(options.shutdownGraceMs);
      } finally {
        await shut();
      }
    })();
    return closing;
  };
  return { name: options.worker, running: () => processor.running(), close, [Symbol.asyncDispose]: close };
}
