/**
 * `codecall serve` over stdio to the official SDK v2 client (`@modelcontextprotocol/client`,
 * unmodified, its `StdioClientTransport` spawning the real bin) in its three negotiation modes:
 * `auto` and `{ pin: '2026-07-28' }` land on the 2026-07-28 era (served by the SDK v2 `serveStdio`
 * entry), `legacy` on 2025-11-25 (the SDK 1.x server as before).
 */
import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { BIN, ROOT, tempServeConfig } from './serve-helpers.js';
import { tempDir } from '../fixtures/temp-dir.js';
import { hidePackagesHook } from '../fixtures/hide-packages.js';

const dirs: string[] = [];
afterAll(() => {
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

describe('codecall serve (stdio) to 2026-07-28 and 2025-11-25 clients', () => {
  it('serves the SDK v2 client in auto, pinned-2026 and legacy modes', async () => {
    const temp = tempServeConfig();
    dirs.push(temp.dir);
    const cases: [Mode, 'modern' | 'legacy', string][] = [
      ['auto', 'modern', '2026-07-28'],
      [{ pin: '2026-07-28' }, 'modern', '2026-07-28'],
      ['legacy', 'legacy', '2025-11-25'],
    ];
    const seen: string[] = [];
    for (const [mode, era, version] of cases) {
      const client = new Client(
        { name: 'e2e-2026-stdio', version: '1.0.0' },
        { versionNegotiation: { mode } },
      );
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [BIN, 'serve', '--mcp-2026', '--config', temp.configPath],
          cwd: temp.workDir,
          stderr: 'pipe',
        }),
      );
      try {
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
      } finally {
        await client.close();
      }
    }
    expect(seen).toEqual(['modern', 'modern', 'legacy']);
  }, 240_000);

  it('without the optional @modelcontextprotocol/server: a 2026 opening gets method-not-found and the same connection goes on in 2025-11-25', async () => {
    // The package unresolvable with Node's own error, as an install without it.
    const hide = hidePackagesHook(['@modelcontextprotocol/server']);
    const temp = tempServeConfig();
    dirs.push(temp.dir);
    const child = spawn(
      process.execPath,
      ['--import', hide, BIN, 'serve', '--mcp-2026', '--config', temp.configPath],
      { cwd: temp.workDir, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const answer = async (id: number): Promise<Record<string, unknown>> => {
      for (let waited = 0; waited < 60_000; waited += 50) {
        const line = stdout.split('\n').find((l) => l.includes(`"id":${id}`));
        if (line !== undefined) return JSON.parse(line) as Record<string, unknown>;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`no answer to request ${id}; stderr: ${stderr}`);
    };
    try {
      // What the SDK v2 client sends first in auto mode (its server/discover probe).
      child.stdin.write(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'server/discover',
          params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
        }) + '\n',
      );
      expect((await answer(1)).error).toMatchObject({ code: -32601 });
      child.stdin.write(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 2,
          method: 'initialize',
          params: {
            protocolVersion: '2025-11-25',
            capabilities: {},
            clientInfo: { name: 'raw', version: '1' },
          },
        }) + '\n',
      );
      expect((await answer(2)).result).toMatchObject({ protocolVersion: '2025-11-25' });
      expect(stderr).not.toMatch(/unexpected error/);
    } finally {
      child.kill('SIGTERM');
    }
  }, 120_000);
  it('sends list changes on subscriptions/listen over stdio, as the client filtered them', async () => {
    const dir = tempDir('codecall-listen-stdio-');
    const configPath = join(dir, 'codecall.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        mcpServers: {
          fixture: {
            command: process.execPath,
            args: [join(ROOT, 'test', 'fixtures', 'servers', 'conformance-server.mjs')],
            deferLoading: false,
          },
        },
        history: { enabled: false },
        serve: { originalNames: true, waitForServersMs: 60_000 },
      }),
    );
    const client = new Client(
      { name: 'e2e-2026-stdio-listen', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'serve', '--mcp-2026', '--config', configPath],
        cwd: dir,
        stderr: 'pipe',
      }),
    );
    try {
      const seen: string[] = [];
      client.setNotificationHandler('notifications/tools/list_changed', () => void seen.push('tools'));
      client.setNotificationHandler('notifications/prompts/list_changed', () => void seen.push('prompts'));
      const subscription = await client.listen({ toolsListChanged: true });
      expect(subscription.honoredFilter).toEqual({ toolsListChanged: true });
      await vi.waitFor(
        async () =>
          expect((await client.listTools()).tools.map((t) => t.name)).toContain('test_trigger_tool_change'),
        { timeout: 60_000, interval: 200 },
      );
      // What the fixture's connecting sent before is not the change this test makes.
      seen.length = 0;
      await client.callTool({ name: 'test_trigger_tool_change', arguments: {} });
      await vi.waitFor(() => expect(seen).toContain('tools'), { timeout: 30_000, interval: 100 });
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('test_dynamic_tool');
      // Not asked for: the prompt change is not sent.
      await client.callTool({ name: 'test_trigger_prompt_change', arguments: {} });
      await client.callTool({ name: 'test_trigger_tool_change', arguments: {} });
      await vi.waitFor(() => expect(seen.filter((n) => n === 'tools').length).toBe(2), {
        timeout: 30_000,
        interval: 100,
      });
      expect(seen).not.toContain('prompts');
      await subscription.close();
    } finally {
      await client.close();
    }
  }, 180_000);
});
