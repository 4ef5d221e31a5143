/**
 * @module
 * The process-mode pool sized by load, with real worker processes (counted by their pids): it
 * starts `minWorkers`, grows while runs wait up to `maxWorkers` and no further, shuts idle
 * workers above the minimum down after `workerIdleMs` (waiting for the pool's event, not racing
 * a timer), keeps a worker that holds a session, and replaces a worker that dies.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

import { afterEach, describe, expect, it } from 'vitest';

import { SandboxPool, type SandboxPoolOptions, type SandboxWorkerEvent } from '../../../src/isolate/index.js';
import { runScript } from '../../unit/isolate/sandbox-helpers.js';

/** PIDs of this process's live sandbox worker children. */
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
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      // A killed child not yet reaped is a zombie: not a live worker.
      if (/^State:\s+Z/m.test(status)) return false;
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('isolate/worker.js');
    } catch {
      return false;
    }
  });
}

/** A tool whose calls wait until released; `inFlight(n)` resolves once n calls are waiting. */
function gate() {
  const waiting: (() => void)[] = [];
  const watchers: { count: number; resolve: () => void }[] = [];
  return {
    tool: () =>
      new Promise<string>((resolve) => {
        waiting.push(() => resolve('released'));
        for (const watcher of watchers.splice(0)) {
          if (waiting.length >= watcher.count) watcher.resolve();
          else watchers.push(watcher);
        }
      }),
    inFlight: (count: number) =>
      new Promise<void>((resolve) => {
        if (waiting.length >= count) resolve();
        else watchers.push({ count, resolve });
      }),
    release: () => {
      for (const resolve of waiting.splice(0)) resolve();
    },
  };
}

describe.skipIf(process.platform !== 'linux')('process-mode worker pool sized by load', () => {
  let pool: SandboxPool | undefined;
  let events: SandboxWorkerEvent[] = [];
  let listeners: ((event: SandboxWorkerEvent) => void)[] = [];
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
    events = [];
    listeners = [];
  });

  const open = async (options: SandboxPoolOptions): Promise<SandboxPool> => {
    pool = await SandboxPool.open({
      mode: 'process',
      ...options,
      onWorkerEvent: (event) => {
        events.push(event);
        for (const listener of listeners) listener(event);
      },
    });
    return pool;
  };
  /** Resolves with the first event (past or future) that matches. */
  const nextEvent = (match: (event: SandboxWorkerEvent) => boolean, after = 0) =>
    new Promise<SandboxWorkerEvent>((resolve) => {
      const seen = events.slice(after).find(match);
      if (seen) return resolve(seen);
      listeners.push((event) => {
        if (match(event)) resolve(event);
      });
    });

  it('starts minWorkers, grows while runs wait up to maxWorkers and no further', async () => {
    await open({ minWorkers: 1, maxWorkers: 3, workerIdleMs: 60_000 });
    expect(childPids()).toHaveLength(1);
    const held = gate();
    const tools = { 't.hold': held.tool };
    const runs = Array.from({ length: 5 }, () =>
      runScript(pool!, 'return await tools.t.hold({});', { tools }),
    );
    // Three scripts are inside a tool call at once: three workers run them.
    await held.inFlight(3);
    // Two runs still wait; the pool started no worker beyond the maximum for them (workers are
    // forked synchronously when a run starts waiting, so an extra one would be listed already).
    expect(childPids()).toHaveLength(3);
    expect(events.filter((event) => event.type === 'started')).toHaveLength(3);
    held.release();
    await held.inFlight(2);
    held.release();
    const results = await Promise.all(runs);
    expect(results.map((result) => result.returnValue)).toEqual(Array(5).fill('released'));
    expect(events.filter((event) => event.type === 'started')).toHaveLength(3);
    expect(childPids()).toHaveLength(3);
    // Closing stops every worker and says so.
    await pool!.close();
    expect(childPids()).toEqual([]);
    const closed = events.filter((event) => event.type === 'stopped');
    expect(closed.map((event) => event.type === 'stopped' && event.reason)).toEqual(Array(3).fill('closed'));
    expect(closed.at(-1)).toMatchObject({ workers: 0 });
  });

  it('shuts idle workers above minWorkers down after workerIdleMs, and never below', async () => {
    const idleMs = 300;
    await open({ minWorkers: 1, maxWorkers: 2, workerIdleMs: idleMs });
    const held = gate();
    const tools = { 't.hold': held.tool };
    const runs = [1, 2].map(() => runScript(pool!, 'return await tools.t.hold({});', { tools }));
    await held.inFlight(2);
    expect(childPids()).toHaveLength(2);
    held.release();
    await Promise.all(runs);
    const stopped = await nextEvent((event) => event.type === 'stopped');
    expect(stopped).toMatchObject({ type: 'stopped', reason: 'idle', workers: 1 });
    expect(childPids()).toHaveLength(1);
    expect(childPids()).not.toContain(stopped.pid);
    // The last worker is the minimum: it outlives several more idle periods and still runs.
    await new Promise((resolve) => setTimeout(resolve, 3 * idleMs));
    expect(events.filter((event) => event.type === 'stopped')).toHaveLength(1);
    expect((await runScript(pool!, 'return 7;')).returnValue).toBe(7);
    expect(childPids()).toHaveLength(1);
  });

  it('replaces a worker that dies, and the next run uses the new one', async () => {
    await open({ minWorkers: 1, maxWorkers: 2, workerIdleMs: 60_000 });
    const [first] = childPids();
    expect(first).toBeDefined();
    process.kill(first!, 'SIGKILL');
    const stopped = await nextEvent((event) => event.type === 'stopped');
    expect(stopped).toMatchObject({ pid: first, reason: 'exited' });
    const replaced = await nextEvent((event) => event.type === 'started' && event.pid !== first);
    expect(childPids()).toEqual([replaced.pid]);
    expect((await runScript(pool!, 'return 1 + 1;')).returnValue).toBe(2);
  });

  it('keeps a worker that holds a session when idle workers are shut down', async () => {
    await open({ minWorkers: 1, maxWorkers: 2, workerIdleMs: 300 });
    const firstPid = events[0]!.pid;
    const held = gate();
    // The first worker is busy, so the session's first run gets a second, new worker.
    const busy = runScript(pool!, 'return await tools.t.hold({});', { tools: { 't.hold': held.tool } });
    await held.inFlight(1);
    const created = await runScript(pool!, 'const kept = "still here";', { session: 's' });
    expect(created.error).toBeUndefined();
    const sessionPid = events.find((event) => event.type === 'started' && event.pid !== firstPid)!.pid;
    // The session's worker goes idle first, then the other one: only the other is shut down.
    held.release();
    await busy;
    const stopped = await nextEvent((event) => event.type === 'stopped');
    expect(stopped).toMatchObject({ pid: firstPid, reason: 'idle' });
    expect(childPids()).toEqual([sessionPid]);
    const read = await runScript(pool!, 'return kept;', { session: 's' });
    expect(read.returnValue).toBe('still here');
  });

  it('rejects a minimum above the maximum, naming both fields', async () => {
    await expect(SandboxPool.open({ mode: 'process', minWorkers: 3, maxWorkers: 2 })).rejects.toThrow(
      /"minWorkers" \(3\) is above "maxWorkers" \(2\)/,
    );
  });
});
