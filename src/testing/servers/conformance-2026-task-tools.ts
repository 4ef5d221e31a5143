/**
 * @module
 * The task fixture tools the conformance suite's `tasks-*` scenarios (0.2.0-alpha.12) list under
 * "Required server fixtures", on an SDK v2 (`@modelcontextprotocol/server`) low-level `Server`,
 * with the Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) served by the fixture
 * itself: SDK 2.4 serves no `tasks/*` method on the 2026-07-28 era, so `tasks/get`,
 * `tasks/update` and `tasks/cancel` are custom request handlers over a {@link ConformanceTaskState}
 * that outlives the per-request servers `createMcpHandler` builds.
 *
 * The tools, written from the scenarios' texts:
 * - `greet` — sync only: `Hello, {name}!`.
 * - `slow_compute` — a task when the request declares the extension, else answered in the
 *   request: sleeps `seconds` then answers; a cancelled task settles `cancelled`.
 * - `failing_job` — task support `required`: a task that completes after about a second with a
 *   tool error (`isError`); without the extension, `-32021` with `requiredCapabilities`.
 * - `protocol_error_job` — a task that ends `failed` with an inlined JSON-RPC error.
 * - `confirm_delete` — a task that asks one `elicitation/create` (`confirm`) and completes once
 *   answered (`tasks/update`).
 * - `multi_input` — a task that asks two at once; answered one at a time, it stays
 *   `input_required` with the key still pending.
 * - `test_tool_with_task` — task support `required`: an `input_required` round (MRTR) asks
 *   `user_name`, then the retry creates a task whose result greets the name.
 *
 * `ConformanceTaskState.events` records each task method that reached the fixture (tests assert
 * an upstream `tasks/cancel` with it).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CLIENT_CAPABILITIES_META_KEY,
  createMcpHandler,
  inputRequired,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolResult,
  type InputRequiredResult,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { answerWithMcpHandler } from './mcp-handler-http.js';

/** The extension's identifier (SEP-2663 § Extension Identifier). */
const TASKS = 'io.modelcontextprotocol/tasks';

/** Tasks one fixture keeps; past it the oldest finished ones are dropped. */
export const CONFORMANCE_TASKS_MAX = 1_000;
/** Seconds `slow_compute` sleeps at most, whatever it is asked. */
export const CONFORMANCE_SLOW_COMPUTE_MAX_SECONDS = 600;

type Status = 'working' | 'input_required' | 'completed' | 'cancelled' | 'failed';

interface FixtureTask {
  id: string;
  status: Status;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  result?: CallToolResult;
  error?: { code: number; message: string };
  /** Outstanding input requests, by key (removed once answered). */
  inputRequests: Map<string, unknown>;
  answers: Map<string, unknown>;
  /** Resolves the work waiting for the outstanding inputs, once all are answered. */
  wake?: (() => void) | undefined;
  controller: AbortController;
}

/** Options of {@link createConformanceTaskState}. */
export interface ConformanceTaskStateOptions {
  /** @defaultValue 60000 */
  ttlMs?: number;
  /** @defaultValue 100 */
  pollIntervalMs?: number;
}

/** The tasks of one fixture, shared by the servers it builds (one per HTTP request). */
export interface ConformanceTaskState {
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
  /** Each task method that reached the fixture, in order. */
  readonly events: { method: 'tasks/get' | 'tasks/update' | 'tasks/cancel'; taskId: string }[];
  /** The status of a task, or undefined for an unknown one. */
  status(taskId: string): Status | undefined;
  /** Stops every task still running (idempotent). */
  close(): void;
  /** @internal */
  readonly tasks: Map<string, FixtureTask>;
}

/** A fresh task table for {@link serveConformanceTaskTools}. */
export function createConformanceTaskState(options: ConformanceTaskStateOptions = {}): ConformanceTaskState {
  const tasks = new Map<string, FixtureTask>();
  return {
    ttlMs: options.ttlMs ?? 60_000,
    pollIntervalMs: options.pollIntervalMs ?? 100,
    events: [],
    tasks,
    status: (taskId) => tasks.get(taskId)?.status,
    close() {
      for (const task of tasks.values()) task.controller.abort(new Error('fixture closed'));
    },
  };
}

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

const object = (properties: Record<string, unknown>, required: string[] = []): Tool['inputSchema'] =>
  ({ type: 'object', properties, ...(required.length > 0 ? { required } : {}) }) as Tool['inputSchema'];

/** The tools, as `tools/list` lists them (`execution` is 2025 vocabulary the SDK strips on 2026). */
export const CONFORMANCE_TASK_TOOLS: Tool[] = [
  {
    name: 'greet',
    description: 'Greets someone (answered in the request, never a task).',
    inputSchema: object({ name: { type: 'string' } }, ['name']),
  },
  {
    name: 'slow_compute',
    description:
      'Sleeps `seconds` seconds, then answers; a task when the client declares the Tasks extension.',
    inputSchema: object({ seconds: { type: 'number', minimum: 0 }, label: { type: 'string' } }, ['seconds']),
    execution: { taskSupport: 'optional' },
  },
  {
    name: 'failing_job',
    description: 'A task that completes with a tool error after about a second (task support required).',
    inputSchema: object({}),
    execution: { taskSupport: 'required' },
  },
  {
    name: 'protocol_error_job',
    description: 'A task that fails with a JSON-RPC error.',
    inputSchema: object({}),
    execution: { taskSupport: 'optional' },
  },
  {
    name: 'confirm_delete',
    description: 'Deletes a file once confirmed (one elicitation).',
    inputSchema: object({ filename: { type: 'string' } }, ['filename']),
    execution: { taskSupport: 'optional' },
  },
  {
    name: 'multi_input',
    description: 'Asks two questions at once.',
    inputSchema: object({}),
    execution: { taskSupport: 'optional' },
  },
  {
    name: 'test_tool_with_task',
    description: 'Asks for a name (input_required), then greets it from a task (task support required).',
    inputSchema: object({}),
    execution: { taskSupport: 'required' },
  },
];

function declaresTasks(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: unknown } | undefined;
  const extensions = capabilities?.extensions;
  return typeof extensions === 'object' && extensions !== null && TASKS in extensions;
}

function missingCapability(): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.MissingRequiredClientCapability,
    `Missing required client capability: this tool runs only as a task; declare "${TASKS}".`,
    { requiredCapabilities: { extensions: { [TASKS]: {} } } },
  );
}

/** The content of an accepted elicitation answer, or undefined. */
function accepted(response: unknown): Record<string, unknown> | undefined {
  if (typeof response !== 'object' || response === null) return undefined;
  const { action, content } = response as { action?: unknown; content?: unknown };
  return action === 'accept' && typeof content === 'object' && content !== null
    ? (content as Record<string, unknown>)
    : undefined;
}

function elicit(message: string, properties: Record<string, unknown>): unknown {
  return inputRequired.elicit({
    message,
    requestedSchema: { type: 'object', properties, required: Object.keys(properties) } as never,
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** What a task's work can do besides finishing: ask the client (resolves with the answers). */
interface TaskWork {
  signal: AbortSignal;
  ask(requests: Record<string, unknown>): Promise<Map<string, unknown>>;
}

/** Thrown by a task's work to end it `failed` with this JSON-RPC error. */
class TaskProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

function touch(task: FixtureTask, status: Status, statusMessage?: string): void {
  task.status = status;
  task.lastUpdatedAt = new Date().toISOString();
  if (statusMessage !== undefined) task.statusMessage = statusMessage;
  else delete task.statusMessage;
}

function evict(state: ConformanceTaskState): void {
  if (state.tasks.size < CONFORMANCE_TASKS_MAX) return;
  for (const [id, task] of state.tasks) {
    if (task.status === 'completed' || task.status === 'failed' || task.status === 'cancelled') {
      state.tasks.delete(id);
      if (state.tasks.size < CONFORMANCE_TASKS_MAX) return;
    }
  }
}

/** Creates a task running `work` and answers its `CreateTaskResult`. */
function startTask(
  state: ConformanceTaskState,
  work: (task: TaskWork) => Promise<CallToolResult>,
): Record<string, unknown> {
  evict(state);
  const now = new Date().toISOString();
  const task: FixtureTask = {
    id: randomUUID(),
    status: 'working',
    createdAt: now,
    lastUpdatedAt: now,
    inputRequests: new Map(),
    answers: new Map(),
    controller: new AbortController(),
  };
  state.tasks.set(task.id, task);
  const signal = task.controller.signal;
  const ask = (requests: Record<string, unknown>): Promise<Map<string, unknown>> =>
    new Promise((resolve, reject) => {
      for (const [key, request] of Object.entries(requests)) task.inputRequests.set(key, request);
      touch(task, 'input_required', 'Waiting for input.');
      task.wake = () => {
        task.wake = undefined;
        touch(task, 'working');
        resolve(new Map(task.answers));
      };
      signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
    });
  void work({ signal, ask }).then(
    (result) => {
      if (task.status === 'cancelled') return;
      task.result = result;
      touch(task, 'completed');
    },
    (error: unknown) => {
      if (task.status === 'cancelled') return;
      const code = error instanceof TaskProtocolError ? error.code : ProtocolErrorCode.InternalError;
      task.error = { code, message: error instanceof Error ? error.message : String(error) };
      touch(task, 'failed', task.error.message);
    },
  );
  return {
    resultType: 'task',
    taskId: task.id,
    status: 'working',
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: state.ttlMs,
    pollIntervalMs: state.pollIntervalMs,
  };
}

/** A task as `tasks/get` answers it (SEP-2663 `DetailedTask`). */
function detailed(state: ConformanceTaskState, task: FixtureTask): Record<string, unknown> {
  return {
    taskId: task.id,
    status: task.status,
    ...(task.statusMessage !== undefined ? { statusMessage: task.statusMessage } : {}),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: state.ttlMs,
    pollIntervalMs: state.pollIntervalMs,
    ...(task.status === 'input_required' ? { inputRequests: Object.fromEntries(task.inputRequests) } : {}),
    ...(task.status === 'completed' && task.result ? { result: task.result } : {}),
    ...(task.status === 'failed' && task.error ? { error: task.error } : {}),
  };
}

type Args = Record<string, unknown>;

function slowSeconds(args: Args): number {
  const seconds = typeof args.seconds === 'number' && Number.isFinite(args.seconds) ? args.seconds : 0;
  return Math.min(Math.max(seconds, 0), CONFORMANCE_SLOW_COMPUTE_MAX_SECONDS);
}

/**
 * Answers a `tools/call` of one of the task tools: a `CreateTaskResult` when the request declares
 * the extension and the tool supports tasks, else the tool's answer in the request (or `-32021`
 * for a tool whose task support is required). Undefined for a tool it does not know.
 */
export async function callConformanceTaskTool(
  state: ConformanceTaskState,
  name: string,
  args: Args,
  ctx: ServerContext,
): Promise<CallToolResult | InputRequiredResult | Record<string, unknown> | undefined> {
  const tasks = declaresTasks(ctx);
  const signal = ctx.mcpReq.signal;
  switch (name) {
    case 'greet':
      return text(`Hello, ${String(args.name ?? 'stranger')}!`);
    case 'slow_compute': {
      const seconds = slowSeconds(args);
      const done = (): CallToolResult =>
        text(`slow_compute ${String(args.label ?? '')}: done after ${seconds} s`.replace('  ', ' '));
      if (!tasks) {
        await sleep(seconds * 1000, signal);
        return done();
      }
      return startTask(state, async (work) => {
        await sleep(seconds * 1000, work.signal);
        return done();
      });
    }
    case 'failing_job':
      if (!tasks) throw missingCapability();
      return startTask(state, async (work) => {
        await sleep(1000, work.signal);
        return { ...text('failing_job: the job failed (a tool execution error).'), isError: true };
      });
    case 'protocol_error_job':
      if (!tasks)
        throw new ProtocolError(ProtocolErrorCode.InternalError, 'protocol_error_job: internal failure');
      return startTask(state, async (work) => {
        await sleep(200, work.signal);
        throw new TaskProtocolError(ProtocolErrorCode.InternalError, 'protocol_error_job: internal failure');
      });
    case 'confirm_delete': {
      const filename = String(args.filename ?? '');
      const ask = { confirm: elicit(`Delete ${filename}?`, { confirm: { type: 'boolean' } }) };
      const verdict = (answer: unknown): CallToolResult =>
        accepted(answer)?.confirm === true ? text(`Deleted ${filename}.`) : text(`Kept ${filename}.`);
      if (!tasks) {
        const answer = ctx.mcpReq.inputResponses?.confirm;
        return answer === undefined ? inputRequired({ inputRequests: ask as never }) : verdict(answer);
      }
      return startTask(state, async (work) => verdict((await work.ask(ask)).get('confirm')));
    }
    case 'multi_input': {
      const ask = {
        name: elicit('Your name?', { name: { type: 'string' } }),
        confirm: elicit('Go ahead?', { confirm: { type: 'boolean' } }),
      };
      const summary = (answers: (key: string) => unknown): CallToolResult =>
        text(
          `name=${String(accepted(answers('name'))?.name ?? '')}, confirm=${String(accepted(answers('confirm'))?.confirm ?? false)}`,
        );
      if (!tasks) {
        const responses = ctx.mcpReq.inputResponses;
        return responses?.name === undefined || responses.confirm === undefined
          ? inputRequired({ inputRequests: ask as never })
          : summary((key) => responses[key]);
      }
      return startTask(state, async (work) => {
        const answers = await work.ask(ask);
        return summary((key) => answers.get(key));
      });
    }
    case 'test_tool_with_task': {
      if (!tasks) throw missingCapability();
      const name = accepted(ctx.mcpReq.inputResponses?.user_name)?.name;
      // SEP-2663 § Task Creation: the MRTR exchange is resolved in the request, then the task.
      if (typeof name !== 'string')
        return inputRequired({
          inputRequests: { user_name: elicit('What is your name?', { name: { type: 'string' } }) } as never,
        });
      return startTask(state, async (work) => {
        await sleep(100, work.signal);
        return text(`Hello, ${name}! (from a task)`);
      });
    }
    default:
      return undefined;
  }
}

const taskIdParams = z.looseObject({ taskId: z.string().min(1).max(256) });

/**
 * Registers `tasks/get`, `tasks/update` and `tasks/cancel` over `state` on `server` (gated on
 * the extension: `-32021` for a request that does not declare it).
 */
export function registerConformanceTaskMethods(server: Server, state: ConformanceTaskState): void {
  const find = (taskId: string, ctx: ServerContext): FixtureTask => {
    if (!declaresTasks(ctx))
      throw new ProtocolError(
        ProtocolErrorCode.MissingRequiredClientCapability,
        `Missing required client capability: declare "${TASKS}".`,
        { requiredCapabilities: { extensions: { [TASKS]: {} } } },
      );
    const task = state.tasks.get(taskId);
    if (!task)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
    return task;
  };
  server.setRequestHandler('tasks/get', { params: taskIdParams }, (params, ctx) => {
    state.events.push({ method: 'tasks/get', taskId: params.taskId });
    return detailed(state, find(params.taskId, ctx));
  });
  server.setRequestHandler('tasks/update', { params: taskIdParams }, (params, ctx) => {
    state.events.push({ method: 'tasks/update', taskId: params.taskId });
    const task = find(params.taskId, ctx);
    const responses = (ctx.mcpReq.inputResponses ?? {}) as Record<string, unknown>;
    // Keys not outstanding are ignored (SEP-2663 § Task Update Requests).
    for (const [key, response] of Object.entries(responses)) {
      if (!task.inputRequests.has(key)) continue;
      task.inputRequests.delete(key);
      task.answers.set(key, response);
    }
    if (task.status === 'input_required' && task.inputRequests.size === 0) task.wake?.();
    else if (task.status === 'input_required') task.lastUpdatedAt = new Date().toISOString();
    return {};
  });
  server.setRequestHandler('tasks/cancel', { params: taskIdParams }, (params, ctx) => {
    state.events.push({ method: 'tasks/cancel', taskId: params.taskId });
    const task = find(params.taskId, ctx);
    if (task.status === 'working' || task.status === 'input_required') {
      touch(task, 'cancelled', 'Cancelled (tasks/cancel).');
      task.controller.abort(new Error('cancelled'));
    }
    return {};
  });
}

/** Options of {@link serveConformanceTaskTools}. */
export interface ConformanceTaskToolsOptions {
  /** More tools to list beside the task tools. */
  tools?: Tool[];
  /** Answers a call of one of `tools` (a tool the task tools do not know). */
  call?: (name: string, args: Args, ctx: ServerContext) => Promise<CallToolResult | InputRequiredResult>;
}

/**
 * Makes `server` (an SDK v2 low-level `Server`) serve the task tools over `state`: `tools/list`,
 * `tools/call` and the three task methods; calls of other tools go to `options.call`. The server
 * must declare `capabilities.tools` and `capabilities.extensions["io.modelcontextprotocol/tasks"]`
 * (see {@link createConformanceTaskServer}).
 */
export function serveConformanceTaskTools(
  server: Server,
  state: ConformanceTaskState,
  options: ConformanceTaskToolsOptions = {},
): void {
  server.setRequestHandler('tools/list', () => ({
    tools: [...CONFORMANCE_TASK_TOOLS, ...(options.tools ?? [])],
  }));
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const args = (request.params.arguments ?? {}) as Args;
    const answer = await callConformanceTaskTool(state, request.params.name, args, ctx);
    if (answer !== undefined) return answer as CallToolResult;
    if (options.call) return options.call(request.params.name, args, ctx);
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
  });
  registerConformanceTaskMethods(server, state);
}

/** A low-level SDK v2 server that serves the task tools over `state` (one per request). */
export function createConformanceTaskServer(
  state: ConformanceTaskState,
  options: ConformanceTaskToolsOptions = {},
): Server {
  const server = new Server(
    { name: 'conformance-2026-task-tools', version: '1.0.0' },
    { capabilities: { tools: {}, extensions: { [TASKS]: {} } } },
  );
  serveConformanceTaskTools(server, state, options);
  return server;
}

/** A running 2026-07-28 task fixture on loopback HTTP. */
export interface ConformanceTaskEndpoint {
  /** `http://127.0.0.1:<port>/mcp`. */
  url: string;
  state: ConformanceTaskState;
  /** Every JSON-RPC method that reached the endpoint, in order. */
  methods: string[];
  /** Stops listening and every task (idempotent). */
  close(): Promise<void>;
}

/**
 * Serves the task tools (2026-07-28 only: `createMcpHandler` with `legacy: 'reject'`) on a free
 * loopback port, for tests and a conformance run through `codecall serve`.
 */
export async function startConformanceTaskEndpoint(
  options: ConformanceTaskStateOptions & ConformanceTaskToolsOptions & { port?: number } = {},
): Promise<ConformanceTaskEndpoint> {
  const state = createConformanceTaskState(options);
  const methods: string[] = [];
  const handler = createMcpHandler(() => createConformanceTaskServer(state, options), { legacy: 'reject' });
  const http: HttpServer = createServer((request, response) => {
    answerWithMcpHandler(handler, request, response, (message) => {
      if (typeof message.method === 'string') methods.push(message.method);
    }).catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  await new Promise<void>((resolve) => http.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    state,
    methods,
    close() {
      closed ??= new Promise<void>((resolve) => {
        state.close();
        http.closeAllConnections();
        http.close(() => resolve());
      });
      return closed;
    },
  };
}
