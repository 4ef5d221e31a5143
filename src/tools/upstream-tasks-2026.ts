/**
 * @module
 * The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on the client side of a
 * 2026-07-28 upstream: codecall declares the extension in each request's capabilities, so a
 * server may answer a `tools/call` with a `CreateTaskResult` (`resultType: "task"`). A script's
 * call then awaits the task transparently: it polls `tasks/get` at the server's `pollIntervalMs`
 * (clamped by the bounds the 2025-11-25 path uses), answers an `input_required` task's
 * `inputRequests` through the asker of the call and sends them with `tasks/update`, returns the
 * inlined `result` of a `completed` task, fails the call for a `failed` (its inlined JSON-RPC
 * `error`) or `cancelled` one, and sends `tasks/cancel` when the call is aborted or runs out of
 * time. A gateway's pass-through call may instead take the task as it came (`relay`) and hand it
 * to its own client.
 *
 * SDK 2.4's client does not decode `resultType: "task"` (it rejects the answer with
 * `UNSUPPORTED_RESULT_TYPE` before the caller sees it), so {@link UpstreamTasks.tap} marks a task
 * answer on the transport, under a key the server cannot guess, as a `complete` result that
 * carries the task; everything else reaches the SDK untouched.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import {
  DEFAULT_UPSTREAM_INPUT_REQUESTS_MAX,
  DEFAULT_UPSTREAM_TASK_ABORT_GRACE_MS,
  DEFAULT_UPSTREAM_INPUT_REQUIRED_MAX_ROUNDS,
  DEFAULT_UPSTREAM_TASK_CANCEL_TIMEOUT_MS,
  DEFAULT_UPSTREAM_TASK_ID_MAX_CHARS,
  DEFAULT_UPSTREAM_TASK_MAX_POLL_MS,
  DEFAULT_UPSTREAM_TASK_MESSAGE_MAX_CHARS,
  DEFAULT_UPSTREAM_TASK_MIN_POLL_MS,
} from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import { raceAbort } from '../util/race-abort.js';
import type { RawToolResult } from './normalize-result.js';

/** The extension's identifier (SEP-2663 § Extension Identifier). */
export const TASKS_EXTENSION_ID = 'io.modelcontextprotocol/tasks';

/** The per-request capabilities key of the 2026-07-28 `_meta` envelope. */
const CLIENT_CAPABILITIES_META = 'io.modelcontextprotocol/clientCapabilities';

/**
 * How a call to a 2026-07-28 upstream treats the Tasks extension:
 * - `await`: declare it; a task answer is awaited and the call resolves with its result (scripts);
 * - `relay`: declare it; a task answer resolves as {@link upstreamTaskOf} of the result, not
 *   awaited (a gateway whose own client declared the extension);
 * - `undeclared`: do not declare it, so the server answers in the request or refuses with
 *   `-32021` (a gateway whose client did not declare it).
 */
export type UpstreamTaskMode = 'await' | 'relay' | 'undeclared';

/** The task statuses of SEP-2663 § Task Status. */
export type UpstreamTaskStatus = 'working' | 'input_required' | 'completed' | 'cancelled' | 'failed';

/** An upstream's `CreateTaskResult` or `tasks/get` answer, checked field by field (untrusted). */
export interface UpstreamTask {
  taskId: string;
  status: UpstreamTaskStatus;
  statusMessage: string | undefined;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs: number | undefined;
  /** As sent (an object); each entry is checked by whoever answers it. */
  inputRequests: Record<string, unknown> | undefined;
  result: Record<string, unknown> | undefined;
  error: { code: number; message: string } | undefined;
}

const STATUSES: readonly UpstreamTaskStatus[] = [
  'working',
  'input_required',
  'completed',
  'cancelled',
  'failed',
];

/** What an upstream's ack (`tasks/update`, `tasks/cancel`) may be: any object. */
const AckSchema = z.looseObject({});

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function clip(text: string): string {
  return text.length > DEFAULT_UPSTREAM_TASK_MESSAGE_MAX_CHARS
    ? `${text.slice(0, DEFAULT_UPSTREAM_TASK_MESSAGE_MAX_CHARS)}…`
    : text;
}

/**
 * Reads an upstream task (a `CreateTaskResult` or a `tasks/get` answer); `why` describes what is
 * wrong with one that is not a task, for the caller's error.
 */
export function readUpstreamTask(raw: unknown): UpstreamTask | { why: string } {
  if (!isObject(raw)) return { why: 'its task answer is not an object' };
  const { taskId, status } = raw;
  if (typeof taskId !== 'string' || taskId.length === 0 || taskId.length > DEFAULT_UPSTREAM_TASK_ID_MAX_CHARS)
    return {
      why: `its task has no taskId, or one longer than ${DEFAULT_UPSTREAM_TASK_ID_MAX_CHARS} characters (DEFAULT_UPSTREAM_TASK_ID_MAX_CHARS)`,
    };
  if (typeof status !== 'string' || !STATUSES.includes(status as UpstreamTaskStatus))
    return { why: `its task has an unknown status ${JSON.stringify(String(status).slice(0, 40))}` };
  const text = (value: unknown): string | undefined => (typeof value === 'string' ? clip(value) : undefined);
  const ttl = raw.ttlMs;
  const poll = raw.pollIntervalMs;
  const error = raw.error;
  return {
    taskId,
    status: status as UpstreamTaskStatus,
    statusMessage: text(raw.statusMessage),
    createdAt: text(raw.createdAt) ?? new Date().toISOString(),
    lastUpdatedAt: text(raw.lastUpdatedAt) ?? new Date().toISOString(),
    ttlMs: typeof ttl === 'number' && Number.isSafeInteger(ttl) && ttl > 0 ? ttl : null,
    pollIntervalMs:
      typeof poll === 'number' && Number.isFinite(poll) && poll > 0 ? Math.round(poll) : undefined,
    inputRequests: isObject(raw.inputRequests) ? raw.inputRequests : undefined,
    result: isObject(raw.result) ? raw.result : undefined,
    error: isObject(error)
      ? {
          code: typeof error.code === 'number' && Number.isInteger(error.code) ? error.code : -32603,
          message: typeof error.message === 'string' ? clip(error.message) : 'no message',
        }
      : undefined,
  };
}

const RELAYED = Symbol('codecall.upstreamTask');

/** A call's result that stands for an upstream task not awaited (`relay` mode). */
export function relayedTaskResult(task: UpstreamTask): RawToolResult {
  return Object.assign({ content: [] }, { [RELAYED]: task });
}

/** The upstream task a `relay` call resolved with, if it answered with one. */
export function upstreamTaskOf(result: object): UpstreamTask | undefined {
  return (result as { [RELAYED]?: UpstreamTask })[RELAYED];
}

/** The transport surface the tap needs (the SDK's and codecall's stdio transport alike). */
interface TappableTransport {
  onmessage?: ((message: never, extra?: never) => void) | undefined;
}

/** The tasks side of one SDK v2 client connection: what it declares and the task answers it sees. */
export class UpstreamTasks {
  private constructor(
    private readonly key: string,
    /** The client's capabilities without the extension (what an `undeclared` call declares). */
    private readonly plain: Record<string, unknown>,
  ) {}

  /** The capabilities to construct the client with: `plain` plus the Tasks extension. */
  static capabilities(plain: Record<string, unknown>): Record<string, unknown> {
    return { ...plain, extensions: { [TASKS_EXTENSION_ID]: {} } };
  }

  /**
   * Wraps the connected transport's `onmessage` (set by the SDK client on connect) so that a
   * response whose result is a `CreateTaskResult` reaches the client as a `complete` result
   * carrying the task under a per-connection random key; {@link UpstreamTasks.taskOf} reads it.
   */
  static tap(transport: unknown, plain: Record<string, unknown>): UpstreamTasks {
    const tasks = new UpstreamTasks(`codecall/task-${randomUUID()}`, plain);
    const tappable = transport as TappableTransport;
    const inner = tappable.onmessage as ((message: unknown, extra?: unknown) => void) | undefined;
    if (inner)
      tappable.onmessage = ((message: unknown, extra?: unknown) => {
        if (
          isObject(message) &&
          'id' in message &&
          isObject(message.result) &&
          message.result.resultType === 'task'
        )
          message = {
            ...message,
            result: { resultType: 'complete', content: [], [tasks.key]: message.result },
          };
        inner(message, extra);
      }) as TappableTransport['onmessage'];
    return tasks;
  }

  /** The raw `CreateTaskResult` a `tools/call` answered with, if it was one. */
  taskOf(answer: Record<string, unknown>): unknown {
    return answer[this.key];
  }

  /** The `_meta` entries of a call in `mode`: the capabilities without the extension when `undeclared`. */
  metaFor(mode: UpstreamTaskMode): Record<string, unknown> {
    return mode === 'undeclared' ? { [CLIENT_CAPABILITIES_META]: this.plain } : {};
  }
}

/**
 * Sends one task-capable `tools/call` (through `send`, given the signal the request itself runs
 * under) so that aborting it cannot orphan a task: the server may create the task before its answer
 * reaches codecall, and an aborted request never delivers that answer. On abort the caller is
 * rejected at once with the signal's reason, while the request runs on (at most
 * {@link DEFAULT_UPSTREAM_TASK_ABORT_GRACE_MS}, and never past its own timeout); an answer that then
 * arrives carrying a task gets `tasks/cancel`.
 */
export function sendKeepingTask(
  send: (signal: AbortSignal) => Promise<Record<string, unknown>>,
  options: {
    signal: AbortSignal;
    tasks: UpstreamTasks;
    request: UpstreamTaskRequest;
    graceMs?: number;
  },
): Promise<Record<string, unknown>> {
  const { signal } = options;
  signal.throwIfAborted();
  const inner = new AbortController();
  const answer = send(inner.signal);
  // On abort the caller leaves at once (raceAbort, below); the request runs on for the grace.
  const onAbort = (): void => {
    const timer = setTimeout(
      () => inner.abort(signal.reason),
      options.graceMs ?? DEFAULT_UPSTREAM_TASK_ABORT_GRACE_MS,
    );
    timer.unref();
    answer.then(
      (late) => {
        clearTimeout(timer);
        const task = readUpstreamTask(options.tasks.taskOf(late));
        if ('taskId' in task)
          void options
            .request('tasks/cancel', { taskId: task.taskId }, AckSchema, {
              timeout: DEFAULT_UPSTREAM_TASK_CANCEL_TIMEOUT_MS,
            })
            .catch(() => {});
      },
      () => clearTimeout(timer),
    );
  };
  signal.addEventListener('abort', onAbort, { once: true });
  const settled = (): void => signal.removeEventListener('abort', onAbort);
  answer.then(settled, settled);
  return raceAbort(answer, signal);
}

/** One request to the server that runs the task (`tasks/get`, `tasks/update`, `tasks/cancel`). */
export type UpstreamTaskRequest = <T>(
  method: string,
  params: Record<string, unknown>,
  schema: z.ZodType<T>,
  options: { signal?: AbortSignal; timeout: number },
) => Promise<T>;

/** One embedded input request of an `input_required` task, as the call's asker takes it. */
export interface UpstreamTaskInput {
  method: 'elicitation/create' | 'sampling/createMessage';
  params: Record<string, unknown>;
}

/** Options of {@link settleUpstreamTask}. */
export interface SettleUpstreamTaskOptions {
  mode: UpstreamTaskMode;
  serverName: string;
  qualifiedName: string;
  signal: AbortSignal;
  /** Epoch ms by which the call must be settled (the tool's timeout). */
  deadline: number;
  asker: ((request: UpstreamTaskInput, signal: AbortSignal) => Promise<Record<string, unknown>>) | undefined;
  request: UpstreamTaskRequest;
}

function failure(options: SettleUpstreamTaskOptions, why: string): CodecallError {
  return new CodecallError(
    'TOOL_CALL_FAILED',
    `${options.qualifiedName} failed: MCP server "${options.serverName}" ${why}.`,
    { details: { server: options.serverName, tool: options.qualifiedName } },
  );
}

/**
 * What a call does with the `CreateTaskResult` `raw` its server answered: in `relay` mode the
 * checked task (see {@link relayedTaskResult}); in `await` mode the task's result once it is
 * `completed`, else a `TOOL_CALL_FAILED` / `TOOL_TIMEOUT` / abort rejection, with `tasks/cancel`
 * sent for a task left unfinished. An `undeclared` call that got a task anyway fails: the server
 * broke SEP-2663 § Capability Negotiation.
 */
export async function settleUpstreamTask(
  raw: unknown,
  options: SettleUpstreamTaskOptions,
): Promise<RawToolResult> {
  if (options.mode === 'undeclared')
    throw failure(options, 'answered with a task although this call did not declare the Tasks extension');
  const created = readUpstreamTask(raw);
  if ('why' in created) throw failure(options, created.why);
  if (options.mode === 'relay') return relayedTaskResult(created);
  return awaitUpstreamTask(created, options);
}

async function awaitUpstreamTask(
  created: UpstreamTask,
  options: SettleUpstreamTaskOptions,
): Promise<RawToolResult> {
  const { signal, deadline, request } = options;
  const taskId = created.taskId;
  const within = (): { signal: AbortSignal; timeout: number } => ({
    signal,
    timeout: Math.max(1, deadline - Date.now()),
  });
  // Keys are unique over a task's life (SEP-2663 § Task Input Requests): one answered is never asked again.
  const answered = new Set<string>();
  let rounds = 0;
  let settled = false;
  try {
    let task = created;
    for (;;) {
      if (task.status === 'completed') {
        settled = true;
        if (task.result === undefined) throw failure(options, 'completed its task without a result');
        return task.result as RawToolResult;
      }
      if (task.status === 'failed') {
        settled = true;
        const error = task.error ?? { code: -32603, message: task.statusMessage ?? 'no error given' };
        throw failure(options, `failed the task it ran the call as (${error.code}: ${error.message})`);
      }
      if (task.status === 'cancelled') {
        settled = true;
        throw failure(
          options,
          `cancelled the task it ran the call as${task.statusMessage !== undefined ? ` (${task.statusMessage})` : ''}`,
        );
      }
      if (task.status === 'input_required') {
        const pending = Object.entries(task.inputRequests ?? {}).filter(([key]) => !answered.has(key));
        if (pending.length > 0) {
          if (++rounds > DEFAULT_UPSTREAM_INPUT_REQUIRED_MAX_ROUNDS)
            throw failure(
              options,
              `its task asked for input more than ${DEFAULT_UPSTREAM_INPUT_REQUIRED_MAX_ROUNDS} times (DEFAULT_UPSTREAM_INPUT_REQUIRED_MAX_ROUNDS)`,
            );
          if (pending.length > DEFAULT_UPSTREAM_INPUT_REQUESTS_MAX)
            throw failure(
              options,
              `its task asked for ${pending.length} inputs at once, more than ${DEFAULT_UPSTREAM_INPUT_REQUESTS_MAX} (DEFAULT_UPSTREAM_INPUT_REQUESTS_MAX)`,
            );
          const inputResponses: Record<string, unknown> = {};
          for (const [key, entry] of pending) {
            if (
              !isObject(entry) ||
              (entry.method !== 'elicitation/create' && entry.method !== 'sampling/createMessage') ||
              !isObject(entry.params)
            )
              throw failure(
                options,
                `its task's input request ${JSON.stringify(key.slice(0, 80))} is not an elicitation/create or sampling/createMessage request`,
              );
            if (!options.asker)
              throw failure(
                options,
                `its task asked for input (${entry.method}), and nobody who started this call can answer it here`,
              );
            signal.throwIfAborted();
            inputResponses[key] = await options.asker({ method: entry.method, params: entry.params }, signal);
            answered.add(key);
          }
          await request('tasks/update', { taskId, inputResponses }, AckSchema, within());
        }
      }
      const wait = Math.min(
        Math.max(task.pollIntervalMs ?? DEFAULT_UPSTREAM_TASK_MIN_POLL_MS, DEFAULT_UPSTREAM_TASK_MIN_POLL_MS),
        DEFAULT_UPSTREAM_TASK_MAX_POLL_MS,
      );
      if (Date.now() + wait >= deadline)
        throw new CodecallError('TOOL_TIMEOUT', `task ${taskId.slice(0, 80)} still ${task.status}`, {
          details: { tool: options.qualifiedName, timeoutMs: Math.max(0, deadline - Date.now()) },
        });
      await sleep(wait, undefined, { signal });
      const next = readUpstreamTask(await request('tasks/get', { taskId }, AckSchema, within()));
      if ('why' in next) throw failure(options, next.why);
      if (next.taskId !== taskId)
        throw failure(options, 'answered tasks/get with another task than the one it was asked for');
      task = next;
    }
  } finally {
    if (!settled)
      void request('tasks/cancel', { taskId }, AckSchema, {
        timeout: DEFAULT_UPSTREAM_TASK_CANCEL_TIMEOUT_MS,
      }).catch(() => {});
  }
}
