/**
 * `codecall exec` and `codecall tools` as a user runs them: the real bin, a real stdio expense
 * server (examples/expense-server), worker-process sandbox, exit codes and output shapes.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createExpenseData, overBudgetMembers } from '../../src/testing/servers/index.js';
import { REPO_ROOT, tempRoot } from './temp-root.js';
import { tempDir } from '../fixtures/temp-dir.js';

// Commands run from a temp copy of the root: the usage history they record next to
// examples/codecall.json stays out of the work tree.
const temp = tempRoot();
afterAll(() => temp[Symbol.dispose]());
const ROOT = temp.root;
const BIN = join(REPO_ROOT, 'bin', 'codecall.js');
const EXAMPLE_CONFIG = join(ROOT, 'examples', 'codecall.json');

function codecall(
  args: string[],
  options: { stdin?: string; cwd?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd ?? ROOT, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}

function tempConfig(config: unknown): string {
  const dir = tempDir('codecall-cli-');
  const file = join(dir, 'codecall.json');
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

const expenseServer = {
  command: process.execPath,
  args: [join(ROOT, 'examples', 'expense-server', 'server.mjs')],
};

describe('codecall exec', () => {
  it('runs the example script: prints its lines and exits 0', async () => {
    const result = await codecall([
      'exec',
      'examples/scripts/over-budget.ts',
      '--config',
      'examples/codecall.json',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const expected = overBudgetMembers(createExpenseData(), 'Q3', 'travel');
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^Scanned 2400 line items/);
    expect(lines[1]).toBe(`${expected.length} of 20 team members exceeded their Q3 travel budget:`);
    expect(new Set(lines.slice(2).map((l) => l.slice(2, l.indexOf(' (', 2))))).toEqual(
      new Set(expected.map((e) => e.member.name)),
    );
  });

  it('--json prints exactly one object showing tool-result bytes consumed versus bytes printed', async () => {
    const result = await codecall([
      'exec',
      'examples/scripts/over-budget.ts',
      `--config=${EXAMPLE_CONFIG}`,
      '--json',
    ]);
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout) as {
      status: string;
      stdout: string;
      toolCalls: Record<string, unknown>[];
      stats: { toolResultBytes: number; stdoutBytes: number; wallMs: number; cpuMs: number };
    };
    expect(Object.keys(json).sort()).toEqual(['stats', 'status', 'stderr', 'stdout', 'toolCalls']);
    expect(json.status).toBe('ok');
    expect(Object.keys(json.toolCalls[0]!).sort()).toEqual([
      'argsBytes',
      'durationMs',
      'ok',
      'resultBytes',
      'tool',
    ]);
    expect(json.toolCalls[0]!.tool).toBe('expenses.get_team_members');
    expect(json.stats.stdoutBytes).toBe(Buffer.byteLength(json.stdout));
    expect(json.stats.toolResultBytes).toBeGreaterThan(100 * json.stats.stdoutBytes);
  });

  it('reads the script from stdin; a failing script exits 1 with the reason on stderr', async () => {
    const result = await codecall(['exec', '-', '--config', EXAMPLE_CONFIG], {
      stdin: "console.log('before');\nthrow new Error('the numbers do not add up');",
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('before\n');
    expect(result.stderr).toContain('the numbers do not add up');
  });

  it('reports a forbidden tool as a script error naming allowedCallers', async () => {
    const result = await codecall(['exec', '-', '--config', EXAMPLE_CONFIG, '--json'], {
      stdin: "await tools.expenses.flag_expense({ expense_id: 'exp-00001', reason: 'check this' });",
    });
    expect(result.code).toBe(1);
    const json = JSON.parse(result.stdout) as { status: string; error: { code: string; message: string } };
    expect(json.status).toBe('error');
    expect(json.error.message).toContain('mcpServers.expenses.tools.flag_expense.allowedCallers');
  });

  it('exits 2 with the file, path and fix for a bad configuration, and for bad usage', async () => {
    const config = tempConfig({ mcpServers: { expenses: { ...expenseServer, toolTimeoutMS: 5 } } });
    const bad = await codecall(['exec', '-', '--config', config], { stdin: 'console.log(1)' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(config);
    expect(bad.stderr).toContain('mcpServers.expenses');
    expect(bad.stderr).toContain('did you mean "toolTimeoutMs"');
    const usage = await codecall(['exec']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('Usage: codecall exec');
    const missing = await codecall(['exec', 'no/such/script.ts', '--config', EXAMPLE_CONFIG]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no/such/script.ts');
  });
});

describe('codecall tools', () => {
  it('lists the catalog with sandbox names and callers; a failed server exits 1 with its stderr', async () => {
    const config = tempConfig({
      mcpServers: {
        expenses: expenseServer,
        broken: {
          command: process.execPath,
          args: ['-e', 'console.error("missing EXAMPLE_API_KEY"); process.exit(1)'],
        },
      },
    });
    const plain = await codecall(['tools', '--config', config]);
    expect(plain.code).toBe(1);
    expect(plain.stdout).toMatch(/expenses\.get_expenses\s+tools\.expenses\.get_expenses\s+direct\+code/);
    expect(plain.stdout).toMatch(/expenses\.delete_expense\s+tools\.expenses\.delete_expense\s+direct\s/);
    expect(plain.stdout).toContain('broken (stdio, failed)');
    expect(plain.stdout).toContain('missing EXAMPLE_API_KEY');
    const json = await codecall(['tools', '--config', EXAMPLE_CONFIG, '--json']);
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout) as {
      tools: { name: string; sandboxName: string; allowedCallers: string[] }[];
    };
    expect(parsed.tools.find((t) => t.name === 'expenses.flag_expense')).toMatchObject({
      sandboxName: 'tools.expenses.flag_expense',
      allowedCallers: ['direct'],
    });
  });
});
