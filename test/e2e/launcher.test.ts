/**
 * The `codecall` launcher (bin/codecall.js re-executes node with --no-node-snapshot): its child,
 * the real CLI, must not outlive it. Supervisors and MCP clients stop servers with SIGKILL, which
 * the launcher cannot forward; the child notices its launcher's IPC channel close and exits.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

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

const started: number[] = [];
afterEach(() => {
  // A failed run must not leave a server behind.
  for (const pid of started.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
});

describe.skipIf(process.platform !== 'linux')('codecall launcher', () => {
  it('SIGKILL on the launcher: the serving child exits too, not reparented to init', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'codecall-launcher-'));
    const config = join(dir, 'codecall.json');
    writeFileSync(config, JSON.stringify({ mcpServers: {}, history: { enabled: false } }));
    const launcher = spawn(process.execPath, [BIN, 'serve', '--http', '--port', '0', '--config', config], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    const listening = new Promise<void>((resolvePromise, reject) => {
      launcher.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        if (/listening on http:/.test(stderr)) resolvePromise();
      });
      launcher.once('exit', (code) => reject(new Error(`launcher exited (${code}): ${stderr}`)));
    });
    await listening;
    const [child] = childrenOf(launcher.pid!);
    started.push(launcher.pid!, child!);
    expect(child).toBeGreaterThan(0);
    expect(alive(child!)).toBe(true);
    const exited = new Promise((r) => launcher.once('exit', r));
    launcher.kill('SIGKILL');
    await exited;
    await expect.poll(() => alive(child!), { timeout: 10_000 }).toBe(false);
  });
});
