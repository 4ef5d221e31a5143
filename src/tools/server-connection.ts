/**
 * @module
 * One MCP server as the pool sees it: the transport (stdio child, Streamable HTTP, SSE or an
 * injected one), the SDK client, the tool list (paginated, refreshed on
 * `notifications/tools/list_changed`), the stderr tail, reconnection with backoff after a drop,
 * and per-server call concurrency. Internal to `tools/`.
 */
import { traceStartup } from '../util/startup-trace.js';
import { statSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  type Progress,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import {
  DEFAULT_RECONNECT_INITIAL_DELAY_MS,
  DEFAULT_RECONNECT_MAX_ATTEMPTS,
  DEFAULT_RECONNECT_MAX_DELAY_MS,
  DEFAULT_SERVER_CLOSE_TIMEOUT_MS,
  DEFAULT_SERVER_MAX_TOOLS,
  DEFAULT_SERVER_STDERR_TAIL_BYTES,
  DEFAULT_TOOL_LIST_MAX_PAGES,
  DEFAULT_UPSTREAM_LIST_MAX_TTL_MS,
  DEFAULT_UPSTREAM_LIST_MIN_TTL_MS,
  DEFAULT_UPSTREAM_TASK_CANCEL_TIMEOUT_MS,
  DEFAULT_UPSTREAM_TASK_MAX_POLL_MS,
  DEFAULT_UPSTREAM_TASK_MIN_POLL_MS,
} from '../config/defaults.js';
import type { ServerConfig } from '../config/types.js';
import { CodecallError, isCodecallError } from '../errors.js';
import type { JsonSchema } from '../types.js';
import { backoffDelayMs } from '../util/backoff.js';
import { setLongTimeout } from '../util/long-timeout.js';
import type { TraceCarrier } from '../util/trace-context.js';
import type { RawToolResult } from './normalize-result.js';
import type { ToolAnnotations } from './policy.js';
import { LinearStdioClientTransport } from './stdio-transport.js';
import type { PrespawnedServer } from './prespawn.js';
import { childEnvironment, childEnvironmentNames, describeChildEnvironment } from './child-environment.js';
import { buildParamHeaders, scanParamHeaders, type ParamHeaderDeclaration } from './mcp-param-headers.js';
import { ModernClient, type ModernAsker, type RelayedInputRound } from './modern-connection.js';
import { UpstreamOAuthProvider } from './oauth/oauth-provider.js';
import type { UpstreamTaskMode } from './upstream-tasks-2026.js';

/** Creates the transport of one server; called again for each reconnect. */
export type TransportFactory = () => Transport | Promise<Transport>;

/** Life of one server connection. */
export type ServerState = 'connecting' | 'connected' | 'reconnecting' | 'failed' | 'closed';

/** A tool as listed by a server, after sanitising. */
export interface ListedTool {
  name: string;
  title?: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations?: ToolAnnotations;
  /**
   * `execution.taskSupport` (MCP 2025-11-25 tasks): `required` tools are called as tasks
   * (`tools/call` with `task`, then `tasks/get` … `tasks/result`); absent means `forbidden`.
   */
  taskSupport?: 'optional' | 'required';
}

/** Reconnection bounds. */
export interface ReconnectOptions {
  initialDelayMs: number;
  maxDelayMs: number;
  maxAttempts: number;
}

/** What happened to a server, for `onServerError`. */
export interface ServerErrorEvent {
  server: string;
  /** `connect`: did not start; `disconnect`: dropped while running; `reconnect`: gave up. */
  phase: 'connect' | 'disconnect' | 'reconnect';
  error: CodecallError;
}

/** Options of {@link ServerConnection}. */
export interface ServerConnectionOptions {
  config: ServerConfig;
  /** Replaces the transport built from `config` (in-memory servers in tests). */
  transport?: TransportFactory;
  connectTimeoutMs: number;
  reconnect?: Partial<ReconnectOptions>;
  /** Called after the tool list changed (list_changed, or a reconnect listed different tools). */
  onToolsChanged: () => void;
  onError: (event: ServerErrorEvent) => void;
  /**
   * Told of what the server notifies besides `tools/list_changed`: resource updates, resource
   * and prompt list changes, log messages (the gateway forwards them to its clients).
   */
  onNotification?: (notification: UpstreamNotification) => void;
  /**
   * Answers the requests the server sends its client: `sampling/createMessage` and
   * `elicitation/create` (the gateway forwards them to the MCP client of the call in flight).
   */
  onRequest?: UpstreamRequestHandler;
  /** The stdio server's process, started ahead of time: its first connection adopts it. */
  prespawned?: PrespawnedServer;
}

/** A notification an upstream server sent, as the gateway forwards it. */
export interface UpstreamNotification {
  method:
    | 'notifications/resources/updated'
    | 'notifications/resources/list_changed'
    | 'notifications/prompts/list_changed'
    | 'notifications/message';
  params?: Record<string, unknown>;
}

/** A request an upstream server sent to codecall as its client (sampling, elicitation). */
export interface UpstreamRequest {
  method: 'sampling/createMessage' | 'elicitation/create';
  params: Record<string, unknown>;
}

/** Answers an {@link UpstreamRequest} of `server`; rejects with the error the server gets. */
export type UpstreamRequestHandler = (
  server: string,
  request: UpstreamRequest,
  signal: AbortSignal,
) => Promise<Record<string, unknown>>;

/** Options of one call. */
export interface ConnectionCallOptions {
  signal?: AbortSignal | undefined;
  timeoutMs: number;
  /** Qualified name, for messages. */
  qualifiedName: string;
  /** Told of the server's progress notifications for this call (the request then carries a token). */
  onProgress?: ((progress: Progress) => void) | undefined;
  /** Trace context for the request's `_meta` (`traceparent`, `tracestate`, `baggage`). */
  trace?: TraceCarrier | undefined;
  /**
   * Answers what a 2026-07-28 server asks in an `input_required` round of this call (the client
   * that started the call); without it, the connection's `onRequest` (the gateway's routing).
   */
  asker?: ModernAsker | undefined;
  /**
   * What a 2026-07-28 server's task answer does (the Tasks extension): awaited, relayed, or
   * not invited. @defaultValue `await`
   */
  upstreamTask?: UpstreamTaskMode | undefined;
  /**
   * A 2026-07-28 server's `input_required` is returned to the caller (a gateway relaying it to its
   * own client) instead of answered; ignored for a 2025-11-25 server.
   */
  relay?: RelayedInputRound | undefined;
}

/** One page of `tools/list`, untrusted, with its freshness hint (2026-07-28 servers). */
interface ToolsPage {
  tools: unknown[];
  nextCursor?: string | undefined;
  ttlMs?: number | undefined;
  cacheScope?: 'public' | 'private' | undefined;
}

/** How fresh a 2026-07-28 server's tool list is (SEP-2549 `ttlMs` / `cacheScope`). */
export interface ToolListFreshness {
  /** When the list was read (epoch ms). */
  listedAt: number;
  /** The smallest `ttlMs` its pages sent; undefined when none sent one. */
  ttlMs: number | undefined;
  cacheScope: 'public' | 'private' | undefined;
  /** When codecall re-reads it: `ttlMs` clamped to the named bounds. */
  freshUntil: number;
}

const ListToolsPageSchema = z.looseObject({
  tools: z.array(z.unknown()),
  nextCursor: z.string().optional(),
});

const MAX_TOOL_NAME_LENGTH = 256;

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keeps a tool the pool can use; returns why not otherwise. */
function sanitizeTool(raw: unknown): ListedTool | string {
  if (!isObject(raw)) return 'a tool entry is not an object';
  const name = raw.name;
  if (typeof name !== 'string' || name === '' || name.length > MAX_TOOL_NAME_LENGTH)
    return `a tool has an invalid name ${JSON.stringify(name)?.slice(0, 80)}`;
  const tool: ListedTool = {
    name,
    description: typeof raw.description === 'string' ? raw.description : '',
    inputSchema: isObject(raw.inputSchema) ? raw.inputSchema : { type: 'object' },
  };
  if (typeof raw.title === 'string') tool.title = raw.title;
  if (isObject(raw.outputSchema)) tool.outputSchema = raw.outputSchema;
  if (isObject(raw.annotations)) {
    const a = raw.annotations;
    const annotations: ToolAnnotations = {};
    for (const key of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
      if (typeof a[key] === 'boolean') annotations[key] = a[key];
    }
    if (typeof a.title === 'string') annotations.title = a.title;
    tool.annotations = annotations;
  }
  if (isObject(raw.execution)) {
    const support = raw.execution.taskSupport;
    if (support === 'optional' || support === 'required') tool.taskSupport = support;
  }
  return tool;
}

/** The names of the tools that must be called as tasks, per listed array (computed once each). */
const taskToolsCache = new WeakMap<ListedTool[], ReadonlySet<string>>();
function taskToolsOf(tools: ListedTool[]): ReadonlySet<string> {
  let names = taskToolsCache.get(tools);
  if (names === undefined) {
    names = new Set(tools.filter((tool) => tool.taskSupport === 'required').map((tool) => tool.name));
    taskToolsCache.set(tools, names);
  }
  return names;
}

/** A task's status as `tasks/get` and a task-creating `tools/call` report it (untrusted). */
const UpstreamTaskSchema = z.looseObject({
  taskId: z.string().min(1).max(512),
  status: z.string(),
  pollInterval: z.number().optional(),
  statusMessage: z.string().optional(),
});
const CreateTaskPageSchema = z.looseObject({ task: UpstreamTaskSchema });
const CancelTaskPageSchema = z.looseObject({});

/**
 * A counting semaphore whose waits honour an abort signal: the per-call limit of one MCP server
 * (`maxConcurrentCalls`). Hand-written, not `p-queue` like the host's other limiters, because it
 * sits on every tool call: a call under the limit takes its slot synchronously (`tryAcquire`,
 * no promise, no event), where a `p-queue` task costs a promise chain, async-context binding and
 * four events. Measured with 200,000 sequential uncontended tasks at concurrency 16 (median of 5
 * interleaved runs, load average 22 on 2 cores): 0.78 µs per task here, 17.5 µs with `p-queue`,
 * 0.35 µs for the awaited work alone — against 12–18 µs for a whole in-process tool call.
 */
class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly limit: number) {}

  tryAcquire(): boolean {
    if (this.active < this.limit) {
      this.active++;
      return true;
    }
    return false;
  }

  acquire(signal: AbortSignal): Promise<void> {
    if (this.tryAcquire()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const grant = (): void => {
        signal.removeEventListener('abort', onAbort);
        this.active++;
        resolve();
      };
      const onAbort = (): void => {
        const index = this.waiting.indexOf(grant);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(grant);
    });
  }

  release(): void {
    this.active--;
    const next = this.waiting.shift();
    if (next) next();
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    // The reconnect backoff's cap is the caller's (`reconnect.maxDelayMs`): any length.
    const timer = setLongTimeout(done, ms);
    function done(): void {
      timer.cancel();
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

function errorCode(error: unknown): unknown {
  return isObject(error) || error instanceof Error ? (error as { code?: unknown }).code : undefined;
}

/**
 * `message` with a repeated `MCP error <code>: ` prefix said once. The SDK's `McpError` puts the
 * prefix into its message, its server sends that message as the JSON-RPC error's text, and the
 * SDK's client prefixes it again: an upstream SDK server's protocol error arrives as
 * `MCP error -32602: MCP error -32602: …`.
 */
export function withoutRepeatedMcpPrefix(message: string): string {
  return message.replace(/^(MCP error (-?\d+): )(?:MCP error \2: )+/, '$1');
}

/** MCP JSON-RPC error codes the SDK raises locally. */
const CONNECTION_CLOSED = -32000;
const REQUEST_TIMEOUT = -32001;
/** The SDK v2 client's code for a request past its `timeout` (`SdkErrorCode.RequestTimeout`). */
const SDK_V2_REQUEST_TIMEOUT = 'REQUEST_TIMEOUT';
/** The code of the error a connection attempt fails with when `connectTimeoutMs` runs out. */
const CONNECT_TIMEOUT = 'CONNECT_TIMEOUT';

/** One MCP server: transport, client, tools, reconnection. */
export class ServerConnection {
  readonly name: string;
  readonly config: ServerConfig;
  state: ServerState = 'connecting';
  tools: ListedTool[] = [];
  /** Why tools were dropped from the list, and other non-fatal notes. */
  warnings: string[] = [];
  /** Last failure, for status reports. */
  lastError: CodecallError | undefined;
  pid: number | undefined;

  private client: Client | undefined;
  /** The SDK v2 client, when `protocol` is `2026-07-28` or `auto` (then `client` is undefined). */
  private modern: ModernClient | undefined;
  /** The tool list's freshness, for a 2026-07-28 server (undefined: cached until list_changed). */
  freshness: ToolListFreshness | undefined;
  /** The `x-mcp-header` declarations of the listed tools that have any (2026-07-28 HTTP only). */
  private paramHeaders = new Map<string, ParamHeaderDeclaration[]>();
  private freshnessTimer: NodeJS.Timeout | undefined;
  private generation = 0;
  /** Listeners of the calls in flight that asked for progress, by codecall's progress token. */
  private readonly progressListeners = new Map<string, (progress: Progress) => void>();
  private progressSeq = 0;
  private stderr = '';
  private ready: Promise<void> = Promise.resolve();
  private readonly closing = new AbortController();
  private readonly semaphore: Semaphore;
  private readonly reconnectOptions: ReconnectOptions;
  private refreshing: Promise<void> | undefined;
  private refreshAgain = false;
  /** The process started ahead of time, until the first connection adopts it. */
  private prespawned: PrespawnedServer | undefined;
  /** The current stdio transport, whose reader tells how much of an unfinished message arrived. */
  private stdio: LinearStdioClientTransport | undefined;
  /** The stdio connection (generation) reset by a message over `maxMessageBytes`, and the limit. */
  private oversized: { generation: number; limitBytes: number } | undefined;

  constructor(private readonly options: ServerConnectionOptions) {
    this.name = options.config.name;
    this.config = options.config;
    this.prespawned = options.prespawned;
    this.semaphore = new Semaphore(options.config.maxConcurrentCalls);
    this.reconnectOptions = {
      initialDelayMs: options.reconnect?.initialDelayMs ?? DEFAULT_RECONNECT_INITIAL_DELAY_MS,
      maxDelayMs: options.reconnect?.maxDelayMs ?? DEFAULT_RECONNECT_MAX_DELAY_MS,
      maxAttempts: options.reconnect?.maxAttempts ?? DEFAULT_RECONNECT_MAX_ATTEMPTS,
    };
  }

  /** The last lines the server wrote to stderr (stdio servers). */
  get stderrTail(): string {
    return this.stderr;
  }

  /** First connection. Throws `SERVER_START_FAILED` with the stderr tail. */
  async start(): Promise<void> {
    this.state = 'connecting';
    try {
      await this.connectOnce();
      this.state = 'connected';
    } catch (error) {
      this.state = 'failed';
      this.lastError = this.startError(error);
      throw this.lastError;
    }
  }

  private startError(error: unknown): CodecallError {
    // An OAuth login is needed (see oauth-provider.ts): its message already names the fix.
    if (
      isCodecallError(error) &&
      error.code === 'SERVER_START_FAILED' &&
      (error.details as { server?: string } | undefined)?.server === this.name
    )
      return error;
    const reason = (error as Error)?.message ?? String(error);
    // The optional SDK v2 client is missing (`protocol`): its message names the install; no other fix applies.
    if (isCodecallError(error) && error.code === 'PACKAGE_MISSING')
      return new CodecallError(
        'SERVER_START_FAILED',
        `MCP server "${this.name}" did not start: ${reason} Or remove "protocol" from mcpServers.${this.name} to connect it in 2025-11-25.`,
        {
          details: { server: this.name, servers: [this.name], stderrTail: '', reason, timedOut: false },
          cause: error,
        },
      );
    const tail = this.stderr.trim();
    const config = this.config;
    const timedOut = errorCode(error) === CONNECT_TIMEOUT || errorCode(error) === REQUEST_TIMEOUT;
    const spawned = config.transport === 'stdio' && !this.options.transport;
    const missingCwd = spawned && !isDirectory(config.cwd);
    // Names only, never values: a child's environment carries secrets.
    const environment = spawned && !missingCwd ? childEnvironmentNames(config.env) : undefined;
    const slow = timedOut
      ? ` If it is only slow to start, raise mcpServers.${this.name}.connectTimeoutMs (now ${this.options.connectTimeoutMs}).`
      : '';
    const where = missingCwd
      ? // spawn says "spawn <command> ENOENT" for a missing cwd too: name the real culprit.
        `Fix: "cwd" of mcpServers.${this.name} (${config.cwd}) is not an existing directory; create it or correct "cwd" (relative paths resolve against the configuration's directory).`
      : config.transport === 'stdio'
        ? // Never the expanded command line: its arguments may carry ${SECRET} values.
          `Fix: check "command", "args" and "env" of mcpServers.${this.name} (run that command yourself to see its output).${slow}`
        : `Fix: check "url" and "headers" of mcpServers.${this.name}, and that the server is reachable.${slow}`;
    const stderrPart = tail
      ? `\nIts stderr ends with:\n${tail}\n`
      : spawned && timedOut
        ? '\nIt wrote nothing to stderr.\n'
        : ' ';
    const environmentPart = environment ? `${describeChildEnvironment(this.name, environment)}\n` : '';
    return new CodecallError(
      'SERVER_START_FAILED',
      `MCP server "${this.name}" did not start: ${reason}.${stderrPart}${environmentPart}${where}`,
      {
        details: {
          server: this.name,
          servers: [this.name],
          stderrTail: tail,
          reason,
          timedOut,
          ...(environment ? { environment } : {}),
        },
        cause: error,
      },
    );
  }

  private appendStderr(chunk: Buffer | string): void {
    this.stderr = (this.stderr + chunk.toString()).slice(-DEFAULT_SERVER_STDERR_TAIL_BYTES);
  }

  private async createTransport(): Promise<Transport> {
    if (this.options.transport) return this.options.transport();
    const config = this.config;
    if (config.transport === 'stdio') {
      // A process started ahead of time serves the first connection only (a reconnect spawns).
      const prespawned = this.prespawned;
      this.prespawned = undefined;
      const transport = new LinearStdioClientTransport({
        command: config.command,
        args: config.args,
        env: childEnvironment(config.env),
        cwd: config.cwd,
        stderr: 'pipe',
        maxBufferSize: config.maxMessageBytes,
        ...(prespawned ? { prespawned } : {}),
      });
      transport.stderr?.on('data', (chunk: Buffer) => this.appendStderr(chunk));
      this.stdio = transport;
      // The SDK reports an oversized message here, then closes the transport (which fails the
      // calls in flight as "connection closed"): remember why, so those calls say so.
      const generation = this.generation;
      transport.onerror = (error) => {
        const match = /ReadBuffer exceeded maximum size of (\d+)/.exec(error.message);
        if (match) this.oversized = { generation, limitBytes: Number(match[1]) };
      };
      return transport;
    }
    const url = new URL(config.url);
    const requestInit = { headers: config.headers };
    // The SDK runs the OAuth flow; the provider keeps its state in the server's token file.
    const auth = config.oauth ? { authProvider: new UpstreamOAuthProvider(this.name, config.oauth) } : {};
    // The HTTP transports (and their OAuth and EventSource code) load for HTTP servers only.
    if (config.transport === 'http') {
      const { StreamableHTTPClientTransport } =
        await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
      return new StreamableHTTPClientTransport(url, { requestInit, ...auth });
    }
    const { SSEClientTransport } = await import('@modelcontextprotocol/sdk/client/sse.js');
    return new SSEClientTransport(url, { requestInit, ...auth });
  }

  /**
   * The deadline of one connect attempt: `controller` aborts after `timeoutMs` (a `CONNECT_TIMEOUT`
   * error) or when codecall closes; `aborted` rejects then, to race the connect's steps against;
   * `dispose` clears both.
   */
  private connectDeadline(timeoutMs: number): {
    controller: AbortController;
    aborted: Promise<never>;
    dispose(): void;
  } {
    const controller = new AbortController();
    const timer = setTimeout(
      () =>
        controller.abort(
          Object.assign(new Error(`no answer within ${timeoutMs} ms (connectTimeoutMs)`), {
            code: CONNECT_TIMEOUT,
          }),
        ),
      timeoutMs,
    );
    const onClose = (): void => controller.abort(new Error('codecall is closing'));
    this.closing.signal.addEventListener('abort', onClose, { once: true });
    const aborted = new Promise<never>((_, reject) => {
      const fail = (): void => reject(controller.signal.reason as Error);
      if (controller.signal.aborted) fail();
      controller.signal.addEventListener('abort', fail, { once: true });
    });
    aborted.catch(() => {});
    return {
      controller,
      aborted,
      dispose: () => {
        clearTimeout(timer);
        this.closing.signal.removeEventListener('abort', onClose);
      },
    };
  }

  /** Connects a fresh client and lists tools, within `connectTimeoutMs`. */
  private async connectOnce(): Promise<void> {
    if (this.config.protocol !== '2025-11-25') return this.connectModernOnce();
    const generation = ++this.generation;
    const timeoutMs = this.options.connectTimeoutMs;
    const { controller, aborted, dispose } = this.connectDeadline(timeoutMs);
    // codecall declares sampling and elicitation so servers may ask; the gateway forwards each
    // request to its MCP client, or refuses it clearly when that client cannot answer.
    const client = new Client(
      { name: 'codecall', version: '0.1.0' },
      { capabilities: this.options.onRequest ? { sampling: {}, elicitation: {} } : {} },
    );
    let transport: Transport | undefined;
    try {
      transport = await this.createTransport();
      traceStartup(`server ${this.name} transport created`);
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        if (generation === this.generation) void this.refreshTools();
      });
      this.forwardUpstream(client, generation);
      await Promise.race([
        client.connect(transport, { signal: controller.signal, timeout: timeoutMs }),
        aborted,
      ]);
      traceStartup(`server ${this.name} initialized`);
      this.deliverProgressInOrder(transport);
      const tools = await Promise.race([
        this.listTools(this.legacyPages(client), controller.signal, timeoutMs),
        aborted,
      ]);
      traceStartup(`server ${this.name} tools listed`);
      if (this.closing.signal.aborted) throw new Error('codecall is closing');
      client.onclose = () => {
        if (generation === this.generation && !this.closing.signal.aborted) this.dropped();
      };
      this.client = client;
      this.pid = transport instanceof StdioClientTransport ? (transport.pid ?? undefined) : undefined;
      this.tools = tools;
    } catch (error) {
      await this.closeClient(client, transport);
      // Give a dying child a moment to flush stderr, so the report shows why it died.
      if (this.config.transport === 'stdio') await sleep(50, this.closing.signal);
      throw error;
    } finally {
      dispose();
    }
  }

  /**
   * Connects the SDK v2 client (`protocol` `2026-07-28` or `auto`) and lists tools, within
   * `connectTimeoutMs`: the same bounds, sanitising and reconnection as the 1.x path.
   */
  private async connectModernOnce(): Promise<void> {
    const generation = ++this.generation;
    const timeoutMs = this.options.connectTimeoutMs;
    const { controller, aborted, dispose } = this.connectDeadline(timeoutMs);
    let modern: ModernClient | undefined;
    let stdio: Transport | undefined;
    try {
      const protocol = this.config.protocol as 'auto' | '2026-07-28';
      stdio =
        this.options.transport || this.config.transport === 'stdio'
          ? await this.createTransport()
          : undefined;
      modern = await Promise.race([
        ModernClient.connect({
          config: this.config,
          protocol,
          transport: stdio,
          canAsk: this.options.onRequest !== undefined,
          signal: controller.signal,
          timeoutMs,
          setup: (client) => this.forwardModern(client, generation),
        }),
        aborted,
      ]);
      traceStartup(`server ${this.name} connected (${modern.era})`);
      this.deliverProgressInOrder(modern.transport as unknown as Transport);
      const connected = modern;
      const pages = (cursor: string | undefined, options: RequestOptions): Promise<ToolsPage> =>
        connected.listToolsPage(cursor, { signal: options.signal!, timeout: options.timeout! });
      const tools = await Promise.race([
        this.listTools(pages, controller.signal, timeoutMs, modern.era === 'modern'),
        aborted,
      ]);
      if (this.closing.signal.aborted) throw new Error('codecall is closing');
      modern.onclose = () => {
        if (generation === this.generation && !this.closing.signal.aborted) this.dropped();
      };
      this.modern = modern;
      this.pid = stdio instanceof StdioClientTransport ? (stdio.pid ?? undefined) : undefined;
      this.tools = tools;
    } catch (error) {
      await Promise.race([
        (async () => {
          await modern?.close();
          await stdio?.close().catch(() => {});
        })(),
        new Promise((resolve) => setTimeout(resolve, DEFAULT_SERVER_CLOSE_TIMEOUT_MS).unref()),
      ]);
      if (this.config.transport === 'stdio') await sleep(50, this.closing.signal);
      throw error;
    } finally {
      dispose();
    }
  }

  /** Registers the SDK v2 client's handlers: list changes, forwarded notifications, a fallback's requests. */
  private forwardModern(client: ModernClient['client'], generation: number): void {
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      if (generation === this.generation) void this.refreshTools();
    });
    const notify = this.options.onNotification;
    if (notify) {
      for (const method of [
        'notifications/resources/updated',
        'notifications/resources/list_changed',
        'notifications/prompts/list_changed',
        'notifications/message',
      ] as const) {
        client.setNotificationHandler(method, (notification) => {
          if (generation !== this.generation) return;
          try {
            notify(notification as UpstreamNotification);
          } catch {
            // A listener's failure must not break the connection.
          }
        });
      }
    }
    const answer = this.options.onRequest;
    if (answer) {
      // A legacy fallback (`auto`) sends these as server→client requests, as 1.x servers do.
      client.setRequestHandler(
        'sampling/createMessage',
        (request, ctx) => answer(this.name, request as UpstreamRequest, ctx.mcpReq.signal) as never,
      );
      client.setRequestHandler(
        'elicitation/create',
        (request, ctx) => answer(this.name, request as UpstreamRequest, ctx.mcpReq.signal) as never,
      );
    }
  }

  /** The pages of `tools/list` through the 1.x client. */
  private legacyPages(
    client: Client,
  ): (cursor: string | undefined, options: RequestOptions) => Promise<ToolsPage> {
    return (cursor, options) =>
      client.request(
        { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
        ListToolsPageSchema,
        options,
      );
  }

  /**
   * Records a 2026-07-28 server's list freshness and schedules the re-list at its end (a timer
   * that keeps no process alive). Lists of the 1.x path are cached until `list_changed`.
   */
  private noteFreshness(ttlMs: number | undefined, cacheScope: 'public' | 'private' | undefined): void {
    clearTimeout(this.freshnessTimer);
    this.freshnessTimer = undefined;
    const listedAt = Date.now();
    const windowMs =
      ttlMs !== undefined && ttlMs > 0
        ? Math.min(Math.max(ttlMs, DEFAULT_UPSTREAM_LIST_MIN_TTL_MS), DEFAULT_UPSTREAM_LIST_MAX_TTL_MS)
        : DEFAULT_UPSTREAM_LIST_MIN_TTL_MS;
    this.freshness = { listedAt, ttlMs, cacheScope, freshUntil: listedAt + windowMs };
    if (ttlMs !== undefined && ttlMs > 0) {
      this.freshnessTimer = setTimeout(() => void this.refreshStaleTools(), windowMs);
      this.freshnessTimer.unref();
    }
  }

  /**
   * Re-lists a 2026-07-28 server's tools when their `ttlMs` has run out (clamped to
   * [`DEFAULT_UPSTREAM_LIST_MIN_TTL_MS`, `DEFAULT_UPSTREAM_LIST_MAX_TTL_MS`]); a fresh list, or
   * one of a 2025-11-25 server (cached until `list_changed`), makes no request. Resolves `true`
   * when it asked the server.
   */
  async refreshStaleTools(): Promise<boolean> {
    if (!this.toolListStale()) return false;
    // A re-list already under way answers this one too.
    await (this.refreshing ?? this.refreshTools());
    return true;
  }

  /** Whether a 2026-07-28 server's tool list has outlived its (clamped) `ttlMs`. Synchronous. */
  toolListStale(): boolean {
    const freshness = this.freshness;
    return (
      this.modern !== undefined &&
      this.state === 'connected' &&
      freshness !== undefined &&
      Date.now() >= freshness.freshUntil
    );
  }

  /** The era the SDK v2 client landed on (`auto` may fall back); undefined on the 1.x path or offline. */
  get era(): 'modern' | 'legacy' | undefined {
    return this.state === 'connected' ? this.modern?.era : undefined;
  }

  private async listTools(
    readPage: (cursor: string | undefined, options: RequestOptions) => Promise<ToolsPage>,
    signal: AbortSignal,
    timeoutMs: number,
    modernEra = false,
  ): Promise<ListedTool[]> {
    let ttlMs: number | undefined;
    let cacheScope: 'public' | 'private' | undefined;
    const tools: ListedTool[] = [];
    const seen = new Set<string>();
    const warnings: string[] = [];
    let cursor: string | undefined;
    const cursors = new Set<string>();
    // SEP-2243: on a 2026-07-28 Streamable HTTP connection, x-mcp-header annotations are checked
    // (an invalid one excludes its tool) and remembered for the Mcp-Param-* headers of each call.
    const mirrorHeaders = modernEra && this.config.transport === 'http';
    const paramHeaders = new Map<string, ParamHeaderDeclaration[]>();
    for (let page = 0; page < DEFAULT_TOOL_LIST_MAX_PAGES; page++) {
      const result = await readPage(cursor, { signal, timeout: timeoutMs });
      // Pages may differ: the list is as fresh as its stalest page, and private if any page is.
      if (result.ttlMs !== undefined) ttlMs = Math.min(ttlMs ?? Infinity, result.ttlMs);
      if (result.cacheScope !== undefined && cacheScope !== 'private') cacheScope = result.cacheScope;
      for (const raw of result.tools) {
        const tool = sanitizeTool(raw);
        if (typeof tool === 'string') warnings.push(tool);
        else if (seen.has(tool.name)) warnings.push(`tool "${tool.name}" is listed twice; the first is kept`);
        else if (mirrorHeaders && !this.noteParamHeaders(tool, paramHeaders, warnings)) continue;
        else if (tools.length >= DEFAULT_SERVER_MAX_TOOLS)
          warnings.push(`more than ${DEFAULT_SERVER_MAX_TOOLS} tools; "${tool.name}" and later ones dropped`);
        else {
          seen.add(tool.name);
          tools.push(tool);
        }
      }
      cursor = result.nextCursor;
      if (cursor === undefined) break;
      if (cursors.has(cursor)) {
        warnings.push('tools/list repeated a cursor; listing stopped');
        break;
      }
      cursors.add(cursor);
      if (page === DEFAULT_TOOL_LIST_MAX_PAGES - 1)
        warnings.push(`tools/list has more than ${DEFAULT_TOOL_LIST_MAX_PAGES} pages; the rest was not read`);
    }
    this.warnings = warnings.slice(0, 50);
    this.paramHeaders = paramHeaders;
    if (modernEra) this.noteFreshness(ttlMs, cacheScope);
    return tools;
  }

  /**
   * Scans a listed tool's `x-mcp-header` annotations: keeps its declarations and answers true, or
   * notes why the tool is excluded (server and tool named) and answers false.
   */
  private noteParamHeaders(
    tool: ListedTool,
    paramHeaders: Map<string, ParamHeaderDeclaration[]>,
    warnings: string[],
  ): boolean {
    const scan = scanParamHeaders(tool.inputSchema);
    if (!scan.valid) {
      warnings.push(
        `tool "${tool.name}" of server "${this.name}" excluded: invalid x-mcp-header declaration (SEP-2243): ${scan.reason}`,
      );
      return false;
    }
    if (scan.declarations.length > 0) paramHeaders.set(tool.name, scan.declarations);
    return true;
  }

  /** Forwards the server's notifications and requests (gateway) while `generation` is current. */
  private forwardUpstream(client: Client, generation: number): void {
    const notify = this.options.onNotification;
    if (notify) {
      for (const schema of [
        ResourceUpdatedNotificationSchema,
        ResourceListChangedNotificationSchema,
        PromptListChangedNotificationSchema,
        LoggingMessageNotificationSchema,
      ]) {
        client.setNotificationHandler(schema, (notification) => {
          if (generation !== this.generation) return;
          try {
            notify(notification as UpstreamNotification);
          } catch {
            // A listener's failure must not break the connection.
          }
        });
      }
    }
    const answer = this.options.onRequest;
    if (answer) {
      client.setRequestHandler(
        CreateMessageRequestSchema,
        (request, extra) => answer(this.name, request as UpstreamRequest, extra.signal) as never,
      );
      client.setRequestHandler(
        ElicitRequestSchema,
        (request, extra) => answer(this.name, request as UpstreamRequest, extra.signal) as never,
      );
    }
  }

  /** What the server declared at initialization (undefined while it is not connected). */
  get capabilities(): ServerCapabilities | undefined {
    if (this.state !== 'connected') return undefined;
    return this.modern ? this.modern.capabilities : this.client?.getServerCapabilities();
  }

  /**
   * Sends a request other than `tools/call` (resources, prompts, completion, logging) to the
   * server, within `timeoutMs`; rejects with a CodecallError as {@link ServerConnection.call} does.
   */
  async request<T>(
    request: { method: string; params?: Record<string, unknown> },
    resultSchema: z.ZodType<T>,
    options: ConnectionCallOptions,
  ): Promise<T> {
    const { qualifiedName, timeoutMs } = options;
    const started = Date.now();
    const controller = new AbortController();
    const outer = options.signal;
    const forward = (): void => controller.abort(outer!.reason);
    if (outer) {
      if (outer.aborted) throw this.abortedError(qualifiedName, outer);
      outer.addEventListener('abort', forward, { once: true });
    }
    try {
      if (this.state !== 'connected') await this.waitUntilReady(qualifiedName, controller.signal, timeoutMs);
      const client = this.client;
      const modern = this.modern;
      if ((!client && !modern) || this.state !== 'connected') throw this.unavailable(qualifiedName);
      const remaining = Math.max(1, timeoutMs - (Date.now() - started));
      const requestOptions: RequestOptions = { signal: controller.signal, timeout: remaining };
      const progress = this.progressToken(options.onProgress);
      const params = progress
        ? {
            ...request.params,
            _meta: { ...(request.params?._meta as object), progressToken: progress.token },
          }
        : request.params;
      try {
        if (modern && options.relay)
          return (await modern.relayRequest({ ...request, params }, resultSchema, {
            signal: controller.signal,
            timeout: remaining,
            qualifiedName,
            relay: options.relay,
          })) as T;
        if (modern)
          return await modern.request({ ...request, params }, resultSchema, {
            signal: controller.signal,
            timeout: remaining,
          });
        return await client!.request({ ...request, params } as never, resultSchema as never, requestOptions);
      } finally {
        progress?.release();
      }
    } catch (error) {
      throw this.callError(error, qualifiedName, timeoutMs, outer);
    } finally {
      outer?.removeEventListener('abort', forward);
    }
  }

  /**
   * A progress token of this connection for one call, whose notifications go to `onProgress`
   * (none without a listener). Tokens are codecall's own, not the SDK's `onprogress`: see
   * {@link ServerConnection.deliverProgressInOrder}.
   */
  private progressToken(
    onProgress: ((progress: Progress) => void) | undefined,
  ): { token: string; release(): void } | undefined {
    if (!onProgress) return undefined;
    const token = `codecall-progress-${++this.progressSeq}`;
    this.progressListeners.set(token, onProgress);
    return { token, release: () => this.progressListeners.delete(token) };
  }

  /**
   * Delivers `notifications/progress` for codecall's tokens as each message arrives, before the
   * messages after it. The SDK's client dispatches notifications a microtask later but settles
   * responses at once, so progress sent right before a result (in the same read) reached a
   * request that had already ended and was dropped.
   */
  private deliverProgressInOrder(transport: Transport): void {
    const sdk = transport.onmessage;
    if (!sdk) return;
    transport.onmessage = (message, extra) => {
      const note = message as { method?: unknown; params?: { progressToken?: unknown } };
      if (note.method === 'notifications/progress' && typeof note.params?.progressToken === 'string') {
        const listener = this.progressListeners.get(note.params.progressToken);
        if (listener) {
          const { progressToken: _token, ...progress } = note.params as Progress & { progressToken: string };
          try {
            listener(progress as Progress);
          } catch {
            // A listener never breaks the connection.
          }
          return;
        }
      }
      sdk.call(transport, message, extra);
    };
  }

  /** Re-lists tools after `notifications/tools/list_changed`; coalesces bursts. */
  refreshTools(): Promise<void> {
    if (this.refreshing) {
      this.refreshAgain = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      try {
        do {
          this.refreshAgain = false;
          const client = this.client;
          const modern = this.modern;
          if ((!client && !modern) || this.state !== 'connected') return;
          try {
            const signal = AbortSignal.any([
              this.closing.signal,
              AbortSignal.timeout(this.options.connectTimeoutMs),
            ]);
            const pages = modern
              ? (cursor: string | undefined, options: RequestOptions): Promise<ToolsPage> =>
                  modern.listToolsPage(cursor, { signal: options.signal!, timeout: options.timeout! })
              : this.legacyPages(client!);
            const before = this.tools;
            this.tools = await this.listTools(
              pages,
              signal,
              this.options.connectTimeoutMs,
              modern?.era === 'modern',
            );
            // A re-list on expiry that found the same tools changes nothing downstream.
            if (modern && JSON.stringify(before) === JSON.stringify(this.tools)) continue;
            this.options.onToolsChanged();
          } catch (error) {
            if (!this.closing.signal.aborted)
              this.warnings.push(`refreshing tools failed: ${(error as Error).message}`);
          }
        } while (this.refreshAgain);
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  private dropped(): void {
    this.state = 'reconnecting';
    this.client = undefined;
    const modern = this.modern;
    this.modern = undefined;
    void modern?.close();
    clearTimeout(this.freshnessTimer);
    const tail = this.stderr.trim();
    const error = new CodecallError(
      'SERVER_UNAVAILABLE',
      `MCP server "${this.name}" disconnected; reconnecting.${tail ? `\nIts stderr ends with:\n${tail}` : ''}`,
      { details: { server: this.name, stderrTail: tail } },
    );
    this.lastError = error;
    this.options.onError({ server: this.name, phase: 'disconnect', error });
    this.ready = this.reconnect();
    this.ready.catch(() => {});
  }

  private async reconnect(): Promise<void> {
    const { initialDelayMs, maxDelayMs, maxAttempts } = this.reconnectOptions;
    const before = JSON.stringify(this.tools);
    let lastError: unknown;
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      await sleep(backoffDelayMs(attempt + 1, { initialDelayMs, maxDelayMs }), this.closing.signal);
      if (this.closing.signal.aborted) throw new CodecallError('CLOSED', 'the tool pool is closed');
      try {
        await this.connectOnce();
        this.state = 'connected';
        this.lastError = undefined;
        if (JSON.stringify(this.tools) !== before) this.options.onToolsChanged();
        return;
      } catch (error) {
        lastError = error;
      }
    }
    this.state = 'failed';
    const error = this.startError(lastError);
    this.lastError = new CodecallError(
      'SERVER_UNAVAILABLE',
      `MCP server "${this.name}" dropped and did not come back after ${maxAttempts} attempts: ${error.message}`,
      { details: { ...error.details, server: this.name }, cause: lastError },
    );
    this.options.onError({ server: this.name, phase: 'reconnect', error: this.lastError });
    throw this.lastError;
  }

  /**
   * The error a caller (a script, an HTTP client) sees for a server that is down. It says what
   * state the server is in and never carries the start error itself: that names host paths,
   * the command line and its stderr, which are for the developer (`onError`, `serverStatus()`).
   */
  private unavailable(qualifiedName: string): CodecallError {
    const reason =
      this.state === 'failed'
        ? 'it failed to start or dropped and did not come back'
        : this.state === 'closed'
          ? 'it is closed'
          : `it is ${this.state}`;
    return new CodecallError(
      'SERVER_UNAVAILABLE',
      `Cannot call ${qualifiedName}: MCP server "${this.name}" is unavailable (${reason}; the host's log has the cause). Do not retry it in this run.`,
      { details: { server: this.name, tool: qualifiedName, state: this.state } },
    );
  }

  /** Calls a tool; rejects with a model-readable CodecallError on timeout, abort or a drop. */
  async call(tool: string, args: unknown, options: ConnectionCallOptions): Promise<RawToolResult> {
    const { qualifiedName, timeoutMs } = options;
    const started = Date.now();
    // One controller per call: the SDK adds an abort listener per request and never removes it,
    // so a run-wide signal must not be handed to it directly.
    const controller = new AbortController();
    const outer = options.signal;
    const forward = (): void => controller.abort(outer!.reason);
    if (outer) {
      if (outer.aborted) throw this.abortedError(qualifiedName, outer);
      outer.addEventListener('abort', forward, { once: true });
    }
    let acquired = false;
    let generation: number | undefined;
    try {
      if (this.state !== 'connected') await this.waitUntilReady(qualifiedName, controller.signal, timeoutMs);
      if (!this.semaphore.tryAcquire()) {
        const waitSignal = AbortSignal.any([controller.signal, AbortSignal.timeout(Math.max(1, timeoutMs))]);
        await this.semaphore.acquire(waitSignal);
      }
      acquired = true;
      const client = this.client;
      const modern = this.modern;
      if ((!client && !modern) || this.state !== 'connected') throw this.unavailable(qualifiedName);
      generation = this.generation;
      const remaining = Math.max(1, timeoutMs - (Date.now() - started));
      const requestOptions: RequestOptions = { signal: controller.signal, timeout: remaining };
      const progress = this.progressToken(options.onProgress);
      try {
        if (modern) {
          const meta = { ...options.trace, ...(progress ? { progressToken: progress.token } : {}) };
          const onRequest = this.options.onRequest;
          const asker: ModernAsker | undefined =
            options.asker ??
            (onRequest ? (request, signal) => onRequest(this.name, request, signal) : undefined);
          const declarations = this.paramHeaders.get(tool);
          return await modern.callTool(tool, args, {
            qualifiedName,
            meta,
            headers: declarations ? buildParamHeaders(declarations, args) : undefined,
            signal: controller.signal,
            deadline: started + timeoutMs,
            asker,
            upstreamTask: options.upstreamTask,
            relay: options.relay,
          });
        }
        if (!client) throw this.unavailable(qualifiedName);
        if (taskToolsOf(this.tools).has(tool) && this.toolTasksServed(client))
          return await this.callAsTask(client, tool, args, {
            qualifiedName,
            signal: controller.signal,
            deadline: started + timeoutMs,
            meta: { ...options.trace, ...(progress ? { progressToken: progress.token } : {}) },
          });
        return (await client.request(
          {
            method: 'tools/call',
            params: {
              name: tool,
              arguments: args as Record<string, unknown>,
              ...(progress || options.trace
                ? { _meta: { ...options.trace, ...(progress ? { progressToken: progress.token } : {}) } }
                : {}),
            },
          },
          CallToolResultSchema,
          requestOptions,
        )) as RawToolResult;
      } finally {
        progress?.release();
      }
    } catch (error) {
      if (generation !== undefined && generation === this.oversized?.generation && !outer?.aborted)
        throw this.oversizedError(qualifiedName, this.oversized.limitBytes, error);
      throw this.callError(error, qualifiedName, timeoutMs, outer);
    } finally {
      if (acquired) this.semaphore.release();
      outer?.removeEventListener('abort', forward);
    }
  }

  /** Whether the server serves task-augmented `tools/call` (`capabilities.tasks.requests.tools.call`). */
  private toolTasksServed(client: Client): boolean {
    const tasks = (
      client.getServerCapabilities() as { tasks?: { requests?: { tools?: { call?: unknown } } } }
    )?.tasks;
    return isObject(tasks?.requests?.tools?.call);
  }

  /**
   * Calls a tool the server runs as a task (MCP 2025-11-25, basic/utilities/tasks): creates the
   * task, polls `tasks/get` at the server's `pollInterval` clamped to
   * [{@link DEFAULT_UPSTREAM_TASK_MIN_POLL_MS}, {@link DEFAULT_UPSTREAM_TASK_MAX_POLL_MS}] until it
   * is `completed`, `failed` or `input_required`, then reads `tasks/result` (which also delivers
   * the server's queued elicitations). The whole call stays within the tool's timeout; on abort
   * or timeout the task is cancelled (`tasks/cancel`, best effort).
   */
  private async callAsTask(
    client: Client,
    tool: string,
    args: unknown,
    options: { qualifiedName: string; signal: AbortSignal; deadline: number; meta: Record<string, unknown> },
  ): Promise<RawToolResult> {
    const { signal, deadline } = options;
    const within = (): RequestOptions => ({ signal, timeout: Math.max(1, deadline - Date.now()) });
    const meta = Object.keys(options.meta).length > 0 ? { _meta: options.meta } : {};
    const created = await client.request(
      {
        method: 'tools/call',
        params: { name: tool, arguments: args as Record<string, unknown>, task: {}, ...meta },
      },
      CreateTaskPageSchema,
      within(),
    );
    const taskId = created.task.taskId;
    let settled = false;
    try {
      let task = created.task;
      for (;;) {
        if (task.status === 'completed' || task.status === 'failed' || task.status === 'input_required') {
          const result = (await client.request(
            { method: 'tasks/result', params: { taskId } },
            CallToolResultSchema,
            within(),
          )) as RawToolResult;
          settled = true;
          return result;
        }
        if (task.status === 'cancelled') {
          settled = true;
          throw new CodecallError(
            'TOOL_CALL_FAILED',
            `${options.qualifiedName} failed: MCP server "${this.name}" cancelled the task it ran the call as` +
              `${task.statusMessage !== undefined ? ` (${task.statusMessage.slice(0, 200)})` : ''}.`,
            { details: { server: this.name, tool: options.qualifiedName } },
          );
        }
        const wait = Math.min(
          Math.max(task.pollInterval ?? DEFAULT_UPSTREAM_TASK_MIN_POLL_MS, DEFAULT_UPSTREAM_TASK_MIN_POLL_MS),
          DEFAULT_UPSTREAM_TASK_MAX_POLL_MS,
        );
        if (Date.now() + wait >= deadline)
          throw new CodecallError('TOOL_TIMEOUT', `task ${taskId} still ${task.status.slice(0, 40)}`, {
            details: { tool: options.qualifiedName, timeoutMs: Math.max(0, deadline - Date.now()) },
          });
        await sleep(wait, signal);
        signal.throwIfAborted();
        task = await client.request(
          { method: 'tasks/get', params: { taskId } },
          UpstreamTaskSchema,
          within(),
        );
      }
    } finally {
      if (!settled)
        void client
          .request({ method: 'tasks/cancel', params: { taskId } }, CancelTaskPageSchema, {
            timeout: DEFAULT_UPSTREAM_TASK_CANCEL_TIMEOUT_MS,
          })
          .catch(() => {});
    }
  }

  private oversizedError(qualifiedName: string, limit: number, cause: unknown): CodecallError {
    return new CodecallError(
      'TOOL_CALL_FAILED',
      `${qualifiedName} failed: MCP server "${this.name}" sent a message larger than ${limit} bytes, ` +
        `the limit on one message from a stdio server (mcpServers.${this.name}.maxMessageBytes), so its ` +
        'connection was reset and the calls in flight were lost. Ask for less (a narrower range, ' +
        `head/tail, a page), or raise mcpServers.${this.name}.maxMessageBytes in the configuration.`,
      { details: { server: this.name, tool: qualifiedName, maxMessageBytes: limit }, cause },
    );
  }

  private abortedError(qualifiedName: string, signal: AbortSignal): CodecallError {
    const reason =
      signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? 'aborted');
    return new CodecallError('ABORTED', `The call to ${qualifiedName} was cancelled (${reason}).`, {
      details: { tool: qualifiedName },
    });
  }

  private callError(
    error: unknown,
    qualifiedName: string,
    timeoutMs: number,
    outer?: AbortSignal,
  ): CodecallError {
    if (outer?.aborted) return this.abortedError(qualifiedName, outer);
    const code = errorCode(error);
    if (
      code === 'TOOL_TIMEOUT' ||
      code === REQUEST_TIMEOUT ||
      code === SDK_V2_REQUEST_TIMEOUT ||
      (error as Error)?.name === 'TimeoutError'
    ) {
      const reader = this.stdio?.reader;
      if (reader && reader.pendingBytes > 0) {
        const bytes = reader.pendingBytes;
        const forMs = Math.round(performance.now() - (reader.partialSince ?? performance.now()));
        return new CodecallError(
          'TOOL_TIMEOUT',
          `${qualifiedName} answered, but its result was too large / too slow to read within ${timeoutMs} ms: ` +
            `${bytes} bytes of a message from MCP server "${this.name}" had arrived over ${forMs} ms when the call was cancelled. ` +
            "Ask for less (filter, paginate, or select fields), or raise the tool's timeoutMs in the configuration.",
          { details: { tool: qualifiedName, timeoutMs, pendingBytes: bytes } },
        );
      }
      return new CodecallError(
        'TOOL_TIMEOUT',
        `${qualifiedName} did not answer within ${timeoutMs} ms and was cancelled. Call it with narrower arguments, or fewer calls at once.`,
        { details: { tool: qualifiedName, timeoutMs } },
      );
    }
    if (isCodecallError(error)) return error;
    if (code === CONNECTION_CLOSED || this.state !== 'connected') {
      return new CodecallError(
        'SERVER_UNAVAILABLE',
        `MCP server "${this.name}" disconnected during the call to ${qualifiedName}; the call may or may not have taken effect. ` +
          'The server is being restarted: retry later if the call is safe to repeat.',
        { details: { server: this.name, tool: qualifiedName }, cause: error },
      );
    }
    const message = withoutRepeatedMcpPrefix((error as Error)?.message ?? String(error));
    return new CodecallError('TOOL_CALL_FAILED', `${qualifiedName} failed: ${message}`, {
      details: { tool: qualifiedName, mcpCode: code },
      cause: error,
    });
  }

  private async waitUntilReady(qualifiedName: string, signal: AbortSignal, timeoutMs: number): Promise<void> {
    if (this.state === 'failed' || this.state === 'closed') throw this.unavailable(qualifiedName);
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    try {
      await Promise.race([
        this.ready,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new CodecallError('TOOL_TIMEOUT', 'timed out waiting for the server to reconnect', {
                  details: { tool: qualifiedName, timeoutMs },
                }),
              ),
            timeoutMs,
          );
          onAbort = () => reject(signal.reason as Error);
          signal.addEventListener('abort', onAbort, { once: true });
        }),
      ]);
    } catch (error) {
      if (isObject(error) && (error as { code?: unknown }).code === 'TOOL_TIMEOUT') throw error;
      if (signal.aborted) throw error;
      throw this.unavailable(qualifiedName);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }

  private async closeClient(client: Client, transport: Transport | undefined): Promise<void> {
    const closing = (async () => {
      try {
        await client.close();
      } catch {
        // The transport may never have started.
      }
      try {
        await transport?.close();
      } catch {
        // Already closed.
      }
    })();
    await Promise.race([
      closing,
      new Promise((resolve) => setTimeout(resolve, DEFAULT_SERVER_CLOSE_TIMEOUT_MS).unref()),
    ]);
  }

  /** Closes the connection and stops reconnecting. Idempotent. */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.prespawned?.stop();
    this.prespawned = undefined;
    this.closing.abort(new Error('codecall is closing'));
    clearTimeout(this.freshnessTimer);
    const client = this.client;
    this.client = undefined;
    const modern = this.modern;
    this.modern = undefined;
    if (client) await this.closeClient(client, undefined);
    if (modern)
      await Promise.race([
        modern.close(),
        new Promise((resolve) => setTimeout(resolve, DEFAULT_SERVER_CLOSE_TIMEOUT_MS).unref()),
      ]);
  }
}
