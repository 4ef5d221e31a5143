/**
 * `codecall exec` runs teach the tool graph like the agent's executions: after exec in a fresh
 * folder, `codecall graph --format json` shows the calls the script made, in order; a run that
 * cannot be recorded (another process holds the history file) is reported on stderr while the
 * script's output and exit status stand.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { holdExclusiveLock } from '../fixtures/hold-sqlite-lock.js';
import { tempDir } from '../fixtures/temp-dir.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin', 'codecall.js');
const SCRIPT = join(ROOT, 'examples', 'scripts', 'over-budget.ts');

function codecall(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code: code ?? -1, stdout, stderr }));
    child.stdin.end();
  });
}

interface Graph {
  sequences: number;
  edges: { from: string; to: string; count: number; kind: string }[];
}

let dir: string;

beforeEach(() => {
  dir = tempDir('codecall-exec-history-');
  writeFileSync(
    join(dir, 'codecall.json'),
    JSON.stringify({
      mcpServers: {
        expenses: {
          command: process.execPath,
          args: [join(ROOT, 'examples', 'expense-server', 'server.mjs')],
        },
      },
    }),
  );
});

describe('codecall exec and the tool graph', () => {
  it('records each run: graph shows the script’s call sequence after two execs', async () => {
    const before = await codecall(['graph', '--format', 'json'], dir);
    expect(before.code, before.stderr).toBe(0);
    expect((JSON.parse(before.stdout) as Graph).sequences).toBe(0);

    for (let run = 0; run < 2; run++) {
      const exec = await codecall(['exec', SCRIPT, '--trust'], dir);
      expect(exec.code, exec.stderr).toBe(0);
      expect(exec.stderr).toBe('');
    }

    const after = await codecall(['graph', '--format', 'json'], dir);
    expect(after.code, after.stderr).toBe(0);
    const graph = JSON.parse(after.stdout) as Graph;
    expect(graph.sequences).toBe(2);
    expect(graph.edges.map((e) => `${e.from} → ${e.to} ×${e.count} ${e.kind}`).sort()).toEqual([
      'expenses.get_budget_by_level → expenses.get_expenses ×2 observed',
      'expenses.get_team_members → expenses.get_budget_by_level ×2 observed',
    ]);
  });

  it('says on stderr when the run could not be recorded (another process holds the file); the result stands', async () => {
    const first = await codecall(['exec', SCRIPT, '--trust'], dir);
    expect(first.code, first.stderr).toBe(0);
    const lock = await holdExclusiveLock(join(dir, '.codecall', 'history.sqlite'));
    let locked;
    try {
      locked = await codecall(['exec', SCRIPT, '--trust'], dir);
    } finally {
      await lock.release();
    }
    expect(locked.code).toBe(0);
    expect(locked.stdout).toMatch(/^\d+ of 20 team members exceeded their Q3 travel budget:$/m);
    expect(locked.stderr).toMatch(
      /^codecall exec: usage history not saved \(the run itself is unaffected\): Usage history store .*history\.sqlite: could not record a run: database is locked/m,
    );
    const graph = JSON.parse((await codecall(['graph', '--format', 'json'], dir)).stdout) as Graph;
    expect(graph.sequences).toBe(1);
  });
});
