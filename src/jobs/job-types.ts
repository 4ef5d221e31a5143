/**
 * @module
 * What the job layer reports, whichever backend holds the jobs: a job's record (state, result,
 * attempts, times), the events a watcher receives, and the one small interface the embedded
 * (in-process) backend and the BullMQ backend both implement. Plain data throughout: a record
 * serialises with `JSON.stringify` and travels over HTTP unchanged.
 */
import type { SavingsReport } from '../agent/index.js';
import type { JobApprovalDecision, JobDecisionInput, PendingApproval } from '../store/job-state.js';
import type { JobSpec, JobSpecInput } from './job-spec.js';

/**
 * Where a job is: `waiting` (queued, or `delayed` for a retry backoff), `active` (a worker runs
 * it), `completed` (it ran to a result: see {@link JobResult.status}), `failed` (infrastructure
 * faults used up its attempts, or it could never run, e.g. an unknown configuration name),
 * `waiting-approval` (an `exec` job's call needs a decision: no worker holds it; see
 * {@link JobRecord.approval} and {@link JobBackend.approve}).
 */
export type JobState = 'waiting' | 'delayed' | 'active' | 'completed' | 'failed' | 'waiting-approval';

/**
 * How a completed job ended. `ok`: the script or the agent finished; `error`: the model's fault
 * (the script threw, timed out, the agent hit its step limit…), never retried; `cancelled`;
 * `expired`: its deadline passed before or while it ran.
 */
export type JobStatus = 'ok' | 'error' | 'cancelled' | 'expired';

/** Result of an `exec` job. */
export interface ExecJobOutput {
  stdout: string;
  stderr: string;
  /** The script's top-level `return` value, when it was JSON. */
  returnValue?: unknown;
  /** Qualified names of the tools the script called, in order. */
  toolCalls: string[];
  wallMs: number;
}

/** Result of a `run` job. */
export interface RunJobOutput {
  answer: string;
  /** `provider:model`. */
  model: string;
  steps: number;
  usage: { inputTokens: number; outputTokens: number };
  /** What the agent's savings meter measured in this run (context tokens, results and definitions kept out). */
  savings: SavingsReport;
}

/** What a completed job returns. */
export interface JobResult {
  kind: JobSpec['kind'];
  status: JobStatus;
  /** Why it did not end `ok` (`code` is stable: `SCRIPT_ERROR`, `MAX_STEPS_EXCEEDED`, `JOB_CANCELLED`…). */
  error?: { code: string; message: string };
  exec?: ExecJobOutput;
  run?: RunJobOutput;
  /** The attempt (1-based) that produced this result. */
  attempt: number;
  durationMs: number;
}

/** Progress a running job reports (the agent's step events, summarised). */
export type JobProgress =
  | { type: 'started'; attempt: number; worker: string }
  | { type: 'tool-call'; tool: string; ok: boolean }
  | { type: 'execution'; status: 'ok' | 'error'; toolCalls: number; wallMs: number }
  | { type: 'step'; step: number; calls: string[]; toolCalls: number; durationMs: number };

/** A job as a client sees it. */
export interface JobRecord {
  id: string;
  kind: JobSpec['kind'];
  /** Name of the configuration it runs with. */
  config: string;
  state: JobState;
  /** Set once completed. */
  result?: JobResult;
  /** Why it failed (state `failed`). */
  failedReason?: string;
  /** Attempts started so far. */
  attemptsMade: number;
  /** Attempts it may take. */
  attempts: number;
  priority?: number;
  deadline?: number;
  labels?: Record<string, string>;
  /** Epoch milliseconds. */
  createdAt: number;
  startedAt?: number;
  finishedAt?: number;
  /** The last progress event. */
  progress?: JobProgress;
  /** A cancel was asked for; a waiting job is cancelled when a worker takes it. */
  cancelRequested?: boolean;
  /** The call the job waits on (state `waiting-approval`): tool, arguments, journal index, timeout. */
  approval?: PendingApproval;
}

/** Events of {@link JobBackend.events}, in order; the last is always `done`. */
export type JobEvent =
  | { type: 'state'; id: string; state: JobState; approval?: PendingApproval }
  | { type: 'progress'; id: string; progress: JobProgress }
  | { type: 'done'; id: string; job: JobRecord };

/** What {@link JobBackend.submit} returns. */
export interface JobSubmission {
  id: string;
  /** True when a job with the same idempotency key existed: nothing new was queued. */
  deduplicated: boolean;
}

/** Options of {@link JobBackend.wait}. */
export interface WaitJobOptions {
  signal?: AbortSignal;
  /** Give up (throw `JOB_WAIT_TIMEOUT`) after this long. @defaultValue no limit */
  timeoutMs?: number;
}

/** Options of {@link JobBackend.list}. */
export interface ListJobsOptions {
  /** @defaultValue every state */
  states?: JobState[];
  /** @defaultValue {@link DEFAULT_JOBS_LIST_LIMIT} */
  limit?: number;
}

/**
 * Where jobs live: the embedded backend (in-process, `codecall serve --http` without Redis), the
 * BullMQ backend (a Redis queue consumed by `codecall worker` processes) or the pg-boss one; or a
 * client of a running `codecall serve`'s jobs HTTP API, which holds one of those.
 */
export interface JobBackend {
  /**
   * `local`, `bullmq` or `postgres`; `http` for a client of a running `codecall serve`'s jobs API
   * (whichever of the three that server keeps its jobs on).
   */
  readonly kind: 'local' | 'bullmq' | 'postgres' | 'http';
  /** Queues a job; throws `INVALID_ARGUMENT` for a bad spec. */
  submit(spec: JobSpecInput): Promise<JobSubmission>;
  /** The job, or `undefined` when there is none (never was, or removed by retention). */
  get(id: string): Promise<JobRecord | undefined>;
  /** Resolves with the record once the job is `completed` or `failed`. Throws `JOB_NOT_FOUND`. */
  wait(id: string, options?: WaitJobOptions): Promise<JobRecord>;
  /** State changes and progress as they happen, ending with `done`. Throws `JOB_NOT_FOUND`. */
  events(id: string, options?: { signal?: AbortSignal }): AsyncIterable<JobEvent>;
  /** The job's log lines (newest last, bounded). */
  logs(id: string): Promise<string[]>;
  /**
   * Decides the call a job waits on (state `waiting-approval`) and wakes the job: approved, the
   * call runs once; denied, the script sees `APPROVAL_DENIED`. Throws `JOB_NOT_FOUND`, and
   * `JOB_NOT_WAITING_APPROVAL` when the job waits on no call.
   */
  approve(id: string, decision: JobDecisionInput): Promise<JobApprovalDecision>;
  /** Asks to cancel; false when the job is unknown or already finished. */
  cancel(id: string): Promise<boolean>;
  /** Most recent first. */
  list(options?: ListJobsOptions): Promise<JobRecord[]>;
  /** Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}
