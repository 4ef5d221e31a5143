/**
 * @module
 * The engine refills its warm spare only while it is idle: never while a run waits on a tool
 * call (the answer would queue behind ~3 ms of isolate creation: the process-mode warm-start
 * cost), and again once the last run has ended. A real isolated-vm engine with the real prelude.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { compileScript } from '../../../src/compile/index.js';
import { loadPreludeSource } from '../../../src/isolate/assets.js';
import { IsolateEngine, type EngineRunRequest } from '../../../src/isolate/engine.js';
import { resolveSandboxLimits } from '../../../src/isolate/limits.js';

/** Turns of the event loop: each lets one pending setImmediate (one refill step) run. */
async function turns(count: number): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Waits (bounded) until the engine holds a warm spare; false when it never does. */
async function spareReady(engine: IsolateEngine): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    if (engine.spareHeapBytes() !== undefined) return true;
    await turns(1);
  }
  return false;
}

function request(code: string): EngineRunRequest {
  const compiled = compileScript(code);
  if (!compiled.ok) throw new Error('compile failed');
  const limits = resolveSandboxLimits({});
  return { code: compiled.code, tools: [['t.wait', 't', 'wait']], limits, wallTimeLeftMs: limits.wallTimeMs };
}

describe('IsolateEngine spare refill', () => {
  let engine: IsolateEngine | undefined;
  afterEach(() => engine?.close());

  it('does not refill while a run waits on a tool call, and refills once the engine is idle', async () => {
    const limits = resolveSandboxLimits({});
    engine = new IsolateEngine({ prelude: loadPreludeSource(), spareMemoryMb: limits.memoryMb });
    engine.warm();
    expect(engine.spareHeapBytes()).toBeGreaterThan(0);

    const calls: number[] = [];
    const run = engine.start(request('return await tools.t.wait({});'), {
      output() {},
      call(id) {
        calls.push(id);
      },
    });
    // The run took the spare; its tool call is outstanding.
    expect(calls).toHaveLength(1);
    expect(engine.spareHeapBytes()).toBeUndefined();
    // Many turns of the event loop while the run waits: no refill step runs.
    await turns(20);
    expect(engine.spareHeapBytes()).toBeUndefined();

    run.settle(calls[0]!, true, '42');
    const outcome = await run.outcome;
    expect(outcome).toMatchObject({ ok: true, returnJson: '42' });
    // Idle now: the spare comes back within a few turns.
    expect(await spareReady(engine)).toBe(true);
  });

  it('a run arriving mid-refill finishes the half-built spare instead of starting over', async () => {
    const limits = resolveSandboxLimits({});
    engine = new IsolateEngine({ prelude: loadPreludeSource(), spareMemoryMb: limits.memoryMb });
    const first = engine.start(request('return 1;'), { output() {}, call() {} });
    await first.outcome;
    // One turn: the first refill step (isolate, context, prelude) has run, the warm-up has not.
    await turns(1);
    expect(engine.spareState()).toBe('half');
    const second = engine.start(request('return 2;'), { output() {}, call() {} });
    // The run took the half-built spare (finishing its warm-up), rather than a new isolate.
    expect(engine.spareState()).toBe('none');
    expect(await second.outcome).toMatchObject({ ok: true, returnJson: '2' });
    expect(await spareReady(engine)).toBe(true);
  });
});
