/**
 * The `codecall` launcher (bin/codecall.js). With the default `process` sandbox mode it runs the
 * CLI in its own process (one Node start-up; the sandbox workers get --no-node-snapshot
 * themselves). When the CLI process may create isolates itself (`sandbox.mode: "in-process"`)
 * it re-executes node with --no-node-snapshot, and that child, the real CLI, must not outlive
 * it: supervisors and MCP clients stop servers with SIGKILL, which the launcher cannot forward;
 * the child notices its launcher's IPC channel close and exits.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../fixtures/temp-dir.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin', 'codecall.js');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Direct children of `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return text === '' ? [] : text.split(/\s+/).map(Number);
}

/** The command line of `pid` (Linux /proc). */
function commandLine(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
}

/** Starts `codecall serve --http` on a temp configuration and resolves once it listens. */
async function serveHttp(config: object): Promise<ReturnType<typeof spawn>> {
  const dir = tempDir('codecall-launcher-');
  const file = join(dir, 'codecall.json');
  writeFileSync(file, JSON.stringify(config));
  const launcher = spawn(process.execPath, [BIN, 'serve', '--http', '--port', '0', '--config', file], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  started.push(launcher.pid!);
  let stderr = '';
  await new Promise<void>((resolvePromise, reject) => {
    launcher.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (/listening on http:/.test(stderr)) resolvePromise();
    });
    launcher.once('exit', (code) => reject(new Error(`launcher exited (${code}): ${stderr}`)));
  });
  return launcher;
}

/** The children of `pid` that run the CLI (dist/bundle/main.js, or dist/cli/main.js unbundled). */
function cliChildrenOf(pid: number): number[] {
  return childrenOf(pid).filter((child) =>
    commandLine(child).some(
      (arg) =>
        arg.endsWith(join('dist', 'bundle', 'main.js')) || arg.endsWith(join('dist', 'cli', 'main.js')),
    ),
  );
}

const started: number[] = [];
afterEach(() => {
  // A failed run must not leave a server behind.
  for (const pid of started.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
});

describe.skipIf(process.platform !== 'linux')('codecall launcher', () => {
  it('process mode (the default): the CLI runs in the launcher itself, no second node start-up', async () => {
    const launcher = await serveHttp({ mcpServers: {}, history: { enabled: false } });
    const children = childrenOf(launcher.pid!);
    // Its children are the sandbox workers (started with the flag), never a re-executed CLI.
    expect(children.length).toBeGreaterThan(0);
    expect(cliChildrenOf(launcher.pid!)).toEqual([]);
    for (const child of children) expect(commandLine(child)).toContain('--no-node-snapshot');
    launcher.kill('SIGTERM');
    await new Promise((r) => launcher.once('exit', r));
  });

  it('in-process mode: re-executed with --no-node-snapshot; SIGKILL on the launcher ends that child too', async () => {
    const launcher = await serveHttp({
      mcpServers: {},
      history: { enabled: false },
      sandbox: { mode: 'in-process' },
    });
    const [child] = cliChildrenOf(launcher.pid!);
    expect(child).toBeGreaterThan(0);
    started.push(child!);
    expect(commandLine(child!)).toContain('--no-node-snapshot');
    expect(alive(child!)).toBe(true);
    const exited = new Promise((r) => launcher.once('exit', r));
    launcher.kill('SIGKILL');
    await exited;
    await expect.poll(() => alive(child!), { timeout: 10_000 }).toBe(false);
  });
});
