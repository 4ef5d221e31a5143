/**
 * @module
 * Process mode supervision with real worker processes: work V8 cannot interrupt gets the worker
 * killed and replaced, a worker that dies mid-run ends that run with a clear error, the next
 * run works, runs queue when every worker is busy, and close() cancels and cleans up.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

import { afterEach, describe, expect, it } from 'vitest';

import { isCodecallError } from '../../../src/errors.js';
import { SandboxPool } from '../../../src/isolate/index.js';
import { runScript } from '../../unit/isolate/sandbox-helpers.js';

/** PIDs of this process's sandbox worker children. */
function childPids(): number[] {
  let pids: number[];
  try {
    pids = execFileSync('pgrep', ['-P', String(process.pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
  return pids.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('isolate/worker.js');
    } catch {
      return false;
    }
  });
}

describe('process-mode supervision', () => {
  let pool: SandboxPool | undefined;
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  it('kills and replaces a worker stuck in uninterruptible BigInt work; the next run works', async () => {
    pool = await SandboxPool.open({ mode: 'process', workers: 1, killGraceMs: 300 });
    const before = childPids();
    expect(before).toHaveLength(1);
    const stuck = await runScript(pool, "const x = 10n ** 30000000n; console.log('finished');", {
      limits: { cpuTimeMs: 200 },
    });
    expect(stuck.error?.code).toBe('CPU_TIMEOUT');
    expect(stuck.stdout).toBe('');
    const after = await runScript(pool, "console.log('next run');");
    expect(after.stdout).toBe('next run\n');
    const now = childPids();
    expect(now).toHaveLength(1);
    expect(now).not.toContain(before[0]);
  });

  it('ends a run whose worker dies with SANDBOX_CRASHED, then serves the next run', async () => {
    pool = await SandboxPool.open({ mode: 'process', workers: 1 });
    const pids = childPids();
    expect(pids).toHaveLength(1);
    const running = runScript(pool, 'await tools.t.kill({});', {
      tools: {
        't.kill': () => {
          for (const pid of pids) process.kill(pid, 'SIGKILL');
          return new Promise(() => {});
        },
      },
    });
    const result = await running;
    expect(result.error?.code).toBe('SANDBOX_CRASHED');
    expect(result.error?.message).toContain('Run it again');
    const next = await runScript(pool, 'return 5;');
    expect(next.returnValue).toBe(5);
  });

  it('reports a V8 fatal allocation abort in a worker as MEMORY_LIMIT, then serves the next run', async () => {
    // V8 aborts the whole process ("Fatal JavaScript invalid size error") when split() needs
    // an array over its maximum length; isolated-vm cannot turn this into an exception.
    pool = await SandboxPool.open({ mode: 'process', workers: 1 });
    const before = childPids();
    expect(before).toHaveLength(1);
    const result = await runScript(
      pool,
      "for (let i = 0; i < 150; i++) console.log('line ' + i); const parts = ('xy'.repeat(2 ** 26) + 'z').split(''); console.log(parts.length);",
      { limits: { memoryMb: 32 } },
    );
    expect(result.status).toBe('error');
    expect(result.error?.code).toBe('MEMORY_LIMIT');
    expect(result.error?.message).toContain('more than 32 MB of memory');
    // What the script printed before the abort reaches the result: the first 100 console calls
    // of a run are sent at once (later ones in batches at most 1 ms of printing apart).
    const first = Array.from({ length: 100 }, (_, n) => `line ${n}\n`).join('');
    expect(result.stdout.startsWith(first)).toBe(true);
    const next = await runScript(pool, "console.log('next run');");
    expect(next.stdout).toBe('next run\n');
    const now = childPids();
    expect(now).toHaveLength(1);
    expect(now).not.toContain(before[0]);
  });

  it('queues runs when every worker is busy and runs them all', async () => {
    pool = await SandboxPool.open({ mode: 'process', workers: 2 });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let waiting = 0;
    const tools = {
      't.wait': async () => {
        if (++waiting === 2) release();
        await gate;
        return 1;
      },
    };
    const runs = [1, 2, 3, 4].map((n) => runScript(pool!, `await tools.t.wait({}); return ${n};`, { tools }));
    const results = await Promise.all(runs);
    expect(results.map((result) => result.returnValue)).toEqual([1, 2, 3, 4]);
  });

  it('keeps a worker that answers its heartbeat while a tool call outlasts CPU budget + grace', async () => {
    pool = await SandboxPool.open({ mode: 'process', workers: 1, killGraceMs: 200 });
    const before = childPids();
    // The heartbeat's limit is 100 + 200 ms; the call takes four times that, the worker idle and answering pings.
    const result = await runScript(pool, 'return await tools.t.slow({});', {
      limits: { cpuTimeMs: 100, wallTimeMs: 10_000 },
      tools: { 't.slow': () => new Promise((resolve) => setTimeout(() => resolve(7), 1_200)) },
    });
    expect(result.error).toBeUndefined();
    expect(result.returnValue).toBe(7);
    expect(childPids()).toEqual(before);
  });

  it('stops a worker that ignores a wall-time cancel and keeps serving', async () => {
    pool = await SandboxPool.open({ mode: 'process', workers: 1, killGraceMs: 200 });
    const result = await runScript(pool, 'const x = 10n ** 30000000n;', {
      limits: { wallTimeMs: 100, cpuTimeMs: 60_000 },
    });
    expect(result.error?.code).toBe('WALL_TIMEOUT');
    const next = await runScript(pool, "console.log('ok')");
    expect(next.stdout).toBe('ok\n');
  });

  it('starts workers with an empty environment: host secrets never reach them', async () => {
    const secret = `sk-ant-test-${process.pid}-${Date.now()}`;
    const saved = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = secret;
    try {
      pool = await SandboxPool.open({ mode: 'process', workers: 1 });
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
    }
    const pids = childPids();
    expect(pids.length).toBe(1);
    const environ = readFileSync(`/proc/${pids[0]}/environ`, 'utf8');
    expect(environ).not.toContain(secret);
    // Only the variables Node's fork() adds for the IPC channel itself.
    const names = environ
      .split('\0')
      .filter(Boolean)
      .map((entry) => entry.slice(0, entry.indexOf('=')));
    expect(names.sort()).toEqual(['NODE_CHANNEL_FD', 'NODE_CHANNEL_SERIALIZATION_MODE']);
    // The worker serves runs with that environment.
    expect((await runScript(pool, 'return 1;')).returnValue).toBe(1);
  });

  it('close() cancels running scripts, is idempotent, and refuses new runs', async () => {
    pool = await SandboxPool.open({ mode: 'process', workers: 1 });
    const open = pool;
    let started!: () => void;
    const inTool = new Promise<void>((resolve) => (started = resolve));
    const running = runScript(open, 'await tools.t.hang({});', {
      tools: {
        't.hang': () => {
          started();
          return new Promise(() => {});
        },
      },
    });
    await inTool;
    expect(childPids()).toHaveLength(1);
    await Promise.all([open.close(), open.close()]);
    expect((await running).error?.code).toBe('ABORTED');
    await expect(runScript(open, '1')).rejects.toSatisfy(
      (error) => isCodecallError(error) && error.code === 'CLOSED',
    );
    expect(childPids()).toEqual([]);
  });
});
