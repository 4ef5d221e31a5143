/**
 * @module
 * What both eras' MCP tasks share: an `execute_code` task is a job (`kind: "exec"`) of codecall's
 * job backend (embedded, BullMQ or pg-boss), labelled with the client it belongs to and its
 * `ttlMs`. This module submits such a job within the per-client bound and reads a job back as a
 * task's state; the 2026 Tasks extension (`modern-tasks.ts`) and the 2025-11-25 experimental
 * tasks (`legacy-tasks.ts`) only shape that state into their revision's messages. It imports no
 * MCP SDK, so the 2025 path does not load the 2026 one and the other way round.
 */
import { createHash } from 'node:crypto';
import { DEFAULT_JOBS_MAX_LIST_LIMIT, DEFAULT_SERVE_INPUT_REQUEST_MAX_BYTES } from '../config/defaults.js';
import { formatResultForModel } from '../execute/index.js';
import { escapeInvisible, renderApprovalCall } from '../tools/approval-text.js';

/** The label that marks a job as an MCP task, and holds the client it belongs to. */
export const TASK_CLIENT_LABEL = 'mcp-task-client';

/** The label that holds the task's `ttlMs` (the job's deadline is `createdAt` plus about that). */
export const TASK_TTL_LABEL = 'mcp-task-ttl-ms';

/**
 * The label that says which upstream input requests the task's client can answer (the jobs
 * layer's `JOB_ASKS_LABEL`): `elicitation.form`, `elicitation.url`, `sampling`, comma-separated.
 * A job without it (submitted through the jobs API) has nobody to ask, and a script's call that is
 * asked something fails; so does one whose client declared neither (the label is then empty).
 */
export const TASK_ASKS_LABEL = 'mcp-task-asks';

/** The {@link TASK_ASKS_LABEL} value of a client's declared capabilities; undefined when it can answer nothing. */
export function asksOfCapabilities(capabilities: Record<string, unknown> | undefined): string | undefined {
  const asks: string[] = [];
  const elicitation = capabilities?.elicitation;
  if (typeof elicitation === 'object' && elicitation !== null) {
    const modes = elicitation as Record<string, unknown>;
    // An empty `elicitation: {}` means form mode (spec 2025-11-25 client/elicitation § Capabilities).
    if (Object.keys(modes).length === 0 || 'form' in modes) asks.push('elicitation.form');
    if ('url' in modes) asks.push('elicitation.url');
  }
  if (typeof capabilities?.sampling === 'object' && capabilities.sampling !== null) asks.push('sampling');
  return asks.length > 0 ? asks.join(',') : undefined;
}

/**
 * The key of the input request a task waits on, unique over the task's life: `approval-<journal
 * index>` for an approval, `upstream-<round>` for an upstream's request (a request that changes on
 * replay is a new round under a new key).
 */
export function inputKeyOf(call: TaskApproval): string {
  return call.input === undefined ? `approval-${call.callIndex}` : `upstream-${call.input.round}`;
}

/** Job states of a task not finished yet. */
export const UNFINISHED_TASK_STATES = ['waiting', 'delayed', 'active', 'waiting-approval'] as const;

/** JSON-RPC's internal error, the code of a task that failed (both revisions). */
const INTERNAL_ERROR = -32603;

/**
 * The part of a job (codecall's `JobRecord`) a task is made of. Declared here, not imported: the
 * server layer reaches jobs only through what the CLI hands it.
 */
export interface TaskJobRecord {
  id: string;
  state: 'waiting' | 'delayed' | 'active' | 'completed' | 'failed' | 'waiting-approval';
  result?: {
    status: 'ok' | 'error' | 'cancelled' | 'expired';
    error?: { code: string; message: string };
    exec?: { stdout: string; stderr: string; returnValue?: unknown; toolCalls: string[] };
  };
  failedReason?: string;
  labels?: Record<string, string>;
  createdAt: number;
  startedAt?: number;
  finishedAt?: number;
  cancelRequested?: boolean;
  approval?: {
    tool: string;
    args: unknown;
    callIndex: number;
    reason: string;
    requestedAt: number;
    /** Set when the call waits for the answer to its upstream's input request (untrusted params). */
    input?: {
      method: 'elicitation/create' | 'sampling/createMessage';
      params: Record<string, unknown>;
      ask: number;
      requestHash: string;
      /** Requests the job put to its client before this one: unique over the task's life. */
      round: number;
    };
  };
}

/**
 * The job backend tasks run on (codecall's `JobBackend`, of which this is the subset used):
 * `codecall serve` passes the one its jobs API serves.
 */
export interface TaskBackend {
  readonly kind: string;
  submit(spec: {
    kind: 'exec';
    code: string;
    deadline: number;
    labels: Record<string, string>;
  }): Promise<{ id: string }>;
  get(id: string): Promise<TaskJobRecord | undefined>;
  /** Decides the approval the job waits on, or (with `response`) answers its input request. */
  approve(
    id: string,
    decision: { approved: boolean; reason?: string; response?: Record<string, unknown> },
  ): Promise<unknown>;
  cancel(id: string): Promise<boolean>;
  list(options: { states: TaskJobRecord['state'][]; limit: number }): Promise<TaskJobRecord[]>;
}

/** The call a parked task waits on: the approval of one journal call. */
export type TaskApproval = NonNullable<TaskJobRecord['approval']>;

/** A job read as a task, before either revision shapes it. */
export type TaskState = {
  /** ISO 8601 times (both revisions' `createdAt` / `lastUpdatedAt`). */
  createdAt: string;
  lastUpdatedAt: string;
  /** The task's `ttlMs` from its label; null when the job has none (not made by a task). */
  ttlMs: number | null;
} & (
  | { status: 'working'; statusMessage: string }
  | { status: 'input_required'; statusMessage: string; approval: TaskApproval }
  | { status: 'completed'; script: 'ok' | 'error'; result: Record<string, unknown> }
  | { status: 'cancelled'; statusMessage: string }
  | { status: 'failed'; statusMessage: string; error: { code: number; message: string } }
);

/**
 * The client id of a bearer token (the sha256 of the token, 32 hex digits), or `anonymous`
 * without one: a task is answered only to the client that created it.
 */
export function taskClientOfBearer(bearer: string | undefined): string {
  return bearer === undefined ? 'anonymous' : createHash('sha256').update(bearer).digest('hex').slice(0, 32);
}

/** The client id of an `Authorization` header (see {@link taskClientOfBearer}). */
export function taskClientOfAuthorization(authorization: string | undefined): string {
  return taskClientOfBearer(/^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1]);
}

/** True when `job` is a task of `client`. */
export function isTaskOf(job: TaskJobRecord, client: string): boolean {
  return job.labels?.[TASK_CLIENT_LABEL] === client;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** The `CallToolResult` `execute_code` would have answered for a finished `exec` job. */
function callToolResultOf(job: TaskJobRecord): Record<string, unknown> {
  const result = job.result;
  const exec = result?.exec ?? { stdout: '', stderr: '', toolCalls: [] };
  const status = result?.status === 'ok' ? 'ok' : 'error';
  const text = formatResultForModel({
    status,
    stdout: exec.stdout,
    stderr: exec.stderr,
    ...(exec.returnValue !== undefined ? { returnValue: exec.returnValue } : {}),
    toolCalls: exec.toolCalls,
    ...(result?.error ? { error: result.error } : {}),
  });
  return { content: [{ type: 'text', text }], ...(status === 'error' ? { isError: true } : {}) };
}

/** A job as a task's state: `waiting`/`delayed`/`active` work, `waiting-approval` needs input. */
export function taskStateOf(job: TaskJobRecord): TaskState {
  const labelled = Number(job.labels?.[TASK_TTL_LABEL]);
  const ttlMs = Number.isSafeInteger(labelled) && labelled > 0 ? labelled : null;
  const lastUpdatedAt = iso(job.finishedAt ?? job.approval?.requestedAt ?? job.startedAt ?? job.createdAt);
  const base = { createdAt: iso(job.createdAt), lastUpdatedAt, ttlMs };
  if (job.state === 'failed') {
    const message = job.failedReason ?? 'The task could not run.';
    return {
      ...base,
      status: 'failed',
      statusMessage: `The task could not run: ${job.failedReason ?? 'unknown reason'}`,
      error: { code: INTERNAL_ERROR, message },
    };
  }
  if (job.state === 'completed') {
    const status = job.result?.status;
    if (status === 'cancelled')
      return { ...base, status: 'cancelled', statusMessage: 'Cancelled (tasks/cancel).' };
    if (status === 'expired') {
      const message = job.result?.error?.message ?? 'The task ran past its ttlMs.';
      return { ...base, status: 'failed', statusMessage: message, error: { code: INTERNAL_ERROR, message } };
    }
    return {
      ...base,
      status: 'completed',
      script: status === 'ok' ? 'ok' : 'error',
      result: callToolResultOf(job),
    };
  }
  if (job.state === 'waiting-approval' && job.approval !== undefined)
    return {
      ...base,
      status: 'input_required',
      statusMessage:
        job.approval.input === undefined
          ? `Waiting for the approval of ${escapeInvisible(job.approval.tool)}.`
          : `Waiting for the answer to ${escapeInvisible(job.approval.tool)}'s ${job.approval.input.method} request.`,
      approval: job.approval,
    };
  return { ...base, status: 'working', statusMessage: job.state === 'active' ? 'Running.' : 'Queued.' };
}

/** The form that asks a person to approve the call a task waits on (an `elicitation/create` form). */
export function approvalForm(call: TaskApproval): {
  message: string;
  requestedSchema: {
    type: 'object';
    properties: { approve: { type: 'boolean'; title: string; description: string } };
    required: ['approve'];
  };
} {
  return {
    message: `Approve ${renderApprovalCall(call)} from a script (execute_code task, call #${call.callIndex + 1})? It needs approval because ${escapeInvisible(call.reason)}.`,
    requestedSchema: {
      type: 'object',
      properties: {
        approve: {
          type: 'boolean',
          title: `Run ${escapeInvisible(call.tool)}`,
          description: 'true runs the call once; false denies it.',
        },
      },
      required: ['approve'],
    },
  };
}

/**
 * Why a client's answer to a task's upstream input request is refused before it is kept: larger
 * than {@link DEFAULT_SERVE_INPUT_REQUEST_MAX_BYTES} of JSON; undefined when it may be kept.
 */
export function oversizedAnswer(response: Record<string, unknown>): string | undefined {
  const bytes = Buffer.byteLength(JSON.stringify(response));
  return bytes > DEFAULT_SERVE_INPUT_REQUEST_MAX_BYTES
    ? `The answer is ${bytes} bytes of JSON, more than ${DEFAULT_SERVE_INPUT_REQUEST_MAX_BYTES} (DEFAULT_SERVE_INPUT_REQUEST_MAX_BYTES); send a shorter one.`
    : undefined;
}

/** Options of {@link submitTask}. */
export interface SubmitTaskOptions {
  code: string;
  client: string;
  /** What the client can answer (its declared capabilities): the script's upstream input requests park the task for it. */
  capabilities: Record<string, unknown> | undefined;
  ttlMs: number;
  maxPerClient: number;
}

/**
 * Queues `code` as a task of `client` and reads the job back (a task is announced only once any
 * node of the backend can answer for it); a text saying why not when the client already has
 * `maxPerClient` unfinished tasks (counted over the newest `DEFAULT_JOBS_MAX_LIST_LIMIT`
 * unfinished jobs).
 */
export async function submitTask(
  backend: TaskBackend,
  options: SubmitTaskOptions,
): Promise<{ job: TaskJobRecord } | { refused: string } | { unreadable: string }> {
  const { client, maxPerClient, ttlMs } = options;
  const asks = asksOfCapabilities(options.capabilities);
  const unfinished = await backend.list({
    states: [...UNFINISHED_TASK_STATES],
    limit: DEFAULT_JOBS_MAX_LIST_LIMIT,
  });
  const mine = unfinished.filter((job) => isTaskOf(job, client)).length;
  if (mine >= maxPerClient)
    return {
      refused:
        `This client has ${mine} execute_code tasks not finished yet, the most codecall accepts ` +
        `(serve.maxTasksPerClient: ${maxPerClient}). Nothing ran; wait for one to finish ` +
        '(tasks/get) or cancel one (tasks/cancel), then call again.',
    };
  const { id } = await backend.submit({
    kind: 'exec',
    code: options.code,
    deadline: Date.now() + ttlMs,
    labels: {
      [TASK_CLIENT_LABEL]: client,
      [TASK_TTL_LABEL]: String(ttlMs),
      // Empty when the client can answer nothing: its script's calls are then refused, naming the capability.
      [TASK_ASKS_LABEL]: asks ?? '',
    },
  });
  const job = await backend.get(id);
  return job === undefined ? { unreadable: 'The task was queued but cannot be read back.' } : { job };
}
