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
  DEFAULT_SERVE_TASK_ID_MAX_CHARS,
  DEFAULT_SERVE_TASK_POLL_INTERVAL_MS,
  DEFAULT_SERVE_TASK_TTL_MS,
  DEFAULT_SERVE_TASKS_PER_CLIENT,
} from '../config/defaults.js';
import { decisionOf } from './modern-approvals.js';
import { responseOf } from './modern-input.js';
import type { TaskRelay } from './task-relay.js';
import {
  approvalForm,
  inputKeyOf,
  isTaskOf,
  oversizedAnswer,
  submitTask,
  taskStateOf,
  type TaskBackend,
  type TaskJobRecord,
} from './task-jobs.js';

export type { TaskBackend, TaskJobRecord } from './task-jobs.js';

/** The extension's identifier (SEP-2663 § Extension Identifier). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

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
export function clientOf(ctx: ServerContext): string {
  return ctx.http?.authInfo?.clientId ?? 'anonymous';
}

/** A job as a task (SEP-2663 § Task Polling: the payload of each status). */
export function taskOf(job: TaskJobRecord, pollIntervalMs: number): DetailedTask {
  const state = taskStateOf(job);
  const base = {
    taskId: job.id,
    createdAt: state.createdAt,
    lastUpdatedAt: state.lastUpdatedAt,
    ttlMs: state.ttlMs,
  };
  switch (state.status) {
    case 'failed':
      return { ...base, status: 'failed', statusMessage: state.statusMessage, error: state.error };
    case 'cancelled':
      return { ...base, status: 'cancelled', statusMessage: state.statusMessage };
    // A script error is a completed task whose result has isError (SEP-2663 § Task Polling).
    case 'completed':
      return { ...base, status: 'completed', result: state.result };
    case 'input_required':
      return {
        ...base,
        status: 'input_required',
        statusMessage: state.statusMessage,
        pollIntervalMs,
        // Keys are unique over the task's life: the call's journal index (and the request's position).
        inputRequests: {
          [inputKeyOf(state.approval)]:
            state.approval.input === undefined
              ? inputRequired.elicit(approvalForm(state.approval))
              : // The upstream's request as it came (without its own _meta and task), as for a run in the request.
                { method: state.approval.input.method, params: state.approval.input.params },
        },
      };
    case 'working':
      return { ...base, status: 'working', statusMessage: state.statusMessage, pollIntervalMs };
  }
}

/** The `-32021` error of a task method from a client that did not declare the extension. */
export function missingCapability(): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.MissingRequiredClientCapability,
    `Missing required client capability: declare the "${TASKS_EXTENSION}" extension in the request's clientCapabilities.`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  );
}

/** The task `taskId` names, if this client may see it; else the spec's `-32602`. */
async function findTask(backend: TaskBackend, taskId: string, ctx: ServerContext): Promise<TaskJobRecord> {
  const job = await backend.get(taskId);
  if (job === undefined || !isTaskOf(job, clientOf(ctx)))
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      'Failed to retrieve task: Task not found (it never existed here, belongs to another client, or was removed after it finished).',
    );
  return job;
}

const taskIdParams = z.looseObject({ taskId: z.string().min(1).max(DEFAULT_SERVE_TASK_ID_MAX_CHARS) });

/** The task runtime of one leg: creates `execute_code` tasks and answers the task methods for them. */
export interface ModernTasks {
  /** Queues `code` as a task of this request's client; a text when the client has too many. */
  create(code: string, ctx: ServerContext): Promise<Record<string, unknown> | { refused: string }>;
  get(taskId: string, ctx: ServerContext): Promise<Record<string, unknown>>;
  update(taskId: string, ctx: ServerContext): Promise<Record<string, never>>;
  cancel(taskId: string, ctx: ServerContext): Promise<Record<string, never>>;
}

/**
 * Registers `tasks/get`, `tasks/update` and `tasks/cancel` on one request's server: a relayed
 * task's id (a pass-through tool's upstream task, `task-relay.ts`) goes to `relay`, any other to
 * the `execute_code` tasks of `jobs`. Each answers `-32021` to a request that does not declare
 * the extension (SEP-2663 § Error Handling) and `-32602` for a task this client cannot see.
 */
export function registerTaskMethods(
  server: ModernServer,
  jobs: ModernTasks | undefined,
  relay: TaskRelay | undefined,
): void {
  const route = <T>(
    taskId: string,
    ctx: ServerContext,
    onRelay: (relay: TaskRelay) => Promise<T>,
    onJob: (jobs: ModernTasks) => Promise<T>,
  ): Promise<T> => {
    if (!declaresTasks(ctx)) throw missingCapability();
    if (relay?.owns(taskId)) return onRelay(relay);
    if (jobs !== undefined) return onJob(jobs);
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found.');
  };
  server.setRequestHandler('tasks/get', { params: taskIdParams }, (params, ctx) =>
    route(
      params.taskId,
      ctx,
      (r) => r.get(params.taskId, clientOf(ctx), ctx),
      (j) => j.get(params.taskId, ctx),
    ),
  );
  server.setRequestHandler('tasks/update', { params: taskIdParams }, (params, ctx) =>
    route(
      params.taskId,
      ctx,
      (r) => r.update(params.taskId, clientOf(ctx), ctx),
      (j) => j.update(params.taskId, ctx),
    ),
  );
  server.setRequestHandler('tasks/cancel', { params: taskIdParams }, (params, ctx) =>
    route(
      params.taskId,
      ctx,
      (r) => r.cancel(params.taskId, clientOf(ctx), ctx),
      (j) => j.cancel(params.taskId, ctx),
    ),
  );
}

/** The Tasks extension over `options.backend`. */
export function createModernTasks(options: ModernTasksOptions): ModernTasks {
  const { backend } = options;
  const ttlMs = options.ttlMs ?? DEFAULT_SERVE_TASK_TTL_MS;
  const pollIntervalMs = options.pollIntervalMs ?? DEFAULT_SERVE_TASK_POLL_INTERVAL_MS;
  const maxPerClient = options.maxPerClient ?? DEFAULT_SERVE_TASKS_PER_CLIENT;
  return {
    async create(code, ctx) {
      const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
      const submitted = await submitTask(backend, {
        code,
        client: clientOf(ctx),
        ttlMs,
        maxPerClient,
        // What this client can answer: its script's upstream input requests park the task for it.
        capabilities: envelope?.[CLIENT_CAPABILITIES_META_KEY] as Record<string, unknown> | undefined,
      });
      if ('refused' in submitted) return { refused: submitted.refused };
      // SEP-2663 § Task Creation: no CreateTaskResult before a tasks/get for it would resolve.
      if ('unreadable' in submitted)
        throw new ProtocolError(ProtocolErrorCode.InternalError, submitted.unreadable);
      const job = submitted.job;
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
    async get(taskId, ctx) {
      const job = await findTask(backend, taskId, ctx);
      return { ...taskOf(job, pollIntervalMs) };
    },
    async update(taskId, ctx) {
      const job = await findTask(backend, taskId, ctx);
      // The SDK lifts `inputResponses` out of the params (as for a retried tools/call).
      const responses = ctx.mcpReq.inputResponses as Record<string, unknown> | undefined;
      const call = job.approval;
      // Responses to keys not outstanding are ignored (SEP-2663 § Task Update Requests).
      if (job.state !== 'waiting-approval' || call === undefined) return {};
      if (call.input !== undefined) {
        const response = responseOf(call.input.method, responses, inputKeyOf(call));
        if (response === undefined) return {};
        if (response instanceof Error)
          throw new ProtocolError(
            ProtocolErrorCode.InvalidParams,
            `Invalid inputResponses: ${response.message}.`,
          );
        const oversized = oversizedAnswer(response);
        if (oversized !== undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, oversized);
        try {
          await backend.approve(job.id, { approved: true, response });
        } catch {
          // Answered meanwhile (another update, its timeout): the ack stays an ack.
        }
        return {};
      }
      const decision = decisionOf(responses, inputKeyOf(call));
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
    },
    async cancel(taskId, ctx) {
      const job = await findTask(backend, taskId, ctx);
      await backend.cancel(job.id);
      return {};
    },
  };
}
