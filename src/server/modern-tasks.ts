/**
 * @module
 * The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on the 2026-07-28 leg: an
 * `execute_code` call from a client that declares the extension in its request's capabilities is
 * answered with a `CreateTaskResult` (`resultType: "task"`) once a job for it is queued on
 * codecall's job backend (embedded, BullMQ or pg-boss), and the task is then followed with
 * `tasks/get`, answered with `tasks/update` when a call needs approval, and stopped with
 * `tasks/cancel`. A task id is the job's id (a random UUID), so any `serve` node that reaches the
 * same backend answers for it: with Redis or Postgres the task survives the node that accepted it.
 *
 * The job engine already does the hard parts: a job's call that needs approval parks the job
 * (`waiting-approval`, no worker held) and its decision wakes it on any worker, which replays the
 * run journal. Here a parked job is an `input_required` task whose one input request is the
 * approval form, keyed by the call's journal index (unique over the task's life, as the spec
 * asks), and a `tasks/update` that answers it is the job's approval.
 *
 * SDK 2.4 does not serve the extension (it has no `tasks/*` handlers for 2026-07-28), so the
 * methods are registered through its custom-method form of `setRequestHandler`, which it allows
 * for `tasks/get` and `tasks/cancel` on the 2026 era.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  inputRequired,
  type Server as ModernServer,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import {
  DEFAULT_JOBS_MAX_LIST_LIMIT,
  DEFAULT_SERVE_TASK_POLL_INTERVAL_MS,
  DEFAULT_SERVE_TASK_TTL_MS,
  DEFAULT_SERVE_TASKS_PER_CLIENT,
} from '../config/defaults.js';
import { formatResultForModel } from '../execute/index.js';
import { escapeInvisible, renderApprovalCall } from '../tools/approval-text.js';
import { decisionOf } from './modern-approvals.js';

/** The extension's identifier (SEP-2663 § Extension Identifier). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The label that marks a job as an MCP task, and holds the client it belongs to. */
const TASK_CLIENT_LABEL = 'mcp-task-client';

/** The label that holds the task's `ttlMs` (the job's deadline is `createdAt` plus about that). */
const TASK_TTL_LABEL = 'mcp-task-ttl-ms';

/** Job states of a task not finished yet. */
const UNFINISHED_STATES = ['waiting', 'delayed', 'active', 'waiting-approval'] as const;

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
  approval?: { tool: string; args: unknown; callIndex: number; reason: string; requestedAt: number };
}

/**
 * The job backend tasks run on (codecall's `JobBackend`, of which this is the subset used):
 * `codecall serve --http` passes the one its jobs API serves.
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
  approve(id: string, decision: { approved: boolean; reason?: string }): Promise<unknown>;
  cancel(id: string): Promise<boolean>;
  list(options: { states: TaskJobRecord['state'][]; limit: number }): Promise<TaskJobRecord[]>;
}

/** Options of the Tasks extension on the 2026-07-28 leg. */
export interface ModernTasksOptions {
  backend: TaskBackend;
  /** @defaultValue {@link DEFAULT_SERVE_TASK_TTL_MS} */
  ttlMs?: number | undefined;
  /** @defaultValue {@link DEFAULT_SERVE_TASK_POLL_INTERVAL_MS} */
  pollIntervalMs?: number | undefined;
  /** @defaultValue {@link DEFAULT_SERVE_TASKS_PER_CLIENT} */
  maxPerClient?: number | undefined;
}

/** What a task is as `tasks/get` answers it (SEP-2663 `DetailedTask`). */
export interface DetailedTask {
  taskId: string;
  status: 'working' | 'input_required' | 'completed' | 'cancelled' | 'failed';
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
  inputRequests?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/** True when this request's client declared the Tasks extension in its per-request capabilities. */
export function declaresTasks(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: unknown } | undefined;
  const extensions = capabilities?.extensions;
  return typeof extensions === 'object' && extensions !== null && TASKS_EXTENSION in extensions;
}

/**
 * Who a task belongs to: the bearer token's id (set by `serveModern`), or `anonymous` on a server
 * without a token. A task is answered only to the client that created it (SEP-2663 § Security).
 */
function clientOf(ctx: ServerContext): string {
  return ctx.http?.authInfo?.clientId ?? 'anonymous';
}

/** The input request key of the approval of journal call `callIndex` (unique over a task's life). */
function approvalKey(callIndex: number): string {
  return `approval-${callIndex}`;
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

/** A job as a task (SEP-2663 § Task Polling: the payload of each status). */
export function taskOf(job: TaskJobRecord, pollIntervalMs: number): DetailedTask {
  const labelled = Number(job.labels?.[TASK_TTL_LABEL]);
  const ttlMs = Number.isSafeInteger(labelled) && labelled > 0 ? labelled : null;
  const lastUpdatedAt = iso(job.finishedAt ?? job.approval?.requestedAt ?? job.startedAt ?? job.createdAt);
  const base = { taskId: job.id, createdAt: iso(job.createdAt), lastUpdatedAt, ttlMs };
  if (job.state === 'failed')
    return {
      ...base,
      status: 'failed',
      statusMessage: `The task could not run: ${job.failedReason ?? 'unknown reason'}`,
      error: {
        code: ProtocolErrorCode.InternalError,
        message: job.failedReason ?? 'The task could not run.',
      },
    };
  if (job.state === 'completed') {
    const status = job.result?.status;
    if (status === 'cancelled')
      return { ...base, status: 'cancelled', statusMessage: 'Cancelled (tasks/cancel).' };
    if (status === 'expired')
      return {
        ...base,
        status: 'failed',
        statusMessage: job.result?.error?.message ?? 'The task ran past its ttlMs.',
        error: {
          code: ProtocolErrorCode.InternalError,
          message: job.result?.error?.message ?? 'The task ran past its ttlMs.',
        },
      };
    return { ...base, status: 'completed', result: callToolResultOf(job) };
  }
  if (job.state === 'waiting-approval' && job.approval !== undefined) {
    const call = job.approval;
    const elicit = inputRequired.elicit({
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
    });
    return {
      ...base,
      status: 'input_required',
      statusMessage: `Waiting for the approval of ${escapeInvisible(call.tool)}.`,
      pollIntervalMs,
      inputRequests: { [approvalKey(call.callIndex)]: elicit },
    };
  }
  return {
    ...base,
    status: 'working',
    statusMessage: job.state === 'active' ? 'Running.' : 'Queued.',
    pollIntervalMs,
  };
}

/** The `-32021` error of a task method from a client that did not declare the extension. */
function missingCapability(): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.MissingRequiredClientCapability,
    `Missing required client capability: declare the "${TASKS_EXTENSION}" extension in the request's clientCapabilities.`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  );
}

/** The task `taskId` names, if this client may see it; else the spec's `-32602`. */
async function findTask(backend: TaskBackend, taskId: string, ctx: ServerContext): Promise<TaskJobRecord> {
  if (!declaresTasks(ctx)) throw missingCapability();
  const job = await backend.get(taskId);
  if (job === undefined || job.labels?.[TASK_CLIENT_LABEL] !== clientOf(ctx))
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      'Failed to retrieve task: Task not found (it never existed here, belongs to another client, or was removed after it finished).',
    );
  return job;
}

const taskIdParams = z.looseObject({ taskId: z.string().min(1).max(128) });

/** The task runtime of one leg: creates tasks and serves `tasks/get`, `tasks/update`, `tasks/cancel`. */
export interface ModernTasks {
  /** Queues `code` as a task of this request's client; a text when the client has too many. */
  create(code: string, ctx: ServerContext): Promise<Record<string, unknown> | { refused: string }>;
  /** Registers the three methods on one request's server. */
  register(server: ModernServer): void;
}

/** The Tasks extension over `options.backend`. */
export function createModernTasks(options: ModernTasksOptions): ModernTasks {
  const { backend } = options;
  const ttlMs = options.ttlMs ?? DEFAULT_SERVE_TASK_TTL_MS;
  const pollIntervalMs = options.pollIntervalMs ?? DEFAULT_SERVE_TASK_POLL_INTERVAL_MS;
  const maxPerClient = options.maxPerClient ?? DEFAULT_SERVE_TASKS_PER_CLIENT;
  return {
    async create(code, ctx) {
      const client = clientOf(ctx);
      const unfinished = await backend.list({
        states: [...UNFINISHED_STATES],
        limit: DEFAULT_JOBS_MAX_LIST_LIMIT,
      });
      const mine = unfinished.filter((job) => job.labels?.[TASK_CLIENT_LABEL] === client).length;
      if (mine >= maxPerClient)
        return {
          refused:
            `This client has ${mine} execute_code tasks not finished yet, the most codecall accepts ` +
            `(serve.maxTasksPerClient: ${maxPerClient}). Nothing ran; wait for one to finish ` +
            '(tasks/get) or cancel one (tasks/cancel), then call again.',
        };
      const { id } = await backend.submit({
        kind: 'exec',
        code,
        deadline: Date.now() + ttlMs,
        labels: { [TASK_CLIENT_LABEL]: client, [TASK_TTL_LABEL]: String(ttlMs) },
      });
      // SEP-2663 § Task Creation: no CreateTaskResult before a tasks/get for it would resolve.
      const job = await backend.get(id);
      if (job === undefined)
        throw new ProtocolError(
          ProtocolErrorCode.InternalError,
          'The task was queued but cannot be read back.',
        );
      const task = taskOf(job, pollIntervalMs);
      return {
        resultType: 'task',
        taskId: task.taskId,
        status: task.status === 'input_required' ? 'working' : task.status,
        createdAt: task.createdAt,
        lastUpdatedAt: task.lastUpdatedAt,
        ttlMs: task.ttlMs,
        pollIntervalMs,
      };
    },
    register(server) {
      server.setRequestHandler('tasks/get', { params: taskIdParams }, async (params, ctx) => {
        const job = await findTask(backend, params.taskId, ctx);
        return { ...taskOf(job, pollIntervalMs) };
      });
      server.setRequestHandler('tasks/update', { params: taskIdParams }, async (params, ctx) => {
        const job = await findTask(backend, params.taskId, ctx);
        // The SDK lifts `inputResponses` out of the params (as for a retried tools/call).
        const responses = ctx.mcpReq.inputResponses as Record<string, unknown> | undefined;
        const call = job.approval;
        // Responses to keys not outstanding are ignored (SEP-2663 § Task Update Requests).
        if (job.state !== 'waiting-approval' || call === undefined) return {};
        const decision = decisionOf(responses, approvalKey(call.callIndex));
        if (decision === undefined) return {};
        try {
          await backend.approve(job.id, {
            approved: decision.approved,
            ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
          });
        } catch {
          // Decided meanwhile (another update, the jobs API, its timeout): the ack stays an ack.
        }
        return {};
      });
      server.setRequestHandler('tasks/cancel', { params: taskIdParams }, async (params, ctx) => {
        const job = await findTask(backend, params.taskId, ctx);
        await backend.cancel(job.id);
        return {};
      });
    },
  };
}
