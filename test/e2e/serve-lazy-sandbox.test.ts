/**
 * `codecall serve` over stdio answers `initialize` without waiting for its sandbox, which starts
 * once the client is initialized (MCP clients give a stdio server a few seconds to answer). Shown
 * with a sandbox that cannot start at all: an in-process sandbox in a Node started without
 * `--no-node-snapshot` (`node dist/cli/main.js`, not the launcher, which would add the flag). A
 * real SDK client is still answered, lists and searches the tools; the failure is told on stderr
 * once and by each `execute_code`, and the server exits with its child servers when the client
 * closes.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { alive, descendants, ROOT, tempServeConfig } from './serve-helpers.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function text(result: unknown): string {
  return (result as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

describe('codecall serve (stdio) and its sandbox', () => {
  it('answers initialize before the sandbox starts: one that cannot start is told, search still works', async () => {
    const temp = tempServeConfig({ sandbox: { mode: 'in-process', cpuTimeMs: 2_000, memoryMb: 64 } });
    dirs.push(temp.dir);
    // Without --no-node-snapshot (the test runner's forks have it in execArgv, not in the environment).
    const env = Object.fromEntries(
      Object.entries(process.env).filter(
        (entry): entry is [string, string] => entry[1] !== undefined && entry[0] !== 'NODE_OPTIONS',
      ),
    );
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(ROOT, 'dist', 'cli', 'main.js'), 'serve', '--config', temp.configPath],
      cwd: temp.workDir,
      env,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    try {
      await client.connect(transport, { timeout: 60_000 });
      expect(client.getServerVersion()?.name).toBe('codecall');
      const pid = transport.pid!;
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toEqual(expect.arrayContaining(['search_tools', 'execute_code']));
      const found = text(
        await client.callTool({ name: 'search_tools', arguments: { query: 'team members' } }),
      );
      expect(found).toContain('tools.expenses.get_team_members(');

      await expect
        .poll(() => stderr, { timeout: 30_000 })
        .toMatch(/codecall serve: sandbox: .*--no-node-snapshot/);
      const run = await client.callTool({ name: 'execute_code', arguments: { code: 'console.log("hi")' } });
      expect(run.isError).toBe(true);
      expect(text(run)).toContain('--no-node-snapshot');
      expect(stderr.match(/codecall serve: sandbox: /g)).toHaveLength(1);

      const tree = [pid, ...descendants(pid)];
      await client.close();
      await expect.poll(() => tree.filter(alive), { timeout: 10_000 }).toEqual([]);
      expect(stderr).toMatch(/shutting down/);
    } finally {
      await client.close();
    }
  }, 120_000);
});
