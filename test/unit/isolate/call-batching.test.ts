/**
 * @module
 * Answers of tool calls that end in the same turn of the host's loop are settled in one entry
 * into the isolate (and, in process mode, sent to the worker in one message). These tests hold
 * the mechanism to what matters: every call is settled exactly once with its own answer, a batch
 * really is one entry, and the CPU budget still stops a script after a batch.
 */
import { SandboxToolCatalog } from '../../../src/isolate/tool-catalog.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { compileScript } from '../../../src/compile/index.js';
import { loadPreludeSource } from '../../../src/isolate/assets.js';
import { IsolateEngine, type EngineRun } from '../../../src/isolate/engine.js';
import { resolveSandboxLimits, SandboxPool, type SandboxMode } from '../../../src/isolate/index.js';
import { runScript } from './sandbox-helpers.js';

/** Under the default `maxConcurrentToolCalls`, so all of them are in flight at once. */
const PARALLEL = 200;

/** Holds every call until `count` have arrived, then answers them all in one turn, last first. */
function heldTogether(count: number): (args: Record<string, unknown>) => Promise<unknown> {
  const waiting: Array<() => void> = [];
  return (args) =>
    new Promise((resolve, reject) => {
      waiting.push(() => {
        const i = args.i as number;
        if (i % 7 === 3) reject(new Error(`failed ${i}`));
        else resolve({ i, square: i * i });
      });
      if (waiting.length === count) for (const answer of waiting.reverse()) answer();
    });
}

describe.each<SandboxMode>(['in-process', 'process'])('calls answered together (%s)', (mode) => {
  let pool: SandboxPool;
  beforeAll(async () => {
    // A long grace: the heartbeat counts wall time (the CPU budget plus the grace), which a busy
    // machine stretches; a worker it kills shows below as a run with no CPU figure.
    pool = await SandboxPool.open({ mode, workers: 1, killGraceMs: 20_000 });
  });
  afterAll(async () => {
    await pool.close();
  });

  it('settles every call exactly once, each with its own answer or error', async () => {
    const result = await runScript(
      pool,
      `let settledTimes = 0;
       const calls = Array.from({ length: ${PARALLEL} }, (_, i) =>
         tools.t.held({ i }).then(
           (value) => { settledTimes++; return value.i === i && value.square === i * i ? 'ok' : 'wrong ' + i; },
           (error) => { settledTimes++; return error.message === 'failed ' + i ? 'failed' : 'wrong error ' + i; },
         ));
       const outcomes = await Promise.all(calls);
       return { settledTimes, ok: outcomes.filter((o) => o === 'ok').length,
                failed: outcomes.filter((o) => o === 'failed').length,
                wrong: outcomes.filter((o) => o.startsWith('wrong')) };`,
      // A call never settled would end the run at the wall time.
      { limits: { wallTimeMs: 10_000 }, tools: { 't.held': heldTogether(PARALLEL) } },
    );
    expect(result.error).toBeUndefined();
    const failed = Array.from({ length: PARALLEL }, (_, i) => i).filter((i) => i % 7 === 3).length;
    expect(result.returnValue).toEqual({
      settledTimes: PARALLEL,
      ok: PARALLEL - failed,
      failed,
      wrong: [],
    });
    expect(result.toolCalls).toHaveLength(PARALLEL);
  });

  it('answers calls that stay in flight while hundreds of later calls come and go, each with its own answer', async () => {
    // The sandbox files a call in flight under `id & mask` in a table that starts small: later
    // calls land on the slots of the two held calls again and again, and must neither replace
    // them nor take their answers.
    const held: Array<() => void> = [];
    const result = await runScript(
      pool,
      `const first = tools.t.held({ n: 1 });
       let second;
       const wrong = [];
       for (let i = 0; i < 300; i++) {
         const value = await tools.t.echo({ i });
         if (value.i !== i) wrong.push(i);
         if (i === 40) second = tools.t.held({ n: 2 });
       }
       await tools.t.release({});
       const [a, b] = await Promise.all([first, second]);
       return { wrong, a: a.n, b: b.n };`,
      {
        limits: { wallTimeMs: 10_000 },
        tools: {
          't.held': (args) => new Promise((resolve) => held.push(() => resolve({ n: args.n }))),
          't.echo': (args) => args,
          't.release': () => {
            for (const answer of held) answer();
            return held.length;
          },
        },
      },
    );
    expect(result.error).toBeUndefined();
    expect(result.returnValue).toEqual({ wrong: [], a: 1, b: 2 });
    expect(result.toolCalls).toHaveLength(303);
  });

  it('still stops a loop after the second await at the CPU time when its answers came in a batch', async () => {
    const cpuTimeMs = 200;
    const result = await runScript(
      pool,
      `await Promise.all([tools.t.held({ i: 0 }), tools.t.held({ i: 1 })]);
       await Promise.all([tools.t.held2({ i: 0 }), tools.t.held2({ i: 1 })]);
       console.log('after the second await');
       while (true) {}`,
      { limits: { cpuTimeMs }, tools: { 't.held': heldTogether(2), 't.held2': heldTogether(2) } },
    );
    expect(result.error?.code).toBe('CPU_TIMEOUT');
    expect(result.stdout).toBe('after the second await\n');
    // Stopped by the entry's own timeout (the budget left), which reports the CPU used: not, in
    // process mode, by the heartbeat killing the worker (after the CPU time plus the grace, with
    // no CPU figure).
    expect(result.stats.cpuMs).toBeGreaterThan(0);
  });
});

describe('engine: answers that arrive in one turn', () => {
  let engine: IsolateEngine;
  beforeAll(() => {
    engine = new IsolateEngine({ prelude: loadPreludeSource(), spareMemoryMb: 64 });
  });
  afterAll(() => engine.close());

  /** Starts `source` and returns the run and the ids of calls it made, as they arrive. */
  function start(source: string): { run: EngineRun; ids: number[] } {
    const compiled = compileScript(source);
    if (!compiled.ok) throw new Error(compiled.error.message);
    const ids: number[] = [];
    const run = engine.start(
      {
        code: compiled.code,
        tools: SandboxToolCatalog.of([{ name: 't.echo', namespace: 't', member: 'echo' }]).engine,
        limits: resolveSandboxLimits({}),
        wallTimeLeftMs: 10_000,
      },
      { output: () => {}, call: (id) => ids.push(id) },
    );
    return { run, ids };
  }

  it('enters the isolate once for all of them', async () => {
    const { run, ids } = start(
      `const all = await Promise.all(Array.from({ length: 100 }, (_, i) => tools.t.echo({ i })));
       return all.reduce((sum, value) => sum + value, 0);`,
    );
    expect(ids).toHaveLength(100);
    expect(run.entries).toBe(1);
    // All answered in this turn: the last one (no call left in flight) enters with all of them.
    for (const id of ids) run.settle(id, true, String(id));
    const outcome = await run.outcome;
    expect(outcome.ok).toBe(true);
    expect(outcome.returnJson).toBe(String(ids.reduce((sum, id) => sum + id, 0)));
    expect(run.entries).toBe(2);
  });

  it('waits for the end of the turn while other calls are in flight, and ignores repeated answers', async () => {
    const { run, ids } = start(
      `const first = Promise.all([tools.t.echo({}), tools.t.echo({})]);
       const last = tools.t.echo({});
       const [a, b] = await first;
       return [a, b, await last];`,
    );
    expect(ids).toHaveLength(3);
    run.settle(ids[0]!, true, '"a"');
    run.settle(ids[1]!, true, '"b"');
    run.settle(ids[1]!, true, '"again"');
    expect(run.entries).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(run.entries).toBe(2);
    run.settleMany([ids[2]!, true, '"c"', undefined, ids[2]!, true, '"twice"', undefined]);
    const outcome = await run.outcome;
    expect(outcome.returnJson).toBe('["a","b","c"]');
    expect(run.entries).toBe(3);
  });
});
