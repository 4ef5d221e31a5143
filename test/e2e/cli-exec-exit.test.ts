/**
 * `codecall exec` start-up and exit (issue 11): the env-gated start-up trace prints each phase
 * once, in order, with times that only grow (and nothing without the variable); and the exit
 * path, which closes the MCP servers and the sandbox while the usage history is written, still
 * records the run and leaves no server process behind when the CLI exits.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../fixtures/temp-dir.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin', 'codecall.js');
const SCRIPT = join(ROOT, 'examples', 'scripts', 'over-budget.ts');

function codecall(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      stdio: 'pipe',
      env: { ...process.env, CODECALL_TRACE_STARTUP: undefined, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code: code ?? -1, stdout, stderr }));
    child.stdin.end();
  });
}

/** True when a process with this id exists (a zombie counts: it has not been reaped). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

let dir: string;
let pidFile: string;

beforeEach(() => {
  dir = tempDir('codecall-exec-exit-');
  pidFile = join(dir, 'server.pid');
  // Preloaded into the expense server: writes its process id where the test can read it.
  const recordPid = join(dir, 'record-pid.mjs');
  writeFileSync(
    recordPid,
    `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(pidFile)}, String(process.pid));\n`,
  );
  writeFileSync(
    join(dir, 'codecall.json'),
    JSON.stringify({
      mcpServers: {
        expenses: {
          command: process.execPath,
          args: [
            '--import',
            pathToFileURL(recordPid).href,
            join(ROOT, 'examples', 'expense-server', 'server.mjs'),
          ],
        },
      },
    }),
  );
});

/** The phases `CODECALL_TRACE_STARTUP=1` prints for one exec run, in the order they happen. */
const PHASES = [
  'cli started',
  'exec command loaded',
  'configuration loaded',
  // The server's process starts before the MCP client and the sandbox code load.
  'servers spawned',
  'runtime loaded',
  'server expenses initialized',
  'server expenses tools listed',
  'runtime open',
  'script ran',
  'runtime closed',
  'command done',
  'exit',
];

describe('codecall exec start-up and exit', () => {
  it('CODECALL_TRACE_STARTUP=1 prints every phase once, in order, with growing times; unset, none', async () => {
    const traced = await codecall(['exec', SCRIPT, '--trust'], dir, { CODECALL_TRACE_STARTUP: '1' });
    expect(traced.code, traced.stderr).toBe(0);
    expect(traced.stdout).toContain('Scanned 2400 line items');
    const marks = traced.stderr
      .split('\n')
      .map((line) => /^codecall trace +(\d+\.\d) ms {2}(.+)$/.exec(line))
      .filter((match) => match !== null)
      .map((match) => ({ ms: Number(match[1]), phase: match[2]! }));
    const seen = marks.map((mark) => mark.phase).filter((phase) => PHASES.includes(phase));
    expect(seen).toEqual(PHASES);
    // ajv warms up while the servers start: once, after the configuration, before the run.
    const phases = marks.map((mark) => mark.phase);
    expect(phases.filter((phase) => phase === 'input validation warm')).toHaveLength(1);
    expect(phases.indexOf('input validation warm')).toBeGreaterThan(phases.indexOf('configuration loaded'));
    expect(phases.indexOf('input validation warm')).toBeLessThan(phases.indexOf('runtime open'));
    const times = marks.map((mark) => mark.ms);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    // Every line on stderr is a mark: the trace adds nothing else.
    expect(traced.stderr.trim().split('\n').length).toBe(marks.length);

    const plain = await codecall(['exec', SCRIPT, '--trust'], dir);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).toBe('');
    expect(plain.stdout).toBe(traced.stdout);
  });

  it('when exec exits, the run is in the usage history and its MCP server process is gone', async () => {
    const exec = await codecall(['exec', SCRIPT, '--trust'], dir);
    expect(exec.code, exec.stderr).toBe(0);
    expect(exec.stdout).toContain('Scanned 2400 line items');
    const serverPid = Number(readFileSync(pidFile, 'utf8'));
    expect(serverPid).toBeGreaterThan(0);
    expect(alive(serverPid)).toBe(false);

    const graph = await codecall(['graph', '--format', 'json'], dir);
    expect(graph.code, graph.stderr).toBe(0);
    expect((JSON.parse(graph.stdout) as { sequences: number }).sequences).toBe(1);
  });
});
