/**
 * @module
 * Runs of one owner take turns in one isolate, each in a fresh context: nothing an earlier run
 * left (globals, patched built-ins) is reachable, and runs of different owners, runs of no
 * owner, runs that ended by a fault and runs that left much of the heap in use never hand their
 * isolate on. A real isolated-vm engine with the real prelude.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { compileScript } from '../../../src/compile/index.js';
import { loadPreludeSource } from '../../../src/isolate/assets.js';
import { IsolateEngine, type EngineOutcome, type EngineRunRequest } from '../../../src/isolate/engine.js';
import { resolveSandboxLimits, type SandboxLimits } from '../../../src/isolate/limits.js';
import { SandboxToolCatalog } from '../../../src/isolate/tool-catalog.js';

const TOOLS = SandboxToolCatalog.of([{ name: 't.wait', namespace: 't', member: 'wait' }]).engine;

let engine: IsolateEngine | undefined;
afterEach(() => engine?.close());

function open(isolateRuns?: number, memoryMb = 64): IsolateEngine {
  engine = new IsolateEngine({
    prelude: loadPreludeSource(),
    spareMemoryMb: memoryMb,
    ...(isolateRuns !== undefined ? { isolateRuns } : {}),
  });
  return engine;
}

/** Runs `code` to its end (no tool calls) and lets the engine refill its spare afterwards. */
async function run(
  code: string,
  owner: string | undefined,
  limits: Partial<SandboxLimits> = {},
): Promise<EngineOutcome> {
  const compiled = compileScript(code);
  if (!compiled.ok) throw new Error('compile failed');
  const resolved = resolveSandboxLimits({ memoryMb: 64, ...limits });
  const request: EngineRunRequest = {
    code: compiled.code,
    tools: TOOLS,
    limits: resolved,
    wallTimeLeftMs: resolved.wallTimeMs,
    ...(owner !== undefined ? { owner } : {}),
  };
  const outcome = await engine!.start(request, { output() {}, call() {} }).outcome;
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  return outcome;
}

const TAMPER =
  "globalThis.leak = 'secret'; Object.prototype.polluted = 'yes'; Array.prototype.map = () => 'hijacked';" +
  ' JSON.stringify = () => "forged"; return 1;';
const INSPECT = 'return [typeof globalThis.leak, ({}).polluted ?? null, [1, 2].map((x) => x * 2)];';

describe('isolate reuse between runs of one owner', () => {
  it('gives the next run of the owner a fresh context in the same isolate', async () => {
    const engine = open();
    expect(await run(TAMPER, 'client-a')).toMatchObject({ ok: true });
    expect(await run(INSPECT, 'client-a')).toMatchObject({
      ok: true,
      returnJson: JSON.stringify(['undefined', null, [2, 4]]),
    });
    expect(await run(INSPECT, 'client-a')).toMatchObject({ ok: true });
    // One isolate for the three runs: the warm spare the first run took.
    expect(engine.isolatesCreated).toBe(1);
  });

  it('never shares an isolate between owners, or with a run of no owner', async () => {
    const engine = open();
    expect(await run(TAMPER, 'client-a')).toMatchObject({ ok: true });
    expect(await run(INSPECT, 'client-b')).toMatchObject({
      ok: true,
      returnJson: JSON.stringify(['undefined', null, [2, 4]]),
    });
    expect(await run(INSPECT, undefined)).toMatchObject({ ok: true });
    expect(await run(INSPECT, undefined)).toMatchObject({ ok: true });
    // client-a's isolate (kept for a-only), one for client-b, one for each run of no owner.
    expect(engine.isolatesCreated).toBe(4);
  });

  it('disposes the isolate of a run stopped by a limit', async () => {
    const engine = open();
    expect(await run('for (;;) {}', 'client-a', { cpuTimeMs: 50 })).toMatchObject({
      ok: false,
      fault: { code: 'CPU_TIMEOUT' },
    });
    expect(await run(INSPECT, 'client-a')).toMatchObject({ ok: true });
    // The stopped run's isolate, then the spare made once it was disposed (the next run's).
    expect(engine.isolatesCreated).toBe(2);
  });

  it('serves at most isolateRuns runs per isolate', async () => {
    const engine = open(2);
    for (let i = 0; i < 4; i++) expect(await run(INSPECT, 'client-a')).toMatchObject({ ok: true });
    // Runs 1-2 in the first isolate, 3-4 in the spare made after it, and a spare after that.
    expect(engine.isolatesCreated).toBe(3);
  });

  it('disposes an isolate whose run left a quarter of its heap limit in use', async () => {
    const engine = open();
    // 64 MB limit: 32 MB of doubles kept by a global when the run ends.
    const hog = 'globalThis.keep = new Array(4_000_000).fill(1.5); return keep.length;';
    expect(await run(hog, 'client-a')).toMatchObject({ ok: true, returnJson: '4000000' });
    expect(await run(INSPECT, 'client-a')).toMatchObject({ ok: true });
    // The hog's isolate, then the spare made once it was disposed (the next run's).
    expect(engine.isolatesCreated).toBe(2);
  });
});
