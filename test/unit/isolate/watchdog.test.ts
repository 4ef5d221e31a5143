/**
 * @module
 * The watchdog that stops long runs (src/isolate/watchdog.ts): once a run has made
 * `WATCH_AFTER_ENTRIES` entries its later entries carry no timeout, so the watchdog alone
 * must stop a loop in any of them, at the CPU or the wall budget, in both modes, and must
 * never touch an isolate whose run has ended (a session's context outlives its run).
 */
import ivm from 'isolated-vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { compileScript } from '../../../src/compile/index.js';
import { loadPreludeSource } from '../../../src/isolate/assets.js';
import { IsolateEngine } from '../../../src/isolate/engine.js';
import { resolveSandboxLimits, SandboxPool, type SandboxMode } from '../../../src/isolate/index.js';
import { SandboxToolCatalog } from '../../../src/isolate/tool-catalog.js';
import { WATCH_AFTER_ENTRIES, Watchdogs, type Watch } from '../../../src/isolate/watchdog.js';
import { runScript } from './sandbox-helpers.js';

/** Slack over a budget for a stop (the watchdog wakes at the budget; CI machines are slow). */
const STOP_SLACK_MS = 1_500;

/** Resolves once the watchdog reports itself watching (it starts on isolated-vm's thread pool). */
async function armed(watch: Watch): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!watch.armed) {
    if (Date.now() > deadline) throw new Error('the watchdog never armed');
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

describe('Watchdogs', () => {
  const watchdogs = new Watchdogs();
  afterAll(() => watchdogs.close());

  function loopingIsolate(): { isolate: ivm.Isolate; loop: () => unknown } {
    const isolate = new ivm.Isolate({ memoryLimit: 16 });
    const context = isolate.createContextSync();
    // A backstop of its own, so a watchdog that fails to stop the loop fails the test (with
    // "timed out") instead of hanging it.
    return { isolate, loop: () => context.evalSync('for (;;) {}', { timeout: 10_000 }) };
  }

  it('stops a synchronous loop (no timeout of its own) when the CPU budget is spent', async () => {
    const { isolate, loop } = loopingIsolate();
    const budgetMs = 150;
    const watch = watchdogs.watch(isolate, Number(isolate.cpuTime) + budgetMs * 1e6, 60_000)!;
    expect(watch).toBeDefined();
    await armed(watch);
    const start = Date.now();
    expect(loop).toThrow(/disposed/);
    const tookMs = Date.now() - start;
    expect(tookMs).toBeGreaterThanOrEqual(budgetMs - 5);
    expect(tookMs).toBeLessThan(budgetMs + STOP_SLACK_MS);
    expect(isolate.isDisposed).toBe(true);
    expect(watch.stopped).toBe('CPU_TIMEOUT');
    // The run ending afterwards learns it was stopped.
    expect(watch.end()).toBe('CPU_TIMEOUT');
  });

  it('stops it at the wall budget when that comes first', async () => {
    const { isolate, loop } = loopingIsolate();
    const watch = watchdogs.watch(isolate, Number(isolate.cpuTime) + 60_000 * 1e6, 150)!;
    await armed(watch);
    const start = Date.now();
    expect(loop).toThrow(/disposed/);
    expect(Date.now() - start).toBeLessThan(150 + STOP_SLACK_MS);
    expect(watch.end()).toBe('WALL_TIMEOUT');
  });

  it('leaves an isolate alone once its run has ended, and watches the next run', async () => {
    const kept = loopingIsolate();
    const watch = watchdogs.watch(kept.isolate, Number(kept.isolate.cpuTime) + 1e6, 50)!;
    await armed(watch);
    expect(watch.end()).toBeUndefined();
    // Past both budgets: a watchdog still watching would dispose the isolate now.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(kept.isolate.isDisposed).toBe(false);
    expect(kept.isolate.createContextSync().evalSync('6 * 7')).toBe(42);
    expect(watch.armed).toBe(false);
    kept.isolate.dispose();

    // The same watchdog (idle again) stops the next one.
    const next = loopingIsolate();
    const nextWatch = watchdogs.watch(next.isolate, Number(next.isolate.cpuTime) + 100e6, 60_000)!;
    await armed(nextWatch);
    expect(next.loop).toThrow(/disposed/);
    expect(nextWatch.end()).toBe('CPU_TIMEOUT');
  });

  it('keeps two watchdogs once their loops have returned, and disposes the rest', async () => {
    const own = new Watchdogs();
    const isolates = Array.from({ length: 6 }, () => new ivm.Isolate({ memoryLimit: 8 }));
    try {
      const watches = isolates.map((isolate) => own.watch(isolate, Number(isolate.cpuTime) + 60e9, 60_000)!);
      await Promise.all(watches.map(armed));
      expect(own.alive).toBe(6);
      for (const watch of watches) expect(watch.end()).toBeUndefined();
      await Promise.all(watches.map((watch) => watch.finished));
      expect(own.alive).toBe(2);
      // The two left watch again.
      const again = own.watch(isolates[0]!, Number(isolates[0]!.cpuTime) + 60e9, 60_000)!;
      await armed(again);
      expect(own.alive).toBe(2);
      again.end();
      own.close();
      await again.finished;
      expect(own.alive).toBe(0);
    } finally {
      for (const isolate of isolates) isolate.dispose();
    }
  });
});

describe('the engine hands long runs to a watchdog', () => {
  let engine: IsolateEngine;
  beforeAll(() => {
    engine = new IsolateEngine({ prelude: loadPreludeSource(), spareMemoryMb: 64 });
  });
  afterAll(() => engine.close());

  it(`enters without a timeout after ${WATCH_AFTER_ENTRIES} entries, and a loop there still ends at the CPU budget`, async () => {
    const calls = WATCH_AFTER_ENTRIES + 200;
    const compiled = compileScript(
      `for (let i = 0; i < ${calls}; i++) await tools.t.echo({ i }); for (;;) {}`,
    );
    if (!compiled.ok) throw new Error(compiled.error.message);
    const cpuTimeMs = 300;
    const start = Date.now();
    const run: ReturnType<IsolateEngine['start']> = engine.start(
      {
        code: compiled.code,
        tools: SandboxToolCatalog.of([{ name: 't.echo', namespace: 't', member: 'echo' }]).engine,
        limits: resolveSandboxLimits({ cpuTimeMs, maxToolCalls: calls + 1 }),
        wallTimeLeftMs: 60_000,
      },
      // Each call is answered in its own turn, as a tool would: one entry per call.
      { output: () => {}, call: (id) => setImmediate(() => run.settle(id, true, 'null')) },
    );
    const outcome = await run.outcome;
    expect(outcome.fault?.code).toBe('CPU_TIMEOUT');
    expect(Date.now() - start).toBeLessThan(cpuTimeMs + STOP_SLACK_MS);
    // The start and the first calls' entries carry timeouts; once the watchdog is watching (it
    // starts on isolated-vm's thread pool, a few entries later), the rest and the loop do not.
    expect(run.entries).toBe(calls + 1);
    expect(run.watchedEntries).toBeGreaterThan(0);
  });

  it('watches every long run of a series that never yields to the event loop (tools answered in microtasks)', async () => {
    // Three times the watchdogs an engine keeps at most: a watchdog must be taken again as soon
    // as its loop has returned, not when isolated-vm reports that in a turn of the event loop.
    const runs = 48;
    const calls = WATCH_AFTER_ENTRIES + 300;
    const compiled = compileScript(`for (let i = 0; i < ${calls}; i++) await tools.t.echo({ i });`);
    if (!compiled.ok) throw new Error(compiled.error.message);
    const tools = SandboxToolCatalog.of([{ name: 't.echo', namespace: 't', member: 'echo' }]).engine;
    let turned = false;
    setImmediate(() => (turned = true));
    const watched: number[] = [];
    for (let index = 0; index < runs; index++) {
      const run: ReturnType<IsolateEngine['start']> = engine.start(
        {
          code: compiled.code,
          tools,
          limits: resolveSandboxLimits({ maxToolCalls: calls + 1 }),
          wallTimeLeftMs: 60_000,
        },
        { output: () => {}, call: (id) => queueMicrotask(() => run.settle(id, true, 'null')) },
      );
      const outcome = await run.outcome;
      if (outcome.fault !== undefined) throw new Error(`run ${index} failed: ${outcome.fault.code}`);
      if (run.watchedEntries > 0) watched.push(index);
    }
    // The whole series ran in one turn of the loop (a turn would have reported the returns).
    expect(turned).toBe(false);
    // A few may miss their watch on a loaded machine (a watchdog armed only after the run's last
    // entry); before the fix, exactly the first 16 were watched.
    expect(watched.length).toBeGreaterThanOrEqual(runs - 4);
    expect(watched).toContain(runs - 1);
  });
});

describe.each<SandboxMode>(['in-process', 'process'])('long runs under a watchdog (%s)', (mode) => {
  let pool: SandboxPool;
  beforeAll(async () => {
    // A long grace, so a worker killed by the heartbeat (not stopped by the watchdog) shows in
    // the wall time of the tests below.
    pool = await SandboxPool.open({ mode, workers: 1, killGraceMs: 5_000 });
  });
  afterAll(async () => {
    await pool.close();
  });

  const calls = WATCH_AFTER_ENTRIES + 100;
  const echo = { 't.echo': (args: Record<string, unknown>) => args };

  it('stops a loop after many calls at the CPU budget, keeping what was printed', async () => {
    const cpuTimeMs = 300;
    const start = Date.now();
    const result = await runScript(
      pool,
      `let sum = 0;
       for (let i = 0; i < ${calls}; i++) sum += (await tools.t.echo({ i })).i;
       console.log('sum', sum);
       for (;;) {}`,
      { limits: { cpuTimeMs, wallTimeMs: 60_000, maxToolCalls: calls + 1 }, tools: echo },
    );
    expect(result.error?.code).toBe('CPU_TIMEOUT');
    expect(result.stdout).toContain(`sum ${(calls * (calls - 1)) / 2}`);
    expect(Date.now() - start).toBeLessThan(cpuTimeMs + STOP_SLACK_MS);
  });

  it('stops it at the wall budget when that is the smaller', async () => {
    const wallTimeMs = 600;
    const start = Date.now();
    const result = await runScript(
      pool,
      `for (let i = 0; i < ${calls}; i++) await tools.t.echo({ i }); for (;;) {}`,
      { limits: { cpuTimeMs: 60_000, wallTimeMs, maxToolCalls: calls + 1 }, tools: echo },
    );
    expect(result.error?.code).toBe('WALL_TIMEOUT');
    expect(Date.now() - start).toBeLessThan(wallTimeMs + STOP_SLACK_MS);
  });

  it('keeps a session whose long run ended well (the watchdog never outlives the run)', async () => {
    const first = await runScript(
      pool,
      `let total = 0; for (let i = 0; i < ${calls}; i++) total += (await tools.t.echo({ i })).i;`,
      // Budgets short enough that a watchdog still watching after the run would spend them.
      {
        limits: { cpuTimeMs: 2_000, wallTimeMs: 2_000, maxToolCalls: calls + 1 },
        tools: echo,
        session: 'long',
      },
    );
    expect(first.error).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const second = await runScript(pool, 'console.log(total);', { session: 'long' });
    expect(second.error).toBeUndefined();
    expect(second.stdout.trim()).toBe(String((calls * (calls - 1)) / 2));
  });
});
