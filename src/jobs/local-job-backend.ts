/**
 * @module
 * The embedded job backend: jobs run inside this process (what `codecall serve --http` uses when
 * no Redis is configured), with the same API as the BullMQ backend, so a new user can try jobs
 * without installing anything. Jobs, results, logs and events are kept in memory, bounded
 * ({@link DEFAULT_JOBS_LOCAL_MAX_JOBS} jobs, the oldest finished ones go first; at most
 * {@link DEFAULT_JOBS_LOCAL_MAX_WAITING} queued and {@link DEFAULT_JOBS_LOCAL_MAX_PARKED} parked
 * waiting for an approval, past which `submit` throws `JOBS_QUEUE_FULL`); nothing survives
 * a restart. Move to BullMQ for durability, several machines, or worker processes.
 */
import { randomUUID } from 'node:crypto';
import PQueue from 'p-queue';
import {
  DEFAULT_JOBS_ATTEMPTS,
  DEFAULT_JOBS_BACKOFF_MS,
  DEFAULT_JOBS_LIST_LIMIT,
  DEFAULT_JOBS_LOCAL_CONCURRENCY,
  DEFAULT_JOBS_LOCAL_MAX_EVENTS,
  DEFAULT_JOBS_LOCAL_MAX_JOBS,
  DEFAULT_JOBS_LOCAL_MAX_PARKED,
  DEFAULT_JOBS_LOCAL_MAX_WAITING,
  DEFAULT_JOBS_MAX_LIST_LIMIT,
  DEFAULT_JOBS_MAX_LOG_LINES,
} from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import { backoffDelayMs } from '../util/backoff.js';
import { setLongTimeout } from '../util/long-timeout.js';
import { describePending } from './job-approvals.js';
import {
  MemoryJobStateStore,
  type JobApprovalDecision,
  type JobDecisionInput,
  type PendingApproval,
} from '../store/job-state.js';
import { cutLogLine, jobStateKey, waitForJobEnd } from './job-helpers.js';
import { createJobProcessor, type ClaimedJob, type JobProcessor } from './job-processor.js';
import { MAX_JOB_PRIORITY, parseJobSpec, type JobSpec, type JobSpecInput } from './job-spec.js';
import type {
  JobBackend,
  JobEvent,
  JobRecord,
  JobSubmission,
  ListJobsOptions,
  WaitJobOptions,
} from './job-types.js';
import { JOB_ABORT_REASONS } from './run-job.js';
import { RuntimeRegistry, type RuntimeRegistryOptions } from './runtime-registry.js';

/** Options of {@link createLocalJobBackend}. */
export interface LocalJobBackendOptions {
  /** The configurations jobs may name, or an open registry (borrowed: not closed by the backend). */
  runtimes: RuntimeRegistry | RuntimeRegistryOptions;
  /** Jobs run at once. @defaultValue {@link DEFAULT_JOBS_LOCAL_CONCURRENCY} */
  concurrency?: number;
  /** Jobs kept (any state); past this the oldest finished ones are dropped. @defaultValue {@link DEFAULT_JOBS_LOCAL_MAX_JOBS} */
  maxJobs?: number;
  /** Jobs waiting; past this `submit` throws `JOBS_QUEUE_FULL`. @defaultValue {@link DEFAULT_JOBS_LOCAL_MAX_WAITING} */
  maxWaiting?: number;
  /**
   * Jobs parked waiting for an approval; while this many are, `submit` throws `JOBS_QUEUE_FULL`,
   * and a job that asks for one more ends `failed` without making the call.
   * @defaultValue {@link DEFAULT_JOBS_LOCAL_MAX_PARKED}
   */
  maxParked?: number;
  /** First retry delay after an infrastructure fault; doubles per attempt. @defaultValue {@link DEFAULT_JOBS_BACKOFF_MS} */
  backoffMs?: number;
  /** Environment of model providers (API keys). @defaultValue `process.env` */
  env?: NodeJS.ProcessEnv;
  /**
   * Time an exec job's call waits for a decision before the job ends.
   * @defaultValue the job's configuration's `jobs.approvalTimeoutMs`, else `DEFAULT_JOBS_APPROVAL_TIMEOUT_MS` (one day)
   */
  approvalTimeoutMs?: number;
}

interface LocalJob {
  record: JobRecord;
  spec: JobSpec;
  logs: string[];
  /** The most recent events (bounded); `emitted` counts every event ever emitted. */
  events: JobEvent[];
  emitted: number;
  listeners: Set<() => void>;
  controller: AbortController;
  /** Key of its run journal and approvals, shared by its attempts (a retry or a resume replays). */
  stateKey: string;
  /** The retry backoff or the park of a job that holds no queue slot. */
  timer?: { cancel(): void } | undefined;
  /** Set while the job waits for a decision (no queue slot held): queues its next attempt. */
  resume?: (() => void) | undefined;
}

const FINISHED = new Set(['completed', 'failed']);

/**
 * Opens the embedded backend.
 *
 * @example
 * ```ts
 * await using jobs = createLocalJobBackend({ runtimes: { configs: { default: 'codecall.json' } } });
 * const { id } = await jobs.submit({ kind: 'exec', code: 'console.log(1 + 1)' });
 * console.log((await jobs.wait(id)).result?.exec?.stdout);
 * ```
 */
export function createLocalJobBackend(options: LocalJobBackendOptions): JobBackend {
  return new LocalJobBackend(options);
}

class LocalJobBackend implements JobBackend {
  readonly kind = 'local' as const;
  readonly #runtimes: RuntimeRegistry;
  readonly #ownsRuntimes: boolean;
  readonly #queue: PQueue;
  readonly #jobs = new Map<string, LocalJob>();
  readonly #maxJobs: number;
  readonly #maxWaiting: number;
  readonly #maxParked: number;
  /** Jobs in `waiting-approval`. */
  readonly #parked = new Set<LocalJob>();
  readonly #backoffMs: number;
  readonly #state = new MemoryJobStateStore();
  readonly #processor: JobProcessor;
  #closing: Promise<void> | undefined;

  constructor(options: LocalJobBackendOptions) {
    this.#ownsRuntimes = !(options.runtimes instanceof RuntimeRegistry);
    this.#runtimes =
      options.runtimes instanceof RuntimeRegistry ? options.runtimes : new RuntimeRegistry(options.runtimes);
    this.#queue = new PQueue({ concurrency: options.concurrency ?? DEFAULT_JOBS_LOCAL_CONCURRENCY });
    this.#maxJobs = options.maxJobs ?? DEFAULT_JOBS_LOCAL_MAX_JOBS;
    this.#maxWaiting = options.maxWaiting ?? DEFAULT_JOBS_LOCAL_MAX_WAITING;
    this.#maxParked = options.maxParked ?? DEFAULT_JOBS_LOCAL_MAX_PARKED;
    this.#backoffMs = options.backoffMs ?? DEFAULT_JOBS_BACKOFF_MS;
    this.#processor = createJobProcessor({
      runtimes: this.#runtimes,
      state: this.#state,
      worker: `local:${process.pid}`,
      env: options.env ?? process.env,
      approvalTimeoutMs: options.approvalTimeoutMs,
    });
  }

  submit(input: JobSpecInput): Promise<JobSubmission> {
    if (this.#closing) return Promise.reject(new CodecallError('CLOSED', 'The job backend is closed.'));
    const spec = parseJobSpec(input);
    const id = spec.idempotencyKey ?? randomUUID();
    if (this.#jobs.has(id)) return Promise.resolve({ id, deduplicated: true });
    if (this.#queue.size >= this.#maxWaiting) {
      return Promise.reject(
        new CodecallError(
          'JOBS_QUEUE_FULL',
          `${this.#maxWaiting} jobs are already waiting (jobs.maxWaiting); retry later, or move to the ` +
            'BullMQ backend (jobs.backend "bullmq") and add workers.',
          { details: { maxWaiting: this.#maxWaiting } },
        ),
      );
    }
    if (this.#parked.size >= this.#maxParked) {
      return Promise.reject(
        new CodecallError(
          'JOBS_QUEUE_FULL',
          `${this.#maxParked} jobs are waiting for an approval (jobs.maxParked); decide them ` +
            '(codecall jobs approve <id> [--deny], or cancel them), then retry.',
          { details: { maxParked: this.#maxParked } },
        ),
      );
    }
    const job: LocalJob = {
      spec,
      record: {
        id,
        kind: spec.kind,
        config: spec.config,
        state: 'waiting',
        attemptsMade: 0,
        attempts: spec.attempts ?? DEFAULT_JOBS_ATTEMPTS,
        createdAt: Date.now(),
        ...(spec.priority !== undefined ? { priority: spec.priority } : {}),
        ...(spec.deadline !== undefined ? { deadline: spec.deadline } : {}),
        ...(spec.labels !== undefined ? { labels: spec.labels } : {}),
      },
      logs: [],
      events: [],
      emitted: 0,
      listeners: new Set(),
      controller: new AbortController(),
      stateKey: '',
    };
    job.stateKey = jobStateKey(id, job.record.createdAt);
    this.#jobs.set(id, job);
    this.#prune();
    this.#enqueue(job);
    return Promise.resolve({ id, deduplicated: false });
  }

  /** Queues the job's next attempt: no priority first (as BullMQ does), then 1 (highest) … MAX_JOB_PRIORITY. */
  #enqueue(job: LocalJob): void {
    const { priority: asked } = job.spec;
    const priority = asked === undefined ? MAX_JOB_PRIORITY + 1 : MAX_JOB_PRIORITY + 1 - asked;
    void this.#queue.add(() => this.#claim(job), { priority }).catch(() => {});
  }

  #emit(job: LocalJob, event: JobEvent): void {
    job.events.push(event);
    job.emitted++;
    if (job.events.length > DEFAULT_JOBS_LOCAL_MAX_EVENTS)
      job.events.splice(0, job.events.length - DEFAULT_JOBS_LOCAL_MAX_EVENTS);
    for (const listener of job.listeners) listener();
  }

  #log(job: LocalJob, line: string): void {
    job.logs.push(cutLogLine(line));
    if (job.logs.length > DEFAULT_JOBS_MAX_LOG_LINES)
      job.logs.splice(0, job.logs.length - DEFAULT_JOBS_MAX_LOG_LINES);
  }

  #setState(job: LocalJob, state: JobRecord['state']): void {
    job.record.state = state;
    this.#emit(job, { type: 'state', id: job.record.id, state });
  }

  #finish(job: LocalJob, fields: Partial<JobRecord> & { state: 'completed' | 'failed' }): void {
    Object.assign(job.record, fields, { finishedAt: Date.now() });
    job.timer?.cancel();
    job.timer = undefined;
    job.resume = undefined;
    this.#parked.delete(job);
    this.#processor.ended(job.stateKey);
    this.#emit(job, { type: 'state', id: job.record.id, state: fields.state });
    this.#emit(job, { type: 'done', id: job.record.id, job: structuredClone(job.record) });
    this.#prune();
  }

  /** The in-memory queue adapter: one attempt of `job`, settled here. */
  async #claim(job: LocalJob): Promise<void> {
    if (FINISHED.has(job.record.state) || this.#closing) return; // cancelled while waiting
    const attempt = job.record.attemptsMade + 1;
    job.record.attemptsMade = attempt;
    job.record.startedAt ??= Date.now();
    this.#setState(job, 'active');
    const claimed: ClaimedJob = {
      id: job.record.id,
      data: job.spec,
      attempt,
      stateKey: job.stateKey,
      signal: job.controller.signal,
      // A cancel of a job that is not running ends it at once (see `cancel`).
      cancelRequested: () => Promise.resolve(false),
      log: (line) => this.#log(job, line),
      progress: (progress) => {
        job.record.progress = progress;
        this.#emit(job, { type: 'progress', id: job.record.id, progress });
      },
      complete: (result) => {
        this.#finish(job, { state: 'completed', result });
        return Promise.resolve();
      },
      fail: (error, retry) => {
        if (!retry || attempt >= job.record.attempts)
          this.#finish(job, { state: 'failed', failedReason: error.message });
        else this.#retryLater(job, attempt);
        return Promise.resolve();
      },
      delayUntil: (at, approval) => {
        this.#park(job, at, approval);
        return Promise.resolve();
      },
      promote: () => {
        job.resume?.();
        return Promise.resolve();
      },
      handBack: () => {
        this.#finish(job, { state: 'failed', failedReason: 'The server shut down while the job ran.' });
        return Promise.resolve();
      },
    };
    await this.#processor.process(claimed);
  }

  /** Queues the job again after its backoff; it holds no queue slot meanwhile. */
  #retryLater(job: LocalJob, attempt: number): void {
    this.#setState(job, 'delayed');
    // Uncapped, as BullMQ's exponential backoff: attempts are bounded by DEFAULT_JOBS_MAX_ATTEMPTS.
    const delay = backoffDelayMs(attempt, {
      initialDelayMs: this.#backoffMs,
      maxDelayMs: Number.POSITIVE_INFINITY,
    });
    job.timer = setLongTimeout(() => {
      job.timer = undefined;
      if (this.#closing || FINISHED.has(job.record.state)) return;
      this.#setState(job, 'waiting');
      this.#enqueue(job);
    }, delay);
  }

  /** Parks the job until a decision, `wakeAt` (its request's timeout or its deadline); it holds no queue slot meanwhile. */
  #park(job: LocalJob, wakeAt: number, request: PendingApproval): void {
    if (this.#parked.size >= this.#maxParked) {
      this.#finish(job, {
        state: 'failed',
        failedReason:
          `The job asked for ${describePending(request)} while ` +
          `${this.#maxParked} jobs already waited for one (jobs.maxParked); the call was not made. ` +
          'Decide the waiting jobs, then submit it again.',
      });
      return;
    }
    this.#parked.add(job);
    job.record.state = 'waiting-approval';
    job.record.approval = request;
    this.#emit(job, { type: 'state', id: job.record.id, state: 'waiting-approval', approval: request });
    job.timer = setLongTimeout(() => job.resume?.(), wakeAt - Date.now(), { unref: true });
    job.resume = () => {
      job.timer?.cancel();
      job.timer = undefined;
      job.resume = undefined;
      this.#parked.delete(job);
      delete job.record.approval;
      if (this.#closing || FINISHED.has(job.record.state)) return;
      this.#setState(job, 'waiting');
      this.#enqueue(job);
    };
  }

  async approve(id: string, decision: JobDecisionInput): Promise<JobApprovalDecision> {
    const job = this.#require(id);
    const recorded =
      job.record.state === 'waiting-approval'
        ? await this.#state.approvals(job.stateKey).decide(decision)
        : false;
    if (!recorded)
      throw new CodecallError(
        'JOB_NOT_WAITING_APPROVAL',
        `Job "${id}" is ${job.record.state} and waits for no approval (decided already, or it never asked).`,
        { details: { id, state: job.record.state } },
      );
    this.#log(
      job,
      `${recorded.approved ? 'approved' : 'denied'}: ${recorded.tool} (call ${recorded.callIndex})`,
    );
    job.resume?.();
    return recorded;
  }

  #finishCancelled(job: LocalJob): void {
    this.#finish(job, {
      state: 'completed',
      result: {
        kind: job.spec.kind,
        status: 'cancelled',
        error: { code: 'JOB_CANCELLED', message: 'The job was cancelled.' },
        attempt: job.record.attemptsMade,
        durationMs: 0,
      },
    });
  }

  /** Drops the oldest finished jobs past the bound. */
  #prune(): void {
    if (this.#jobs.size <= this.#maxJobs) return;
    for (const [id, job] of this.#jobs) {
      if (this.#jobs.size <= this.#maxJobs) break;
      if (FINISHED.has(job.record.state)) this.#jobs.delete(id);
    }
  }

  get(id: string): Promise<JobRecord | undefined> {
    const job = this.#jobs.get(id);
    return Promise.resolve(job ? structuredClone(job.record) : undefined);
  }

  #require(id: string): LocalJob {
    const job = this.#jobs.get(id);
    if (!job)
      throw new CodecallError('JOB_NOT_FOUND', `No job "${id}" (never submitted, or removed by retention).`, {
        details: { id },
      });
    return job;
  }

  async wait(id: string, options: WaitJobOptions = {}): Promise<JobRecord> {
    this.#require(id);
    return waitForJobEnd((signal) => this.events(id, { signal }), id, options);
  }

  async *events(
    id: string,
    options: { signal?: AbortSignal } = {},
  ): AsyncGenerator<JobEvent, void, undefined> {
    const job = this.#require(id);
    let wake: (() => void) | undefined;
    const listener = (): void => wake?.();
    job.listeners.add(listener);
    const onAbort = (): void => wake?.();
    options.signal?.addEventListener('abort', onAbort);
    try {
      yield { type: 'state', id, state: job.record.state };
      if (FINISHED.has(job.record.state)) {
        yield { type: 'done', id, job: structuredClone(job.record) };
        return;
      }
      // Sequence number of the next event this watcher reads; events dropped by the per-job
      // bound while it lagged are skipped.
      let next = job.emitted;
      for (;;) {
        if (options.signal?.aborted) return;
        const base = job.emitted - job.events.length;
        const pending = job.events.slice(Math.max(0, next - base));
        next = job.emitted;
        for (const event of pending) {
          yield event;
          if (event.type === 'done') return;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
          if (job.emitted !== next || options.signal?.aborted) resolve();
        });
        wake = undefined;
      }
    } finally {
      job.listeners.delete(listener);
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  logs(id: string): Promise<string[]> {
    return Promise.resolve([...this.#require(id).logs]);
  }

  cancel(id: string): Promise<boolean> {
    const job = this.#jobs.get(id);
    if (!job || FINISHED.has(job.record.state)) return Promise.resolve(false);
    job.record.cancelRequested = true;
    this.#log(job, 'cancel requested');
    if (job.record.state === 'active') job.controller.abort(JOB_ABORT_REASONS.cancel);
    else this.#finishCancelled(job); // waiting, in its retry backoff, or parked
    return Promise.resolve(true);
  }

  list(options: ListJobsOptions = {}): Promise<JobRecord[]> {
    const limit = Math.min(options.limit ?? DEFAULT_JOBS_LIST_LIMIT, DEFAULT_JOBS_MAX_LIST_LIMIT);
    const states = options.states ? new Set(options.states) : undefined;
    const out: JobRecord[] = [];
    for (const job of [...this.#jobs.values()].reverse()) {
      if (out.length >= limit) break;
      if (!states || states.has(job.record.state)) out.push(structuredClone(job.record));
    }
    return Promise.resolve(out);
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#queue.clear();
      for (const job of this.#jobs.values()) {
        if (job.record.state === 'waiting' || job.record.state === 'waiting-approval')
          this.#finish(job, { state: 'failed', failedReason: 'The server shut down before the job ran.' });
        else if (job.record.state === 'delayed')
          this.#finish(job, { state: 'failed', failedReason: 'The server shut down while the job waited.' });
        else if (!FINISHED.has(job.record.state)) job.controller.abort(JOB_ABORT_REASONS.shutdown);
      }
      await this.#queue.onIdle();
      await this.#state.close();
      if (this.#ownsRuntimes) await this.#runtimes.close();
    })();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
