/**
 * @module
 * A client that calls `codecall serve` right after connecting, while configured servers are
 * still starting (the MCP Inspector CLI's one-shot calls, scripts): the real bin over stdio in
 * front of gated stdio servers that start only when a gate opens. The gates are opened by a
 * tool of another server (from the script, or by the test after sending its call), so each
 * call reaches serve while its server is still starting, with no timer to race. A call that
 * names a starting server's tool waits for it; `search_tools` waits for starting servers before
 * it ranks; only a server that failed makes a tool unknown, and the answer says why.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive, BIN, descendants, ROOT } from './serve-helpers.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function text(result: unknown): string {
  return (result as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

/** Resolves once `check` holds (tried every 50 ms, for at most 60 s). */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let tries = 0; tries < 1_200; tries++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`still false after 60 s: ${String(check)}`);
}

const GATED = join(ROOT, 'test', 'fixtures', 'servers', 'gated-expense-server.mjs');
const KEEPER = join(ROOT, 'test', 'fixtures', 'servers', 'gate-keeper-server.mjs');
const OPEN_TO_ALL = {
  get_team_members: { allowedCallers: ['direct', 'code_execution'], deferLoading: false },
};

describe('codecall serve answers calls that race its servers’ start-up', () => {
  const dir = mkdtempSync(join(tmpdir(), 'codecall-serve-race-'));
  dirs.push(dir);
  const gates = join(dir, 'gates');
  const timeout = { timeout: 120_000 };
  let transport: StdioClientTransport;
  let client: Client;
  let stderr = '';

  beforeAll(async () => {
    mkdirSync(gates);
    const gated = (gate: string, extra: Record<string, unknown> = {}) => ({
      command: process.execPath,
      args: [GATED, join(gates, gate)],
      // Far beyond any wait of this test: only the gate starts them.
      connectTimeoutMs: 600_000,
      tools: OPEN_TO_ALL,
      ...extra,
    });
    const configPath = join(dir, 'codecall.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        mcpServers: {
          keeper: {
            command: process.execPath,
            args: [KEEPER, gates],
            allowedCallers: ['direct', 'code_execution'],
            deferLoading: false,
          },
          probe2: gated('probe2'),
          probe3: gated('probe3'),
          probe4: gated('probe4'),
          // Never opened: fails when its connect timeout runs out.
          stuck: gated('stuck', { connectTimeoutMs: 1_500 }),
          broken: { command: join(dir, 'no-such-server-command') },
        },
        sandbox: { cpuTimeMs: 2_000, memoryMb: 64 },
        history: { enabled: false },
        // A bound only: the gated servers start as soon as their gate opens.
        serve: { searchWaitForServersMs: 120_000 },
      }),
    );
    transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'serve', '--config', configPath],
      cwd: dir,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    client = new Client({ name: 'e2e-race', version: '1.0.0' });
    await client.connect(transport, { timeout: 20_000 });
    // The keeper opens the gates: wait for it alone (tools/list never waits).
    await until(async () => (await client.listTools()).tools.some((t) => t.name === 'keeper__open_gate'));
  });

  afterAll(async () => {
    const pid = transport.pid;
    const children = pid === null ? [] : descendants(pid);
    await client.close();
    for (const child of [...(pid === null ? [] : [pid]), ...children]) await until(() => !alive(child));
    expect(stderr).not.toContain('unexpected error');
  });

  it('a tool of a server that failed to start is unknown, and the answer says why', async () => {
    // A server whose start times out.
    const stuck = text(
      await client.callTool(
        { name: 'execute_code', arguments: { code: 'await tools.stuck.get_team_members({});' } },
        undefined,
        timeout,
      ),
    );
    expect(stuck).toContain('Unknown tool "stuck.get_team_members"');
    expect(stuck).toContain('MCP server "stuck" failed to start (it did not answer within 1500 ms)');

    // A server whose command does not exist: from a script and from a direct call.
    const broken = text(
      await client.callTool(
        { name: 'execute_code', arguments: { code: 'await tools.broken.anything({});' } },
        undefined,
        timeout,
      ),
    );
    expect(broken).toContain('Unknown tool "broken.anything"');
    expect(broken).toContain('MCP server "broken" failed to start (its command was not found)');
    expect(broken).not.toContain(dir);
    await expect(
      client.callTool({ name: 'broken__anything', arguments: {} }, undefined, timeout),
    ).rejects.toThrow(
      /Unknown tool "broken__anything".*MCP server "broken" failed to start \(its command was not found\)/s,
    );
  });

  it('execute_code waits for the starting server of a tool it calls', async () => {
    // The script opens probe2's gate, then calls it at once: the run's tools were bound before
    // probe2 could start, so the call must wait for it.
    const script = [
      'await tools.keeper.open_gate({ gate: "probe2" });',
      'const { members } = await tools.probe2.get_team_members({});',
      'console.log("members", members.length);',
    ].join('\n');
    const ran = text(
      await client.callTool({ name: 'execute_code', arguments: { code: script } }, undefined, timeout),
    );
    expect(ran).toContain('stdout:\nmembers 20');
    expect(ran).not.toContain('Unknown tool');
  });

  it('a direct call of a starting server’s tool waits for it', async () => {
    // Sent before the gate opens (not awaited: a refusal must not go unhandled meanwhile).
    const direct = client.callTool({ name: 'probe3__get_team_members', arguments: {} }, undefined, timeout);
    direct.catch(() => {});
    await client.callTool({ name: 'keeper__open_gate', arguments: { gate: 'probe3' } });
    const members = (await direct) as CallToolResult;
    expect(members.isError).toBeFalsy();
    expect(text(members)).toMatch(/"members":\[\{/);
  });

  it('search_tools waits for starting servers before it ranks', async () => {
    // Sent before probe4's gate opens (the other gated servers are up or failed by now).
    const search = client.callTool(
      { name: 'search_tools', arguments: { query: 'team members', limit: 25 } },
      undefined,
      timeout,
    );
    search.catch(() => {});
    await client.callTool({ name: 'keeper__open_gate', arguments: { gate: 'probe4' } });
    const found = text(await search);
    expect(found).toContain('tools.probe4.get_team_members(args)');
    expect(found).not.toContain('still starting');
  });
});
