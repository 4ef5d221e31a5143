/**
 * @module
 * The gateway half of codecall's MCP server: what upstream servers offer besides tools passes
 * through one session — resources (list with pagination, read, templates, subscribe and
 * unsubscribe with `notifications/resources/updated`, `list_changed`), prompts (list, get),
 * `completion/complete`, logging (`logging/setLevel` forwarded, upstream log messages forwarded
 * to the session they belong to), and the sampling and elicitation requests servers send
 * during a direct tool call (forwarded to the client when it declared the capability, refused
 * with a message saying so otherwise). Names and URIs are namespaced by {@link GatewayNames}.
 *
 * Upstream servers are shared by every session, and a log message does not say which call it is
 * about: it goes to a session only when that session alone has calls in flight to its server
 * (direct calls, its scripts' calls, gateway requests); otherwise to nobody, counted through
 * `onNotificationDropped`. Resource updates go to the sessions subscribed to the resource.
 *
 * Capabilities are those of the connected upstream servers; while some are still starting the
 * gateway cannot know theirs, so it declares resources, prompts, completions and logging too
 * (lists are empty until a server offering them arrives, announced by `list_changed`).
 */
import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CompleteRequestSchema,
  CompleteResultSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  EmptyResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  GetPromptResultSchema,
  ListPromptsRequestSchema,
  ListPromptsResultSchema,
  ListResourcesRequestSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesRequestSchema,
  ListResourceTemplatesResultSchema,
  LoggingLevelSchema,
  McpError,
  ReadResourceRequestSchema,
  ReadResourceResultSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type LoggingLevel,
  type RequestId,
  type ServerCapabilities,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import {
  DEFAULT_SERVE_MAX_SUBSCRIPTIONS_PER_SESSION,
  DEFAULT_TOOL_LIST_MAX_PAGES,
} from '../config/defaults.js';
import { isCodecallError, isErrorLike } from '../errors.js';
import type { CodecallRuntime } from '../execute/index.js';
import type {
  RelayedInputRound,
  ToolPool,
  UpstreamAsker,
  UpstreamNotification,
  UpstreamServer,
} from '../tools/index.js';
import { GatewayNames } from './gateway-names.js';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** A notification meant for a client that codecall did not send, and why. */
export interface NotificationDroppedEvent {
  /**
   * `unattributed`: an upstream log message while calls of no session, or of several, were in
   * flight to its server (it may be about any client's call); `queue-full`: the session's
   * outgoing queue held its bound (the client does not read its stream fast enough).
   */
  reason: 'unattributed' | 'queue-full';
  method: string;
  /** The upstream server that sent it (`unattributed`). */
  server?: string;
  /** Bytes waiting to go out to the session's client when it was dropped (`queue-full`). */
  queuedBytes?: number;
}

/** Options of {@link attachGateway}. */
export interface GatewayOptions {
  runtime: CodecallRuntime;
  /** Who this session is: its calls and requests upstream carry it (`ToolCallOptions.origin`). */
  origin: string;
  /** Told of every upstream log message no single session's calls explain (once per message). */
  onNotificationDropped?: ((event: NotificationDroppedEvent) => void) | undefined;
  /**
   * Keep original prompt names and resource URIs when one connected server alone offers
   * prompts (resources). @defaultValue false
   */
  originalNames?: boolean;
  /** Resource subscriptions the session may hold. @defaultValue {@link DEFAULT_SERVE_MAX_SUBSCRIPTIONS_PER_SESSION} */
  maxSubscriptions?: number;
}

/** What {@link attachGateway} gives the server that owns the session. */
export interface Gateway {
  /** Answers the upstream's sampling/elicitation requests during one direct call of this session. */
  askerFor(extra: Extra): UpstreamAsker;
  /** Marks a direct call to `server` in flight (its log messages are sent on that request's stream). */
  trackCall(server: string, requestId: RequestId): () => void;
  /**
   * Marks an `execute_code` run of this session in flight: its calls carry `runId` and what their
   * servers log goes to this session, on that request's stream. `done()` ends it.
   */
  trackRun(requestId: RequestId): { runId: string; done(): void };
  /** Tells the client the resource and prompt lists may have changed (a server joined or left). */
  upstreamsChanged(): void;
  close(): void;
}

const LEVELS = LoggingLevelSchema.options;

/** Subscriptions of every session of one pool, counted per server and URI. */
const subscriptionsByPool = new WeakMap<ToolPool, Map<string, number>>();

/** One session as its pool's {@link UpstreamRouter} sees it. */
interface SessionSink {
  /** An upstream log message of this session's calls (the session filters it by its level). */
  log(server: string, params: Record<string, unknown>): void;
  /** Any other upstream notification (the session decides whether it is its). */
  deliver(server: string, notification: UpstreamNotification): void;
  onDropped: ((event: NotificationDroppedEvent) => void) | undefined;
}

/** Routes one pool's upstream notifications to its sessions, by origin. */
class UpstreamRouter {
  private readonly sessions = new Map<string, SessionSink>();
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly pool: ToolPool) {}

  add(origin: string, sink: SessionSink): () => void {
    this.sessions.set(origin, sink);
    this.unsubscribe ??= this.pool.onUpstreamNotification((server, notification) =>
      this.route(server, notification),
    );
    return () => {
      if (this.sessions.get(origin) === sink) this.sessions.delete(origin);
      if (this.sessions.size > 0) return;
      this.unsubscribe?.();
      this.unsubscribe = undefined;
      if (routers.get(this.pool) === this) routers.delete(this.pool);
    };
  }

  private route(server: string, notification: UpstreamNotification): void {
    if (notification.method !== 'notifications/message') {
      for (const sink of this.sessions.values()) sink.deliver(server, notification);
      return;
    }
    const origin = this.pool.soleOrigin(server);
    const sink = origin === undefined ? undefined : this.sessions.get(origin);
    if (sink) {
      sink.log(server, notification.params ?? {});
      return;
    }
    // One event per message, however many sessions share a listener (an HTTP server's sessions do).
    const told = new Set<(event: NotificationDroppedEvent) => void>();
    for (const { onDropped } of this.sessions.values()) {
      if (!onDropped || told.has(onDropped)) continue;
      told.add(onDropped);
      try {
        onDropped({ reason: 'unattributed', method: notification.method, server });
      } catch {
        // A listener's failure must not break routing.
      }
    }
  }
}

const routers = new WeakMap<ToolPool, UpstreamRouter>();

function protocolError(code: number, message: string, data?: unknown): McpError {
  const error = new McpError(code, message, data);
  error.message = message;
  return error;
}

/**
 * True when `error` is an MCP protocol error: by `name` and a numeric `code`, so that one made by
 * another copy of the MCP SDK (a dependency's own) is recognised as well. The SDK answers a
 * request whose handler threw from `code`, `message` and `data` alone.
 */
function isMcpError(error: unknown): error is McpError {
  return (
    isErrorLike(error) &&
    error.name === 'McpError' &&
    Number.isSafeInteger((error as { code?: unknown }).code)
  );
}

/** `-32002`, the resource-not-found code of the 2025 revisions (2026-07-28 keeps `-32602` beside it, SEP-2164). */
const RESOURCE_NOT_FOUND = -32002;

/**
 * An upstream's resource-not-found error (`-32002`, or SEP-2164's `-32602` naming a URI) with
 * `data.uri` as the client named it (`<server>+<uri>` when prefixed), not the upstream's own URI.
 */
function withClientUri(error: unknown, uri: string): unknown {
  if (!isMcpError(error)) return error;
  const data = (error as { data?: unknown }).data;
  const named = typeof data === 'object' && data !== null && !Array.isArray(data) && 'uri' in data;
  if (error.code !== RESOURCE_NOT_FOUND && !(error.code === ErrorCode.InvalidParams && named)) return error;
  return protocolError(error.code, error.message, { ...(named ? data : {}), uri });
}

/**
 * An upstream failure as the client should see it: the server's own error code, when it sent one.
 * @internal Exported for tests.
 */
export function upstreamError(error: unknown): McpError {
  if (isMcpError(error)) return error;
  if (isCodecallError(error)) {
    const code = error.details.mcpCode;
    const cause = error.cause instanceof Error ? error.cause.message : undefined;
    if (typeof code === 'number' && cause !== undefined)
      return protocolError(
        code,
        cause.replace(/^(MCP error -?\d+: )+/, ''),
        (error.cause as { data?: unknown }).data,
      );
    return protocolError(ErrorCode.InternalError, error.message);
  }
  return protocolError(
    ErrorCode.InternalError,
    'codecall failed unexpectedly; the server log has the details.',
  );
}

function encodeCursor(server: string, cursor: string | undefined): string {
  return Buffer.from(JSON.stringify([server, cursor ?? null])).toString('base64url');
}

function decodeCursor(cursor: string): { server: string; cursor: string | undefined } {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      typeof value[0] === 'string' &&
      (value[1] === null || typeof value[1] === 'string')
    )
      return { server: value[0], cursor: (value[1] as string | null) ?? undefined };
  } catch {
    // Fall through to the error below.
  }
  throw protocolError(
    ErrorCode.InvalidParams,
    'Invalid cursor: pass the nextCursor of the previous page as it came.',
  );
}

/** The capabilities the gateway declares for `upstreams` (see the module comment). */
export function gatewayCapabilities(upstreams: readonly UpstreamServer[]): ServerCapabilities {
  const starting = upstreams.some((u) => u.state === 'connecting' || u.state === 'reconnecting');
  const some = (test: (capabilities: ServerCapabilities) => unknown): boolean =>
    starting || upstreams.some((u) => u.capabilities !== undefined && Boolean(test(u.capabilities)));
  const capabilities: ServerCapabilities = {};
  if (some((c) => c.resources))
    capabilities.resources = {
      listChanged: true,
      ...(some((c) => c.resources?.subscribe) ? { subscribe: true } : {}),
    };
  if (some((c) => c.prompts)) capabilities.prompts = { listChanged: true };
  if (some((c) => c.completions)) capabilities.completions = {};
  if (some((c) => c.logging)) capabilities.logging = {};
  return capabilities;
}

/** What a gateway request handler gets besides the request's params. */
export interface GatewayRequestContext {
  /** Aborted when the client cancels the request (or goes away). */
  signal: AbortSignal;
  /**
   * A 2026-07-28 client's `prompts/get` or `resources/read`: a 2026-07-28 upstream's
   * `input_required` answer is returned as it came (`resultType: "input_required"`) for the
   * caller to relay (modern-pass-through.ts), and this round's answers go upstream.
   */
  relay?: RelayedInputRound | undefined;
}

/**
 * The requests the gateway answers the same way for every MCP era (2025-11-25 sessions and
 * stateless 2026-07-28 requests): each passes one client request through to upstream servers.
 */
export type GatewayMethod =
  | 'resources/list'
  | 'resources/templates/list'
  | 'resources/read'
  | 'prompts/list'
  | 'prompts/get'
  | 'completion/complete';

/** One entry of {@link GatewayRequests.handlers}: the request's params (validated by the SDK) to its result. */
export type GatewayHandler = (
  params: Record<string, unknown>,
  context: GatewayRequestContext,
) => Promise<Record<string, unknown>>;

/** What {@link gatewayRequests} gives the server of either era. */
export interface GatewayRequests {
  /** What the gateway declares for the upstream servers as they are now (see {@link gatewayCapabilities}). */
  capabilities: ServerCapabilities;
  /** The handler of each method the capabilities declare (and only those). */
  handlers: Partial<Record<GatewayMethod, GatewayHandler>>;
  /** The upstream server and URI of a URI as the client names it; `-32002` when none. */
  resourceTarget(uri: string): { server: string; uri: string };
  /** One request to an upstream server, its failure as the client should see it ({@link upstreamError}). */
  request<T>(
    server: string,
    method: string,
    params: Record<string, unknown>,
    schema: Parameters<ToolPool['requestUpstream']>[2],
    signal: AbortSignal,
  ): Promise<T>;
  /** Connected servers whose capabilities pass `test`. */
  offering(test: (c: ServerCapabilities) => unknown): string[];
}

/** Options of {@link gatewayRequests}. */
export interface GatewayRequestsOptions {
  runtime: CodecallRuntime;
  /** Who asks: the requests upstream carry it (`ToolCallOptions.origin`). */
  origin: string;
  /** See {@link GatewayOptions.originalNames}. @defaultValue false */
  originalNames?: boolean | undefined;
}

/**
 * The one table of gateway request handlers (resources, resource templates, prompts, completion)
 * both eras' servers register: `attachGateway` on the 2025-11-25 server, the 2026-07-28 legs
 * (modern-http.ts) on each request's server.
 */
export function gatewayRequests(options: GatewayRequestsOptions): GatewayRequests {
  const pool = options.runtime.tools;
  const originalNames = options.originalNames ?? false;
  const capabilities = gatewayCapabilities(pool.upstreams());
  const names = new GatewayNames(pool.upstreams().map((u) => u.name));
  const { origin } = options;

  const offering = (test: (c: ServerCapabilities) => unknown): string[] =>
    pool
      .upstreams()
      .filter((u) => u.state === 'connected' && u.capabilities !== undefined && test(u.capabilities))
      .map((u) => u.name);
  /** The one server offering a capability, when names stay original; else undefined. */
  const soleServer = (test: (c: ServerCapabilities) => unknown): string | undefined => {
    if (!originalNames) return undefined;
    const servers = offering(test);
    return servers.length === 1 ? servers[0] : undefined;
  };
  const hasResources = (c: ServerCapabilities): unknown => c.resources;
  const hasPrompts = (c: ServerCapabilities): unknown => c.prompts;

  const resourceTarget = (uri: string): { server: string; uri: string } => {
    const parsed = names.parseUri(uri);
    if (parsed) return parsed;
    const sole = soleServer(hasResources);
    if (sole !== undefined) return { server: sole, uri };
    throw protocolError(
      RESOURCE_NOT_FOUND,
      `Resource not found: ${JSON.stringify(uri).slice(0, 200)}. URIs of this gateway are "<server>+<uri>" as resources/list names them.`,
      { uri },
    );
  };
  const outUri = (server: string, uri: string): string =>
    soleServer(hasResources) === server ? uri : names.uri(server, uri);
  /**
   * With `originalNames` and several servers offering prompts: the servers listing each prompt
   * name (every page, at most {@link DEFAULT_TOOL_LIST_MAX_PAGES} a server), so a name no other
   * server has keeps its original form, as pass-through tools do. Undefined otherwise (then a
   * prompt is `<server>__<prompt>`, or its original name in front of one prompts server).
   */
  const promptOwners = async (signal: AbortSignal): Promise<Map<string, string[]> | undefined> => {
    const servers = offering(hasPrompts);
    if (!originalNames || servers.length < 2) return undefined;
    const owners = new Map<string, string[]>();
    for (const server of servers) {
      let cursor: string | undefined;
      for (let page = 0; page < DEFAULT_TOOL_LIST_MAX_PAGES; page++) {
        const result = await request<{ prompts: { name: string }[]; nextCursor?: string }>(
          server,
          'prompts/list',
          cursor === undefined ? {} : { cursor },
          ListPromptsResultSchema,
          signal,
        ).catch(() => undefined);
        for (const prompt of result?.prompts ?? [])
          owners.set(prompt.name, [...(owners.get(prompt.name) ?? []), server]);
        cursor = result?.nextCursor;
        if (cursor === undefined) break;
      }
    }
    return owners;
  };
  const promptTarget = async (
    name: string,
    signal: AbortSignal,
  ): Promise<{ server: string; name: string }> => {
    const sole = soleServer(hasPrompts);
    if (sole !== undefined) return { server: sole, name };
    const owner = (await promptOwners(signal))?.get(name);
    if (owner?.length === 1) return { server: owner[0]!, name };
    const parsed = names.parsePromptName(name);
    if (parsed) return parsed;
    throw protocolError(
      ErrorCode.InvalidParams,
      `Unknown prompt ${JSON.stringify(name).slice(0, 200)}. Prompts of this gateway are "<server>__<prompt>" as ` +
        `prompts/list names them${originalNames ? ' (or their own name when no other server has a prompt of that name)' : ''}.`,
    );
  };
  const outPrompt = (server: string, name: string, owners: Map<string, string[]> | undefined): string =>
    soleServer(hasPrompts) === server || owners?.get(name)?.length === 1
      ? name
      : names.promptName(server, name);

  /** One page of a listing across servers: one upstream page per request, the cursor names where. */
  const listAcross = async <T>(
    test: (c: ServerCapabilities) => unknown,
    cursor: unknown,
    fetch: (
      server: string,
      cursor: string | undefined,
    ) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
    signal: AbortSignal,
  ): Promise<{ items: T[]; nextCursor?: string }> => {
    const servers = offering(test);
    let index = 0;
    let upstreamCursor: string | undefined;
    if (typeof cursor === 'string') {
      const decoded = decodeCursor(cursor);
      index = servers.indexOf(decoded.server);
      if (index < 0) return { items: [] };
      upstreamCursor = decoded.cursor;
    }
    const items: T[] = [];
    for (; index < servers.length; index++, upstreamCursor = undefined) {
      const serverName = servers[index]!;
      if (signal.aborted) break;
      const page = await fetch(serverName, upstreamCursor).catch(
        (error: unknown): { items: T[]; nextCursor?: string | undefined } => {
          // One failing server does not hide the others' items.
          if (servers.length === 1) throw upstreamError(error);
          return { items: [] };
        },
      );
      items.push(...page.items);
      if (page.nextCursor !== undefined)
        return { items, nextCursor: encodeCursor(serverName, page.nextCursor) };
      if (items.length > 0 && index + 1 < servers.length)
        return { items, nextCursor: encodeCursor(servers[index + 1]!, undefined) };
    }
    return { items };
  };

  const request = <T>(
    serverName: string,
    method: string,
    params: Record<string, unknown>,
    schema: Parameters<ToolPool['requestUpstream']>[2],
    signal: AbortSignal,
  ): Promise<T> =>
    pool
      .requestUpstream(serverName, { method, params }, schema, { signal, origin })
      .catch((error: unknown) => {
        throw upstreamError(error);
      }) as Promise<T>;

  /** {@link request}, or its relayed form when the client's request is relayed (see {@link GatewayRequestContext.relay}). */
  const relayable = <T>(
    serverName: string,
    method: string,
    params: Record<string, unknown>,
    schema: Parameters<ToolPool['requestUpstream']>[2],
    context: GatewayRequestContext,
  ): Promise<T | { resultType: 'input_required' }> =>
    context.relay === undefined
      ? request<T>(serverName, method, params, schema, context.signal)
      : (pool
          .relayUpstream(serverName, { method, params }, schema, context.relay, {
            signal: context.signal,
            origin,
          })
          .catch((error: unknown) => {
            throw upstreamError(error);
          }) as Promise<T | { resultType: 'input_required' }>);
  const isRound = (result: unknown): result is { resultType: 'input_required' } =>
    (result as { resultType?: unknown }).resultType === 'input_required';

  const handlers: Partial<Record<GatewayMethod, GatewayHandler>> = {};
  if (capabilities.resources) {
    handlers['resources/list'] = async (params, { signal }) => {
      const page = await listAcross(
        hasResources,
        params.cursor,
        async (name, cursor) => {
          const result = await request<{ resources: { uri: string }[]; nextCursor?: string }>(
            name,
            'resources/list',
            cursor === undefined ? {} : { cursor },
            ListResourcesResultSchema,
            signal,
          );
          return {
            items: result.resources.map((r) => ({ ...r, uri: outUri(name, r.uri) })),
            nextCursor: result.nextCursor,
          };
        },
        signal,
      );
      return {
        resources: page.items,
        ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}),
      };
    };
    handlers['resources/templates/list'] = async (params, { signal }) => {
      const page = await listAcross(
        hasResources,
        params.cursor,
        async (name, cursor) => {
          const result = await request<{ resourceTemplates: { uriTemplate: string }[]; nextCursor?: string }>(
            name,
            'resources/templates/list',
            cursor === undefined ? {} : { cursor },
            ListResourceTemplatesResultSchema,
            signal,
          );
          return {
            items: result.resourceTemplates.map((t) => ({ ...t, uriTemplate: outUri(name, t.uriTemplate) })),
            nextCursor: result.nextCursor,
          };
        },
        signal,
      );
      return {
        resourceTemplates: page.items,
        ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}),
      };
    };
    handlers['resources/read'] = async (params, context) => {
      const target = resourceTarget(String(params.uri));
      const result = await relayable<{ contents: { uri: string }[] }>(
        target.server,
        'resources/read',
        { ...withoutMeta(params), uri: target.uri },
        ReadResourceResultSchema,
        context,
      ).catch((error: unknown) => {
        throw withClientUri(error, String(params.uri));
      });
      if (isRound(result)) return result;
      return {
        ...result,
        contents: result.contents.map((c) => ({ ...c, uri: outUri(target.server, c.uri) })),
      };
    };
  }
  if (capabilities.prompts) {
    handlers['prompts/list'] = async (params, { signal }) => {
      const owners = await promptOwners(signal);
      const page = await listAcross(
        hasPrompts,
        params.cursor,
        async (name, cursor) => {
          const result = await request<{ prompts: { name: string }[]; nextCursor?: string }>(
            name,
            'prompts/list',
            cursor === undefined ? {} : { cursor },
            ListPromptsResultSchema,
            signal,
          );
          return {
            items: result.prompts.map((p) => ({ ...p, name: outPrompt(name, p.name, owners) })),
            nextCursor: result.nextCursor,
          };
        },
        signal,
      );
      return {
        prompts: page.items,
        ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}),
      };
    };
    handlers['prompts/get'] = async (params, context) => {
      const target = await promptTarget(String(params.name), context.signal);
      return relayable<Record<string, unknown>>(
        target.server,
        'prompts/get',
        { ...withoutMeta(params), name: target.name },
        GetPromptResultSchema,
        context,
      );
    };
  }
  if (capabilities.completions) {
    handlers['completion/complete'] = async (params, { signal }) => {
      const ref = params.ref as { type: string; name?: string; uri?: string };
      let target: { server: string; ref: Record<string, unknown> };
      if (ref.type === 'ref/prompt') {
        const prompt = await promptTarget(String(ref.name), signal);
        target = { server: prompt.server, ref: { ...ref, name: prompt.name } };
      } else {
        const resource = resourceTarget(String(ref.uri));
        target = { server: resource.server, ref: { ...ref, uri: resource.uri } };
      }
      return request(
        target.server,
        'completion/complete',
        { ...withoutMeta(params), ref: target.ref },
        CompleteResultSchema,
        signal,
      );
    };
  }
  return { capabilities, handlers, resourceTarget, request, offering };
}

/**
 * `params` without the client's `_meta` when it carries the 2026-07-28 envelope: the envelope
 * describes the client's request to codecall, not codecall's request upstream (which is made in
 * the era of that upstream's connection). A 2025-era `_meta` (a `progressToken`…) goes on as before.
 */
function withoutMeta(params: Record<string, unknown>): Record<string, unknown> {
  const meta = params._meta as Record<string, unknown> | undefined;
  if (meta === undefined || typeof meta !== 'object' || !(PROTOCOL_VERSION_META_KEY in meta)) return params;
  // A relayed round's answers and codecall's own state are not the upstream's (GatewayRequestContext.relay).
  const { _meta: _dropped, inputResponses: _answers, requestState: _state, ...rest } = params;
  return rest;
}

/** The `_meta` key a 2026-07-28 request claims its revision with (the SDK's `PROTOCOL_VERSION_META_KEY`). */
const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';

/** The schema each {@link GatewayMethod} is registered with on the 2025-11-25 (SDK 1.x) server. */
const LEGACY_REQUEST_SCHEMAS = {
  'resources/list': ListResourcesRequestSchema,
  'resources/templates/list': ListResourceTemplatesRequestSchema,
  'resources/read': ReadResourceRequestSchema,
  'prompts/list': ListPromptsRequestSchema,
  'prompts/get': GetPromptRequestSchema,
  'completion/complete': CompleteRequestSchema,
} as const;

/**
 * Declares the gateway's capabilities on `server` (before it connects) and answers resources,
 * prompts, completion and logging requests from `runtime`'s upstream servers.
 */
export function attachGateway(server: Server, options: GatewayOptions): Gateway {
  const pool = options.runtime.tools;
  const maxSubscriptions = options.maxSubscriptions ?? DEFAULT_SERVE_MAX_SUBSCRIPTIONS_PER_SESSION;
  const table = gatewayRequests(options);
  const { capabilities, resourceTarget, offering } = table;
  server.registerCapabilities(capabilities);
  for (const [method, handler] of Object.entries(table.handlers) as [GatewayMethod, GatewayHandler][])
    server.setRequestHandler(
      LEGACY_REQUEST_SCHEMAS[method] as typeof ListResourcesRequestSchema,
      (req, extra) =>
        handler((req.params ?? {}) as Record<string, unknown>, { signal: extra.signal }) as never,
    );
  const subscriptions = subscriptionsByPool.get(pool) ?? new Map<string, number>();
  subscriptionsByPool.set(pool, subscriptions);
  /** This session's subscriptions: `[server, uri]` by the URI the client used. */
  const subscribed = new Map<string, [string, string]>();
  let logLevel: LoggingLevel | undefined;
  const calls = new Map<string, RequestId[]>();
  /** This session's `execute_code` runs in flight, by request. */
  const runs: RequestId[] = [];
  const { origin } = options;

  if (capabilities.resources?.subscribe) {
    server.setRequestHandler(SubscribeRequestSchema, async (req, extra) => {
      const target = resourceTarget(req.params.uri);
      if (subscribed.has(req.params.uri)) return {};
      if (subscribed.size >= maxSubscriptions)
        throw protocolError(
          ErrorCode.InvalidRequest,
          `This session holds ${subscribed.size} resource subscriptions, the most codecall serve allows ` +
            '(serve.maxSubscriptionsPerSession); unsubscribe from one first.',
        );
      const key = JSON.stringify([target.server, target.uri]);
      const count = subscriptions.get(key) ?? 0;
      if (count === 0)
        await table.request(
          target.server,
          'resources/subscribe',
          { uri: target.uri },
          EmptyResultSchema,
          extra.signal,
        );
      subscriptions.set(key, count + 1);
      subscribed.set(req.params.uri, [target.server, target.uri]);
      return {};
    });
    server.setRequestHandler(UnsubscribeRequestSchema, async (req, extra) => {
      const target = subscribed.get(req.params.uri);
      if (!target) return {};
      subscribed.delete(req.params.uri);
      await release(target, extra.signal);
      return {};
    });
  }

  /** Drops one session's subscription; the last one unsubscribes upstream. */
  const release = async ([serverName, uri]: [string, string], signal?: AbortSignal): Promise<void> => {
    const key = JSON.stringify([serverName, uri]);
    const count = (subscriptions.get(key) ?? 1) - 1;
    if (count > 0) {
      subscriptions.set(key, count);
      return;
    }
    subscriptions.delete(key);
    await pool
      .requestUpstream(serverName, { method: 'resources/unsubscribe', params: { uri } }, EmptyResultSchema, {
        ...(signal ? { signal } : {}),
        origin,
      })
      .catch(() => {});
  };

  if (capabilities.logging) {
    server.setRequestHandler(SetLevelRequestSchema, async (req, extra) => {
      logLevel = req.params.level;
      // Upstream servers are shared by every session: the last level set wins there, and each
      // session filters what it receives by its own level.
      await Promise.all(
        offering((c) => c.logging).map((name) =>
          pool
            .requestUpstream(
              name,
              { method: 'logging/setLevel', params: { level: logLevel } },
              EmptyResultSchema,
              { signal: extra.signal, origin },
            )
            .catch(() => {}),
        ),
      );
      return {};
    });
  }

  const send = (notification: ServerNotification, relatedRequestId?: RequestId): void => {
    if (!server.transport) return;
    server
      .notification(notification, relatedRequestId !== undefined ? { relatedRequestId } : undefined)
      .catch(() => {});
  };

  const router = routers.get(pool) ?? new UpstreamRouter(pool);
  routers.set(pool, router);
  const unsubscribe = router.add(origin, {
    onDropped: options.onNotificationDropped,
    log(serverName, params) {
      const level = params.level as LoggingLevel;
      if (!capabilities.logging || logLevel === undefined || !LEVELS.includes(level)) return;
      if (LEVELS.indexOf(level) < LEVELS.indexOf(logLevel)) return;
      const logger = typeof params.logger === 'string' ? `${serverName}/${params.logger}` : serverName;
      send(
        { method: 'notifications/message', params: { ...params, data: params.data, level, logger } },
        calls.get(serverName)?.at(-1) ?? runs.at(-1),
      );
    },
    deliver: (serverName, notification) => {
      switch (notification.method) {
        case 'notifications/resources/updated': {
          const uri = notification.params?.uri;
          if (typeof uri !== 'string') return;
          for (const [clientUri, [s, u]] of subscribed)
            if (s === serverName && u === uri)
              send({
                method: 'notifications/resources/updated',
                params: { ...notification.params, uri: clientUri },
              });
          return;
        }
        // The lists are the same for every client: each session is told.
        case 'notifications/resources/list_changed':
          if (capabilities.resources) send({ method: notification.method });
          return;
        case 'notifications/prompts/list_changed':
          if (capabilities.prompts) send({ method: notification.method });
          return;
      }
    },
  });

  return {
    askerFor(extra) {
      return async (upstream, signal) => {
        const sampling = upstream.method === 'sampling/createMessage';
        const capability = sampling ? 'sampling' : 'elicitation';
        if (!server.getClientCapabilities()?.[capability])
          throw protocolError(
            ErrorCode.InvalidRequest,
            `The MCP client connected to codecall did not declare the "${capability}" capability, so this ` +
              `${upstream.method} request cannot be forwarded to it. Use a client that supports ${capability}.`,
          );
        const result = await extra.sendRequest(
          { method: upstream.method, params: upstream.params } as ServerRequest,
          sampling ? CreateMessageResultSchema : ElicitResultSchema,
          { signal: AbortSignal.any([signal, extra.signal]) },
        );
        return result as Record<string, unknown>;
      };
    },
    trackRun(requestId) {
      const runId = randomUUID();
      const forget = pool.attributeRun(runId, origin);
      runs.push(requestId);
      return {
        runId,
        done() {
          forget();
          const index = runs.indexOf(requestId);
          if (index >= 0) runs.splice(index, 1);
        },
      };
    },
    trackCall(serverName, requestId) {
      calls.set(serverName, [...(calls.get(serverName) ?? []), requestId]);
      return () => {
        const left = (calls.get(serverName) ?? []).filter((id) => id !== requestId);
        if (left.length > 0) calls.set(serverName, left);
        else calls.delete(serverName);
      };
    },
    upstreamsChanged() {
      if (capabilities.resources) send({ method: 'notifications/resources/list_changed' });
      if (capabilities.prompts) send({ method: 'notifications/prompts/list_changed' });
    },
    close() {
      unsubscribe();
      for (const target of subscribed.values()) void release(target);
      subscribed.clear();
    },
  };
}
