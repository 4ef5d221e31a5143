/**
 * @module
 * The 2025-11-25 revision's experimental tasks (spec `2025-11-25/basic/utilities/tasks`) for
 * legacy clients of `codecall serve`: `execute_code` called with `params.task` is answered with a
 * `CreateTaskResult` once a job for it is queued on codecall's job backend (embedded, BullMQ or
 * pg-boss) — the same jobs the 2026 Tasks extension runs on (`task-jobs.ts`) — and is then
 * followed with `tasks/get`, `tasks/result`, `tasks/list` and stopped with `tasks/cancel`. The
 * task id is the job's id, so any node of a shared backend answers for it.
 *
 * The SDK 1.x can serve these methods itself from a `TaskStore`, but its store runs the request in
 * the process that accepted it and keeps the answer there; here the job engine runs it, so the
 * methods are registered directly and read the job. A job's call that needs approval parks the
 * job (`waiting-approval`); the task is then `input_required`, and the requestor's `tasks/result`
 * (which the spec asks it to send on that status) carries the approval as an `elicitation/create`
 * tied to the task (`io.modelcontextprotocol/related-task`), whose answer is the job's approval.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CancelTaskRequestSchema,
  ElicitResultSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  McpError,
  RELATED_TASK_META_KEY,
  CreateMessageResultSchema,
  type ClientCapabilities,
  type ServerCapabilities,
  type ServerNotification,
  type ServerRequest,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import {
  DEFAULT_APPROVAL_TIMEOUT_MS,
  DEFAULT_JOBS_MAX_LIST_LIMIT,
  DEFAULT_SERVE_TASK_POLL_INTERVAL_MS,
  DEFAULT_SERVE_TASK_TTL_MS,
  DEFAULT_SERVE_TASKS_PER_CLIENT,
} from '../config/defaults.js';
import {
  approvalForm,
  isTaskOf,
  oversizedAnswer,
  submitTask,
  taskStateOf,
  type TaskApproval,
  type TaskBackend,
  type TaskJobRecord,
} from './task-jobs.js';

/** Time the elicitation may take beyond the approval timeout (the job's own timer decides). */
const ELICITATION_TIMEOUT_MARGIN_MS = 5_000;

/** Job states `tasks/list` reads. */
const ALL_STATES: TaskJobRecord['state'][] = [
  'waiting',
  'delayed',
  'active',
  'waiting-approval',
  'completed',
  'failed',
];

/** Options of the 2025-11-25 tasks. */
export interface LegacyTasksOptions {
  /** The job backend, or a function that opens it at the first task (stdio opens none up front). */
  backend: TaskBackend | (() => Promise<TaskBackend>);
  /** The most a task lives (its `ttl`; a client may ask for less). @defaultValue {@link DEFAULT_SERVE_TASK_TTL_MS} */
  ttlMs?: number | undefined;
  /** @defaultValue {@link DEFAULT_SERVE_TASK_POLL_INTERVAL_MS} */
  pollIntervalMs?: number | undefined;
  /** @defaultValue {@link DEFAULT_SERVE_TASKS_PER_CLIENT} */
  maxPerClient?: number | undefined;
  /** How long an approval asked through `tasks/result` may wait. @defaultValue {@link DEFAULT_APPROVAL_TIMEOUT_MS} */
  approvalTimeoutMs?: number | undefined;
}

/**
 * Who a session's tasks belong to. `id` binds them (the spec's authorization context);
 * `listable` is false when `id` does not tell clients apart (no bearer token), and then
 * `tasks/list` is not offered (spec § Security Considerations).
 */
export interface LegacyTaskClient {
  id: string;
  listable: boolean;
}

/** The 2025-11-25 tasks over one job backend; one per process, registered on each session's server. */
export interface LegacyTasks {
  /** The `tasks` server capability for a session of `client`. */
  capabilities(client: LegacyTaskClient): NonNullable<ServerCapabilities['tasks']>;
  /** Queues `code` as a task of `client`: the `CreateTaskResult`, or a text saying why not. */
  create(
    code: string,
    requestedTtl: number | null | undefined,
    client: LegacyTaskClient,
    /** The session's client capabilities: its script's upstream input requests are passed to it. */
    capabilities?: ClientCapabilities | undefined,
  ): Promise<{ task: Task } | { refused: string }>;
  /** Registers `tasks/get`, `tasks/result`, `tasks/list` (when listable) and `tasks/cancel`. */
  register(server: Server, client: LegacyTaskClient): void;
}

/** The 2025 status of a job: as the 2026 one, but a script error is `failed` and a cancel is final. */
function legacyTaskOf(job: TaskJobRecord, pollInterval: number): Task {
  const state = taskStateOf(job);
  const base = {
    taskId: job.id,
    createdAt: state.createdAt,
    lastUpdatedAt: state.lastUpdatedAt,
    ttl: state.ttlMs,
  };
  // Spec: a cancelled task is cancelled from the tasks/cancel answer on, whatever the run does next.
  if (job.cancelRequested === true && state.status !== 'cancelled')
    return { ...base, status: 'cancelled', statusMessage: 'Cancelled (tasks/cancel).' };
  switch (state.status) {
    case 'completed':
      // Spec § Task Execution: a tool result with isError is a failed task.
      return state.script === 'ok'
        ? { ...base, status: 'completed' }
        : { ...base, status: 'failed', statusMessage: 'The script failed; tasks/result has its output.' };
    case 'failed':
    case 'cancelled':
      return { ...base, status: state.status, statusMessage: state.statusMessage };
    case 'input_required':
      return {
        ...base,
        status: 'input_required',
        statusMessage: `${state.statusMessage} Call tasks/result to answer it.`,
        pollInterval,
      };
    case 'working':
      return { ...base, status: 'working', statusMessage: state.statusMessage, pollInterval };
  }
}

function isTerminal(status: Task['status']): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/**
 * A protocol error sent with `message` alone (the SDK's `McpError` prefixes its message with
 * `MCP error <code>: `, and the client's SDK prefixes it again).
 */
function taskError(code: number, message: string): McpError {
  const error = new McpError(code, message);
  error.message = message;
  return error;
}

function taskNotFound(taskId: string): McpError {
  return taskError(
    ErrorCode.InvalidParams,
    `Task not found: ${taskId.slice(0, 128)} (it never existed here, belongs to another client, or was removed after it finished).`,
  );
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The 2025-11-25 tasks over `options.backend`. */
export function createLegacyTasks(options: LegacyTasksOptions): LegacyTasks {
  const ttlMs = options.ttlMs ?? DEFAULT_SERVE_TASK_TTL_MS;
  const pollInterval = options.pollIntervalMs ?? DEFAULT_SERVE_TASK_POLL_INTERVAL_MS;
  const maxPerClient = options.maxPerClient ?? DEFAULT_SERVE_TASKS_PER_CLIENT;
  const approvalTimeoutMs = options.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
  let opened: Promise<TaskBackend> | undefined;
  const backend = (): Promise<TaskBackend> => {
    const given = options.backend;
    if (typeof given !== 'function') return Promise.resolve(given);
    opened ??= given();
    // A failed open is tried again by the next task.
    opened.catch(() => (opened = undefined));
    return opened;
  };

  const find = async (taskId: string, client: LegacyTaskClient): Promise<TaskJobRecord> => {
    const job = await (await backend()).get(taskId);
    if (job === undefined || !isTaskOf(job, client.id)) throw taskNotFound(taskId);
    return job;
  };

  /** Asks this session's client to approve `call` (tied to the task); a denial when it cannot be asked. */
  const ask = async (
    server: Server,
    extra: Extra,
    taskId: string,
    call: TaskApproval,
  ): Promise<{ approved: boolean; reason?: string }> => {
    if (!server.getClientCapabilities()?.elicitation)
      return {
        approved: false,
        reason:
          'the MCP client did not declare the elicitation capability, so codecall cannot ask it for approval',
      };
    const result = await extra.sendRequest(
      {
        method: 'elicitation/create',
        // Spec § Associating Task-Related Messages: the elicitation names the task it serves.
        params: { mode: 'form', ...approvalForm(call), _meta: { [RELATED_TASK_META_KEY]: { taskId } } },
      },
      ElicitResultSchema,
      { signal: extra.signal, timeout: approvalTimeoutMs + ELICITATION_TIMEOUT_MARGIN_MS },
    );
    if (result.action === 'accept' && result.content?.approve === true) return { approved: true };
    return {
      approved: false,
      reason: result.action === 'accept' ? 'the client answered no' : `the client chose ${result.action}`,
    };
  };

  /**
   * Passes the upstream input request `call` waits on to this session's client, tied to the task;
   * its answer, or undefined when the client cannot be asked (the job then waits out its timeout).
   */
  const askInput = async (
    server: Server,
    extra: Extra,
    taskId: string,
    call: TaskApproval,
  ): Promise<Record<string, unknown> | undefined> => {
    const input = call.input;
    if (input === undefined) return undefined;
    const capabilities = server.getClientCapabilities();
    const able =
      input.method === 'sampling/createMessage' ? capabilities?.sampling : capabilities?.elicitation;
    if (!able) return undefined;
    // Spec § Associating Task-Related Messages: the request names the task it serves.
    const params = { ...input.params, _meta: { [RELATED_TASK_META_KEY]: { taskId } } };
    const options = { signal: extra.signal, timeout: approvalTimeoutMs + ELICITATION_TIMEOUT_MARGIN_MS };
    const result =
      input.method === 'sampling/createMessage'
        ? await extra.sendRequest(
            { method: input.method, params } as never,
            CreateMessageResultSchema,
            options,
          )
        : await extra.sendRequest({ method: input.method, params } as never, ElicitResultSchema, options);
    const { _meta: _ignored, ...response } = result as Record<string, unknown>;
    return oversizedAnswer(response) === undefined ? response : undefined;
  };

  /** What `tools/call` would have answered, for a task in a terminal status (spec: exactly that). */
  const payloadOf = (job: TaskJobRecord): Record<string, unknown> => {
    const state = taskStateOf(job);
    if (job.cancelRequested === true || state.status === 'cancelled')
      return {
        content: [
          { type: 'text', text: 'The task was cancelled (tasks/cancel); its script did not finish.' },
        ],
        isError: true,
      };
    if (state.status === 'failed') throw taskError(state.error.code, state.error.message);
    if (state.status === 'completed') return state.result;
    throw taskError(ErrorCode.InternalError, 'The task has not finished.');
  };

  return {
    capabilities(client) {
      return { ...(client.listable ? { list: {} } : {}), cancel: {}, requests: { tools: { call: {} } } };
    },

    async create(code, requestedTtl, client, capabilities) {
      // The client may ask for a shorter life, never a longer one.
      const ttl =
        typeof requestedTtl === 'number' && Number.isSafeInteger(requestedTtl) && requestedTtl > 0
          ? Math.min(requestedTtl, ttlMs)
          : ttlMs;
      const submitted = await submitTask(await backend(), {
        code,
        client: client.id,
        ttlMs: ttl,
        maxPerClient,
        capabilities: capabilities as Record<string, unknown> | undefined,
      });
      if ('refused' in submitted) return { refused: submitted.refused };
      if ('unreadable' in submitted) throw taskError(ErrorCode.InternalError, submitted.unreadable);
      const task = legacyTaskOf(submitted.job, pollInterval);
      // Spec § Task Status Lifecycle: a task begins working.
      return { task: { ...task, status: 'working', pollInterval } };
    },

    register(server, client) {
      server.setRequestHandler(GetTaskRequestSchema, async (request) => {
        const job = await find(request.params.taskId, client);
        return legacyTaskOf(job, pollInterval);
      });

      server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
        const { taskId } = request.params;
        const asked = new Set<number | string>();
        let last: string | undefined;
        for (;;) {
          const job = await find(taskId, client);
          const task = legacyTaskOf(job, pollInterval);
          if (isTerminal(task.status))
            return { ...payloadOf(job), _meta: { [RELATED_TASK_META_KEY]: { taskId } } };
          if (task.status !== last) {
            last = task.status;
            const notification = { method: 'notifications/tasks/status' as const, params: task };
            await extra.sendNotification(notification).catch(() => {});
          }
          const call = job.state === 'waiting-approval' ? job.approval : undefined;
          const key = call?.input === undefined ? call?.callIndex : `upstream-${call.input.round}`;
          if (call?.input !== undefined && !asked.has(key!)) {
            asked.add(key!);
            const response = await askInput(server, extra, taskId, call);
            if (response !== undefined)
              try {
                await (await backend()).approve(job.id, { approved: true, response });
              } catch {
                // Answered meanwhile (another tasks/result, its timeout): go on reading.
              }
            continue;
          }
          if (call !== undefined && call.input === undefined && !asked.has(key!)) {
            asked.add(key!);
            const decision = await ask(server, extra, taskId, call);
            try {
              await (await backend()).approve(job.id, decision);
            } catch {
              // Decided meanwhile (another tasks/result, the jobs API, its timeout): go on reading.
            }
            continue;
          }
          // The wait ends with the job (its deadline is its ttl) or with this request.
          const ttl = task.ttl ?? ttlMs;
          if (Date.now() > Date.parse(task.createdAt) + ttl + pollInterval)
            throw taskError(
              ErrorCode.InternalError,
              'The task has outlived its ttl without finishing (no worker took it?); poll tasks/get, or cancel it.',
            );
          await sleep(pollInterval, undefined, { signal: extra.signal });
        }
      });

      if (client.listable)
        server.setRequestHandler(ListTasksRequestSchema, async () => {
          const jobs = await (
            await backend()
          ).list({ states: ALL_STATES, limit: DEFAULT_JOBS_MAX_LIST_LIMIT });
          // One page: the newest DEFAULT_JOBS_MAX_LIST_LIMIT jobs of the backend, this client's.
          return {
            tasks: jobs
              .filter((job) => isTaskOf(job, client.id))
              .map((job) => legacyTaskOf(job, pollInterval)),
          };
        });

      server.setRequestHandler(CancelTaskRequestSchema, async (request) => {
        const job = await find(request.params.taskId, client);
        const task = legacyTaskOf(job, pollInterval);
        if (isTerminal(task.status))
          throw taskError(
            ErrorCode.InvalidParams,
            `Cannot cancel task: already in terminal status '${task.status}'.`,
          );
        const cancelled = await (await backend()).cancel(job.id);
        // Finished between the read and the cancel: its status is what it finished with.
        if (!cancelled) {
          const now = legacyTaskOf(await find(job.id, client), pollInterval);
          throw taskError(
            ErrorCode.InvalidParams,
            `Cannot cancel task: already in terminal status '${now.status}'.`,
          );
        }
        return legacyTaskOf({ ...job, cancelRequested: true }, pollInterval);
      });
    },
  };
}
