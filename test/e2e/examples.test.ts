/**
 * Every example in examples/ runs from the repository root as its header says, and its output
 * is checked against the data it reads (computed here independently).
 */
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parseServeArgs } from '../../src/cli/commands/serve.js';
import { parseConfig } from '../../src/config/index.js';
import { createExpenseData, overBudgetMembers } from '../../src/testing/servers/index.js';
import { REPO_ROOT, tempRoot } from './temp-root.js';

// Commands run from a temp copy of the root, as written in each example's header: what they
// write next to their configuration (the usage history) stays out of the work tree.
const temp = tempRoot();
afterAll(() => temp[Symbol.dispose]());
const ROOT = temp.root;
const BIN = join(REPO_ROOT, 'bin', 'codecall.js');
const run = promisify(execFile);
// Configurations start "node": make it this Node (22+), whatever the machine's default is.
const ENV = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` };

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('examples', () => {
  it('budget compliance: codecall exec examples/scripts/over-budget.ts', async () => {
    const { stdout } = await run(
      process.execPath,
      [BIN, 'exec', 'examples/scripts/over-budget.ts', '--config', 'examples/codecall.json'],
      { cwd: ROOT, env: ENV },
    );
    const expected = overBudgetMembers(createExpenseData(), 'Q3', 'travel');
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^Scanned 2400 line items: \$\d+ spent this year; top categories:/);
    expect(lines[1]).toBe(`${expected.length} of 20 team members exceeded their Q3 travel budget:`);
    expect(lines.slice(2).map((l) => l.slice(2, l.indexOf(' (')))).toEqual(
      [...expected].sort((a, b) => b.spent - b.budget - (a.spent - a.budget)).map((e) => e.member.name),
    );
  });

  it('log analysis: a multi-MB log through @modelcontextprotocol/server-filesystem', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'codecall-logs-'));
    dirs.push(dir);
    const generated = await run(process.execPath, ['examples/log-analysis/generate-log.mjs', dir], {
      cwd: ROOT,
    });
    expect(generated.stdout.trim()).toBe(dir);
    const files = readdirSync(dir).sort();
    expect(files).toEqual(['app-1.log', 'app-2.log', 'app-3.log', 'app-4.log']);
    const log = files.map((f) => readFileSync(join(dir, f), 'utf8')).join('');
    expect(log.length).toBeGreaterThan(4 * 1_048_576);

    const { stdout } = await run(
      process.execPath,
      [BIN, 'exec', 'examples/log-analysis/analyze.ts', '--config', 'examples/log-analysis/codecall.json'],
      { cwd: ROOT, env: { ...ENV, LOG_DIR: dir } },
    );

    // The same figures, computed here with a separate parser.
    const rows = log
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [, level, method, path, status, ms] = line.split(/\s+/);
        return {
          level: level!,
          endpoint: `${method} ${path}`,
          status: Number(status),
          ms: parseInt(ms!, 10),
        };
      });
    const errors = rows.filter((r) => r.status >= 500);
    const levelCount = (level: string): number => rows.filter((r) => r.level === level).length;
    const perEndpoint = new Map<string, number>();
    for (const r of errors) perEndpoint.set(r.endpoint, (perEndpoint.get(r.endpoint) ?? 0) + 1);
    const top = [...perEndpoint].sort((a, b) => b[1] - a[1]).slice(0, 3);
    const p95 = new Map<string, number>();
    for (const endpoint of new Set(rows.map((r) => r.endpoint))) {
      const ms = rows
        .filter((r) => r.endpoint === endpoint)
        .map((r) => r.ms)
        .sort((a, b) => a - b);
      p95.set(endpoint, ms[Math.ceil(ms.length * 0.95) - 1]!);
    }
    const [slowest, slowestMs] = [...p95].sort((a, b) => b[1] - a[1])[0]!;
    expect(stdout.trim().split('\n')).toEqual([
      `Scanned ${rows.length} requests (${(log.length / 1_048_576).toFixed(1)} MB in 4 log files)`,
      `Levels: ERROR ${levelCount('ERROR')}, WARN ${levelCount('WARN')}, INFO ${levelCount('INFO')}`,
      `Server errors (5xx): ${errors.length} (${((100 * errors.length) / rows.length).toFixed(2)}%)`,
      'Most 5xx by endpoint:',
      ...top.map(([endpoint, n]) => `  ${endpoint}: ${n}`),
      `Slowest endpoint by p95 latency: ${slowest} (${slowestMs} ms)`,
    ]);
  });

  it('tool chain: search_tools finds the chain, execute_code runs it, a direct call flags, the graph learns', async () => {
    const { stdout } = await run(process.execPath, ['examples/tool-chain/run.mjs'], { cwd: ROOT, env: ENV });
    const data = createExpenseData();
    const toFlag = overBudgetMembers(data, 'Q3', 'travel').filter((o) =>
      data.expenses.some(
        (e) =>
          e.memberId === o.member.id &&
          e.quarter === 'Q3' &&
          e.category === 'travel' &&
          e.status === 'pending',
      ),
    );
    for (const tool of ['get_team_members', 'get_budget_by_level', 'get_expenses'])
      expect(stdout).toMatch(new RegExp(`^  expenses\\.${tool}$`, 'm'));
    expect(stdout).toContain('expenses.flag_expense → call "expenses__flag_expense" directly');
    expect(stdout).toContain(
      `execute_code: ${toFlag.length} over-budget members have a pending Q3 travel expense`,
    );
    expect(stdout.match(/^ {2}flagged exp-\d+ /gm)).toHaveLength(toFlag.length);
    expect(toFlag.length).toBeGreaterThan(0);
    for (const { member } of toFlag) expect(stdout).toContain(`(${member.name}, $`);
    expect(stdout).toMatch(
      /learned call order \(from the tool graph\):\n(?: {2}.*\n)* {2}expenses\.get_team_members → expenses\.get_budget_by_level → expenses\.get_expenses/,
    );
  });

  it('client snippets register `codecall serve --config <abs path>` in valid mcpServers files', () => {
    const snippets = [
      'examples/clients/claude-code/.mcp.json',
      'examples/clients/claude-desktop/claude_desktop_config.json',
      'examples/clients/cursor/.cursor/mcp.json',
    ];
    for (const file of snippets) {
      const json = JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as {
        mcpServers: { codecall: { command: string; args: string[] } };
      };
      // codecall reads the same format, so the snippet is a valid codecall configuration too.
      expect(() => parseConfig(json, { file })).not.toThrow();
      const { command, args } = json.mcpServers.codecall;
      // The installed command (npm link, or the packed tarball installed globally): codecall is
      // not on the npm registry, so `npx -y codecall` would fail.
      expect(command).toBe('codecall');
      expect(args[0]).toBe('serve');
      const parsed = parseServeArgs(args.slice(1));
      expect(parsed.http).toBe(false);
      expect(parsed.config?.startsWith('/')).toBe(true);
    }
    const http = JSON.parse(readFileSync(join(ROOT, 'examples/clients/http.mcp.json'), 'utf8')) as {
      mcpServers: { codecall: { type: string; url: string } };
    };
    expect(http.mcpServers.codecall).toEqual({ type: 'http', url: 'http://127.0.0.1:3737/mcp' });
  });
});
