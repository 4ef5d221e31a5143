/**
 * One argument parser for every command (issue 11): `config`, `worker`, `jobs`
 * and `approvals` answer an unknown flag and a flag without its value as exec/run/tools/serve
 * do: the message names the flag and the fix, the command's usage follows, exit status 2. The
 * real bin, spawned: what a user sees.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './temp-root.js';

const BIN = join(REPO_ROOT, 'bin', 'codecall.js');
// An empty folder: no configuration is found, and nothing is written anywhere else.
const cwd = mkdtempSync(join(tmpdir(), 'codecall-usage-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

function codecall(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      stdio: 'pipe',
      // The user's state directory is never looked at.
      env: { ...process.env, CODECALL_STATE_DIR: cwd },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
    child.stdin.end();
  });
}

/** Per command: the arguments before the flag, a misspelt flag and its suggestion, a string flag. */
const cases: { command: string; before: string[]; typo: string; meant: string; valued: string }[] = [
  { command: 'config', before: ['check'], typo: '--confg', meant: '--config', valued: '--config' },
  { command: 'worker', before: [], typo: '--queu', meant: '--queue', valued: '--queue' },
  { command: 'jobs', before: ['list'], typo: '--limt', meant: '--limit', valued: '--limit' },
  { command: 'approvals', before: [], typo: '--jsn', meant: '--json', valued: '--limit' },
];

describe.each(cases)('codecall $command: usage errors', ({ command, before, typo, meant, valued }) => {
  it('an unknown flag: named, with the closest option, the usage, exit 2', async () => {
    const { code, stdout, stderr } = await codecall([command, ...before, typo]);
    expect(stdout).toBe('');
    expect(stderr).toContain(`codecall ${command}: unknown option "${typo}". Did you mean ${meant}?\n`);
    expect(stderr).toContain(`Usage: codecall ${command}`);
    expect(code).toBe(2);
  });

  it('a flag without its value: named, with how to give it, the usage, exit 2', async () => {
    const { code, stdout, stderr } = await codecall([command, ...before, valued]);
    expect(stdout).toBe('');
    expect(stderr).toContain(`codecall ${command}: ${valued} needs a value: ${valued} <value>.\n`);
    expect(stderr).toContain(`Usage: codecall ${command}`);
    expect(code).toBe(2);
  });
});
