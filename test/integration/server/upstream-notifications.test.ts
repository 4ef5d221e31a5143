/**
 * What an upstream server sends while codecall serves several clients reaches only the client
 * whose call caused it (issue 34): log lines of one client's calls (with its arguments) never
 * reach another client, neither do its elicitation requests; what cannot be attributed goes to
 * nobody and is counted. A client that never reads its stream holds a bounded queue; past it
 * notifications are dropped and counted. A cancelled request's HTTP stream ends.
 *
 * Real parts: an upstream MCP server (defined here) that logs its arguments, over the SDK's
 * in-memory transports; a real runtime; SDK clients over linked in-memory pairs, and raw HTTP
 * against `startHttpServer` where the wire matters.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseConfig } from '../../../src/config/index.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import {
  createCodecallServer,
  startHttpServer,
  type CodecallServerOptions,
} from '../../../src/server/index.js';
import { inMemoryTransport } from '../../../src/testing/servers/index.js';

/** What the test drives inside the upstream server: calls held until released, calls started. */
const held = new Map<string, () => void>();
const started = new Set<string>();
const release = (key: string): void => held.get(key)?.();

/** Resolves when the test releases `key`, or when the call is cancelled. */
function holdUntilReleased(key: string, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    held.set(key, resolve);
    started.add(key);
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** An upstream server shared by every client, which logs what its callers pass it. */
function createVault(): McpServer {
  const server = new McpServer({ name: 'vault', version: '1.0.0' }, { capabilities: { logging: {} } });
  const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });
  server.registerTool('charge', { inputSchema: { card: z.string() } }, async ({ card }) => {
    await server.sendLoggingMessage({ level: 'info', logger: 'payments', data: `charging card ${card}` });
    return text('charged');
  });
  server.registerTool('hold', { inputSchema: { key: z.string() } }, async ({ key }, extra) => {
    await holdUntilReleased(key, extra.signal);
    return text(`released ${key}`);
  });
  server.registerTool(
    'ask_later',
    { inputSchema: { key: z.string(), question: z.string() } },
    async ({ key, question }, extra) => {
      await holdUntilReleased(key, extra.signal);
      try {
        const answer = await server.server.elicitInput({
          message: question,
          requestedSchema: { type: 'object', properties: { answer: { type: 'string' } } },
        });
        return text(`answer: ${JSON.stringify(answer.content)}`);
      } catch (error) {
        return { ...text(`not asked: ${(error as Error).message}`), isError: true };
      }
    },
  );
  server.registerTool(
    'flood',
    { inputSchema: { count: z.number(), bytes: z.number() } },
    async ({ count, bytes }) => {
      for (let i = 0; i < count; i++)
        await server.sendLoggingMessage({ level: 'info', data: `${i}:`.padEnd(bytes, 'x') });
      return text(`flooded ${count}`);
    },
  );
  return server;
}

let runtime: CodecallRuntime;
const clients: Client[] = [];

beforeAll(async () => {
  runtime = await CodecallRuntime.open({
    config: parseConfig(
      {
        mcpServers: {
          vault: {
            command: 'unused',
            deferLoading: false,
            allowedCallers: ['direct', 'code_execution'],
          },
        },
        sandbox: { cpuTimeMs: 2_000 },
        history: { enabled: false },
      },
      { file: '<upstream-notifications.test>' },
    ),
    history: false,
    tools: { transports: { vault: inMemoryTransport(createVault) } },
  });
});

afterAll(async () => {
  for (const release of held.values()) release();
  for (const client of clients) await client.close();
  await runtime?.close();
});

interface Session {
  client: Client;
  /** The `data` of every log message the client received. */
  logs: string[];
  /** The messages of every elicitation request the client received. */
  questions: string[];
}

/** A client of its own codecall server (one MCP session), over a linked in-memory pair. */
async function connect(options: Partial<CodecallServerOptions> = {}): Promise<Session> {
  const server = createCodecallServer({ runtime, ...options });
  const client = new Client(
    { name: 'routing-test', version: '1.0.0' },
    { capabilities: { elicitation: {} } },
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  clients.push(client);
  const session: Session = { client, logs: [], questions: [] };
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    session.logs.push(String(n.params.data));
  });
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    session.questions.push(request.params.message);
    return { action: 'accept', content: { answer: 'from the wrong client' } };
  });
  await client.setLoggingLevel('debug');
  return session;
}

function text(result: unknown): string {
  return (result as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

describe('upstream log messages reach only the session whose call caused them', () => {
  it("a direct call's log line, with its arguments, reaches its caller and no other session", async () => {
    const a = await connect();
    const b = await connect();
    const result = await a.client.callTool({
      name: 'vault__charge',
      arguments: { card: '4111 1111 1111 1111' },
    });
    expect(text(result)).toBe('charged');
    await expect.poll(() => a.logs).toEqual(['charging card 4111 1111 1111 1111']);
    // In-memory delivery is in order: a notification sent to B before this answer arrived first.
    await b.client.ping();
    expect(b.logs).toEqual([]);
  });

  it("a script's calls: their log lines reach the session that ran the script, no other", async () => {
    const a = await connect();
    const b = await connect();
    const run = await a.client.callTool({
      name: 'execute_code',
      arguments: { code: "await tools.vault.charge({ card: 'sk_live_SCRIPT_KEY' }); console.log('done')" },
    });
    expect(text(run)).toContain('done');
    await expect.poll(() => a.logs).toEqual(['charging card sk_live_SCRIPT_KEY']);
    await b.client.ping();
    expect(b.logs).toEqual([]);
  });

  it('with calls of two sessions in flight to the server, a log line goes to nobody and is counted', async () => {
    const dropped: { reason: string; method: string; server?: string }[] = [];
    const onNotificationDropped: CodecallServerOptions['onNotificationDropped'] = (event) =>
      void dropped.push(event);
    const a = await connect({ onNotificationDropped });
    const b = await connect({ onNotificationDropped });
    const holding = b.client.callTool({ name: 'vault__hold', arguments: { key: 'b-in-flight' } });
    await expect.poll(() => started.has('b-in-flight')).toBe(true);
    const result = await a.client.callTool({ name: 'vault__charge', arguments: { card: 'AMBIGUOUS-CARD' } });
    expect(text(result)).toBe('charged');
    release('b-in-flight');
    expect(text(await holding)).toBe('released b-in-flight');
    await Promise.all([a.client.ping(), b.client.ping()]);
    expect([...a.logs, ...b.logs]).toEqual([]);
    // Counted once, however many sessions are connected.
    expect(dropped).toEqual([{ reason: 'unattributed', method: 'notifications/message', server: 'vault' }]);
  });
});

describe('upstream elicitation reaches only the session whose call caused it', () => {
  it("is never sent to another session's client; with calls of two sessions in flight it is refused", async () => {
    const a = await connect();
    const b = await connect();
    const asking = b.client.callTool({
      name: 'vault__ask_later',
      arguments: { key: 'b-asks', question: "B's private question" },
    });
    await expect.poll(() => started.has('b-asks')).toBe(true);
    const holding = a.client.callTool({ name: 'vault__hold', arguments: { key: 'a-holds' } });
    await expect.poll(() => started.has('a-holds')).toBe(true);
    release('b-asks');
    const answer = await asking;
    release('a-holds');
    await holding;
    expect(a.questions).toEqual([]);
    expect(text(answer)).not.toContain('from the wrong client');
    expect(answer.isError).toBe(true);
  });
});

describe('over stdio', () => {
  it('bounds the queue of a client that does not read stdout: past the bound, notifications are dropped and counted', async () => {
    const dropped: { reason: string; queuedBytes?: number }[] = [];
    const maxQueuedNotificationBytes = 64 * 1024;
    const server = createCodecallServer({
      runtime,
      maxQueuedNotificationBytes,
      onNotificationDropped: (event) => void dropped.push(event),
    });
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    await server.connect(new StdioServerTransport(stdin, stdout));
    const count = 100;
    for (const message of [
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 'debug' } },
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'vault__flood', arguments: { count, bytes: 10_000 } },
      },
    ])
      stdin.write(`${JSON.stringify(message)}\n`);
    // 1 MB of log lines into a pipe nobody reads (it takes 16 KiB).
    await expect.poll(() => dropped.length, { timeout: 20_000 }).toBeGreaterThan(0);
    expect(dropped.every((event) => event.reason === 'queue-full')).toBe(true);
    for (const event of dropped) expect(event.queuedBytes).toBeLessThanOrEqual(maxQueuedNotificationBytes);
    let logs = 0;
    for await (const line of createInterface({ input: stdout })) {
      const message = JSON.parse(line) as { id?: unknown; method?: string; result?: unknown };
      if (message.method === 'notifications/message') logs++;
      if (message.id === 2) {
        expect(message.result).toMatchObject({ content: [{ text: `flooded ${count}` }] });
        break;
      }
    }
    expect(logs + dropped.length).toBe(count);
    await server.close();
  });
});

/** One raw Streamable HTTP session: `post` resolves with the response as soon as its headers are in. */
async function rawHttpSession(url: string): Promise<{
  post: (body: unknown) => Promise<IncomingMessage>;
  reply: (body: unknown) => Promise<string>;
}> {
  /** The session id, once initialize has answered. */
  const opened: { session?: string } = {};
  const post = (body: unknown): Promise<IncomingMessage> =>
    new Promise((resolve, reject) => {
      const payload = JSON.stringify(body);
      const req = httpRequest(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': String(Buffer.byteLength(payload)),
          'mcp-protocol-version': '2025-06-18',
          ...(opened.session !== undefined ? { 'mcp-session-id': opened.session } : {}),
        },
      });
      req.on('response', resolve);
      req.on('error', reject);
      req.end(payload);
    });
  const reply = async (body: unknown): Promise<string> => {
    const response = await post(body);
    let text = '';
    for await (const chunk of response) text += String(chunk);
    return text;
  };
  const init = await post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  opened.session = init.headers['mcp-session-id'] as string;
  init.resume();
  await reply({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return { post, reply };
}

/** The JSON-RPC messages of an SSE body. */
function events(body: string): { id?: unknown; method?: string; result?: unknown }[] {
  return body
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)) as { id?: unknown; method?: string; result?: unknown });
}

describe('over Streamable HTTP', () => {
  it('bounds the queue of a client that does not read its stream: past the bound, notifications are dropped and counted', async () => {
    const dropped: { reason: string; queuedBytes?: number }[] = [];
    const maxQueuedNotificationBytes = 256 * 1024;
    await using http = await startHttpServer({
      runtime,
      port: 0,
      maxQueuedNotificationBytes,
      onNotificationDropped: (event) => void dropped.push(event),
    });
    const raw = await rawHttpSession(http.url);
    await raw.reply({ jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 'debug' } });
    // 8 MB of log lines on the call's stream, more than the socket buffers take; nobody reads.
    const count = 160;
    const response = await raw.post({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'vault__flood', arguments: { count, bytes: 50_000 } },
    });
    response.pause();
    await expect.poll(() => dropped.length, { timeout: 20_000 }).toBeGreaterThan(0);
    expect(dropped.every((event) => event.reason === 'queue-full')).toBe(true);
    for (const event of dropped) expect(event.queuedBytes).toBeLessThanOrEqual(maxQueuedNotificationBytes);
    // Read at last: what was not dropped arrives, then the answer.
    let body = '';
    response.setEncoding('utf8');
    for await (const chunk of response) body += String(chunk);
    const messages = events(body);
    expect(messages.at(-1)).toMatchObject({ id: 2, result: { content: [{ text: `flooded ${count}` }] } });
    const logs = messages.filter((m) => m.method === 'notifications/message').length;
    expect(logs + dropped.length).toBe(count);
  });

  it('ends the stream of a request once the client cancels it', async () => {
    await using http = await startHttpServer({ runtime, port: 0 });
    const raw = await rawHttpSession(http.url);
    const response = await raw.post({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'vault__hold', arguments: { key: 'cancelled-over-http' } },
    });
    let ended = false;
    response.on('end', () => (ended = true)).resume();
    await expect.poll(() => started.has('cancelled-over-http')).toBe(true);
    await raw.reply({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 7, reason: 'the user gave up' },
    });
    // Without the fix the stream stays open, with a keepalive every 15 s, until the session ends.
    await expect.poll(() => ended, { timeout: 20_000 }).toBe(true);
  });

  it('a batch with one cancelled request ends its stream once the others are answered', async () => {
    await using http = await startHttpServer({ runtime, port: 0 });
    const raw = await rawHttpSession(http.url);
    const response = await raw.post([
      {
        jsonrpc: '2.0',
        id: 'held',
        method: 'tools/call',
        params: { name: 'vault__hold', arguments: { key: 'batch-cancelled' } },
      },
      {
        jsonrpc: '2.0',
        id: 'kept',
        method: 'tools/call',
        params: { name: 'vault__hold', arguments: { key: 'batch-kept' } },
      },
    ]);
    let body = '';
    let ended = false;
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => (body += chunk)).on('end', () => (ended = true));
    await expect.poll(() => started.has('batch-cancelled') && started.has('batch-kept')).toBe(true);
    await raw.reply({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'held' } });
    release('batch-kept');
    await expect.poll(() => ended, { timeout: 20_000 }).toBe(true);
    expect(events(body).map((m) => m.id)).toEqual(['kept']);
  });
});
