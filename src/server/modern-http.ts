/**
 * @module
 * The 2026-07-28 leg of `codecall serve --http`: a request that carries the 2026 per-request `_meta`
 * envelope is answered statelessly by a fresh `@modelcontextprotocol/server` (SDK v2) server built for
 * that request alone, so any `serve` node can answer any 2026 request (nodes behind a round-robin
 * proxy are interchangeable). 2025-era traffic never reaches this leg: `startHttpServer` routes it
 * to its sessionful SDK 1.x transport as before, using the SDK's own classifier
 * (`isLegacyRequest`), the composition the SDK documents for a server that keeps a sessionful 2025
 * deployment beside its 2026 entry.
 *
 * A stateless request has no session, so nothing here is keyed to one: `execute_code` uses the
 * runtime's `store` (shared between nodes when the usage history is Redis or Postgres), REPL
 * sessions are refused (a live isolate cannot follow a request to another node), and calls that
 * need approval are decided by the runtime's approver.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import {
  Server as ModernServer,
  createMcpHandler,
  isLegacyRequest,
  type CallToolResult,
  type InputRequiredResult,
  type McpHttpHandler,
  type RequestStateCodec,
  type ServerContext,
  type Tool as ModernTool,
} from '@modelcontextprotocol/server';
import { EXECUTE_CODE_NAME, SEARCH_TOOLS_NAME, parseExecuteCodeInput } from '../meta/index.js';
import {
  DEFAULT_SERVE_MAX_LISTEN_SUBSCRIPTIONS,
  DEFAULT_SERVE_SEARCH_WAIT_FOR_SERVERS_MS,
} from '../config/defaults.js';
import type { CodecallRuntime } from '../execute/index.js';
import { MemoryJobStateStore, type JobStateStore } from '../store/job-state.js';
import type { CatalogTool } from '../tools/index.js';
import type { ServeLearning } from '../config/index.js';
import type { ExecuteCodeEvent } from './create-codecall-server.js';
import { gatewayRequests, type GatewayHandler, type GatewayMethod, type GatewayRequests } from './gateway.js';
import {
  errorText,
  listCodecallTools,
  searchToolsCall,
  textResult as sharedTextResult,
  withServerNote as sharedWithServerNote,
} from './shared-handlers.js';
import type { CallToolResult as SharedCallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { passThroughTools } from './gateway-names.js';
import { createApprovalStateCodec, type PausedCall } from './modern-approvals.js';
import { executeModern } from './modern-execute.js';
import { callPassThrough, relayGatewayRequest } from './modern-pass-through.js';
import { notifyListChanges } from './modern-listen.js';
import { checkingParamHeaders } from './mcp-param-headers.js';
import {
  clientOf,
  createModernTasks,
  declaresTasks,
  registerTaskMethods,
  TASKS_EXTENSION,
  type ModernTasks,
  type ModernTasksOptions,
} from './modern-tasks.js';
import { createTaskRelay, type TaskRelay } from './task-relay.js';
import type { CallTrace } from '../util/trace-context.js';
import { requestTracing } from './request-tracing.js';
import type { RunLimiter } from './run-limiter.js';
import { failedServersText, ownersOfDirectName, waitForServers } from './starting-servers.js';
import { taskClientOfBearer } from './task-jobs.js';

/** The protocol revision this leg serves. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/** Options of {@link createModernHttpHandler}. */
export interface ModernHttpOptions {
  runtime: CodecallRuntime;
  runLimiter: RunLimiter;
  serverInfo: { name: string; version: string };
  instructions: string;
  /** @defaultValue true */
  passThrough?: boolean | undefined;
  /** @defaultValue false */
  originalNames?: boolean | undefined;
  /** @defaultValue `"shared"` */
  learning?: ServeLearning | undefined;
  /** @defaultValue {@link DEFAULT_SERVE_SEARCH_WAIT_FOR_SERVERS_MS} */
  searchWaitForServersMs?: number | undefined;
  /** Bytes of one request body (the handler reads none itself; the HTTP server bounds them first). */
  maxBodyBytes: number;
  onError?: ((error: unknown) => void) | undefined;
  onExecute?: ((event: ExecuteCodeEvent) => void) | undefined;
  /**
   * HMAC key (≥ 32 bytes) that signs the `requestState` of approvals; every node behind one
   * address needs the same (`CODECALL_REQUEST_STATE_KEY` for `codecall serve`).
   * @defaultValue a random per-process key (one node)
   */
  requestStateKey?: string | undefined;
  /**
   * Where runs paused on an approval keep their journal until the client answers.
   * @defaultValue an in-process store (one node)
   */
  journals?: JobStateStore | undefined;
  /**
   * The job backend `execute_code` tasks run on (the Tasks extension, `io.modelcontextprotocol/tasks`),
   * and their bounds: without it the extension is not offered and every call is answered in its request.
   * @defaultValue none
   */
  tasks?: ModernTasksOptions | undefined;
}

/** What one request's server shares with every other of its handler. */
interface ModernShared {
  codec: RequestStateCodec<PausedCall>;
  journals: JobStateStore;
  tasks: ModernTasks | undefined;
  /** Pass-through tools' upstream tasks, relayed to clients that declared the extension. */
  relay: TaskRelay | undefined;
}

function textResult(text: string, isError = false): CallToolResult {
  return sharedTextResult(text, isError) as CallToolResult;
}

/** `result` with the note on MCP servers not connected (if any) as a last text block, as for 2025 clients. */
function withServerNote(result: CallToolResult, runtime: CodecallRuntime): CallToolResult {
  return sharedWithServerNote(result as SharedCallToolResult, runtime) as CallToolResult;
}

/**
 * The gateway's capabilities as a 2026-07-28 server declares them: resources, prompts and
 * completion when an upstream offers them, with `listChanged` (their changes reach
 * `subscriptions/listen` streams, modern-listen.ts); no `subscribe` (resource updates are not
 * carried on `subscriptions/listen` yet), no `logging` (deprecated, changelog § Deprecations; the
 * level comes with each request).
 */
function modernGatewayCapabilities(capabilities: GatewayRequests['capabilities']): Record<string, object> {
  return {
    ...(capabilities.resources ? { resources: { listChanged: true } } : {}),
    ...(capabilities.prompts ? { prompts: { listChanged: true } } : {}),
    ...(capabilities.completions ? { completions: {} } : {}),
  };
}

function report(onError: ((error: unknown) => void) | undefined, error: unknown): void {
  try {
    onError?.(error);
  } catch {
    // A listener's failure must not fail the call.
  }
}

/** One request's server: answers `tools/list` and `tools/call` from `options.runtime`. */
function createModernServer(options: ModernHttpOptions, shared: ModernShared): ModernServer {
  const { runtime, runLimiter: limiter } = options;
  const learn = (options.learning ?? 'shared') === 'shared';
  const tracing = requestTracing(runtime.config.serve.telemetry);
  const originalNames = options.originalNames ?? false;
  const searchWaitMs = options.searchWaitForServersMs ?? DEFAULT_SERVE_SEARCH_WAIT_FOR_SERVERS_MS;
  // Read per request: a stdio connection keeps one server while the catalog changes under it.
  const currentDirect = (): Map<string, CatalogTool> =>
    (options.passThrough ?? true)
      ? passThroughTools(runtime.tools.catalog(), originalNames)
      : new Map<string, CatalogTool>();
  const gateway = gatewayRequests({
    runtime,
    origin: `mcp-${MODERN_PROTOCOL_VERSION}:${randomUUID()}`,
    originalNames,
  });
  const server = new ModernServer(options.serverInfo, {
    capabilities: {
      tools: { listChanged: true },
      ...modernGatewayCapabilities(gateway.capabilities),
      ...(shared.tasks !== undefined || shared.relay !== undefined
        ? { extensions: { [TASKS_EXTENSION]: {} } }
        : {}),
    },
    instructions: options.instructions,
    requestState: { verify: shared.codec.verify },
  });
  server.setRequestHandler('tools/list', () => ({
    tools: listCodecallTools(runtime, currentDirect()) as unknown as ModernTool[],
  }));
  // Resources, resource templates, prompts and completion: the gateway's one table, as for 2025
  // clients (spec 2026-07-28 server/resources, server/prompts, server/utilities/completion).
  // `prompts/get` and `resources/read` relay an upstream's input_required rounds as tools/call does.
  for (const [method, handler] of Object.entries(gateway.handlers) as [GatewayMethod, GatewayHandler][])
    server.setRequestHandler(method, ((request: { params?: Record<string, unknown> }, ctx: ServerContext) =>
      method === 'prompts/get' || method === 'resources/read'
        ? relayGatewayRequest({
            method,
            params: request.params ?? {},
            handler,
            ctx,
            codec: shared.codec as RequestStateCodec<unknown>,
          })
        : handler(request.params ?? {}, { signal: ctx.mcpReq.signal })) as never);
  if (shared.tasks !== undefined || shared.relay !== undefined)
    registerTaskMethods(server, shared.tasks, shared.relay);
  server.setRequestHandler('tools/call', (request, ctx): Promise<CallToolResult | InputRequiredResult> =>
    // The client's trace context (`_meta.traceparent`…) parents the request's span (serve.telemetry)
    // and goes on to the upstream calls it makes.
    tracing.request(
      {
        tool: request.params.name,
        meta: { ...(ctx.mcpReq.envelope as object | undefined), ...request.params._meta },
      },
      (trace) => callTool(request, ctx, trace),
      (result) => (result as CallToolResult).isError === true,
    ),
  );
  async function callTool(
    request: { params: { name: string; arguments?: Record<string, unknown> | undefined } },
    ctx: ServerContext,
    trace: CallTrace | undefined,
  ): Promise<CallToolResult | InputRequiredResult> {
    const { name, arguments: args } = request.params;
    const signal = ctx.mcpReq.signal;
    const direct = currentDirect();
    if (name === SEARCH_TOOLS_NAME)
      return (
        await searchToolsCall(runtime, args ?? {}, {
          direct,
          waitForServersMs: searchWaitMs,
          signal,
          onError: options.onError,
        })
      ).result as CallToolResult;
    if (name === EXECUTE_CODE_NAME) {
      const input = parseExecuteCodeInput(args ?? {});
      if ('error' in input) return textResult(input.error, true);
      if (input.session !== undefined)
        return textResult(
          `"session" is not available to ${MODERN_PROTOCOL_VERSION} clients: a REPL session lives in one ` +
            'server process, and a stateless request may reach another. Nothing ran; drop "session" and keep ' +
            'what must outlive the call in `store` (store.set / store.get).',
          true,
        );
      // A client that declared the Tasks extension gets a task: the run goes to the job backend
      // (SEP-2663 § Capability Negotiation: never to a client that did not declare it).
      if (shared.tasks !== undefined && declaresTasks(ctx)) {
        try {
          const created = await shared.tasks.create(input.code, ctx);
          if ('refused' in created) return textResult(created.refused as string, true);
          return created as unknown as CallToolResult;
        } catch (error) {
          return textResult(errorText(error, options.onError), true);
        }
      }
      return executeModern(
        {
          runtime,
          limiter,
          learn,
          codec: shared.codec,
          journals: shared.journals,
          protocol: MODERN_PROTOCOL_VERSION,
          onError: options.onError,
          onExecute: options.onExecute,
          withServerNote: (result) => withServerNote(result, runtime),
        },
        input.code,
        ctx,
        trace,
      );
    }
    let tool = direct.get(name);
    if (!tool) {
      await waitForServers(runtime.tools, ownersOfDirectName(runtime.tools, name, originalNames), signal);
      tool = passThroughTools(runtime.tools.catalog(), originalNames).get(name);
    }
    if (!tool) {
      const failed = failedServersText(runtime.tools, ownersOfDirectName(runtime.tools, name, originalNames));
      return textResult(
        `Unknown tool "${name}"${failed !== undefined ? `: ${failed}` : ''}. This server has ` +
          `${SEARCH_TOOLS_NAME}, ${EXECUTE_CODE_NAME}${direct.size > 0 ? ` and ${[...direct.keys()].join(', ')}` : ''}.`,
        true,
      );
    }
    // Relayed faithfully: the upstream's input_required rounds, its task (to a client that declared
    // the Tasks extension, task-relay.ts), progress and JSON-RPC errors.
    return callPassThrough({
      runtime,
      tool,
      args: args ?? {},
      ctx,
      meta: (request.params as { _meta?: Record<string, unknown> })._meta,
      trace,
      codec: shared.codec as RequestStateCodec<unknown>,
      onError: options.onError,
      tasks: {
        declared: declaresTasks(ctx),
        created: (result) => shared.relay?.created(result, tool.server, clientOf(ctx)),
      },
    });
  }
  return server;
}

/**
 * A factory of 2026-07-28 servers over codecall's tools, one per serving unit (an HTTP request, or
 * a stdio connection), sharing one approval-state codec and one journal store.
 */
export function createModernServerFactory(options: ModernHttpOptions): () => ModernServer {
  const shared: ModernShared = {
    codec: createApprovalStateCodec({ key: options.requestStateKey }),
    journals: options.journals ?? new MemoryJobStateStore(),
    tasks: options.tasks !== undefined ? createModernTasks(options.tasks) : undefined,
    relay:
      (options.passThrough ?? true)
        ? createTaskRelay({ runtime: options.runtime, key: options.requestStateKey })
        : undefined,
  };
  return () => createModernServer(options, shared);
}

/**
 * The SDK's 2026-07-28 HTTP handler over codecall's tools, refusing 2025-era requests (those go to
 * the sessionful leg).
 */
export function createModernHttpHandler(options: ModernHttpOptions): McpHttpHandler {
  const handler = createMcpHandler(createModernServerFactory(options), {
    legacy: 'reject',
    maxRequestBodySize: options.maxBodyBytes,
    maxSubscriptions: DEFAULT_SERVE_MAX_LISTEN_SUBSCRIPTIONS,
    onerror: (error) => report(options.onError, error),
  });
  // List changes go to the open `subscriptions/listen` streams (modern-listen.ts).
  const stop = notifyListChanges({
    runtime: options.runtime,
    passThrough: options.passThrough ?? true,
    originalNames: options.originalNames ?? false,
    notify: handler.notify,
  });
  const close = handler.close.bind(handler);
  handler.close = async () => {
    stop();
    await close();
  };
  // Mcp-Param-* headers of pass-through tools whose upstream declared x-mcp-header parameters.
  return checkingParamHeaders(handler, (tool) =>
    (options.passThrough ?? true)
      ? passThroughTools(options.runtime.tools.catalog(), options.originalNames ?? false).get(tool)
          ?.inputSchema
      : undefined,
  );
}

/** A web `Request` of what `request` sent (its body already read into `text`). */
function webRequest(request: IncomingMessage, text: string | undefined, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const method = request.method ?? 'GET';
  return new Request(new URL(request.url ?? '/', `http://${request.headers.host ?? 'localhost'}`), {
    method,
    headers,
    signal,
    ...(text !== undefined && method !== 'GET' && method !== 'HEAD' ? { body: text } : {}),
  });
}

/**
 * True when the SDK classifies this POST as a 2026-07-28 request (it carries the per-request
 * `_meta` envelope claim). Only a POST without `mcp-session-id` can be one.
 */
export async function isModernPost(request: IncomingMessage, text: string, body: unknown): Promise<boolean> {
  if (request.method !== 'POST' || request.headers['mcp-session-id'] !== undefined) return false;
  return !(await isLegacyRequest(webRequest(request, text, new AbortController().signal), body));
}

/**
 * Answers one 2026-07-28 POST through `handler` and writes its response (JSON or SSE) to
 * `response`. A client that goes away before the answer aborts the request, which cancels its run.
 */
export async function serveModern(
  handler: McpHttpHandler,
  request: IncomingMessage,
  response: ServerResponse,
  text: string,
  body: unknown,
): Promise<void> {
  const controller = new AbortController();
  response.once('close', () => {
    if (!response.writableFinished) controller.abort(new Error('the HTTP client disconnected'));
  });
  // The bearer token (already checked by the HTTP server) names the client a task belongs to.
  const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
  const answer = await handler.fetch(webRequest(request, text, controller.signal), {
    parsedBody: body,
    ...(bearer !== undefined
      ? {
          authInfo: {
            token: bearer,
            clientId: taskClientOfBearer(bearer),
            scopes: [],
          },
        }
      : {}),
  });
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    headers[name] = value;
  });
  response.writeHead(answer.status, headers);
  if (answer.body === null) {
    response.end();
    return;
  }
  const stream = Readable.fromWeb(answer.body as NodeReadableStream<Uint8Array>);
  response.once('close', () => stream.destroy());
  stream.pipe(response);
  await new Promise<void>((resolve) => {
    response.once('close', resolve);
    stream.once('error', () => resolve());
  });
}
