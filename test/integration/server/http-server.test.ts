/**
 * `startHttpServer` on 127.0.0.1 with the SDK's Streamable HTTP client and raw HTTP requests:
 * tools over sessions, progress over SSE, and the security model (bind rules, Host/Origin,
 * bearer token, body and session bounds).
 */
import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { parseConfig } from '../../../src/config/index.js';
import {
  isLoopbackHost,
  RunLimiter,
  startHttpServer,
  type HttpServerHandle,
} from '../../../src/server/index.js';
import {
  createExpenseServer,
  createMisbehavingServer,
  inMemoryTransport,
} from '../../../src/testing/servers/index.js';

let runtime: CodecallRuntime;

beforeAll(async () => {
  runtime = await CodecallRuntime.open({
    config: parseConfig(
      { mcpServers: {}, sandbox: { cpuTimeMs: 1_000 }, history: { enabled: false } },
      { file: '<http-server.test>' },
    ),
    history: false,
    tools: {
      transports: {
        expenses: inMemoryTransport(() => createExpenseServer()),
        misc: inMemoryTransport(() => createMisbehavingServer({ name: 'misc' }).server),
      },
    },
  });
});

afterAll(async () => {
  await runtime?.close();
});

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** A raw HTTP POST (node:http, so Host can be set), resolving with status, headers and body. */
function post(
  url: string,
  body: string,
  headers: Record<string, string> = {},
  options: { localAddress?: string; onRequest?: (req: ReturnType<typeof httpRequest>) => void } = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        ...(options.localAddress !== undefined ? { localAddress: options.localAddress } : {}),
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': String(Buffer.byteLength(body)),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    options.onRequest?.(req);
    req.end(body);
  });
}

/** The JSON-RPC message of a reply sent as JSON or as one SSE event. */
function rpcReply(body: string): {
  id?: unknown;
  result?: unknown;
  error?: { code: number; message: string };
} {
  const data = body.trimStart().startsWith('{')
    ? body
    : body
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('');
  return JSON.parse(data) as { id?: unknown; result?: unknown; error?: { code: number; message: string } };
}

/** Opens a raw session; returns its id. */
async function rawSession(url: string, localAddress?: string): Promise<string> {
  const reply = await post(
    url,
    JSON.stringify(INITIALIZE),
    {},
    localAddress !== undefined ? { localAddress } : {},
  );
  expect(reply.status).toBe(200);
  return reply.headers['mcp-session-id'] as string;
}

function callTool(id: number | string, name: string, args: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
}

async function connect(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: 'http-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

function message(body: string): string {
  return (JSON.parse(body) as { error: { message: string } }).error.message;
}

function text(result: unknown): string {
  return (result as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

describe('startHttpServer', () => {
  it('serves tools over a session, with progress over SSE, and ends the session on DELETE', async () => {
    await using http = await startHttpServer({ runtime, port: 0, progressIntervalMs: 20 });
    expect(http.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const { client, transport } = await connect(http.url);
    expect(transport.sessionId).toBeTruthy();
    expect(http.sessions()).toBe(1);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).slice(0, 2)).toEqual(['search_tools', 'execute_code']);
    const found = await client.callTool({ name: 'search_tools', arguments: { query: 'budget by level' } });
    expect(text(found)).toMatch(/expenses\.get_budget_by_level/);
    const updates: Progress[] = [];
    const result = await client.callTool(
      {
        name: 'execute_code',
        arguments: {
          code: `await tools.misc.slow({ ms: 300 });
                 const { members } = await tools.expenses.get_team_members({ level: 'L3' });
                 console.log(members.every((m) => m.level === 'L3'))`,
        },
      },
      undefined,
      { onprogress: (p) => updates.push(p) },
    );
    expect(text(result)).toBe('stdout:\ntrue\n\nexit status: ok after 2 tool calls');
    expect(updates[0]?.message).toBe('started');
    expect(updates.length).toBeGreaterThan(1);
    await transport.terminateSession();
    await expect.poll(() => http.sessions()).toBe(0);
    await client.close();
  });

  it('refuses a foreign Origin and a rebinding Host with 403; its own origin passes', async () => {
    await using http = await startHttpServer({ runtime, port: 0 });
    const body = JSON.stringify(INITIALIZE);
    const foreign = await post(http.url, body, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(message(foreign.body)).toMatch(/Origin "https:\/\/evil\.example" is not allowed/);
    const rebinding = await post(http.url, body, { host: `evil.example:${http.port}` });
    expect(rebinding.status).toBe(403);
    expect(message(rebinding.body)).toMatch(/Host "evil\.example:\d+" is not allowed/);
    // A page on another loopback port may not POST (same site, another origin).
    const otherPort = await post(http.url, body, { origin: 'http://localhost:6274' });
    expect(otherPort.status).toBe(403);
    expect(message(otherPort.body)).toMatch(/Origin "http:\/\/localhost:6274" is not this server's origin/);
    expect(http.sessions()).toBe(0);
    const local = await post(http.url, body, { origin: `http://127.0.0.1:${http.port}` });
    expect(local.status).toBe(200);
    expect(local.headers['mcp-session-id']).toBeTruthy();
    expect(http.sessions()).toBe(1);
  });

  it('accepts an origin given in allowedOrigins', async () => {
    await using http = await startHttpServer({ runtime, port: 0, allowedOrigins: ['https://app.example'] });
    const ok = await post(http.url, JSON.stringify(INITIALIZE), { origin: 'https://app.example' });
    expect(ok.status).toBe(200);
  });

  it('with a token: 401 without it or with a wrong one, served with it', async () => {
    await using http = await startHttpServer({ runtime, port: 0, token: 's3cret-token' });
    const body = JSON.stringify(INITIALIZE);
    const missing = await post(http.url, body);
    expect(missing.status).toBe(401);
    expect(missing.headers['www-authenticate']).toBe('Bearer');
    expect((await post(http.url, body, { authorization: 'Bearer wrong' })).status).toBe(401);
    const { client } = await connect(http.url, { authorization: 'Bearer s3cret-token' });
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThanOrEqual(2);
    await client.close();
  });

  it('refuses to bind a non-loopback address without a token', async () => {
    expect(isLoopbackHost('0.0.0.0')).toBe(false);
    await expect(startHttpServer({ runtime, host: '0.0.0.0', port: 0 })).rejects.toMatchObject({
      code: 'SERVE_TOKEN_REQUIRED',
      message: expect.stringMatching(/CODECALL_SERVE_TOKEN/),
    });
    await using open = await startHttpServer({ runtime, host: '0.0.0.0', port: 0, token: 't0ken' });
    // Bound to every interface, reachable over loopback too; the token is what protects it.
    const reply = await post(`http://127.0.0.1:${open.port}/mcp`, JSON.stringify(INITIALIZE), {
      authorization: 'Bearer t0ken',
    });
    expect(reply.status).toBe(200);
  });

  it('413 for a body over the bound, 400 for bad JSON or a missing session, 404 for an unknown one', async () => {
    await using http = await startHttpServer({ runtime, port: 0, maxBodyBytes: 10_000 });
    const big = JSON.stringify({ ...INITIALIZE, params: { ...INITIALIZE.params, pad: 'x'.repeat(20_000) } });
    const tooLarge = await post(http.url, big);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toMatch(/larger than 10000 bytes/);
    expect((await post(http.url, '{not json')).status).toBe(400);
    const noSession = await post(http.url, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
    expect(noSession.status).toBe(400);
    const unknown = await post(http.url, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }), {
      'mcp-session-id': 'no-such-session',
    });
    expect(unknown.status).toBe(404);
    const elsewhere = await post(http.url.replace(/\/mcp$/, '/other'), '{}');
    expect(elsewhere.status).toBe(404);
    // The server still serves normal requests.
    expect((await post(http.url, JSON.stringify(INITIALIZE))).status).toBe(200);
  });

  it('bounds open sessions: a client past its share gives up its own oldest idle one; idle ones expire', async () => {
    await using http = await startHttpServer({ runtime, port: 0, maxSessions: 1, sessionIdleMs: 200 });
    const first = await rawSession(http.url);
    const second = await rawSession(http.url);
    expect(second).not.toBe(first);
    expect(http.sessions()).toBe(1);
    const gone = await post(http.url, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }), {
      'mcp-session-id': first,
    });
    expect(gone.status).toBe(404);
    await expect.poll(() => http.sessions(), { timeout: 5_000 }).toBe(0);
    expect((await post(http.url, JSON.stringify(INITIALIZE))).status).toBe(200);
  });

  it('a port in use is a SERVE_LISTEN_FAILED error that says what to do', async () => {
    await using first = await startHttpServer({ runtime, port: 0 });
    await expect(startHttpServer({ runtime, port: first.port })).rejects.toMatchObject({
      code: 'SERVE_LISTEN_FAILED',
      message: expect.stringMatching(/EADDRINUSE\. Pick another --port/),
    });
  });

  it('close() ends sessions and stops listening; the runtime stays open', async () => {
    const http: HttpServerHandle = await startHttpServer({ runtime, port: 0 });
    const { client } = await connect(http.url);
    await http.close();
    await http.close();
    expect(http.sessions()).toBe(0);
    await expect(post(http.url, JSON.stringify(INITIALIZE))).rejects.toThrow(/ECONNREFUSED/);
    await client.close();
    const result = await runtime.execute('console.log("still open")');
    expect(result.stdout).toBe('still open\n');
  });
});

describe('startHttpServer under abuse', () => {
  it('a client flooding initialize recycles its own sessions; other clients keep theirs and get new ones', async () => {
    await using http = await startHttpServer({ runtime, port: 0, maxSessions: 6, maxSessionsPerClient: 3 });
    const { client: legit } = await connect(http.url);
    // 127.0.0.2 is another client on this machine (the whole 127/8 is loopback).
    for (let i = 0; i < 40; i++) await rawSession(http.url, '127.0.0.2');
    expect(http.sessions()).toBeLessThanOrEqual(4);
    // Another flooder fills the rest of the process's share.
    for (let i = 0; i < 40; i++) await rawSession(http.url, '127.0.0.3');
    expect(http.sessions()).toBeLessThanOrEqual(6);
    expect((await legit.listTools()).tools.length).toBeGreaterThanOrEqual(2);
    const { client: late } = await connect(http.url);
    expect((await late.listTools()).tools.length).toBeGreaterThanOrEqual(2);
    expect((await legit.listTools()).tools.length).toBeGreaterThanOrEqual(2);
    await late.close();
    await legit.close();
  });

  it('a request whose client disconnects is cancelled: its run slot and queue place are freed', async () => {
    const limiter = new RunLimiter({ maxConcurrent: 1, maxQueued: 1 });
    await using http = await startHttpServer({ runtime, port: 0, runLimiter: limiter });
    const session = await rawSession(http.url);
    const abandoned: ReturnType<typeof httpRequest>[] = [];
    for (const id of [1, 2]) {
      // Never settles once the connection is destroyed mid-answer; only the server side matters.
      post(
        http.url,
        callTool(id, 'execute_code', {
          code: `await tools.misc.slow({ ms: 60000, label: 'gone-${id}' });`,
        }),
        { 'mcp-session-id': session },
        { onRequest: (req) => abandoned.push(req) },
      ).catch(() => {});
    }
    await expect.poll(() => [limiter.running, limiter.queued], { timeout: 10_000 }).toEqual([1, 1]);
    for (const req of abandoned) req.destroy();
    await expect.poll(() => [limiter.running, limiter.queued], { timeout: 10_000 }).toEqual([0, 0]);
    const { client } = await connect(http.url);
    const result = await client.callTool({ name: 'execute_code', arguments: { code: 'console.log(1 + 1)' } });
    expect(text(result)).toContain('2');
    await client.close();
  });

  it('a request reusing the id of one in flight in its session is refused at once', async () => {
    await using http = await startHttpServer({ runtime, port: 0 });
    const session = await rawSession(http.url);
    const headers = { 'mcp-session-id': session };
    const slow = callTool(7, 'execute_code', {
      code: "await tools.misc.slow({ ms: 500, label: 'dup' }); console.log('done')",
    });
    const first = post(http.url, slow, headers);
    const second = post(http.url, slow, headers);
    const replies = await Promise.all([first, second]);
    const errors = replies.filter((r) => r.status === 400);
    expect(errors).toHaveLength(1);
    expect(rpcReply(errors[0]!.body)).toMatchObject({
      id: 7,
      error: { code: -32600, message: expect.stringMatching(/id 7 is already used by a request in flight/) },
    });
    const answered = replies.find((r) => r.status === 200)!;
    expect(JSON.stringify(rpcReply(answered.body).result)).toContain('done');
    // Twice in one batch is the same mistake.
    const batch = `[${callTool('b', 'search_tools', { query: 'x' })},${callTool('b', 'search_tools', { query: 'y' })}]`;
    const twice = await post(http.url, batch, headers);
    expect(twice.status).toBe(400);
    expect(rpcReply(twice.body).error?.code).toBe(-32600);
    // Once answered, the id may be used again.
    const again = await post(
      http.url,
      callTool(7, 'execute_code', { code: "console.log('again')" }),
      headers,
    );
    expect(JSON.stringify(rpcReply(again.body).result)).toContain('again');
  });

  it('tools/call with arguments that are not an object: -32602 naming the field, not a schema dump', async () => {
    await using http = await startHttpServer({ runtime, port: 0 });
    const session = await rawSession(http.url);
    const headers = { 'mcp-session-id': session };
    const list = rpcReply((await post(http.url, callTool(3, 'search_tools', []), headers)).body);
    expect(list.error?.code).toBe(-32602);
    // The bare text on the wire: a client's SDK adds its own "MCP error -32602: " prefix.
    expect(list.error?.message).toBe(
      'Invalid tools/call request: params.arguments must be an object of named arguments (e.g. {"query": "…"}), or absent; got an array.',
    );
    const scalar = rpcReply((await post(http.url, callTool(4, 'execute_code', 'print(1)'), headers)).body);
    expect(scalar.error?.message).toMatch(
      /params\.arguments must be an object .*got a string \("print\(1\)"\)/,
    );
    const noName = rpcReply(
      (
        await post(
          http.url,
          JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: {} }),
          headers,
        )
      ).body,
    );
    expect(noName.error?.message).toMatch(/params\.name must be the name of a tool/);
    // Good requests are still served.
    const ok = rpcReply(
      (await post(http.url, callTool(6, 'search_tools', { query: 'budget' }), headers)).body,
    );
    expect(JSON.stringify(ok.result)).toContain('get_budget_by_level');
  });
});
