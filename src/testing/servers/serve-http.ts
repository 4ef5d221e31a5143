/**
 * @module
 * Serves in-process MCP servers over Streamable HTTP on loopback (one server instance per
 * session), for tests and the runnable example.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Server as McpLowLevelServer } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/** Options of {@link serveHttp}. */
export interface ServeHttpOptions {
  /** @defaultValue 0 (any free port) */
  port?: number;
  /** @defaultValue `"127.0.0.1"` */
  host?: string;
  /** @defaultValue `"/mcp"` */
  path?: string;
}

/** A running HTTP MCP endpoint. */
export interface HttpMcpEndpoint {
  /** `http://127.0.0.1:<port>/mcp`. */
  url: string;
  port: number;
  /** Active sessions. */
  sessions(): number;
  /** Stops listening and closes every session. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Bytes of one request body accepted. */
const MAX_BODY_BYTES = 4 * 1_048_576;

function readBody(request: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('request body too large'));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        resolve(text === '' ? undefined : JSON.parse(text));
      } catch (error) {
        reject(error as Error);
      }
    });
    request.on('error', reject);
  });
}

/**
 * Serves `createServer()` over Streamable HTTP; every new session gets its own server.
 *
 * @example
 * ```ts
 * await using endpoint = await serveHttp(() => createExpenseServer());
 * console.log(endpoint.url);
 * ```
 */
export async function serveHttp(
  createMcpServer: () => McpServer | McpLowLevelServer,
  options: ServeHttpOptions = {},
): Promise<HttpMcpEndpoint> {
  const path = options.path ?? '/mcp';
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const servers = new Set<McpServer | McpLowLevelServer>();

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname !== path) {
      response.writeHead(404).end();
      return;
    }
    const sessionId = request.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
    if (existing) {
      const body = request.method === 'POST' ? await readBody(request) : undefined;
      await existing.handleRequest(request, response, body);
      return;
    }
    if (request.method !== 'POST') {
      response
        .writeHead(400, { 'content-type': 'application/json' })
        .end(
          JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'No valid session' }, id: null }),
        );
      return;
    }
    const body = await readBody(request);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        transports.set(id, transport);
      },
    });
    const server = createMcpServer();
    servers.add(server);
    transport.onclose = () => {
      if (transport.sessionId) transports.delete(transport.sessionId);
      servers.delete(server);
    };
    await server.connect(transport);
    await transport.handleRequest(request, response, body);
  };

  const http: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(400, { 'content-type': 'text/plain' });
      response.end(String((error as Error)?.message ?? error));
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = http.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      await Promise.allSettled([...servers].map((s) => s.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    })();
    return closing;
  };
  return {
    url: `http://${address.address}:${address.port}${path}`,
    port: address.port,
    sessions: () => transports.size,
    close,
    [Symbol.asyncDispose]: close,
  };
}
