/**
 * `codecall serve` over stdio as clients run it: the real bin spawned by the MCP SDK's
 * `StdioClientTransport` and by `@modelcontextprotocol/inspector-cli`, a real stdio expense
 * server behind it, worker-process sandbox; clean shutdown on SIGTERM and on stdin close.
 */
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteHistoryStore } from '../../src/store/sqlite-history-store.js';
import { createExpenseData, overBudgetMembers } from '../../src/testing/servers/index.js';
import { alive, BIN, descendants, ROOT, spawnServe, tempServeConfig } from './serve-helpers.js';
import { loadState } from '../contract/load-state.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function text(result: unknown): string {
  return (result as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

describe('codecall serve (stdio)', () => {
  it('serves the SDK client: list, search, the budget-compliance script, hostile code; SIGTERM exits cleanly', async () => {
    const temp = tempServeConfig();
    dirs.push(temp.dir);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'serve', '--config', temp.configPath],
      cwd: ROOT,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(transport);
    const pid = transport.pid!;
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['search_tools', 'execute_code']);

      const found = await client.callTool({
        name: 'search_tools',
        arguments: { query: 'team members expenses budget by level' },
      });
      for (const tool of ['get_team_members', 'get_expenses', 'get_budget_by_level'])
        expect(text(found)).toContain(`tools.expenses.${tool}(args)`);

      const script = readFileSync(join(ROOT, 'examples', 'scripts', 'over-budget.ts'), 'utf8');
      const report = await client.callTool({ name: 'execute_code', arguments: { code: script } });
      expect(report.isError).toBeFalsy();
      const expected = overBudgetMembers(createExpenseData(), 'Q3', 'travel');
      expect(text(report)).toContain(
        `${expected.length} of 20 team members exceeded their Q3 travel budget:`,
      );
      expect(expected.length).toBeGreaterThan(0);
      for (const { member } of expected) expect(text(report)).toContain(member.name);

      const loop = await client.callTool({ name: 'execute_code', arguments: { code: 'for (;;) {}' } });
      expect(loop.isError).toBe(true);
      const after = await client.callTool({
        name: 'execute_code',
        arguments: { code: 'console.log("alive")' },
      });
      expect(text(after)).toBe('stdout:\nalive\n\nexit status: ok');

      // The launcher, the CLI, the expense server and the sandbox workers.
      const tree = descendants(pid);
      expect(tree.length).toBeGreaterThanOrEqual(3);
      const closed = new Promise<void>((resolve) => (transport.onclose = () => resolve()));
      process.kill(pid, 'SIGTERM');
      await closed;
      await expect.poll(() => tree.filter(alive), { timeout: 10_000 }).toEqual([]);
      expect(stderr).toMatch(/serving over stdio \(5 tools from 1 servers\)/);
      expect(stderr).toMatch(/shutting down/);
      expect(stderr).toMatch(/execute_code ok in \d+ ms, \d+ tool calls/);
    } finally {
      await client.close();
    }

    // Usage history was flushed: the script's call order is in the store.
    const store = await SqliteHistoryStore.open({ path: temp.historyPath });
    const state = JSON.stringify(await loadState(store));
    await store.close();
    expect(state).toMatch(/expenses\.get_team_members/);
    expect(state).toMatch(/expenses\.get_budget_by_level/);
  });

  it('exits 0 when the client closes stdin', async () => {
    const temp = tempServeConfig();
    dirs.push(temp.dir);
    const serve = spawnServe(['--config', temp.configPath]);
    await serve.waitFor(/serving over stdio/);
    const tree = descendants(serve.child.pid!);
    serve.child.stdin.end();
    expect(await serve.exited).toEqual({ code: 0, signal: null });
    await expect.poll(() => tree.filter(alive), { timeout: 10_000 }).toEqual([]);
    expect(serve.stderr()).toMatch(/shutting down/);
  });

  it('usage errors and configuration errors exit 2 with a message', async () => {
    const usage = spawnServe(['--port', '80']);
    expect((await usage.exited).code).toBe(2);
    expect(usage.stderr()).toMatch(/apply to --http only/);
    const temp = tempServeConfig({ sandbox: { cpuTimeMs: -1 } });
    dirs.push(temp.dir);
    const invalid = spawnServe(['--config', temp.configPath]);
    expect((await invalid.exited).code).toBe(2);
    expect(invalid.stderr()).toMatch(/sandbox\.cpuTimeMs/);
  });

  it('@modelcontextprotocol/inspector-cli lists and calls its tools over stdio', async () => {
    const temp = tempServeConfig();
    dirs.push(temp.dir);
    const inspector = join(ROOT, 'node_modules', '.bin', 'mcp-inspector-cli');
    const run = promisify(execFile);
    // The inspector spawns "node" from PATH and resolves codecall.json from its cwd (its own
    // --config flag would swallow ours).
    const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` };
    // The configuration is found in the cwd, not named: --trust is the consent to start its servers.
    const listed = await run(
      inspector,
      ['--cli', 'node', BIN, 'serve', '--trust', '--method', 'tools/list'],
      {
        cwd: temp.workDir,
        env,
      },
    );
    const names = (JSON.parse(listed.stdout) as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(names).toEqual(['search_tools', 'execute_code']);
    const called = await run(
      inspector,
      [
        '--cli',
        'node',
        BIN,
        'serve',
        '--trust',
        '--method',
        'tools/call',
        '--tool-name',
        'execute_code',
        '--tool-arg',
        'code=const { members } = await tools.expenses.get_team_members({ level: "L5" }); console.log(members.length)',
      ],
      { cwd: temp.workDir, env },
    );
    const result = JSON.parse(called.stdout) as CallToolResult;
    const expected = createExpenseData().members.filter((m) => m.level === 'L5').length;
    expect(text(result)).toBe(`stdout:\n${expected}\n\nexit status: ok after 1 tool call`);
  });
});
