/**
 * @module
 * Sandbox sessions with real isolates, in both modes: a second run of a session reads the
 * variables, functions and fetched data of the first; sessions of other names, other owners
 * and plain runs see none of it; a session expires after its TTL, is evicted past the maximum,
 * and is dropped by a run that hits a limit, and each says so; in process mode a session lives
 * on one worker and a worker that dies takes its sessions with it, which their next run says.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

import { afterEach, describe, expect, it, vi } from 'vitest';

import { SandboxPool, type SandboxMode, type SandboxPoolOptions } from '../../../src/isolate/index.js';
import { runScript, type RunOptions } from '../../unit/isolate/sandbox-helpers.js';

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

describe.each<SandboxMode>(['in-process', 'process'])('sandbox sessions (%s)', (mode) => {
  let pool: SandboxPool | undefined;
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  const open = async (options: SandboxPoolOptions = {}): Promise<SandboxPool> => {
    pool = await SandboxPool.open({ mode, workers: 2, killGraceMs: 300, ...options });
    return pool;
  };
  const inSession = (session: string, source: string, options: RunOptions = {}) =>
    runScript(pool!, source, { session, ...options });

  it('a second run reads the variables, functions, classes and fetched data of the first', async () => {
    await open();
    let fetched = 0;
    const tools = { 'crm.list': () => ({ rows: [3, 4, 5], fetch: ++fetched }) };
    const first = await inSession(
      's1',
      'const { rows } = await tools.crm.list({});\nlet count = rows.length;\nfunction sum(list: number[]) { return list.reduce((a, b) => a + b, 0); }\nclass Tally { constructor(public n: number) {} }\nconsole.log("fetched", count);',
      { tools },
    );
    expect(first.error).toBeUndefined();
    expect(first.stdout).toBe('fetched 3\n');
    const second = await inSession('s1', 'count += 1;\nreturn [sum(rows), count, new Tally(7).n];', {
      tools,
    });
    expect(second.error).toBeUndefined();
    expect(second.returnValue).toEqual([12, 4, 7]);
    // The same script again redeclares its names without an error, and state moves on.
    const third = await inSession(
      's1',
      'const { rows } = await tools.crm.list({});\nreturn [rows.length, count];',
      {
        tools,
      },
    );
    expect(third.returnValue).toEqual([3, 4]);
    expect(fetched).toBe(2);
  });

  it('keeps sessions apart: other names, other owners and plain runs see nothing', async () => {
    await open();
    await inSession('a', 'const secret = "A"; globalThis.marker = 1;', { sessionOwner: 'client-1' });
    const probe = 'return [typeof secret, typeof (globalThis as any).marker];';
    expect((await inSession('b', probe, { sessionOwner: 'client-1' })).returnValue).toEqual([
      'undefined',
      'undefined',
    ]);
    expect((await inSession('a', probe, { sessionOwner: 'client-2' })).returnValue).toEqual([
      'undefined',
      'undefined',
    ]);
    expect((await runScript(pool!, probe)).returnValue).toEqual(['undefined', 'undefined']);
    expect((await inSession('a', probe, { sessionOwner: 'client-1' })).returnValue).toEqual([
      'string',
      'number',
    ]);
  });

  it('runs of one session go one at a time, in order', async () => {
    await open();
    await inSession('q', 'let log: number[] = [];');
    const tools = { 't.tick': async () => 1 };
    const runs = [1, 2, 3].map((n) =>
      inSession('q', `const before = log.length; await tools.t.tick({}); log.push(${n}); return before;`, {
        tools,
      }),
    );
    const results = await Promise.all(runs);
    expect(results.map((result) => result.returnValue)).toEqual([0, 1, 2]);
    expect((await inSession('q', 'return log;')).returnValue).toEqual([1, 2, 3]);
  });

  it('expires after its TTL: the next run fails with SESSION_EXPIRED, the one after starts empty', async () => {
    await open({ sessionTtlMs: 100 });
    await inSession('t', 'const kept = 1;');
    await vi.waitFor(() => expect(pool!.sessionCount).toBe(0), { timeout: 20_000, interval: 20 });
    const expired = await inSession('t', 'return typeof kept;');
    expect(expired.status).toBe('error');
    expect(expired.error?.code).toBe('SESSION_EXPIRED');
    expect(expired.error?.message).toContain('The session "t" expired after 100 ms unused');
    expect(expired.error?.message).toContain('Start over');
    const fresh = await inSession('t', 'return typeof kept;');
    expect(fresh.error).toBeUndefined();
    expect(fresh.returnValue).toBe('undefined');
  });

  it('evicts the least recently used session past maxSessions, and says so to its next run', async () => {
    await open({ maxSessions: 2 });
    await inSession('one', 'const v = 1;');
    await inSession('two', 'const v = 2;');
    await inSession('one', 'void v;'); // "one" is now the most recently used
    await inSession('three', 'const v = 3;');
    expect(pool!.sessionCount).toBe(2);
    const evicted = await inSession('two', 'return v;');
    expect(evicted.error?.code).toBe('SESSION_EXPIRED');
    expect(evicted.error?.message).toContain('to make room for newer sessions (at most 2 are kept)');
    expect((await inSession('one', 'return v;')).returnValue).toBe(1);
  });

  it('refuses a new session with SESSION_LIMIT while every kept session is running; a cancelled run keeps its session', async () => {
    await open({ maxSessions: 1 });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const started = new Promise<void>((resolve) => (entered = resolve));
    const tools = {
      't.wait': async () => {
        entered();
        await gate;
        return 1;
      },
    };
    const busy = inSession('busy', 'const kept = await tools.t.wait({});', { tools });
    await started;
    const refused = await inSession('other', 'return 1;');
    expect(refused.error?.code).toBe('SESSION_LIMIT');
    expect(refused.error?.message).toContain('All 1 sessions are running scripts');
    release();
    expect((await busy).error).toBeUndefined();
    const cancelled = new AbortController();
    cancelled.abort();
    const aborted = await inSession('busy', 'kept = 2;', { signal: cancelled.signal });
    expect(aborted.error?.code).toBe('ABORTED');
    expect((await inSession('busy', 'return kept;')).returnValue).toBe(1);
  });

  it('a run that times out drops its session and says so; the next run starts empty', async () => {
    await open();
    await inSession('slow', 'const data = [1, 2, 3];');
    const stuck = await inSession('slow', 'while (true) {}', { limits: { cpuTimeMs: 200 } });
    expect(stuck.error?.code).toBe('CPU_TIMEOUT');
    expect(stuck.error?.message).toContain(
      'The session "slow" was discarded with its variables: your next run in it starts empty',
    );
    const next = await inSession('slow', 'return typeof data;');
    expect(next.error).toBeUndefined();
    expect(next.returnValue).toBe('undefined');
  });

  it('a run out of memory drops its session and says so; the heap limit spans the runs', async () => {
    await open({ limits: { memoryMb: 32 } });
    // Each run keeps ~8 MB more in the session: the limit is reached across runs, not in one.
    const grow =
      'globalThis.keep ??= []; (globalThis as any).keep.push(new Array(1_000_000).fill(0).map((_, i) => i + 0.5)); return (globalThis as any).keep.length;';
    let result = await inSession('big', grow);
    expect(result.returnValue).toBe(1);
    for (let runs = 1; result.status === 'ok' && runs < 20; runs++) result = await inSession('big', grow);
    expect(result.error?.code).toBe('MEMORY_LIMIT');
    expect(result.error?.message).toContain('The session "big" was discarded');
    const next = await inSession('big', 'return typeof (globalThis as any).keep;');
    expect(next.returnValue).toBe('undefined');
  });

  it('closeSessions ends the sessions of one owner only', async () => {
    await open();
    await inSession('x', 'const mine = 1;', { sessionOwner: 'gone' });
    await inSession('x', 'const mine = 2;', { sessionOwner: 'stays' });
    pool!.closeSessions('gone');
    expect(pool!.sessionCount).toBe(1);
    expect((await inSession('x', 'return mine;', { sessionOwner: 'stays' })).returnValue).toBe(2);
    expect((await inSession('x', 'return typeof mine;', { sessionOwner: 'gone' })).returnValue).toBe(
      'undefined',
    );
  });

  it.runIf(mode === 'process')(
    'pins a session to its worker; a worker that dies fails its sessions with SESSION_EXPIRED',
    async () => {
      await open({ workers: 2 });
      await inSession('p', 'const pinned = "yes";');
      // Busy runs elsewhere do not move the session: every run of it finds its state.
      for (let n = 0; n < 4; n++) {
        const [own] = await Promise.all([inSession('p', 'return pinned;'), runScript(pool!, 'return 1;')]);
        expect(own.returnValue).toBe('yes');
      }
      const killed = childPids();
      expect(killed).toHaveLength(2);
      for (const pid of killed) process.kill(pid, 'SIGKILL');
      await vi.waitFor(() => expect(pool!.sessionCount).toBe(0), { timeout: 20_000, interval: 20 });
      // Both replacements are started only once the pool has seen both workers exit (else the
      // next run could be handed the other killed worker before its exit is noticed).
      await vi.waitFor(
        () => {
          const now = childPids();
          expect(now.filter((pid) => killed.includes(pid))).toEqual([]);
          expect(now).toHaveLength(2);
        },
        { timeout: 20_000, interval: 20 },
      );
      const lost = await inSession('p', 'return pinned;');
      expect(lost.error?.code).toBe('SESSION_EXPIRED');
      expect(lost.error?.message).toContain('was lost when its sandbox process stopped');
      const fresh = await inSession('p', 'return typeof pinned;');
      expect(fresh.returnValue).toBe('undefined');
    },
  );
});
