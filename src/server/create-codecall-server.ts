/**
 * @module
 * codecall as an MCP server: an SDK `Server` wired to a {@link CodecallRuntime}. It exposes
 * `search_tools` (query → ranked tools with their TypeScript declarations), `execute_code`
 * (code → stdout, stderr, exit status) and, passed through, the configured tools a model may
 * call directly (`allowedCallers` contains `"direct"` and `deferLoading: false`).
 *
 * A long `execute_code` run sends progress notifications when the request carries a
 * `progressToken`, and stops when the client cancels. Every run feeds the tool graph (through
 * the runtime), and so do consecutive direct calls of one session (see `sequenceGapMs`), so
 * search improves while the server is used. When the upstream catalog changes
 * the change reaches search at once; when the exposed tool list changes, the client gets
 * `notifications/tools/list_changed`. Transports are separate (`startStdioServer`,
 * `startHttpServer`); the runtime is shared and owned by the caller.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { NotificationOptions, RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  type CallToolRequest,
  type JSONRPCRequest,
  type ServerRequest,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type ServerNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { EXECUTE_CODE_NAME, SEARCH_TOOLS_NAME, parseExecuteCodeInput } from '../meta/index.js';
import {
  DEFAULT_SERVE_MAX_QUEUED_NOTIFICATION_BYTES,
  DEFAULT_SERVE_MAX_SUBSCRIPTIONS_PER_SESSION,
  DEFAULT_SERVE_PROGRESS_INTERVAL_MS,
  DEFAULT_SERVE_SEARCH_WAIT_FOR_SERVERS_MS,
  DEFAULT_SERVE_SEQUENCE_GAP_MS,
} from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import {
  createScriptStore,
  formatResultForModel,
  type CodecallRuntime,
  type ScriptStore,
} from '../execute/index.js';
import { MemoryHistoryStore } from '../store/index.js';
import type { ExecutionResult } from '../types.js';
import type { ServeLearning } from '../config/index.js';
import { elicitationApprover } from './elicitation-approver.js';
import type { LegacyTaskClient, LegacyTasks } from './legacy-tasks.js';
import { watchServedLists } from './served-lists.js';
import { attachGateway, type NotificationDroppedEvent } from './gateway.js';
import type { CallTrace } from '../util/trace-context.js';
import { requestTracing } from './request-tracing.js';
import {
  errorText,
  listCodecallTools,
  searchToolsCall,
  textResult,
  withServerNote,
} from './shared-handlers.js';
import { RunLimiter } from './run-limiter.js';
import { failedServersText, ownersOfDirectName, waitForServers } from './starting-servers.js';

/** Told after every `execute_code` run (for logs and tests). */
export interface ExecuteCodeEvent {
  result: ExecutionResult;
  /** The transport's session id (Streamable HTTP), if any. */
  sessionId?: string;
}

/** Options of {@link createCodecallServer}. */
export interface CodecallServerOptions {
  /** The open runtime the server answers from; the caller owns it (and closes it). */
  runtime: CodecallRuntime;
  /**
   * Bounds `execute_code` runs; pass one limiter to every server of a process so the bound is
   * per process, not per session.
   * @defaultValue a new {@link RunLimiter} with the `DEFAULT_SERVE_MAX_*_RUNS` bounds
   */
  runLimiter?: RunLimiter;
  /**
   * Expose tools the configuration opens to direct calls (`allowedCallers` contains `"direct"`,
   * `deferLoading: false`) as tools of this server, named `<server>__<tool>` (at most 64
   * characters, as the agent loop names them).
   * @defaultValue true
   */
  passThrough?: boolean;
  /**
   * Expose pass-through tools under their original names when no other exposed tool has that
   * name (and it is neither `search_tools` nor `execute_code`); prompts and resource URIs keep
   * theirs when one connected server alone offers them. A gateway in front of one server is then
   * transparent. Clashing names stay `<server>__<tool>`.
   * @defaultValue false
   */
  originalNames?: boolean;
  /**
   * Resource subscriptions this session may hold; past it `resources/subscribe` is refused.
   * @defaultValue {@link DEFAULT_SERVE_MAX_SUBSCRIPTIONS_PER_SESSION}
   */
  maxSubscriptions?: number;
  /**
   * Interval of progress notifications of a running `execute_code` (only when the request has
   * a `progressToken`).
   * @defaultValue {@link DEFAULT_SERVE_PROGRESS_INTERVAL_MS}
   */
  progressIntervalMs?: number;
  /**
   * Direct (pass-through) calls of this session teach the tool graph: each successful call is
   * recorded as the pair `[previous, current]` when the previous successful direct call ended
   * less than this long before the current one started. `0` records nothing.
   * @defaultValue {@link DEFAULT_SERVE_SEQUENCE_GAP_MS}
   */
  sequenceGapMs?: number;
  /**
   * Who learns from this session's usage. `"shared"`: its `execute_code` runs and direct-call
   * sequences teach the runtime's one tool graph (and usage history), which ranks search for
   * every session of the process, so clients see which tools others used together. `"off"`:
   * the session only reads the graph; nothing it does is recorded.
   * @defaultValue `"shared"`
   */
  learning?: ServeLearning;
  /**
   * Milliseconds a `search_tools` call waits for MCP servers still starting (the runtime's pool
   * opened with `background`) before it ranks; `0` ranks at once. A call naming a starting
   * server's tool (from a script or directly) waits for that server instead, up to its connect
   * timeout.
   * @defaultValue {@link DEFAULT_SERVE_SEARCH_WAIT_FOR_SERVERS_MS}
   */
  searchWaitForServersMs?: number;
  /**
   * Whose `store` this session's scripts use. `"session"`: this MCP session's own, kept in memory
   * while the session lasts (bounded by `store.maxNamespaceBytes`), which no other session
   * reads; `"runtime"`: the runtime's (`runtime.scriptStore`, the configuration's namespace in
   * the usage history), shared with every session and process that uses it. Nothing when the
   * runtime has no store (`store.enabled: false`).
   * @defaultValue `"session"`
   */
  store?: 'session' | 'runtime';
  /** Name and version announced at initialization. @defaultValue `codecall` and its package version */
  serverInfo?: { name: string; version: string };
  /**
   * Told of unexpected failures (not `CodecallError`s) while answering a call; the client gets
   * only the error's name, never its message. Errors it throws are ignored.
   */
  onError?: (error: unknown) => void;
  /** Called after every `execute_code` run. Errors it throws are ignored. */
  onExecute?: (event: ExecuteCodeEvent) => void;
  /**
   * Bytes of notifications (log messages, progress, resource updates) waiting to go out to this
   * session's client; past it new ones are dropped, and `onNotificationDropped` is told. A
   * client that does not read its stream costs this much memory, no more.
   * @defaultValue {@link DEFAULT_SERVE_MAX_QUEUED_NOTIFICATION_BYTES}
   */
  maxQueuedNotificationBytes?: number;
  /**
   * Told of every notification meant for a client that was not sent: its session's queue was
   * full, or an upstream log message could not be attributed to one session (upstream servers
   * are shared; such a message goes to nobody). Errors it throws are ignored.
   */
  onNotificationDropped?: (event: NotificationDroppedEvent) => void;
  /**
   * The 2025-11-25 experimental tasks (`createLegacyTasks`): with them, `execute_code` may be
   * called with `params.task` and runs as a job of their backend. Without, no `tasks`
   * capability is declared.
   */
  legacyTasks?: LegacyTasks | undefined;
  /**
   * Who this session's tasks belong to.
   * @defaultValue this session alone (a random id; `tasks/list` offered)
   */
  taskClient?: LegacyTaskClient | undefined;
}

/**
 * One MCP session's server, whose notifications wait in a queue bounded in bytes: a notification
 * is queued from the moment it is sent until its transport has handed it on (stdio: written to
 * the pipe; Streamable HTTP: written to the response, see `startHttpServer`).
 */
class BoundedServer extends Server {
  #queuedBytes = 0;

  constructor(
    info: ConstructorParameters<typeof Server>[0],
    options: ConstructorParameters<typeof Server>[1],
    private readonly bound: {
      maxBytes: number;
      onDropped: ((event: NotificationDroppedEvent) => void) | undefined;
    },
  ) {
    super(info, options);
  }

  override async notification(
    notification: ServerNotification,
    options?: NotificationOptions,
  ): Promise<void> {
    const bytes = Buffer.byteLength(JSON.stringify(notification));
    if (this.#queuedBytes + bytes > this.bound.maxBytes) {
      try {
        this.bound.onDropped?.({
          reason: 'queue-full',
          method: notification.method,
          queuedBytes: this.#queuedBytes,
        });
      } catch {
        // A listener's failure must not fail the sender.
      }
      return;
    }
    this.#queuedBytes += bytes;
    try {
      await super.notification(notification, options);
    } finally {
      this.#queuedBytes -= bytes;
    }
  }
}

/** Instructions announced at initialization (clients may show them to the model). */
export const CODECALL_SERVER_INSTRUCTIONS = [
  'codecall fronts many MCP tools. To use them: call search_tools with what you need to do; it returns',
  'the best tools with TypeScript declarations. Then call execute_code with a script that calls them as',
  '`await tools.<server>.<tool>(args)` (top-level await works), filters and aggregates the results, and',
  'prints only the answer with console.log: only what the script prints comes back.',
].join(' ');

/** codecall's version from its package.json (`0.0.0` when unreadable). */
export function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      name?: unknown;
      version?: unknown;
    };
    return pkg.name === 'codecall' && typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/**
 * A protocol error whose JSON-RPC message is `message` alone. The SDK's `McpError` puts
 * `MCP error <code>: ` into its message and sends that text; the client's SDK then prefixes it
 * again (`MCP error -32602: MCP error -32602: …`). This one is sent bare and read with one prefix.
 */
function protocolError(code: ErrorCode, message: string): McpError {
  const error = new McpError(code, message);
  error.message = message;
  return error;
}

/**
 * Creates an MCP server (the SDK's low-level `Server`) answering from `runtime`. Connect it to
 * any transport; closing it (or its transport) cancels its in-flight runs. One runtime may
 * back many servers (one per HTTP session).
 *
 * @example
 * ```ts
 * await using runtime = await CodecallRuntime.open({ load: { path: 'codecall.json' } });
 * const server = createCodecallServer({ runtime });
 * await server.connect(new StdioServerTransport());
 * ```
 */
export function createCodecallServer(options: CodecallServerOptions): Server {
  const { runtime } = options;
  const limiter = options.runLimiter ?? new RunLimiter();
  const passThrough = options.passThrough ?? true;
  const originalNames = options.originalNames ?? false;
  const progressIntervalMs = options.progressIntervalMs ?? DEFAULT_SERVE_PROGRESS_INTERVAL_MS;
  const tracing = requestTracing(runtime.config.serve.telemetry);
  const sequenceGapMs = options.sequenceGapMs ?? DEFAULT_SERVE_SEQUENCE_GAP_MS;
  const learn = (options.learning ?? 'shared') === 'shared';
  const searchWaitMs = options.searchWaitForServersMs ?? DEFAULT_SERVE_SEARCH_WAIT_FOR_SERVERS_MS;
  if (!Number.isFinite(searchWaitMs) || searchWaitMs < 0)
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `searchWaitForServersMs must be a number ≥ 0 (0 ranks at once); got ${searchWaitMs}.`,
      { details: { field: 'searchWaitForServersMs', value: searchWaitMs } },
    );
  // This session's own store (`store: "session"`), made at its first run.
  let sessionStore: { store: ScriptStore; values: MemoryHistoryStore } | undefined;
  const storeOfRun = (): ScriptStore | undefined => {
    if (options.store === 'runtime' || runtime.scriptStore === undefined) return undefined;
    if (sessionStore === undefined) {
      const values = new MemoryHistoryStore();
      const limits = runtime.config.store;
      sessionStore = {
        values,
        store: createScriptStore({
          history: values,
          namespace: 'session',
          maxValueBytes: limits.maxValueBytes,
          maxNamespaceBytes: limits.maxNamespaceBytes,
        }),
      };
    }
    return sessionStore.store;
  };
  if (!Number.isFinite(sequenceGapMs) || sequenceGapMs < 0)
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `sequenceGapMs must be a number ≥ 0 (0 records nothing); got ${sequenceGapMs}.`,
      { details: { field: 'sequenceGapMs', value: sequenceGapMs } },
    );
  // The last successful direct call of this session (one Server is one MCP session).
  let lastDirect: { name: string; endedAt: number } | undefined;
  // Query feedback: the tools called after a search_tools query (until the next one) are its use.
  // Resolves once it is written: the answer that depends on it waits for that.
  let lastQuery: { query: string; credited: Set<string> } | undefined;
  const creditQuery = (tools: readonly string[]): Promise<void> => {
    const current = lastQuery;
    const fresh = current ? [...new Set(tools)].filter((tool) => !current.credited.has(tool)) : [];
    for (const tool of fresh) current?.credited.add(tool);
    return current && fresh.length > 0
      ? runtime.recordUsage({ query: current.query, tools: fresh })
      : Promise.resolve();
  };
  const maxQueuedNotificationBytes =
    options.maxQueuedNotificationBytes ?? DEFAULT_SERVE_MAX_QUEUED_NOTIFICATION_BYTES;
  if (!Number.isSafeInteger(maxQueuedNotificationBytes) || maxQueuedNotificationBytes < 1)
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `maxQueuedNotificationBytes must be an integer ≥ 1; got ${maxQueuedNotificationBytes}.`,
      { details: { field: 'maxQueuedNotificationBytes', value: maxQueuedNotificationBytes } },
    );
  const tasks = options.legacyTasks;
  const taskClient = options.taskClient ?? { id: `session:${randomUUID()}`, listable: true };
  const server = new BoundedServer(
    options.serverInfo ?? { name: 'codecall', version: packageVersion() },
    {
      capabilities: {
        tools: { listChanged: true },
        ...(tasks !== undefined ? { tasks: tasks.capabilities(taskClient) } : {}),
      },
      instructions: CODECALL_SERVER_INSTRUCTIONS,
    },
    { maxBytes: maxQueuedNotificationBytes, onDropped: options.onNotificationDropped },
  );
  const inFlight = new Set<AbortController>();
  // Owner of this MCP session's sandbox sessions: other clients never see them, even by name.
  const sandboxOwner = `mcp:${randomUUID()}`;
  const maxSubscriptions = options.maxSubscriptions ?? DEFAULT_SERVE_MAX_SUBSCRIPTIONS_PER_SESSION;
  if (!Number.isInteger(maxSubscriptions) || maxSubscriptions < 1)
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `maxSubscriptions must be an integer ≥ 1; got ${maxSubscriptions}.`,
      { details: { field: 'maxSubscriptions', value: maxSubscriptions } },
    );
  // The session's upstream calls carry its sandbox owner as their origin (what they log is its).
  const gateway = attachGateway(server, {
    runtime,
    originalNames,
    maxSubscriptions,
    origin: sandboxOwner,
    onNotificationDropped: options.onNotificationDropped,
  });
  const lists = watchServedLists(runtime, {
    passThrough,
    originalNames,
    onToolsChanged: () => {
      if (server.transport) server.sendToolListChanged().catch(() => {});
    },
    onUpstreamsChanged: () => gateway.upstreamsChanged(),
  });

  server.onclose = () => {
    lists.stop();
    gateway.close();
    for (const controller of inFlight) controller.abort(new Error('the MCP server closed'));
    runtime.closeSandboxSessions(sandboxOwner);
    // The session's own store ends with it.
    void sessionStore?.values.close();
    sessionStore = undefined;
  };

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: listCodecallTools(runtime, lists.tools, { executeAsTask: tasks !== undefined }),
  }));

  const callTool = async (
    request: CallToolRequest,
    extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
    trace: CallTrace | undefined,
  ): Promise<CallToolResult> => {
    const { name, arguments: args } = request.params;
    if (request.params.task !== undefined) return callToolAsTask(request);
    // Calls that need approval: the runtime's approver, else this client through elicitation.
    const approver =
      runtime.tools.approver ?? elicitationApprover(server, extra, runtime.config.approvals.timeoutMs);
    if (name === SEARCH_TOOLS_NAME) {
      const searched = await searchToolsCall(runtime, args ?? {}, {
        direct: lists.tools,
        waitForServersMs: searchWaitMs,
        signal: extra.signal,
        onError: options.onError,
      });
      if (searched.query !== undefined) lastQuery = { query: searched.query, credited: new Set() };
      return searched.result;
    }

    if (name === EXECUTE_CODE_NAME) {
      const input = parseExecuteCodeInput(args ?? {});
      if ('error' in input) return textResult(input.error, true);
      const progressToken = extra._meta?.progressToken;
      let progress = 0;
      const notify = (message: string): void => {
        if (progressToken === undefined) return;
        progress++;
        const notification: ServerNotification = {
          method: 'notifications/progress',
          params: { progressToken, progress, message },
        };
        extra.sendNotification(notification).catch(() => {});
      };
      const controller = new AbortController();
      const onAbort = (): void => controller.abort(extra.signal.reason);
      extra.signal.addEventListener('abort', onAbort, { once: true });
      inFlight.add(controller);
      let timer: NodeJS.Timeout | undefined;
      try {
        if (limiter.running >= limiter.maxConcurrent)
          notify(`waiting for a free slot (${limiter.running} runs in flight, ${limiter.queued} queued)`);
        const release = await limiter.acquire(controller.signal);
        if (release === 'busy') {
          return textResult(
            `codecall is busy: ${limiter.running} runs in flight and ${limiter.queued} waiting (the most this ` +
              'server accepts). Nothing ran; try again shortly.',
            true,
          );
        }
        if (release === 'aborted')
          return textResult('Cancelled before the script started; nothing ran.', true);
        // The run's calls are this session's: what their servers log comes here.
        const run = gateway.trackRun(extra.requestId);
        try {
          const started = Date.now();
          notify('started');
          if (progressToken !== undefined) {
            timer = setInterval(
              () => notify(`running for ${Math.round((Date.now() - started) / 1000)} s`),
              progressIntervalMs,
            );
            timer.unref();
          }
          const store = storeOfRun();
          const result = await runtime.execute(input.code, {
            signal: controller.signal,
            learn,
            approver,
            // A 2026-07-28 upstream's input_required round during the run goes to this client, as
            // elicitation over its session (the same forwarding as a pass-through call's).
            asker: gateway.askerFor(extra),
            ...(store !== undefined ? { store } : {}),
            runId: run.runId,
            owner: sandboxOwner,
            ...(trace !== undefined ? { trace } : {}),
            ...(input.session !== undefined ? { session: input.session, sessionOwner: sandboxOwner } : {}),
          });
          // The run's history is written (runtime.execute waited for it); so is its query feedback.
          if (learn) await creditQuery(result.toolCalls.filter((call) => call.ok).map((call) => call.tool));
          try {
            options.onExecute?.({
              result,
              ...(extra.sessionId !== undefined ? { sessionId: extra.sessionId } : {}),
            });
          } catch {
            // A listener's failure must not fail the run.
          }
          return withServerNote(textResult(formatResultForModel(result), result.status === 'error'), runtime);
        } finally {
          run.done();
          release();
        }
      } catch (error) {
        return textResult(errorText(error, options.onError), true);
      } finally {
        if (timer) clearInterval(timer);
        extra.signal.removeEventListener('abort', onAbort);
        inFlight.delete(controller);
      }
    }

    let tool = lists.tools.get(name);
    if (!tool) {
      // A tool of a server still starting: wait for it (its connect timeout bounds the wait).
      const owners = ownersOfDirectName(runtime.tools, name, originalNames);
      await waitForServers(runtime.tools, owners, extra.signal);
      tool = lists.tools.get(name);
    }
    if (!tool) {
      const failed = failedServersText(runtime.tools, ownersOfDirectName(runtime.tools, name, originalNames));
      throw protocolError(
        ErrorCode.InvalidParams,
        `Unknown tool "${name}"${failed !== undefined ? `: ${failed}` : ''}. This server has ` +
          `${SEARCH_TOOLS_NAME}, ${EXECUTE_CODE_NAME}` +
          `${lists.tools.size > 0 ? ` and ${[...lists.tools.keys()].join(', ')}` : ''}.`,
      );
    }
    const untrack = gateway.trackCall(tool.server, extra.requestId);
    try {
      const startedAt = Date.now();
      const progressToken = extra._meta?.progressToken;
      let progressSent: Promise<void> = Promise.resolve();
      // With this session as its origin: what the server logs meanwhile is this client's.
      const result = await runtime.callToolResult(tool.name, args ?? {}, {
        signal: extra.signal,
        caller: 'direct',
        approver,
        asker: gateway.askerFor(extra),
        origin: sandboxOwner,
        ...(trace !== undefined ? { trace } : {}),
        // The server's progress on this call reaches the client under the client's own token.
        ...(progressToken !== undefined
          ? {
              onProgress: (progress) => {
                const notification: ServerNotification = {
                  method: 'notifications/progress',
                  params: { ...progress, progressToken },
                };
                // In order, and all sent before the result: a client counts the progress it got
                // before its answer, and a late notification on a finished request is dropped.
                progressSent = progressSent.then(() => extra.sendNotification(notification)).catch(() => {});
              },
            }
          : {}),
      });
      await progressSent;
      // The upstream result as it came: a client that asked for this tool gets its images,
      // audio, resources, structuredContent, _meta and isError (scripts get plain values).
      const passed: CallToolResult = { content: Array.isArray(result.content) ? result.content : [] };
      if (result.structuredContent !== undefined) passed.structuredContent = result.structuredContent;
      if (result.isError === true) passed.isError = true;
      if (result._meta !== undefined) passed._meta = result._meta;
      if (passed.isError) return passed;
      // As an execute_code run does, a direct call that follows another teaches the graph.
      const previous = lastDirect;
      lastDirect = { name: tool.name, endedAt: Date.now() };
      // Written before the answer goes out, as a run's history is.
      const learned: Promise<void>[] = [];
      if (learn) learned.push(creditQuery([tool.name]));
      if (learn && previous && startedAt - previous.endedAt < sequenceGapMs)
        learned.push(runtime.recordSequence([previous.name, tool.name]));
      await Promise.all(learned);
      return passed;
    } catch (error) {
      return textResult(errorText(error, options.onError), true);
    } finally {
      untrack();
    }
  };

  /** A task-augmented `tools/call` (spec 2025-11-25 § Tool-Level Negotiation). */
  const callToolAsTask = async (request: CallToolRequest): Promise<CallToolResult> => {
    const { name, arguments: args } = request.params;
    if (tasks === undefined || name !== EXECUTE_CODE_NAME)
      throw protocolError(
        ErrorCode.MethodNotFound,
        `"${name}" cannot run as a task (its execution.taskSupport is forbidden): call it without params.task` +
          (tasks !== undefined ? `; ${EXECUTE_CODE_NAME} can run as one.` : '.'),
      );
    const input = parseExecuteCodeInput(args ?? {});
    if ('error' in input) return textResult(input.error, true);
    if (input.session !== undefined)
      return textResult(
        'A task runs on the job backend, not in a REPL session: call execute_code without "session" as a task, or with it without params.task.',
        true,
      );
    const created = await tasks.create(
      input.code,
      request.params.task?.ttl,
      taskClient,
      server.getClientCapabilities(),
    );
    if ('refused' in created) return textResult(created.refused, true);
    // The CreateTaskResult goes out as the answer of tools/call (the SDK sends what this returns).
    return created as unknown as CallToolResult;
  };

  // tools/call is answered here rather than through setRequestHandler: the SDK validates the
  // request first and answers a bad one with a raw dump of the schema library's issues. Check
  // it ourselves and say which field is wrong and what to send (-32602).
  server.fallbackRequestHandler = async (request, extra) => {
    if (request.method !== CallToolRequestSchema.shape.method.value)
      throw protocolError(ErrorCode.MethodNotFound, `Method not found: ${request.method}.`);
    const call = parseCallToolRequest(request);
    return tracing.request(
      {
        tool: call.params.name,
        meta: call.params._meta,
        sessionId: extra.sessionId,
        requestId: extra.requestId,
      },
      (trace) => callTool(call, extra, trace),
      (result) => result.isError === true,
    );
  };

  if (tasks !== undefined) tasks.register(server, taskClient);
  return server;
}

function describeJson(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `${typeof value === 'string' ? 'a string' : `a ${typeof value}`} (${JSON.stringify(value)?.slice(0, 40)})`;
}

/** Validates a `tools/call` request; throws -32602 naming the field and the fix. */
function parseCallToolRequest(request: JSONRPCRequest): CallToolRequest {
  const params = request.params as Record<string, unknown> | undefined;
  const invalid = (field: string, expected: string, value: unknown): McpError =>
    protocolError(
      ErrorCode.InvalidParams,
      `Invalid tools/call request: ${field} must be ${expected}; got ${describeJson(value)}.`,
    );
  if (typeof params !== 'object' || params === null || Array.isArray(params))
    throw invalid('params', 'an object like {"name": "search_tools", "arguments": {…}}', params);
  if (typeof params.name !== 'string' || params.name === '')
    throw invalid('params.name', 'the name of a tool (a non-empty string)', params.name);
  const args = params.arguments;
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args)))
    throw invalid('params.arguments', 'an object of named arguments (e.g. {"query": "…"}), or absent', args);
  const parsed = CallToolRequestSchema.safeParse(request);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue ? issue.path.map(String).join('.') : 'params';
    throw protocolError(
      ErrorCode.InvalidParams,
      `Invalid tools/call request: ${field || 'params'}: ${issue?.message ?? 'does not match the MCP schema'}.`,
    );
  }
  return parsed.data;
}
