/**
 * @module
 * Pass-through tools as tasks on the 2026-07-28 legs (the Tasks extension, SEP-2663): when a
 * client that declared the extension calls a pass-through tool and its upstream answers with a
 * task, codecall relays that task instead of running the call as a job. The task id the client
 * gets names the upstream server, the upstream's task id, the client it belongs to and an expiry,
 * signed with HMAC-SHA256 under the key every node shares (`CODECALL_REQUEST_STATE_KEY`), so any
 * node answers `tasks/get`, `tasks/update` and `tasks/cancel` for it by forwarding them to that
 * upstream, and a client can neither forge an id nor reach another client's task. Nothing is
 * stored: the upstream keeps the task, as it would for a direct client.
 *
 * Why a relay and not a job: the upstream already runs the call durably and answers for its task
 * on any of its own nodes; a job would hold a worker for the whole task, keep a second copy of
 * its state, and could not pass the upstream's `inputRequests` through without a second
 * round-trip machinery. A client that did not declare the extension gets the call without it
 * declared upstream either, so a tool the upstream runs only as a task answers that client the
 * `-32021` the spec names (SEP-2663 § Capability Negotiation), while a script's call (no client
 * to hand a task to) awaits the task itself (`src/tools/upstream-tasks-2026.ts`).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ProtocolError, ProtocolErrorCode, type ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import {
  DEFAULT_SERVE_RELAYED_TASK_MAX_AGE_MS,
  DEFAULT_SERVE_TASK_ID_MAX_CHARS,
  DEFAULT_UPSTREAM_INPUT_REQUESTS_MAX,
} from '../config/defaults.js';
import { isCodecallError } from '../errors.js';
import type { CodecallRuntime } from '../execute/index.js';
import { readUpstreamTask, upstreamTaskOf, type UpstreamTask } from '../tools/index.js';

/** The prefix of a relayed task's id (job tasks are UUIDs). */
const PREFIX = 'ct1.';

/** What a relayed task id carries, signed. */
interface RelayedTaskId {
  /** The upstream server (its `mcpServers` key). */
  s: string;
  /** The upstream's task id. */
  t: string;
  /** The client the task belongs to (see `clientOf` in modern-tasks.ts). */
  c: string;
  /** Epoch ms after which the id is refused. */
  e: number;
}

const IdSchema = z.object({
  s: z.string().min(1),
  t: z.string().min(1),
  c: z.string().min(1),
  e: z.number(),
});

const LooseSchema = z.looseObject({});

/** Options of {@link createTaskRelay}. */
export interface TaskRelayOptions {
  runtime: CodecallRuntime;
  /** HMAC key shared by every node (`CODECALL_REQUEST_STATE_KEY`); @defaultValue a random per-process key */
  key?: string | undefined;
}

/** The relay of one leg's upstream tasks. */
export interface TaskRelay {
  /** The CreateTaskResult a pass-through call's result stands for, if its upstream answered a task. */
  created(result: object, server: string, client: string): Record<string, unknown> | undefined;
  /** True when `taskId` is a relayed task's id (it may still fail verification). */
  owns(taskId: string): boolean;
  get(taskId: string, client: string, ctx: ServerContext): Promise<Record<string, unknown>>;
  update(taskId: string, client: string, ctx: ServerContext): Promise<Record<string, never>>;
  cancel(taskId: string, client: string, ctx: ServerContext): Promise<Record<string, never>>;
}

function notFound(): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    'Failed to retrieve task: Task not found (it never existed here, belongs to another client, or expired).',
  );
}

/** A `CallToolResult` of an upstream, as the pass-through branch hands it on (content, structuredContent, isError). */
function passedResult(result: Record<string, unknown>): Record<string, unknown> {
  return {
    content: Array.isArray(result.content) ? result.content : [],
    ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
    ...(result.isError === true ? { isError: true } : {}),
  };
}

/** Only the input requests a client can answer, within the bound; the rest make the read fail. */
function checkedInputRequests(requests: Record<string, unknown>): Record<string, unknown> {
  const entries = Object.entries(requests);
  if (entries.length > DEFAULT_UPSTREAM_INPUT_REQUESTS_MAX)
    throw new ProtocolError(
      ProtocolErrorCode.InternalError,
      `The upstream task asks for ${entries.length} inputs at once, more than codecall relays (${DEFAULT_UPSTREAM_INPUT_REQUESTS_MAX}, DEFAULT_UPSTREAM_INPUT_REQUESTS_MAX).`,
    );
  for (const [key, entry] of entries) {
    const request = entry as { method?: unknown; params?: unknown };
    if (
      typeof entry !== 'object' ||
      entry === null ||
      (request.method !== 'elicitation/create' && request.method !== 'sampling/createMessage') ||
      typeof request.params !== 'object' ||
      request.params === null
    )
      throw new ProtocolError(
        ProtocolErrorCode.InternalError,
        `The upstream task's input request ${JSON.stringify(key.slice(0, 80))} is not an elicitation/create or sampling/createMessage request.`,
      );
  }
  return requests;
}

/** The relay over `options.runtime`'s upstream servers. */
export function createTaskRelay(options: TaskRelayOptions): TaskRelay {
  const { runtime } = options;
  const key = options.key !== undefined ? Buffer.from(options.key) : randomBytes(32);
  const mac = (payload: string): Buffer =>
    createHmac('sha256', key).update('codecall relayed task v1\n').update(payload).digest();

  const mint = (id: RelayedTaskId): string => {
    const payload = Buffer.from(JSON.stringify(id)).toString('base64url');
    return `${PREFIX}${payload}.${mac(payload).toString('base64url')}`;
  };

  /** The upstream task a relayed id names, if it verifies and belongs to `client`. */
  const open = (taskId: string, client: string): RelayedTaskId => {
    if (taskId.length > DEFAULT_SERVE_TASK_ID_MAX_CHARS || !taskId.startsWith(PREFIX)) throw notFound();
    const [payload, signature] = taskId.slice(PREFIX.length).split('.');
    if (payload === undefined || signature === undefined) throw notFound();
    const expected = mac(payload);
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw notFound();
    let id: RelayedTaskId;
    try {
      id = IdSchema.parse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
    } catch {
      throw notFound();
    }
    if (id.c !== client || id.e < Date.now()) throw notFound();
    return id;
  };

  /** Sends one task method to the upstream that runs the task; its errors as the client's. */
  const forward = async (
    id: RelayedTaskId,
    method: 'tasks/get' | 'tasks/update' | 'tasks/cancel',
    params: Record<string, unknown>,
    ctx: ServerContext,
  ): Promise<Record<string, unknown>> => {
    try {
      return await runtime.tools.requestUpstream(
        id.s,
        { method, params: { ...params, taskId: id.t } },
        LooseSchema,
        { signal: ctx.mcpReq.signal },
      );
    } catch (error) {
      if (
        isCodecallError(error) &&
        (error.details as { mcpCode?: unknown }).mcpCode === ProtocolErrorCode.InvalidParams
      )
        throw notFound();
      throw new ProtocolError(
        ProtocolErrorCode.InternalError,
        `MCP server "${id.s}" did not answer ${method} for this task: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  };

  const taskFields = (task: UpstreamTask, taskId: string): Record<string, unknown> => ({
    taskId,
    status: task.status,
    ...(task.statusMessage !== undefined ? { statusMessage: task.statusMessage } : {}),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: task.ttlMs,
    ...(task.pollIntervalMs !== undefined ? { pollIntervalMs: task.pollIntervalMs } : {}),
  });

  return {
    created(result, server, client) {
      const task = upstreamTaskOf(result);
      if (task === undefined) return undefined;
      const age = Math.min(
        task.ttlMs ?? DEFAULT_SERVE_RELAYED_TASK_MAX_AGE_MS,
        DEFAULT_SERVE_RELAYED_TASK_MAX_AGE_MS,
      );
      const taskId = mint({ s: server, t: task.taskId, c: client, e: Date.now() + age });
      // SEP-2663 § Task Creation: the seed state only (no result, error or inputRequests).
      const seed = taskFields(task, taskId);
      if (seed.status === 'input_required') seed.status = 'working';
      return { resultType: 'task', ...seed };
    },
    owns: (taskId) => taskId.startsWith(PREFIX),
    async get(taskId, client, ctx) {
      const id = open(taskId, client);
      const read = readUpstreamTask(await forward(id, 'tasks/get', {}, ctx));
      if ('why' in read || read.taskId !== id.t)
        throw new ProtocolError(
          ProtocolErrorCode.InternalError,
          `MCP server "${id.s}" answered tasks/get with no task of this id${'why' in read ? ` (${read.why})` : ''}.`,
        );
      const task = taskFields(read, taskId);
      if (read.status === 'input_required')
        task.inputRequests = checkedInputRequests(read.inputRequests ?? {});
      if (read.status === 'completed') task.result = passedResult(read.result ?? {});
      if (read.status === 'failed')
        task.error = read.error ?? { code: ProtocolErrorCode.InternalError, message: 'failed' };
      return task;
    },
    async update(taskId, client, ctx) {
      const id = open(taskId, client);
      // The SDK lifts `inputResponses` out of the params, as for a retried tools/call.
      const responses = (ctx.mcpReq.inputResponses ?? {}) as Record<string, unknown>;
      if (Object.keys(responses).length > DEFAULT_UPSTREAM_INPUT_REQUESTS_MAX)
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `inputResponses has more than ${DEFAULT_UPSTREAM_INPUT_REQUESTS_MAX} entries; answer the task's inputRequests (at most that many at once).`,
        );
      await forward(id, 'tasks/update', { inputResponses: responses }, ctx);
      return {};
    },
    async cancel(taskId, client, ctx) {
      await forward(open(taskId, client), 'tasks/cancel', {}, ctx);
      return {};
    },
  };
}
