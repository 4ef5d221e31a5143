/**
 * @module
 * Serves codecall over Streamable HTTP at `/mcp` on `node:http`, with stateful sessions (one
 * MCP server per session, all sharing one runtime and one run limiter) so that progress,
 * cancellation and `tools/list_changed` reach the client.
 *
 * Security model:
 * - binds to loopback ({@link DEFAULT_SERVE_HOST}) unless told otherwise; a non-loopback bind
 *   without a bearer token refuses to start (`SERVE_TOKEN_REQUIRED`);
 * - with a token, every request needs `Authorization: Bearer <token>` (401 otherwise);
 * - `Host` (on loopback) and `Origin` are validated against DNS rebinding (403);
 * - a state-changing request (POST, PUT, PATCH, DELETE) from a page on another origin, even
 *   another loopback port, is refused (403; see {@link checkStateChangeOrigin});
 * - bodies are bounded (413); sessions are bounded per process and per client (remote address +
 *   bearer token): a client past its share gets its own least recently used idle session
 *   closed, never another client's; idle sessions expire; `execute_code` runs are bounded per
 *   process (a "busy" tool result past the queue);
 * - a request whose connection closes before it is answered is cancelled (its run stops and
 *   leaves its slot or queue place); a request reusing the id of one in flight in the same
 *   session is refused at once (JSON-RPC -32600); a request the client cancels
 *   (`notifications/cancelled`) ends its stream once the other requests of its POST are answered;
 * - what a session sends counts against its notification queue until the response has written
 *   it, so a client that does not read costs at most `maxQueuedNotificationBytes`.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  createServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  isInitializeRequest,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import {
  DEFAULT_SERVE_HOST,
  DEFAULT_SERVE_MAX_BODY_BYTES,
  DEFAULT_SERVE_MAX_SESSIONS,
  DEFAULT_SERVE_MAX_SESSIONS_PER_CLIENT,
  DEFAULT_SERVE_PORT,
  DEFAULT_SERVE_SESSION_IDLE_MS,
} from '../config/defaults.js';
import { CodecallError, isCodecallError, isErrorLike } from '../errors.js';
import { explainImportError } from '../util/optional-package.js';
import type * as ModernHttp from './modern-http.js';
import type { ModernTasksOptions } from './modern-tasks.js';
import { createLegacyTasks } from './legacy-tasks.js';
import { taskClientOfAuthorization } from './task-jobs.js';
import {
  CODECALL_SERVER_INSTRUCTIONS,
  createCodecallServer,
  packageVersion,
  type CodecallServerOptions,
} from './create-codecall-server.js';
import {
  assertSafeBinding,
  checkHostAndOrigin,
  checkStateChangeOrigin,
  hasBearerToken,
  isLoopbackHost,
  type HostOriginPolicy,
} from './http-security.js';
import { RunLimiter } from './run-limiter.js';
import type { JobStateStore } from '../store/job-state.js';

/** Path of the MCP endpoint. */
export const MCP_HTTP_PATH = '/mcp';
/** Longest interval between two sweeps of idle sessions. */
const MAX_SWEEP_INTERVAL_MS = 60_000;

/** Options of {@link startHttpServer}. */
export interface HttpServerOptions extends CodecallServerOptions {
  /** Interface to bind. @defaultValue {@link DEFAULT_SERVE_HOST} */
  host?: string;
  /** Port; 0 picks a free one. @defaultValue {@link DEFAULT_SERVE_PORT} */
  port?: number;
  /**
   * Bearer token every request must carry. Required to bind a non-loopback interface.
   * @defaultValue none (loopback only)
   */
  token?: string;
  /** Browser origins accepted besides loopback ones (exact, e.g. `https://app.example.com`). */
  allowedOrigins?: string[];
  /** `Host` names accepted besides loopback ones (checked when set, or when bound to loopback). */
  allowedHosts?: string[];
  /** Bytes of one request body. @defaultValue {@link DEFAULT_SERVE_MAX_BODY_BYTES} */
  maxBodyBytes?: number;
  /** Open sessions. @defaultValue {@link DEFAULT_SERVE_MAX_SESSIONS} */
  maxSessions?: number;
  /**
   * Open sessions of one client (remote address + bearer token); past it the client's least
   * recently used idle session is closed. @defaultValue {@link DEFAULT_SERVE_MAX_SESSIONS_PER_CLIENT}
   */
  maxSessionsPerClient?: number;
  /** Idle time after which a session is closed. @defaultValue {@link DEFAULT_SERVE_SESSION_IDLE_MS} */
  sessionIdleMs?: number;
  /** Extra routes (e.g. the jobs API, the jobs dashboard); called only after the same checks as `/mcp`. */
  routes?: HttpRoutes | HttpRoutes[];
  /**
   * Also answer MCP 2026-07-28 clients, statelessly (needs the optional `@modelcontextprotocol/server`).
   * Off by default for library callers; `codecall serve` turns it on (`serve.mcp2026`,
   * docs/mcp-2026.md). @defaultValue false
   */
  mcp2026?: boolean;
  /**
   * HMAC key (≥ 32 bytes) signing the `requestState` of approvals asked of 2026-07-28 clients;
   * every node behind one address needs the same. @defaultValue a random per-process key
   */
  requestStateKey?: string;
  /**
   * Where 2026-07-28 runs paused on an approval keep their journal (shared between nodes when it
   * is Redis or Postgres). @defaultValue an in-process store
   */
  journals?: JobStateStore;
  /**
   * The job backend 2026-07-28 clients' `execute_code` tasks run on (the Tasks extension,
   * docs/mcp-2026.md), and their bounds; without it the extension is not offered. @defaultValue none
   */
  tasks?: ModernTasksOptions;
}

/** Extra routes served beside `/mcp`, behind the same token, Host/Origin checks and body bound (e.g. the jobs API). */
export interface HttpRoutes {
  /** True when these routes serve `pathname`. */
  matches(pathname: string): boolean;
  /**
   * The routes check the bearer token themselves (`context.token`), e.g. a browser dashboard that
   * also accepts a cookie; the server still applies its Host/Origin checks. @defaultValue false
   */
  readonly ownAuth?: boolean;
  /** Serves one request that passed the checks; bodies are bounded by `maxBodyBytes`. */
  handle(
    request: IncomingMessage,
    response: ServerResponse,
    context: { maxBodyBytes: number; token?: string },
  ): Promise<void>;
}

/** A running HTTP server. */
export interface HttpServerHandle {
  /** `http://<host>:<port>/mcp`. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Open sessions. */
  sessions(): number;
  /**
   * MCP revisions this server answers over HTTP: `2025-11-25` (and older) always, `2026-07-28`
   * when the optional `@modelcontextprotocol/server` package is installed.
   */
  readonly protocolRevisions: readonly string[];
  /** Stops listening, cancels in-flight runs, closes every session. Idempotent; leaves the runtime open. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  /** Who opened it: remote address + a digest of the Authorization header. */
  client: string;
  lastSeen: number;
  /** POST requests being answered (a session with work in flight is never evicted or swept). */
  busy: number;
  /** Ids of JSON-RPC requests in flight, as `typeof:value` (1 and "1" are different ids). */
  pendingIds: Set<string>;
  /** The SSE stream of each request in flight, by `typeof:value` id. */
  streams: Map<string, OutboundStream>;
  /** Open GET streams (the transport writes to one: its standalone stream). */
  gets: Set<OutboundStream>;
}

/** Resolved waiters kept before the list is compacted. */
const MAX_SETTLED_WAITERS = 1_024;

/**
 * One SSE response of a session, as far as what goes out on it. The SDK's transport puts each
 * message it sends in one chunk of a stream that Node writes to the response only as fast as the
 * client reads (SSE comments, its keepalives, are chunks too, not messages). A message counts as
 * sent once the response has written its chunk, so the session's bounded notification queue
 * (`maxQueuedNotificationBytes`) holds what the client has not taken, wherever it waits.
 */
class OutboundStream {
  /** Its requests neither answered nor cancelled (none for a GET stream). */
  readonly open: Set<string>;
  /** Its requests the client cancelled. */
  readonly cancelled: RequestId[] = [];
  closed = false;
  private handed = 0;
  private written = 0;
  private readonly waiting: { at: number; resolve: () => void }[] = [];
  private settled = 0;

  constructor(
    readonly response: ServerResponse,
    ids: readonly RequestId[],
  ) {
    this.open = new Set(ids.map(idKey));
    const write = response.write.bind(response) as (...args: unknown[]) => boolean;
    response.write = ((chunk: unknown, ...rest: unknown[]) => {
      const comment = typeof chunk === 'string' ? chunk.startsWith(':') : (chunk as Uint8Array)[0] === 0x3a;
      if (!comment) this.settle(++this.written);
      return write(chunk, ...rest);
    }) as ServerResponse['write'];
    response.once('close', () => {
      this.closed = true;
      this.settle(Number.POSITIVE_INFINITY);
    });
  }

  /** True while the transport writes here what it sends without a request id. */
  get standalone(): boolean {
    return !this.closed && this.response.headersSent && this.response.statusCode === 200;
  }

  /** Call as the transport takes one message for this stream; resolves once it is written (or the stream closed). */
  handedOne(): Promise<void> {
    const at = ++this.handed;
    if (this.closed || this.written >= at) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push({ at, resolve }));
  }

  private settle(upTo: number): void {
    while (this.settled < this.waiting.length && this.waiting[this.settled]!.at <= upTo)
      this.waiting[this.settled++]!.resolve();
    if (this.settled === this.waiting.length || this.settled > MAX_SETTLED_WAITERS) {
      this.waiting.splice(0, this.settled);
      this.settled = 0;
    }
  }
}

/**
 * Follows what `session` sends and receives on its SSE streams: a message it sends resolves once
 * written (see {@link OutboundStream}); a request the client cancels ends its stream once the
 * other requests of its POST are answered. The SDK answers nothing for a cancelled request
 * (as the protocol asks), so its transport would keep that stream open, with keepalives, until
 * the session ends.
 */
function followStreams(session: Session): void {
  const { transport } = session;
  const send = transport.send.bind(transport);
  const deliver = transport.onmessage;
  const answerTo = (message: JSONRPCMessage): RequestId | undefined =>
    isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message) ? message.id : undefined;
  const streamOf = (message: JSONRPCMessage, options?: TransportSendOptions): OutboundStream | undefined => {
    const id = answerTo(message) ?? options?.relatedRequestId;
    if (id !== undefined) return session.streams.get(idKey(id));
    // An answer without an id has no stream (the transport refuses it).
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) return undefined;
    for (const stream of session.gets) if (stream.standalone) return stream;
    return undefined;
  };
  const endCancelled = (stream: OutboundStream): void => {
    transport.closeSSEStream(stream.cancelled[0]!);
    // The transport forgets a request only once it has its answer; with the stream closed, an
    // answer it cannot deliver makes it drop the entries of the cancelled ones (and it rejects).
    for (const id of stream.cancelled)
      send({
        jsonrpc: '2.0',
        id,
        error: { code: ErrorCode.ConnectionClosed, message: 'Request cancelled' },
      }).catch(() => {});
  };
  transport.send = async (message, options) => {
    const stream = streamOf(message, options);
    const sending = send(message, options);
    // The transport has queued the message's chunk by now (it awaits nothing before, without an event store).
    const written = stream?.handedOne();
    const answered = answerTo(message);
    if (stream && answered !== undefined) {
      stream.open.delete(idKey(answered));
      if (stream.open.size === 0 && stream.cancelled.length > 0) endCancelled(stream);
    }
    await sending;
    await written;
  };
  transport.onmessage = (message, extra) => {
    deliver?.(message, extra);
    if (!isJSONRPCNotification(message) || message.method !== 'notifications/cancelled') return;
    const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
    const stream = session.streams.get(idKey(requestId));
    if (!stream || stream.closed || !stream.open.delete(idKey(requestId))) return;
    stream.cancelled.push(requestId);
    if (stream.open.size === 0) endCancelled(stream);
  };
}

function clientKey(request: IncomingMessage): string {
  const auth = createHash('sha256')
    .update(request.headers.authorization ?? '')
    .digest('hex')
    .slice(0, 16);
  return `${request.socket.remoteAddress ?? '?'}|${auth}`;
}

/** The ids of the JSON-RPC requests (not notifications or responses) in a POST body. */
function requestIds(body: unknown): RequestId[] {
  const ids: RequestId[] = [];
  for (const message of Array.isArray(body) ? body : [body]) {
    if (typeof message !== 'object' || message === null) continue;
    const { id, method } = message as { id?: unknown; method?: unknown };
    if (typeof method === 'string' && (typeof id === 'string' || typeof id === 'number')) ids.push(id);
  }
  return ids;
}

const idKey = (id: RequestId): string => `${typeof id}:${id}`;

class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError';
}

function sendJsonRpcError(
  response: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  code = -32000,
  id: RequestId | null = null,
): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  response
    .writeHead(status, { 'content-type': 'application/json', ...headers })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id }));
}

function readBody(request: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        request.off('data', onData);
        request.pause();
        reject(new BodyTooLargeError());
        return;
      }
      chunks.push(chunk);
    };
    request.on('data', onData);
    request.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.once('error', reject);
  });
}

function formatUrl(host: string, port: number): string {
  const shown = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `http://${shown}:${port}${MCP_HTTP_PATH}`;
}

/**
 * Serves `options.runtime` over Streamable HTTP until `close()`.
 *
 * @example
 * ```ts
 * await using runtime = await CodecallRuntime.open({ load: { path: 'codecall.json' } });
 * await using http = await startHttpServer({ runtime, port: 0 });
 * console.error(`codecall listening on ${http.url}`);
 * ```
 */
/** The package the 2026-07-28 leg runs on (an optional peer). */
export const MODERN_LEG_PACKAGE = '@modelcontextprotocol/server';

/** The 2026-07-28 leg's module, or `undefined` when its optional package is not installed. */
async function loadModernLeg(): Promise<typeof ModernHttp | undefined> {
  try {
    return await import('./modern-http.js');
  } catch (error) {
    const explained = explainImportError(error, MODERN_LEG_PACKAGE, 'MCP 2026-07-28 over HTTP');
    if (isCodecallError(explained) && explained.code === 'PACKAGE_MISSING') return undefined;
    throw explained;
  }
}

export async function startHttpServer(options: HttpServerOptions): Promise<HttpServerHandle> {
  const {
    host = DEFAULT_SERVE_HOST,
    port = DEFAULT_SERVE_PORT,
    token,
    allowedOrigins = [],
    allowedHosts = [],
    maxBodyBytes = DEFAULT_SERVE_MAX_BODY_BYTES,
    maxSessions = DEFAULT_SERVE_MAX_SESSIONS,
    maxSessionsPerClient = DEFAULT_SERVE_MAX_SESSIONS_PER_CLIENT,
    sessionIdleMs = DEFAULT_SERVE_SESSION_IDLE_MS,
    routes,
    requestStateKey,
    journals,
    tasks,
    ...serverOptions
  } = options;
  assertSafeBinding(host, token);
  const loopback = isLoopbackHost(host);
  const policy: HostOriginPolicy = {
    loopback,
    allowedHosts: allowedHosts.map((h) => h.toLowerCase()),
    allowedOrigins,
  };
  const routeSets = routes === undefined ? [] : Array.isArray(routes) ? routes : [routes];
  const runLimiter = serverOptions.runLimiter ?? new RunLimiter();
  const sessions = new Map<string, Session>();
  const live = new Set<Session>();
  let closed = false;
  // The 2026-07-28 leg: stateless, one SDK v2 server per request (see modern-http.ts), when its
  // optional package is installed; without it, every request takes the 2025-11-25 path (a 2026
  // client in `auto` mode gets method-not-found for `server/discover` and falls back to it).
  const leg = options.mcp2026 === true ? await loadModernLeg() : undefined;
  const modern = leg?.createModernHttpHandler({
    runtime: serverOptions.runtime,
    runLimiter,
    serverInfo: serverOptions.serverInfo ?? { name: 'codecall', version: packageVersion() },
    instructions: CODECALL_SERVER_INSTRUCTIONS,
    passThrough: serverOptions.passThrough,
    originalNames: serverOptions.originalNames,
    learning: serverOptions.learning,
    searchWaitForServersMs: serverOptions.searchWaitForServersMs,
    maxBodyBytes,
    onError: serverOptions.onError,
    onExecute: serverOptions.onExecute,
    requestStateKey,
    journals,
    tasks,
  });

  const legacyTasks =
    tasks !== undefined
      ? createLegacyTasks({
          ...tasks,
          approvalTimeoutMs: serverOptions.runtime.config.jobs.approvalTimeoutMs,
        })
      : undefined;

  /**
   * Makes room for one more session of `client`, or says why not: past its own share the
   * client gives up its least recently used idle session; when the process is full, the client
   * holding the most sessions does (when that is this client, or it holds more than this one).
   * Sessions with a request in flight are never taken.
   */
  const makeRoom = (client: string): string | undefined => {
    const idleLru = (of: Session[]): Session | undefined =>
      of.filter((s) => s.busy === 0).sort((a, b) => a.lastSeen - b.lastSeen)[0];
    const byClient = new Map<string, Session[]>();
    for (const session of live) {
      const list = byClient.get(session.client) ?? [];
      list.push(session);
      byClient.set(session.client, list);
    }
    const own = byClient.get(client) ?? [];
    let victim: Session | undefined;
    if (own.length >= maxSessionsPerClient) {
      victim = idleLru(own);
      if (!victim)
        return `Too many sessions for this client (${maxSessionsPerClient}), all busy; close one and retry.`;
    } else if (live.size >= maxSessions) {
      let heaviest = own;
      for (const list of byClient.values()) if (list.length > heaviest.length) heaviest = list;
      victim = heaviest.length > 0 ? idleLru(heaviest) : undefined;
      if (!victim) return `Too many sessions (${maxSessions}); close one and retry.`;
    }
    if (victim) {
      live.delete(victim);
      void victim.server.close().catch(() => {});
    }
    return undefined;
  };

  const openSession = async (request: IncomingMessage, response: ServerResponse, body: unknown) => {
    // 2025-11-25 tasks (legacy-tasks.ts) on the jobs the 2026 ones use, bound to the bearer token.
    const taskClient = taskClientOfAuthorization(request.headers.authorization);
    const server = createCodecallServer({
      ...serverOptions,
      runLimiter,
      ...(legacyTasks !== undefined
        ? { legacyTasks, taskClient: { id: taskClient, listable: taskClient !== 'anonymous' } }
        : {}),
    });
    const session: Session = {
      server,
      client: clientKey(request),
      lastSeen: Date.now(),
      busy: 0,
      pendingIds: new Set(),
      streams: new Map(),
      gets: new Set(),
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, session);
        },
      }),
    };
    live.add(session);
    session.transport.onclose = () => {
      live.delete(session);
      if (session.transport.sessionId !== undefined) sessions.delete(session.transport.sessionId);
    };
    try {
      await server.connect(session.transport);
      followStreams(session);
      await session.transport.handleRequest(request, response, body);
    } finally {
      // An initialize that failed leaves no session id: drop the server at once.
      if (session.transport.sessionId === undefined) {
        live.delete(session);
        await server.close();
      }
    }
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const extra = routeSets.find((set) => set.matches(url.pathname));
    if (url.pathname !== MCP_HTTP_PATH && extra === undefined) {
      response
        .writeHead(404, { 'content-type': 'text/plain' })
        .end(`Not found: the MCP endpoint is ${MCP_HTTP_PATH}.\n`);
      return;
    }
    if (closed) return sendJsonRpcError(response, 503, 'The server is shutting down.');
    const refusal = checkHostAndOrigin(
      { host: request.headers.host, origin: request.headers.origin },
      policy,
    );
    if (refusal !== undefined) return sendJsonRpcError(response, 403, `Forbidden: ${refusal}`);
    const fetchSite = request.headers['sec-fetch-site'];
    const forgery = checkStateChangeOrigin(
      request.method ?? 'GET',
      {
        host: request.headers.host,
        origin: request.headers.origin,
        secFetchSite: typeof fetchSite === 'string' ? fetchSite : undefined,
      },
      policy,
    );
    if (forgery !== undefined) return sendJsonRpcError(response, 403, `Forbidden: ${forgery}`);
    if (
      token !== undefined &&
      extra?.ownAuth !== true &&
      !hasBearerToken(request.headers.authorization, token)
    ) {
      return sendJsonRpcError(
        response,
        401,
        'Unauthorized: send "Authorization: Bearer <token>" with the token this server was started with.',
        { 'www-authenticate': 'Bearer' },
      );
    }
    if (extra !== undefined)
      return extra.handle(request, response, { maxBodyBytes, ...(token !== undefined ? { token } : {}) });
    let body: unknown;
    if (request.method === 'POST') {
      const declared = Number(request.headers['content-length'] ?? 0);
      let text: string;
      try {
        if (declared > maxBodyBytes) throw new BodyTooLargeError();
        text = await readBody(request, maxBodyBytes);
      } catch (error) {
        if (!isErrorLike(error) || error.name !== 'BodyTooLargeError') throw error;
        sendJsonRpcError(response, 413, `Request body larger than ${maxBodyBytes} bytes.`, {
          connection: 'close',
        });
        response.once('finish', () => request.destroy());
        return;
      }
      try {
        body = JSON.parse(text) as unknown;
      } catch {
        return sendJsonRpcError(response, 400, 'Parse error: the body is not JSON.', {}, -32700);
      }
      // A 2026-07-28 request (the SDK's classifier): answered statelessly, no session.
      if (leg && modern && (await leg.isModernPost(request, text, body)))
        return leg.serveModern(modern, request, response, text, body);
    }
    const sessionId = request.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = sessions.get(sessionId);
      if (!session)
        return sendJsonRpcError(
          response,
          404,
          'Session not found; send a new initialize request.',
          {},
          -32001,
        );
      session.lastSeen = Date.now();
      const ids = requestIds(body);
      const keys = ids.map(idKey);
      // Linear: a 4 MiB batch can hold hundreds of thousands of ids.
      const seen = new Set<string>();
      const reused = ids.find((_id, index) => {
        const key = keys[index]!;
        if (session.pendingIds.has(key) || seen.has(key)) return true;
        seen.add(key);
        return false;
      });
      if (reused !== undefined)
        return sendJsonRpcError(
          response,
          400,
          `Invalid request: id ${JSON.stringify(reused)} is already used by a request in flight in this session; give each request its own id.`,
          {},
          -32600,
          reused,
        );
      if (request.method === 'POST') session.busy++;
      for (const key of keys) session.pendingIds.add(key);
      // Before the listener below: a stream closed by its client is closed when that one runs.
      if (request.method === 'POST' && ids.length > 0) {
        const stream = new OutboundStream(response, ids);
        for (const key of keys) session.streams.set(key, stream);
        response.once('close', () => {
          for (const key of keys) if (session.streams.get(key) === stream) session.streams.delete(key);
        });
      } else if (request.method === 'GET') {
        const stream = new OutboundStream(response, []);
        session.gets.add(stream);
        response.once('close', () => session.gets.delete(stream));
      }
      response.once('close', () => {
        if (request.method === 'POST') session.busy--;
        session.lastSeen = Date.now();
        for (const key of keys) session.pendingIds.delete(key);
        // The client went away before the answer: cancel, so its runs stop and free their slots.
        if (!response.writableFinished && ids.length > 0 && live.has(session)) {
          for (const requestId of ids) {
            const cancel: JSONRPCMessage = {
              jsonrpc: '2.0',
              method: 'notifications/cancelled',
              params: { requestId, reason: 'the HTTP client disconnected' },
            };
            session.transport.onmessage?.(cancel);
          }
        }
      });
      await session.transport.handleRequest(request, response, body);
      return;
    }
    const initialize = Array.isArray(body)
      ? body.some((m) => isInitializeRequest(m))
      : isInitializeRequest(body);
    if (request.method !== 'POST' || !initialize)
      return sendJsonRpcError(
        response,
        400,
        'Bad request: no mcp-session-id header; start with an initialize request.',
      );
    const full = makeRoom(clientKey(request));
    if (full !== undefined) return sendJsonRpcError(response, 503, full);
    await openSession(request, response, body);
  };

  const http: HttpServer = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      // The message may carry host data: the client gets a generic answer, the log the error.
      try {
        serverOptions.onError?.(error);
      } catch {
        // A listener's failure must not break the server.
      }
      sendJsonRpcError(response, 500, "Internal error; the server's log has the details.", {}, -32603);
    });
  });
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void =>
      reject(
        new CodecallError(
          'SERVE_LISTEN_FAILED',
          `Cannot listen on ${host}:${port}: ${error.code ?? error.message}.` +
            (error.code === 'EADDRINUSE' ? ' Pick another --port (0 picks a free one).' : ''),
          { details: { host, port }, cause: error },
        ),
      );
    http.once('error', onError);
    http.listen(port, host, () => {
      http.off('error', onError);
      resolve();
    });
  });

  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const session of live)
        if (session.busy === 0 && now - session.lastSeen > sessionIdleMs)
          void session.server.close().catch(() => {});
    },
    Math.min(sessionIdleMs, MAX_SWEEP_INTERVAL_MS),
  );
  sweep.unref();

  const address = http.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      closed = true;
      clearInterval(sweep);
      const stopped = new Promise<void>((resolve) => http.close(() => resolve()));
      await Promise.allSettled([...[...live].map((s) => s.server.close()), modern?.close()]);
      http.closeAllConnections();
      await stopped;
    })();
    return closing;
  };
  return {
    url: formatUrl(host, address.port),
    host,
    port: address.port,
    sessions: () => live.size,
    protocolRevisions: leg ? ['2025-11-25', leg.MODERN_PROTOCOL_VERSION] : ['2025-11-25'],
    close,
    [Symbol.asyncDispose]: close,
  };
}
