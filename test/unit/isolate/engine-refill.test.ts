/**
 * @module
 * The engine refills its warm spare only while it is idle: never while a run waits on a tool
 * call (the answer would queue behind ~3 ms of isolate creation: the process-mode warm-start
 * cost), and again at the next turn of the event loop once the last run has ended. A real
 * isolated-vm engine with the real prelude.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { compileScript } from '../../../src/compile/index.js';
import { loadPreludeSource } from '../../../src/isolate/assets.js';
import { IsolateEngine, type EngineRunRequest } from '../../../src/isolate/engine.js';
import { resolveSandboxLimits } from '../../../src/isolate/limits.js';
import { SandboxToolCatalog } from '../../../src/isolate/tool-catalog.js';

/** Turns of the event loop: each lets a pending setImmediate (a refill) run. */
async function turns(count: number): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Waits (bounded) until the engine holds a warm spare; false when it never does. */
async function spareReady(engine: IsolateEngine): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    if (engine.spareReady) return true;
    await turns(1);
  }
  return false;
}

function request(code: string, memoryMb?: number): EngineRunRequest {
  const compiled = compileScript(code);
  if (!compiled.ok) throw new Error('compile failed');
  const limits = resolveSandboxLimits(memoryMb === undefined ? {} : { memoryMb });
  return {
    code: compiled.code,
    tools: SandboxToolCatalog.of([{ name: 't.wait', namespace: 't', member: 'wait' }]).engine,
    limits,
    wallTimeLeftMs: limits.wallTimeMs,
  };
}

describe('IsolateEngine spare refill', () => {
  let engine: IsolateEngine | undefined;
  afterEach(() => engine?.close());

  it('does not refill while a run waits on a tool call, and refills once the engine is idle', async () => {
    const limits = resolveSandboxLimits({});
    engine = new IsolateEngine({ prelude: loadPreludeSource(), spareMemoryMb: limits.memoryMb });
    engine.warm();
    expect(engine.spareReady).toBe(true);

    const calls: number[] = [];
    const run = engine.start(request('return await tools.t.wait({});'), {
      output() {},
      call(id) {
        calls.push(id);
      },
    });
    // The run took the spare; its tool call is outstanding.
    expect(calls).toHaveLength(1);
    expect(engine.spareReady).toBe(false);
    // Many turns of the event loop while the run waits: no refill runs.
    await turns(20);
    expect(engine.spareReady).toBe(false);

    run.settle(calls[0]!, true, '42');
    const outcome = await run.outcome;
    expect(outcome).toMatchObject({ ok: true, returnJson: '42' });
    // Idle now: the spare comes back within a few turns.
    expect(await spareReady(engine)).toBe(true);
  });

  it('warms the spare but not an isolate made for a run that found none (a cold start pays no warm-up)', async () => {
    const limits = resolveSandboxLimits({});
    // The real prelude, whose warm-up is made to take 300 ms of the isolate's time and to count
    // itself in the isolate's global `warmUps`.
    const slowWarmUp =
      `${loadPreludeSource()}\n;{ const warm = globalThis.__codecall_warm; globalThis.__codecall_warm = () => {` +
      ' warm(); globalThis.warmUps = (globalThis.warmUps ?? 0) + 1;' +
      ' const until = Date.now() + 300; while (Date.now() < until); }; }';
    engine = new IsolateEngine({ prelude: slowWarmUp, spareMemoryMb: limits.memoryMb });
    const started = performance.now();
    engine.warm();
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);

    // Another memory limit than the spare's: the run gets a new isolate of its own, which is
    // never warmed (it would count in its `warmUps`), and the spare stays.
    const calls: number[] = [];
    const run = engine.start(
      request('await tools.t.wait({}); return globalThis.warmUps ?? 0;', limits.memoryMb / 2),
      {
        output() {},
        call(id) {
          calls.push(id);
        },
      },
    );
    expect(engine.spareReady).toBe(true);
    expect(calls).toHaveLength(1);
    run.settle(calls[0]!, true, '42');
    expect(await run.outcome).toMatchObject({ ok: true, returnJson: '0' });
    // The spare's memory limit: the run takes the spare, warmed once.
    const spareRun = engine.start(request('return globalThis.warmUps ?? 0;', limits.memoryMb), {
      output() {},
      call() {},
    });
    expect(await spareRun.outcome).toMatchObject({ ok: true, returnJson: '1' });
  });
});
