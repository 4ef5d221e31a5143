/**
 * @module
 * Runs one of the test servers as a real MCP server process: over stdio (the default) or over
 * Streamable HTTP on loopback. Used by `examples/expense-server/server.mjs` and by tests that
 * need a real child process.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createConformanceServer } from './conformance-server.js';
import { createExpenseServer } from './expense-server.js';
import { createMisbehavingServer } from './misbehaving-server.js';
import { serveHttp, type HttpMcpEndpoint } from './serve-http.js';

/** Options of {@link runTestServer}. */
export interface RunTestServerOptions {
  /** Which server. */
  server: 'expenses' | 'misbehaving' | 'conformance';
  /** Serve over Streamable HTTP instead of stdio. @defaultValue false */
  http?: boolean;
  /** HTTP port. @defaultValue 0 (any free port) */
  port?: number;
  /** Let the misbehaving server's `crash` tool kill the process. @defaultValue false */
  allowCrash?: boolean;
  /** Seed of the expense data. @defaultValue 42 */
  seed?: number;
}

/**
 * Starts the server; resolves once it is serving. Over HTTP, resolves with the endpoint (its
 * URL is also printed to stderr); over stdio, with `undefined`, and the process lives until
 * stdin closes.
 *
 * @example
 * ```ts
 * await runTestServer({ server: 'expenses' }); // stdio
 * ```
 */
export async function runTestServer(options: RunTestServerOptions): Promise<HttpMcpEndpoint | undefined> {
  const create = () =>
    options.server === 'expenses'
      ? createExpenseServer(options.seed === undefined ? {} : { seed: options.seed })
      : options.server === 'conformance'
        ? createConformanceServer()
        : createMisbehavingServer({ allowCrash: options.allowCrash ?? false }).server;
  if (options.http) {
    const endpoint = await serveHttp(create, options.port === undefined ? {} : { port: options.port });
    process.stderr.write(`${options.server} MCP server listening on ${endpoint.url}\n`);
    return endpoint;
  }
  const transport = new StdioServerTransport();
  const server = create();
  // Exit cleanly when the client goes away (stdin closes).
  process.stdin.on('end', () => {
    void server.close();
  });
  await server.connect(transport);
  return undefined;
}
