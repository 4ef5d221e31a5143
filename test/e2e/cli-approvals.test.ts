/**
 * Approvals from the command line: the real bin, a real stdio expense server whose destructive
 * `delete_expense` is opened to code. Without a terminal a call that needs approval is denied
 * with a message naming --approve and the configuration key; `--approve` allows it; every
 * decision is listed by `codecall approvals --json`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './temp-root.js';

const BIN = join(REPO_ROOT, 'bin', 'codecall.js');
const dir = mkdtempSync(join(tmpdir(), 'codecall-cli-approvals-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CONFIG = join(dir, 'codecall.json');
writeFileSync(
  CONFIG,
  JSON.stringify({
    mcpServers: {
      expenses: {
        command: process.execPath,
        args: [join(REPO_ROOT, 'examples', 'expense-server', 'server.mjs')],
        tools: {
          delete_expense: { allowedCallers: ['direct', 'code_execution'] },
          flag_expense: { requireApproval: { pointer: '/reason', values: ['fraud'] } },
        },
      },
    },
    history: { path: join(dir, 'history.sqlite') },
  }),
);
const SCRIPT = join(dir, 'delete.ts');
writeFileSync(
  SCRIPT,
  `try {
  console.log(JSON.stringify(await tools.expenses.delete_expense({ expense_id: 'exp-00001' })));
} catch (error) {
  console.log(error.code);
  console.log(error.message);
}
`,
);

function codecall(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    // stdin is a pipe: no terminal to ask.
    const child = spawn(process.execPath, [BIN, ...args], { cwd: dir, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code: code ?? -1, stdout, stderr }));
    child.stdin.end();
  });
}

interface Listed {
  approvals: { tool: string; outcome: string; decidedBy: string; caller: string; argsSha256: string }[];
}

describe('codecall exec with calls that need approval', () => {
  it('denies without a terminal (naming --approve and the key), runs with --approve, lists both', async () => {
    const denied = await codecall(['exec', SCRIPT, '--config', CONFIG]);
    expect(denied.code, denied.stderr).toBe(0);
    const [code, message] = denied.stdout.trim().split('\n');
    expect(code).toBe('APPROVAL_DENIED');
    expect(message).toContain('no terminal to ask (stdin is not a TTY)');
    expect(message).toContain('codecall exec --approve expenses.delete_expense (or --approve all)');
    expect(message).toContain('mcpServers.expenses.tools.delete_expense.requireApproval to false');
    expect(message).toContain('the server marks it destructive (destructiveHint)');

    const approved = await codecall([
      'exec',
      SCRIPT,
      '--config',
      CONFIG,
      '--approve',
      'expenses.delete_expense',
    ]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toBe('{"deleted":"exp-00001"}\n');

    const listed = await codecall(['approvals', '--json', '--config', CONFIG]);
    expect(listed.code, listed.stderr).toBe(0);
    const { approvals } = JSON.parse(listed.stdout) as Listed;
    expect(approvals.map((a) => [a.tool, a.outcome, a.decidedBy, a.caller])).toEqual([
      ['expenses.delete_expense', 'approved', 'flag', 'code_execution'],
      ['expenses.delete_expense', 'denied', 'policy', 'code_execution'],
    ]);
    expect(approvals[0]!.argsSha256).toBe(approvals[1]!.argsSha256);

    const limited = await codecall(['approvals', '--json', '--limit', '1', '--config', CONFIG]);
    expect((JSON.parse(limited.stdout) as Listed).approvals).toHaveLength(1);
    const table = await codecall(['approvals', '--config', CONFIG]);
    expect(table.stdout).toMatch(/^when +tool +outcome +decided by/);
    expect(table.stdout).toMatch(/expenses\.delete_expense +approved +flag +code_execution/);
  });

  it('refuses a malformed --approve value with usage exit 2', async () => {
    const result = await codecall(['exec', SCRIPT, '--config', CONFIG, '--approve', 'delete_expense']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--approve takes a tool as server.tool, or all; got "delete_expense"');
  });

  it("codecall tools --json and config check show each tool's requireApproval", async () => {
    const listed = await codecall(['tools', '--json', '--config', CONFIG]);
    expect(listed.code, listed.stderr).toBe(0);
    const tools = (
      JSON.parse(listed.stdout) as {
        tools: { name: string; requireApproval: unknown; requireApprovalSource: string }[];
      }
    ).tools;
    const approval = (name: string) => {
      const tool = tools.find((t) => t.name === name)!;
      return [tool.requireApproval, tool.requireApprovalSource];
    };
    expect(approval('expenses.delete_expense')).toEqual([true, 'annotations']);
    expect(approval('expenses.flag_expense')).toEqual([{ pointer: '/reason', values: ['fraud'] }, 'tool']);
    expect(approval('expenses.get_expenses')).toEqual([false, 'default']);
    const check = await codecall(['config', 'check', '--config', CONFIG]);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toContain(
      '    tool flag_expense: approval {"pointer":"/reason","values":["fraud"]}\n',
    );
  });
});
