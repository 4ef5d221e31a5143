/**
 * Upstream servers on the 2026-07-28 revision (`mcpServers.<name>.protocol`): a real SDK v2
 * server (`createMcpHandler` with `legacy: 'reject'`, so it answers no `initialize`) over
 * loopback HTTP, and a real SDK 1.x server for the `auto` fallback. The server side counts every
 * JSON-RPC method that reaches it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import {
  acceptedContent,
  createMcpHandler,
  inputRequired,
  McpServer,
  type CallToolResult,
  type InputRequiredResult,
} from '@modelcontextprotocol/server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import { parseConfig } from '../../../src/config/index.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { createCodecallServer } from '../../../src/server/index.js';
import { createExpenseServer, serveHttp } from '../../../src/testing/servers/index.js';
import { answerWithMcpHandler } from '../../../src/testing/servers/mcp-handler-http.js';
import { ToolPool, type ServerStatus, type UpstreamAsker } from '../../../src/tools/index.js';

const cleanup: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const item of cleanup.splice(0).reverse()) await item.close();
});

const code = { caller: 'code_execution' } as const;

interface ModernEndpoint {
  url: string;
  /** Every JSON-RPC method that reached the server, in order. */
  methods: string[];
  /** `requestState` values the server saw on `tools/call` retries. */
  states: string[];
  tools: string[];
  close(): Promise<void>;
}

/** A 2026-only SDK v2 server on loopback: `add`, `deploy` (asks for confirmation), `ask_forever`. */
async function serveModern(
  options: { ttlMs?: number; extraTool?: () => boolean; stall?: boolean } = {},
): Promise<ModernEndpoint> {
  const methods: string[] = [];
  const states: string[] = [];
  const tools: string[] = [];
  const handler = createMcpHandler(
    () => {
      const server = new McpServer(
        { name: 'modern', version: '1.0.0' },
        options.ttlMs !== undefined
          ? { cacheHints: { 'tools/list': { ttlMs: options.ttlMs, cacheScope: 'public' } } }
          : {},
      );
      server.registerTool(
        'add',
        { description: 'Adds two numbers.', inputSchema: z.object({ a: z.number(), b: z.number() }) },
        async ({ a, b }) => ({ content: [{ type: 'text', text: JSON.stringify({ sum: a + b }) }] }),
      );
      server.registerTool(
        'deploy',
        { description: 'Deploys after the operator confirms.', inputSchema: z.object({ env: z.string() }) },
        async ({ env }, ctx): Promise<CallToolResult | InputRequiredResult> => {
          const confirmed = acceptedContent(
            ctx.mcpReq.inputResponses,
            'confirm',
            z.object({ confirm: z.boolean() }),
          );
          if (confirmed?.confirm !== true)
            return inputRequired({
              inputRequests: {
                confirm: inputRequired.elicit({
                  message: `Deploy to ${env}?`,
                  requestedSchema: {
                    type: 'object',
                    properties: { confirm: { type: 'boolean' } },
                    required: ['confirm'],
                  },
                }),
              },
              requestState: `deploy:${env}`,
            });
          return { content: [{ type: 'text', text: `Deployed to ${env}` }] };
        },
      );
      server.registerTool(
        'ask_forever',
        { description: 'Never satisfied.' },
        async (): Promise<InputRequiredResult> =>
          inputRequired({
            inputRequests: {
              again: inputRequired.elicit({
                message: 'Once more?',
                requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
              }),
            },
          }),
      );
      if (options.stall)
        server.registerTool('stall', { description: 'Answers after 30 s.' }, async () => {
          await new Promise((resolve) => setTimeout(resolve, 30_000).unref());
          return { content: [{ type: 'text', text: 'late' }] };
        });
      if (options.extraTool?.())
        server.registerTool('late', { description: 'Listed after a while.' }, async () => ({
          content: [{ type: 'text', text: 'late' }],
        }));
      return server;
    },
    { legacy: 'reject' },
  );
  const http: Server = createServer((request, response) => {
    answerWithMcpHandler(handler, request, response, (message) => {
      const params = message.params as { requestState?: unknown; name?: unknown } | undefined;
      if (typeof message.method === 'string') methods.push(message.method);
      if (message.method === 'tools/call' && typeof params?.name === 'string') tools.push(params.name);
      if (typeof params?.requestState === 'string') states.push(params.requestState);
    }).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500);
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    methods,
    states,
    tools,
    close: async () => {
      await handler.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

async function open(
  url: string,
  protocol: string | undefined,
  extra: Record<string, unknown> = {},
): Promise<ToolPool> {
  const config = parseConfig(
    { mcpServers: { up: { type: 'http', url, ...(protocol ? { protocol } : {}), ...extra } } },
    { file: '/project/codecall.json', env: {} },
  );
  const pool = await ToolPool.open(config, { requireAll: true });
  cleanup.push(pool);
  return pool;
}

/** The status of server `up` (its era and tool-list freshness). */
function statusOf(pool: ToolPool): ServerStatus {
  const status = pool.serverStatus().find((server) => server.name === 'up');
  if (!status) throw new Error('no server "up"');
  return status;
}

describe('upstream 2026-07-28 servers', () => {
  it('connects with server/discover and no initialize, lists and calls tools', async () => {
    const endpoint = await serveModern();
    cleanup.push(endpoint);
    const pool = await open(endpoint.url, '2026-07-28');
    expect(statusOf(pool).era).toBe('modern');
    expect(endpoint.methods).toContain('server/discover');
    expect(endpoint.methods).not.toContain('initialize');
    expect(
      pool
        .catalog()
        .map((tool) => tool.name)
        .sort(),
    ).toEqual(['up.add', 'up.ask_forever', 'up.deploy']);
    expect(await pool.call('up.add', { a: 2, b: 40 }, code)).toEqual({ sum: 42 });
    expect(endpoint.tools).toEqual(['add']);
  });

  it('fails a call past its timeout with TOOL_TIMEOUT, as for a 2025-11-25 server', async () => {
    const endpoint = await serveModern({ stall: true });
    cleanup.push(endpoint);
    const pool = await open(endpoint.url, '2026-07-28', { toolTimeoutMs: 300 });
    await expect(pool.call('up.stall', {}, code)).rejects.toMatchObject({
      code: 'TOOL_TIMEOUT',
      message: expect.stringContaining('did not answer within 300 ms'),
    });
  });

  it('reuses the tool list for its ttlMs and re-lists once it has run out', async () => {
    let late = false;
    const endpoint = await serveModern({ ttlMs: 1_500, extraTool: () => late });
    cleanup.push(endpoint);
    const pool = await open(endpoint.url, '2026-07-28');
    expect(statusOf(pool).toolList).toMatchObject({ ttlMs: 1_500, cacheScope: 'public' });
    const lists = (): number => endpoint.methods.filter((method) => method === 'tools/list').length;
    expect(lists()).toBe(1);
    late = true;
    // Within the ttl: no request, the catalog stays as listed.
    expect(await pool.refreshStaleTools()).toEqual([]);
    expect(pool.catalog().map((tool) => tool.name)).not.toContain('up.late');
    expect(lists()).toBe(1);
    expect(pool.get('up.late')).toBeUndefined();
    // After it: one request, and the catalog shows what changed.
    await new Promise((resolve) => setTimeout(resolve, 1_700));
    await expect.poll(() => lists(), { timeout: 20_000 }).toBeGreaterThanOrEqual(2);
    await expect.poll(() => pool.get('up.late')?.name, { timeout: 20_000 }).toBe('up.late');
  });

  it('passes an input_required round to the asker of the call and retries with requestState', async () => {
    const endpoint = await serveModern();
    cleanup.push(endpoint);
    const pool = await open(endpoint.url, '2026-07-28');
    const asked: unknown[] = [];
    const asker: UpstreamAsker = async (request) => {
      asked.push(request);
      return { action: 'accept', content: { confirm: true } };
    };
    const result = await pool.callResult('up.deploy', { env: 'prod' }, { caller: 'direct', asker });
    expect(result.content).toEqual([{ type: 'text', text: 'Deployed to prod' }]);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      method: 'elicitation/create',
      params: { message: 'Deploy to prod?' },
    });
    expect(endpoint.states).toEqual(['deploy:prod']);
    expect(endpoint.tools).toEqual(['deploy', 'deploy']);
  });

  it('routes each round to its own call: two clients in flight at once each answer their own', async () => {
    const endpoint = await serveModern();
    cleanup.push(endpoint);
    const pool = await open(endpoint.url, '2026-07-28');
    const askedBy: string[] = [];
    const askerOf =
      (who: string): UpstreamAsker =>
      async (request) => {
        askedBy.push(`${who}:${String((request.params as { message?: unknown }).message)}`);
        // Both calls are in flight to the server while either is asked.
        await new Promise((resolve) => setTimeout(resolve, 200));
        return { action: 'accept', content: { confirm: true } };
      };
    const [a, b] = await Promise.all([
      pool.callResult('up.deploy', { env: 'a' }, { caller: 'direct', origin: 'one', asker: askerOf('one') }),
      pool.callResult('up.deploy', { env: 'b' }, { caller: 'direct', origin: 'two', asker: askerOf('two') }),
    ]);
    expect(a.content).toEqual([{ type: 'text', text: 'Deployed to a' }]);
    expect(b.content).toEqual([{ type: 'text', text: 'Deployed to b' }]);
    expect(askedBy.sort()).toEqual(['one:Deploy to a?', 'two:Deploy to b?']);
  });

  it("gives a script's input_required round to the run's asker (execute's hook)", async () => {
    const endpoint = await serveModern();
    cleanup.push(endpoint);
    const dir = mkdtempSync(join(tmpdir(), 'codecall-modern-run-'));
    cleanup.push({ close: async () => rmSync(dir, { recursive: true, force: true }) });
    const configPath = join(dir, 'codecall.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        mcpServers: {
          up: {
            type: 'http',
            url: endpoint.url,
            protocol: '2026-07-28',
            allowedCallers: ['direct', 'code_execution'],
          },
        },
        sandbox: { cpuTimeMs: 5_000, wallTimeMs: 60_000, memoryMb: 64 },
        history: { enabled: false },
      }),
    );
    const runtime = await CodecallRuntime.open({ load: { path: configPath }, history: false });
    cleanup.push(runtime);
    const asked: string[] = [];
    const script = 'console.log(await tools.up.deploy({ env: "staging" }));';
    const result = await runtime.execute(script, {
      asker: async (request) => {
        asked.push(String((request.params as { message?: unknown }).message));
        return { action: 'accept', content: { confirm: true } };
      },
    });
    expect(result.stdout.trim()).toBe('Deployed to staging');
    expect(asked).toEqual(['Deploy to staging?']);
    // Without an asker the script sees the call fail, saying why.
    const refused = await runtime.execute(script);
    expect(refused.status).toBe('error');
    expect(refused.stderr + (refused.error?.message ?? '')).toMatch(
      /cannot forward this elicitation request/,
    );
  });

  it("serve: a legacy client's execute_code passes the upstream's input_required to that client as elicitation", async () => {
    const endpoint = await serveModern();
    cleanup.push(endpoint);
    const dir = mkdtempSync(join(tmpdir(), 'codecall-modern-serve-'));
    cleanup.push({ close: async () => rmSync(dir, { recursive: true, force: true }) });
    const configPath = join(dir, 'codecall.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        mcpServers: {
          up: { type: 'http', url: endpoint.url, protocol: '2026-07-28', allowedCallers: ['code_execution'] },
        },
        sandbox: { cpuTimeMs: 5_000, wallTimeMs: 60_000, memoryMb: 64 },
        history: { enabled: false },
      }),
    );
    const runtime = await CodecallRuntime.open({ load: { path: configPath }, history: false });
    cleanup.push(runtime);
    const connect = async (capabilities: Record<string, object>): Promise<Client> => {
      const server = createCodecallServer({ runtime });
      const client = new Client({ name: 'legacy-client', version: '1.0.0' }, { capabilities });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await server.connect(serverSide);
      await client.connect(clientSide);
      cleanup.push({ close: () => client.close() });
      return client;
    };
    const script = 'console.log(await tools.up.deploy({ env: "staging" }));';
    const text = (result: unknown): string =>
      (result as { content: { type: string; text?: string }[] }).content
        .map((part) => part.text ?? '')
        .join('\n');

    const asking = await connect({ elicitation: {} });
    const asked: string[] = [];
    asking.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { confirm: true } };
    });
    const answered = await asking.callTool({ name: 'execute_code', arguments: { code: script } });
    expect(text(answered)).toContain('Deployed to staging');
    expect(asked).toEqual(['Deploy to staging?']);

    // A client that cannot be asked: the script's call fails, naming the capability.
    const silent = await connect({});
    const refused = await silent.callTool({ name: 'execute_code', arguments: { code: script } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/did not declare the "elicitation" capability/);
    expect(endpoint.tools.filter((tool) => tool === 'deploy')).toHaveLength(3);
  });

  it('fails a call whose input nobody who started it can give, and bounds the rounds', async () => {
    const endpoint = await serveModern();
    cleanup.push(endpoint);
    const pool = await open(endpoint.url, '2026-07-28');
    await expect(pool.call('up.deploy', { env: 'prod' }, code)).rejects.toThrow(
      /up\.deploy failed: .*cannot forward this elicitation request/,
    );
    expect(endpoint.tools).toEqual(['deploy']);
    let asked = 0;
    const asker: UpstreamAsker = async () => {
      asked++;
      return { action: 'accept', content: { ok: true } };
    };
    await expect(pool.callResult('up.ask_forever', {}, { caller: 'direct', asker })).rejects.toThrow(
      /asked for input more than 8 times in one call \(DEFAULT_UPSTREAM_INPUT_REQUIRED_MAX_ROUNDS\)/,
    );
    expect(asked).toBe(8);
    expect(endpoint.tools.filter((name) => name === 'ask_forever')).toHaveLength(9);
  });

  it('refuses to start when pinned to 2026-07-28 against a 2025-11-25 server', async () => {
    const legacy = await serveHttp(() => createExpenseServer());
    cleanup.push(legacy);
    await expect(open(legacy.url, '2026-07-28')).rejects.toMatchObject({ code: 'SERVER_START_FAILED' });
  });

  it('falls back to initialize in auto against a 2025-11-25 server', async () => {
    const legacy = await serveHttp(() => createExpenseServer());
    cleanup.push(legacy);
    const pool = await open(legacy.url, 'auto');
    expect(statusOf(pool).era).toBe('legacy');
    expect(pool.get('expenses.get_team_members')).toBeUndefined();
    const members = (await pool.call('up.get_team_members', {}, code)) as { members: unknown[] };
    expect(members.members.length).toBeGreaterThan(0);
  });

  it('lands on 2026-07-28 in auto against a 2026 server', async () => {
    const endpoint = await serveModern();
    cleanup.push(endpoint);
    const pool = await open(endpoint.url, 'auto');
    expect(statusOf(pool).era).toBe('modern');
    expect(endpoint.methods).not.toContain('initialize');
  });

  it('keeps the 2025-11-25 handshake by default (a 2026-only server refuses it)', async () => {
    const endpoint = await serveModern();
    cleanup.push(endpoint);
    await expect(open(endpoint.url, undefined)).rejects.toMatchObject({ code: 'SERVER_START_FAILED' });
    expect(endpoint.methods).toContain('initialize');
    expect(endpoint.methods).not.toContain('server/discover');
  });

  it('speaks 2026-07-28 to a stdio child process with no initialize on its wire', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'codecall-modern-stdio-'));
    cleanup.push({ close: async () => rmSync(dir, { recursive: true, force: true }) });
    const log = join(dir, 'methods.log');
    const script = fileURLToPath(new URL('../../fixtures/servers/modern-stdio-server.mjs', import.meta.url));
    const config = parseConfig(
      {
        mcpServers: {
          up: {
            command: process.execPath,
            args: [script],
            env: { MODERN_METHODS_LOG: log },
            protocol: '2026-07-28',
          },
        },
      },
      { file: join(process.cwd(), 'codecall.json'), env: {} },
    );
    const pool = await ToolPool.open(config, { requireAll: true });
    cleanup.push(pool);
    expect(statusOf(pool)).toMatchObject({ era: 'modern', state: 'connected' });
    expect(statusOf(pool).pid).toBeGreaterThan(0);
    expect(await pool.call('up.add', { a: 1, b: 2 }, code)).toEqual({ sum: 3 });
    const methods = readFileSync(log, 'utf8').trim().split('\n');
    expect(methods).toEqual(expect.arrayContaining(['server/discover', 'tools/list', 'tools/call']));
    expect(methods).not.toContain('initialize');
  });

  it('resolves protocol to 2025-11-25 unless the entry says otherwise', () => {
    const config = parseConfig(
      {
        mcpServers: {
          a: { type: 'http', url: 'http://127.0.0.1:1/mcp' },
          b: { command: 'x', protocol: 'auto' },
        },
      },
      { file: '/project/codecall.json', env: {} },
    );
    expect(config.mcpServers.a?.protocol).toBe('2025-11-25');
    expect(config.mcpServers.b?.protocol).toBe('auto');
    expect(() =>
      parseConfig(
        { mcpServers: { a: { command: 'x', protocol: '2026' } } },
        { file: '/project/codecall.json', env: {} },
      ),
    ).toThrow(/mcpServers\.a\.protocol: expected one of "2025-11-25", "auto", "2026-07-28"\. Fix/);
  });

  it('refuses protocol 2026-07-28 on an SSE server with the field and the fix', () => {
    expect(() =>
      parseConfig(
        { mcpServers: { up: { type: 'sse', url: 'http://127.0.0.1:1/sse', protocol: '2026-07-28' } } },
        { file: '/project/codecall.json', env: {} },
      ),
    ).toThrow(/mcpServers\.up\.protocol.*no SSE transport.*Fix: set "type": "http"/s);
  });
});
