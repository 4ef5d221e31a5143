/**
 * `codecall serve` answers its client at once while upstream servers are still starting: a real
 * SDK client spawns the real bin over stdio in front of a stdio server that starts only when the
 * test opens its gate, and one whose command does not exist. The client gets initialize and
 * tools/list at once, is told which servers are still starting or failed (without host paths),
 * then gets notifications/tools/list_changed and the slow server's tools.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, ROOT } from './serve-helpers.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function text(result: unknown): string {
  return (result as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

describe('codecall serve with slow and failing upstream servers', () => {
  it('answers initialize and tools/list at once, says who is starting or failed, then announces the new tools', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'codecall-serve-bg-'));
    dirs.push(dir);
    const gate = join(dir, 'open-the-gate');
    const missing = join(dir, 'no-such-server-command');
    const configPath = join(dir, 'codecall.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        mcpServers: {
          slow: {
            command: process.execPath,
            args: [join(ROOT, 'test', 'fixtures', 'servers', 'gated-expense-server.mjs'), gate],
            // Far beyond the client's initialize timeout below: waiting for it would fail the test.
            connectTimeoutMs: 600_000,
            tools: {
              get_team_members: { allowedCallers: ['direct', 'code_execution'], deferLoading: false },
            },
          },
          broken: { command: missing },
        },
        sandbox: { cpuTimeMs: 2_000, memoryMb: 64 },
        history: { enabled: false },
      }),
    );
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'serve', '--config', configPath],
      cwd: dir,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    let changes = 0;
    let announced!: () => void;
    const listChanged = new Promise<void>((resolve) => (announced = resolve));
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes++;
      announced();
    });
    try {
      await client.connect(transport, { timeout: 20_000 });
      const before = await client.listTools(undefined, { timeout: 20_000 });
      expect(before.tools.map((t) => t.name)).toEqual(['search_tools', 'execute_code']);
      expect(changes).toBe(0);

      // "broken" fails as soon as its spawn does; "slow" waits for the gate.
      let note = '';
      await expect
        .poll(
          async () => {
            note = text(
              await client.callTool({ name: 'search_tools', arguments: { query: 'team members' } }),
            );
            return note;
          },
          { timeout: 20_000 },
        )
        .toContain('"broken" (its command was not found)');
      expect(note).toContain('MCP servers still starting: "slow"');
      expect(note).not.toContain(dir);
      const ran = await client.callTool({ name: 'execute_code', arguments: { code: 'console.log("hi")' } });
      expect(text(ran)).toContain('stdout:\nhi');
      expect(text(ran)).toContain('MCP servers still starting: "slow"');
      expect(text(ran)).not.toContain(dir);

      writeFileSync(gate, '');
      await listChanged;
      const after = await client.listTools();
      expect(after.tools.map((t) => t.name)).toEqual([
        'search_tools',
        'execute_code',
        'slow__get_team_members',
      ]);
      const members = await client.callTool({ name: 'slow__get_team_members', arguments: {} });
      expect(members.isError).toBeFalsy();
      expect(text(members)).toMatch(/"members":\[\{/);
      const found = text(
        await client.callTool({ name: 'search_tools', arguments: { query: 'team members' } }),
      );
      expect(found).toContain('tools.slow.get_team_members(args)');
      expect(found).not.toContain('still starting');
      expect(stderr).toMatch(/serving over stdio \(0 tools from 0 servers; [12] more starting\)/);
    } finally {
      await client.close();
    }
  });
});
