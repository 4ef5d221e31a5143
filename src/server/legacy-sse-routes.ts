/**
 * @module
 * The legacy HTTP+SSE transport (protocol 2024-11-05) for older clients, as {@link HttpRoutes}
 * of `startHttpServer`: `GET /sse` opens a session's event stream (its first event names the
 * `/messages?sessionId=…` endpoint), `POST /messages?sessionId=…` carries the client's messages.
 * Behind the same token, Host/Origin checks as `/mcp`; message bodies are bounded by the SDK's
 * transport (4 MB), sessions by `maxSessions`. Off unless asked (`codecall serve --http --legacy-sse`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { DEFAULT_SERVE_MAX_SESSIONS } from '../config/defaults.js';
import { createCodecallServer, type CodecallServerOptions } from './create-codecall-server.js';
import type { HttpRoutes } from './start-http-server.js';

/** The event-stream path of the legacy SSE transport. */
export const LEGACY_SSE_PATH = '/sse';
/** The message path of the legacy SSE transport. */
export const LEGACY_MESSAGES_PATH = '/messages';

/** Options of {@link createLegacySseRoutes}: those of the server each session gets, and a bound. */
export interface LegacySseRoutesOptions extends CodecallServerOptions {
  /** Open legacy SSE sessions. @defaultValue {@link DEFAULT_SERVE_MAX_SESSIONS} */
  maxSessions?: number;
}

function refuse(response: ServerResponse, status: number, message: string): void {
  response.writeHead(status, { 'content-type': 'text/plain' }).end(`${message}\n`);
}

/**
 * Routes serving the legacy SSE transport; pass them as `routes` of `startHttpServer` (compose
 * with other routes by trying each `matches`).
 */
export function createLegacySseRoutes(
  options: LegacySseRoutesOptions,
): HttpRoutes & { close(): Promise<void> } {
  const { maxSessions = DEFAULT_SERVE_MAX_SESSIONS, ...serverOptions } = options;
  const sessions = new Map<string, SSEServerTransport>();
  return {
    matches: (pathname) => pathname === LEGACY_SSE_PATH || pathname === LEGACY_MESSAGES_PATH,
    async handle(request: IncomingMessage, response: ServerResponse) {
      const url = new URL(request.url ?? '/', 'http://localhost');
      if (url.pathname === LEGACY_SSE_PATH) {
        if (request.method !== 'GET') return refuse(response, 405, `${LEGACY_SSE_PATH} takes GET.`);
        if (sessions.size >= maxSessions)
          return refuse(response, 503, `Too many legacy SSE sessions (${maxSessions}); close one and retry.`);
        const transport = new SSEServerTransport(LEGACY_MESSAGES_PATH, response);
        const server = createCodecallServer(serverOptions);
        sessions.set(transport.sessionId, transport);
        transport.onclose = () => sessions.delete(transport.sessionId);
        response.on('close', () => void server.close().catch(() => {}));
        await server.connect(transport);
        return;
      }
      if (request.method !== 'POST') return refuse(response, 405, `${LEGACY_MESSAGES_PATH} takes POST.`);
      const transport = sessions.get(url.searchParams.get('sessionId') ?? '');
      if (!transport)
        return refuse(
          response,
          404,
          `No legacy SSE session with that sessionId: open ${LEGACY_SSE_PATH} first.`,
        );
      await transport.handlePostMessage(request, response);
    },
    async close() {
      await Promise.allSettled([...sessions.values()].map((transport) => transport.close()));
      sessions.clear();
    },
  };
}
