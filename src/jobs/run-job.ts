/**
 * @module
 * Runs one attempt of one job with the runtime of its named configuration, whichever backend
 * holds it. This is where the two kinds of failure part ways:
 *
 * - the **model's fault** (the script threw or timed out, the agent ran out of steps or time) is
 *   a normal result, `status: "error"`, and is never retried;
 * - an **infrastructure fault** (a configuration or MCP server that will not open, a provider
 *   5xx after its own retries, a sandbox that is unavailable) is thrown, and the backend retries
 *   the job with backoff; {@link isRetryableJobError} says which thrown errors are worth it.
 *
 * The signal passed in may carry one of the {@link JOB_ABORT_REASONS}: a cancel ends the job
 * `cancelled`, a passed deadline `expired`, and a worker shutdown throws {@link JobHandBackError}
 * so the backend puts the job back in the queue for another worker.
 */
import { randomUUID } from 'node:crypto';
import { createOrchestrator, type AgentEvent, type RunInput } from '../agent/index.js';
import { isCodecallError } from '../errors.js';
import type { RunJournal } from '../store/index.js';
import type { SandboxLimits } from '../types.js';
import { setLongTimeout } from '../util/long-timeout.js';
import type { ExecJobSpec, JobSpec, RunJobSpec } from './job-spec.js';
import type { JobProgress, JobResult } from './job-types.js';
import type { RuntimeRegistry } from './runtime-registry.js';
import type { JobApprovalStore } from '../store/job-state.js';
import {
  createJobApprover,
  describePending,
  JobWaitingApprovalError,
  type JobApprover,
} from './job-approvals.js';
import { asksOfLabels, JobAnswers } from './job-inputs.js';

/**
 * The sandbox owner of every job's script (see `ExecuteOptions.owner`): the jobs of a runtime come
 * through one queue behind one credential, so they take turns in an isolate, a fresh context each.
 */
const JOBS_ISOLATE_OWNER = 'jobs';

/** Reasons a running job is aborted with (the abort signal's `reason`). */
export const JOB_ABORT_REASONS = {
  cancel: 'codecall:job-cancelled',
  shutdown: 'codecall:worker-shutdown',
  deadline: 'codecall:job-deadline',
  /** A call needs a decision nobody has made yet: the attempt stops, the job waits for it. */
  approval: 'codecall:job-waiting-approval',
} as const;

/** Agent errors that are the model's fault: a completed job with status `error`. */
const MODEL_FAULT_CODES: ReadonlySet<string> = new Set([
  'MAX_STEPS_EXCEEDED',
  'RUN_TIMEOUT',
  'MODEL_SCRIPT_EXHAUSTED',
  'MODEL_SCRIPT_MISMATCH',
]);

/** Thrown errors no retry can fix: the job fails at once. */
const FATAL_CODES: ReadonlySet<string> = new Set([
  'CONFIG_NOT_FOUND',
  'CONFIG_INVALID',
  'CONFIG_ENV_MISSING',
  'JOB_CONFIG_UNKNOWN',
  'PROVIDER_AUTH',
  'PROVIDER_MISSING_KEY',
  'PROVIDER_UNKNOWN',
  'INVALID_ARGUMENT',
  // The script made other calls than the attempt it replays, or the journal cannot be read back.
  'REPLAY_DIVERGED',
  'REPLAY_IN_DOUBT',
]);

/** Thrown by {@link runJob} when the worker shuts down mid-job: put the job back in the queue. */
export class JobHandBackError extends Error {
  constructor() {
    super('The worker is shutting down; the job goes back to the queue.');
    this.name = 'JobHandBackError';
  }
}

/** True when a thrown job error is an infrastructure fault worth another attempt. */
export function isRetryableJobError(error: unknown): boolean {
  return !(isCodecallError(error) && FATAL_CODES.has(error.code));
}

/** Options of {@link runJob}. */
export interface RunJobOptions {
  spec: JobSpec;
  runtimes: RuntimeRegistry;
  /** 1-based attempt number. */
  attempt: number;
  /** Name of the worker, for logs. */
  worker: string;
  /** Aborts the job; its `reason` should be one of {@link JOB_ABORT_REASONS}. */
  signal?: AbortSignal;
  /** Receives progress (keep it cheap; errors it throws are ignored). */
  onProgress?: (progress: JobProgress) => void;
  /** Receives log lines. */
  onLog?: (line: string) => void;
  /** Environment of the model provider (API keys). @defaultValue `process.env` */
  env?: NodeJS.ProcessEnv;
  /** Clock. @defaultValue `Date.now` */
  now?: () => number;
  /**
   * The run journal of the job, shared by its attempts: an `exec` job records its tool calls
   * there, and a later attempt replays them (calls an earlier attempt finished are not made
   * again; a call in flight when that attempt died is made again: at-least-once).
   */
  journal?: RunJournal;
  /**
   * Durable approvals of an `exec` job (needs `journal`): a call that needs approval and has no
   * recorded decision stops the attempt with {@link JobWaitingApprovalError}; the job waits
   * without a worker until a decision is recorded in `store`, or `timeoutMs` passes.
   */
  approvals?: {
    store: JobApprovalStore;
    /** @defaultValue the job's configuration's `jobs.approvalTimeoutMs`, else `DEFAULT_JOBS_APPROVAL_TIMEOUT_MS` (one day) */
    timeoutMs?: number | undefined;
    /**
     * The job's answer log (`job-inputs.ts`): with it, a job labelled with what its requester can
     * answer (`JOB_ASKS_LABEL`, an MCP task's job) parks on its upstreams' input requests too.
     */
    answers?: RunJournal | undefined;
  };
}

function minLimits(configured: SandboxLimits, asked: ExecJobSpec['limits']): Partial<SandboxLimits> {
  const out: Partial<SandboxLimits> = {};
  for (const [key, value] of Object.entries(asked ?? {}) as [keyof SandboxLimits, number | undefined][]) {
    if (value !== undefined) out[key] = Math.min(value, configured[key]);
  }
  return out;
}

function summarizeStep(event: Extract<AgentEvent, { type: 'step-end' }>): JobProgress {
  const { step } = event;
  let toolCalls = step.toolCalls.filter((call) => call.kind === 'direct').length;
  for (const execution of step.executions) toolCalls += execution.result.toolCalls.length;
  return {
    type: 'step',
    step: step.index,
    calls: step.toolCalls.map((call) => call.name),
    toolCalls,
    durationMs: Math.round(step.durationMs),
  };
}

/**
 * Runs one attempt. Resolves with the job's result for every outcome that is final (ok, the
 * model's error, cancelled, expired); throws for infrastructure faults and {@link JobHandBackError}.
 */
export async function runJob(options: RunJobOptions): Promise<JobResult> {
  const { spec, attempt } = options;
  const now = options.now ?? Date.now;
  const started = now();
  const progress = (event: JobProgress): void => {
    try {
      options.onProgress?.(event);
    } catch {
      // A watcher's failure never fails the job.
    }
  };
  const log = (line: string): void => {
    try {
      options.onLog?.(line);
    } catch {
      // Same.
    }
  };
  const finish = (fields: Omit<JobResult, 'kind' | 'attempt' | 'durationMs'>): JobResult => ({
    kind: spec.kind,
    attempt,
    durationMs: Math.round(now() - started),
    ...fields,
  });
  const expired = (): JobResult =>
    finish({
      status: 'expired',
      error: {
        code: 'JOB_DEADLINE_EXCEEDED',
        message: `The job's deadline (${new Date(spec.deadline ?? 0).toISOString()}) passed.`,
      },
    });
  const cancelled = (): JobResult =>
    finish({ status: 'cancelled', error: { code: 'JOB_CANCELLED', message: 'The job was cancelled.' } });

  if (spec.deadline !== undefined && started >= spec.deadline) {
    log('deadline passed before the job started; not running it');
    return expired();
  }
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(options.signal?.reason);
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  const deadlineTimer =
    spec.deadline === undefined
      ? undefined
      : setLongTimeout(() => controller.abort(JOB_ABORT_REASONS.deadline), spec.deadline - started);
  let approvals: JobApprover | undefined;
  const settle = (): JobResult | undefined => {
    if (!controller.signal.aborted) return undefined;
    const reason: unknown = controller.signal.reason;
    if (reason === JOB_ABORT_REASONS.shutdown) throw new JobHandBackError();
    if (reason === JOB_ABORT_REASONS.deadline) return expired();
    if (reason === JOB_ABORT_REASONS.approval) return approvalStop(approvals);
    return cancelled();
  };
  const approvalStop = (approver: JobApprover | undefined): JobResult => {
    const late = approver?.timedOut();
    if (late) {
      log(`no decision on ${late.tool} (call ${late.callIndex}) in time; the job ends`);
      const within = `within ${Math.round(late.expiresAt - late.requestedAt)} ms (jobs.approvalTimeoutMs)`;
      return finish({
        status: 'expired',
        error:
          late.input === undefined
            ? {
                code: 'APPROVAL_TIMEOUT',
                message: `Nobody approved or denied the call of ${late.tool} (call ${late.callIndex}) ${within}; the job ended without making it.`,
              }
            : {
                code: 'INPUT_TIMEOUT',
                message: `Nobody answered the ${late.input.method} request of ${late.tool} (call ${late.callIndex}) ${within}; the job ended without finishing that call.`,
              },
      });
    }
    const waiting = approver?.waiting();
    if (!waiting) return cancelled();
    log(`waiting for ${describePending(waiting)}: ${waiting.reason}`);
    throw new JobWaitingApprovalError(waiting);
  };
  try {
    const early = settle();
    if (early) return early;
    log(`attempt ${attempt} on ${options.worker}`);
    progress({ type: 'started', attempt, worker: options.worker });
    const runtime = await options.runtimes.get(spec.config);
    if (spec.kind === 'exec' && options.journal && options.approvals)
      approvals = createJobApprover({
        store: options.approvals.store,
        journal: options.journal,
        timeoutMs: options.approvals.timeoutMs ?? runtime.config.jobs.approvalTimeoutMs,
        stop: () => controller.abort(JOB_ABORT_REASONS.approval),
        now,
        ...(options.approvals.answers
          ? { answers: new JobAnswers(options.approvals.answers), asks: asksOfLabels(spec.labels) }
          : {}),
      });
    const result =
      spec.kind === 'exec'
        ? await runExec(spec, runtime, controller.signal, progress, finish, options.journal, log, approvals)
        : await runAgent(spec, runtime, controller.signal, progress, finish, options.env ?? process.env);
    const stopped = settle();
    if (stopped) return stopped;
    log(`finished: ${result.status}${result.error ? ` (${result.error.code})` : ''}`);
    return result;
  } catch (error) {
    const stopped = settle();
    if (stopped) return stopped;
    throw error;
  } finally {
    deadlineTimer?.cancel();
    options.signal?.removeEventListener('abort', onAbort);
  }
}

type Finish = (fields: Omit<JobResult, 'kind' | 'attempt' | 'durationMs'>) => JobResult;
type Runtime = Awaited<ReturnType<RuntimeRegistry['get']>>;

async function runExec(
  spec: ExecJobSpec,
  runtime: Runtime,
  signal: AbortSignal,
  progress: (event: JobProgress) => void,
  finish: Finish,
  journal: RunJournal | undefined,
  log: (line: string) => void,
  approvals: JobApprover | undefined,
): Promise<JobResult> {
  if (journal) {
    const entries = await journal.entries();
    const finished = new Set<number>();
    for (const entry of entries) if (entry.type === 'finished') finished.add(entry.index);
    const inDoubt = new Set<string>();
    for (const entry of entries)
      if (entry.type === 'started' && !finished.has(entry.index)) inDoubt.add(entry.name);
    if (entries.length > 0)
      log(
        `replaying ${finished.size} tool call(s) an earlier attempt finished` +
          (inDoubt.size > 0
            ? `; calling again those in flight when it ended: ${[...inDoubt].join(', ')}`
            : ''),
      );
  }
  // What the upstreams send during this job's calls is this job's (never another job's).
  const runId = randomUUID();
  const forget = approvals?.asker ? runtime.tools.attributeRun(runId, `job:${runId}`) : undefined;
  const result = await runtime
    .execute(spec.code, {
      signal,
      runId,
      owner: JOBS_ISOLATE_OWNER,
      limits: minLimits(runtime.config.sandbox.limits, spec.limits),
      onToolResult: (event) => progress({ type: 'tool-call', tool: event.name, ok: event.ok }),
      ...(journal
        ? { journal: approvals?.journal ?? journal, replay: true, replayInDoubt: 'repeat' as const }
        : {}),
      ...(approvals ? { approver: approvals.approver } : {}),
      ...(approvals?.asker ? { asker: approvals.asker } : {}),
    })
    .finally(() => forget?.());
  const exec = {
    stdout: result.stdout,
    stderr: result.stderr,
    ...(result.returnValue !== undefined ? { returnValue: result.returnValue } : {}),
    toolCalls: result.toolCalls.map((call) => call.tool),
    wallMs: Math.round(result.stats.wallMs),
  };
  if (result.status === 'ok') return finish({ status: 'ok', exec });
  return finish({
    status: 'error',
    error: {
      code: result.error?.code ?? 'RUNTIME_ERROR',
      message: result.error?.message ?? 'The script failed.',
    },
    exec,
  });
}

async function runAgent(
  spec: RunJobSpec,
  runtime: Runtime,
  signal: AbortSignal,
  progress: (event: JobProgress) => void,
  finish: Finish,
  env: NodeJS.ProcessEnv,
): Promise<JobResult> {
  await using agent = await createOrchestrator({
    runtime,
    modelOptions: { env },
    ...(spec.model !== undefined ? { model: spec.model } : {}),
    ...(spec.mode !== undefined ? { mode: spec.mode } : {}),
    ...(spec.maxSteps !== undefined ? { maxSteps: spec.maxSteps } : {}),
    ...(spec.maxRunTimeMs !== undefined ? { maxRunTimeMs: spec.maxRunTimeMs } : {}),
  });
  const input = spec.messages !== undefined ? (spec.messages as RunInput) : spec.prompt!;
  // Nobody reads text deltas here, and nobody can answer an approval request while the job runs.
  for await (const event of agent.stream(input, { signal, streamText: false })) {
    if (event.type === 'approval-request')
      event.deny(
        'a run job cannot ask for approval: set requireApproval: false for the tool in the configuration the workers use, or run it as an exec job',
      );
    else if (event.type === 'step-end') progress(summarizeStep(event));
    else if (event.type === 'execution-end') {
      const { result } = event.execution;
      progress({
        type: 'execution',
        status: result.status,
        toolCalls: result.toolCalls.length,
        wallMs: Math.round(result.stats.wallMs),
      });
    } else if (event.type === 'done') {
      const { result } = event;
      return finish({
        status: 'ok',
        run: {
          answer: result.answer,
          model: result.model,
          steps: result.steps.length,
          usage: { inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens },
          savings: { ...result.savings },
        },
      });
    } else if (event.type === 'error') {
      if (signal.aborted || !MODEL_FAULT_CODES.has(event.error.code)) throw event.error;
      return finish({
        status: 'error',
        error: { code: event.error.code, message: event.error.message },
        run: {
          answer: '',
          model: event.result.model,
          steps: event.result.steps.length,
          usage: {
            inputTokens: event.result.usage.inputTokens,
            outputTokens: event.result.usage.outputTokens,
          },
          savings: { ...event.result.savings },
        },
      });
    }
  }
  throw new Error('The agent run ended without a result.');
}
