/**
 * `codecall serve --http` to MCP 2026-07-28 clients: the official SDK v2 client
 * (`@modelcontextprotocol/client`, unmodified) in its three negotiation modes against the real bin,
 * and two serve processes behind a plain round-robin proxy answering one 2026 client.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnServe, tempServeConfig, type ServeProcess } from './serve-helpers.js';
import { hidePackagesHook } from '../fixtures/hide-packages.js';

const dirs: string[] = [];
const serves: ServeProcess[] = [];
const proxies: Server[] = [];
afterAll(async () => {
  for (const proxy of proxies) proxy.close();
  for (const serve of serves) serve.child.kill('SIGTERM');
  await Promise.all(serves.map((serve) => serve.exited));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

type Mode = NonNullable<
  NonNullable<NonNullable<ConstructorParameters<typeof Client>[1]>['versionNegotiation']>['mode']
>;

function text(result: unknown): string {
  return ((result as { content: { type: string; text?: string }[] }).content ?? [])
    .map((c) => (c.type === 'text' ? (c.text ?? '') : ''))
    .join('\n');
}

async function startServe(
  configPath: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ serve: ServeProcess; url: string }> {
  const serve = spawnServe(['--http', '--mcp-2026', '--port', '0', '--config', configPath], { env });
  serves.push(serve);
  const [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)/)) as [string, string];
  return { serve, url };
}

async function connect(url: string, mode: Mode): Promise<Client> {
  const client = new Client({ name: 'e2e-2026', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

/**
 * A plain round-robin HTTP proxy over `targets` (no affinity: each request goes to the next
 * target); counts the requests each target got.
 */
async function roundRobin(targets: string[]): Promise<{ url: string; hits: number[] }> {
  const hits = targets.map(() => 0);
  let next = 0;
  const proxy = createServer((incoming, outgoing) => {
    const index = next++ % targets.length;
    hits[index]!++;
    const target = new URL(targets[index]!);
    const forward = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: incoming.url,
        method: incoming.method,
        headers: { ...incoming.headers, host: target.host },
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forward.on('error', () => outgoing.writeHead(502).end());
    incoming.pipe(forward);
  });
  proxies.push(proxy);
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`, hits };
}

describe('codecall serve --http to 2026-07-28 clients', () => {
  it('serves the SDK v2 client in auto, pinned-2026 and legacy modes', async () => {
    const temp = tempServeConfig();
    dirs.push(temp.dir);
    const { url } = await startServe(temp.configPath);
    const cases: [Mode, 'modern' | 'legacy', string | undefined][] = [
      ['auto', 'modern', '2026-07-28'],
      [{ pin: '2026-07-28' }, 'modern', '2026-07-28'],
      ['legacy', 'legacy', '2025-11-25'],
    ];
    const seen: string[] = [];
    for (const [mode, era, version] of cases) {
      const client = await connect(url, mode);
      expect(client.getProtocolEra()).toBe(era);
      expect(client.getNegotiatedProtocolVersion()).toBe(version);
      const { tools } = await client.listTools();
      expect(tools.slice(0, 2).map((t) => t.name)).toEqual(['search_tools', 'execute_code']);
      const found = await client.callTool({
        name: 'search_tools',
        arguments: { query: 'team members expenses' },
      });
      expect(text(found)).toMatch(/get_team_members/);
      const ran = await client.callTool({
        name: 'execute_code',
        arguments: {
          code: 'const { members } = await tools.expenses.get_team_members(); console.log(members.length > 0 ? "members" : "none")',
        },
      });
      expect(text(ran)).toBe('stdout:\nmembers\n\nexit status: ok after 1 tool call');
      seen.push(`${client.getProtocolEra()}`);
      await client.close();
    }
    expect(seen).toEqual(['modern', 'modern', 'legacy']);
  }, 180_000);

  it('refuses a REPL session to a 2026 client and says why', async () => {
    const temp = tempServeConfig();
    dirs.push(temp.dir);
    const { url } = await startServe(temp.configPath);
    const client = await connect(url, { pin: '2026-07-28' });
    const result = await client.callTool({
      name: 'execute_code',
      arguments: { code: 'console.log(1)', session: 's1' },
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/"session" is not available to 2026-07-28 clients.*store/s);
    await client.close();
  }, 120_000);

  it('two serve nodes behind a round-robin proxy answer one 2026 client interchangeably', async () => {
    const temp = tempServeConfig();
    dirs.push(temp.dir);
    const [a, b] = await Promise.all([startServe(temp.configPath), startServe(temp.configPath)]);
    const proxy = await roundRobin([a.url, b.url]);
    const client = await connect(proxy.url, { pin: '2026-07-28' });
    const outputs: string[] = [];
    for (const n of [1, 2, 3, 4]) {
      const result = await client.callTool({
        name: 'execute_code',
        arguments: { code: `console.log(${n} * 10)` },
      });
      outputs.push(text(result));
    }
    expect(outputs).toEqual([10, 20, 30, 40].map((n) => `stdout:\n${n}\n\nexit status: ok`));
    const found = await client.callTool({ name: 'search_tools', arguments: { query: 'budget' } });
    expect(text(found)).toMatch(/get_budget_by_level/);
    // Every request went through the proxy, alternating, so both nodes answered some of them.
    expect(proxy.hits[0]).toBeGreaterThanOrEqual(3);
    expect(proxy.hits[1]).toBeGreaterThanOrEqual(3);
    await client.close();
  }, 240_000);

  it('without the optional @modelcontextprotocol/server: 2025-11-25 only, the install named; an auto client falls back', async () => {
    // The package unresolvable with Node's own error, as an install without it.
    const hide = hidePackagesHook(['@modelcontextprotocol/server']);
    const temp = tempServeConfig();
    dirs.push(temp.dir);
    const { serve, url } = await startServe(temp.configPath, {
      NODE_OPTIONS: `--import ${hide}`,
    });
    await serve.waitFor(/MCP 2025-11-25; for 2026-07-28 clients .*npm install @modelcontextprotocol\/server/);
    const client = await connect(url, 'auto');
    expect(client.getProtocolEra()).toBe('legacy');
    const found = await client.callTool({
      name: 'search_tools',
      arguments: { query: 'team members expenses' },
    });
    expect(text(found)).toMatch(/get_team_members/);
    await client.close();
    await expect(connect(url, { pin: '2026-07-28' })).rejects.toThrow();
  });
});
