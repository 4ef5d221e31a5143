/**
 * @module
 * A flood of unknown tool names is answered in slices of the host's loop: the answers
 * themselves (in process mode each is an IPC write, the host's largest cost in such a flood)
 * go out within the slices, never all in one stretch after the first. The controller is driven
 * directly, as an engine would drive it, with a backend whose every answer takes 0.1 ms.
 */
import { describe, expect, it } from 'vitest';

import type { EngineOutcome } from '../../../src/isolate/engine.js';
import { resolveSandboxLimits } from '../../../src/isolate/limits.js';
import { RunController, type RunBackend } from '../../../src/isolate/run-controller.js';

const ANSWER_COST_MS = 0.1;

/** Records, for each answer, the turn of the event loop it was sent in. */
class SlowBackend implements RunBackend {
  readonly turns: number[] = [];
  readonly outcome: Promise<EngineOutcome>;
  end!: () => void;
  turn = 0;
  #onAnswer: (() => void) | undefined;

  constructor(readonly answerCostMs = ANSWER_COST_MS) {
    this.outcome = new Promise((resolve) => (this.end = () => resolve({ ok: true, cpuMs: 0 })));
  }

  settle(): void {
    const until = performance.now() + this.answerCostMs;
    while (performance.now() < until) {
      // The cost of one answer (an IPC write).
    }
    this.turns.push(this.turn);
    this.#onAnswer?.();
  }

  cancel(): void {
    this.end();
  }

  answered(count: number): Promise<void> {
    return new Promise((resolve) => {
      const check = (): void => {
        if (this.turns.length >= count) resolve();
      };
      this.#onAnswer = check;
      check();
    });
  }
}

describe('RunController: unknown tool names', () => {
  it('sends the answers to a flood of 300 unknown names within slices of the loop', async () => {
    const tools = Array.from({ length: 50 }, (_, i) => ({
      name: `files.read_${i}`,
      namespace: 'files',
      member: `read_${i}`,
    }));
    const controller = new RunController({
      code: '',
      tools,
      invoke: async () => 'ok',
      limits: resolveSandboxLimits({ maxToolCalls: 1_000 }),
    });
    const backend = new SlowBackend();
    const done = controller.run(() => backend);
    // Count turns of the loop while the answers go out.
    let ticking = true;
    const tick = (): void => {
      backend.turn++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    // As a worker's message batch delivers them: all in one go.
    for (let id = 1; id <= 300; id++) controller.call(id, `files.missing_${id}`, '{}');
    await backend.answered(300);
    ticking = false;
    backend.end();
    await done;
    const perTurn = new Map<number, number>();
    for (const turn of backend.turns) perTurn.set(turn, (perTurn.get(turn) ?? 0) + 1);
    // A slice is 0.25 ms: a few answers of ~0.1 ms each, never the whole flood at once.
    expect(backend.turns).toHaveLength(300);
    expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(20);
    expect(perTurn.size).toBeGreaterThanOrEqual(15);
  });

  it('gives each did-you-mean lookup a slice of its own', async () => {
    // Answers cost nothing here, and a lookup over 500 names takes microseconds: without the
    // rule, the lookups would share one 0.25 ms slice with the cheap answers that follow them.
    const tools = Array.from({ length: 500 }, (_, i) => ({
      name: `files.read_${i}_record`,
      namespace: 'files',
      member: `read_${i}_record`,
    }));
    const controller = new RunController({
      code: '',
      tools,
      invoke: async () => 'ok',
      limits: resolveSandboxLimits({ maxToolCalls: 1_000 }),
    });
    const backend = new SlowBackend(0);
    const done = controller.run(() => backend);
    let ticking = true;
    const tick = (): void => {
      backend.turn++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    for (let id = 1; id <= 300; id++) controller.call(id, `files.reed_${id}_record`, '{}');
    await backend.answered(300);
    ticking = false;
    backend.end();
    await done;
    const perTurn = new Map<number, number>();
    for (const turn of backend.turns) perTurn.set(turn, (perTurn.get(turn) ?? 0) + 1);
    // The first answers of the run take lookups (a few per run): one answer per turn.
    const lookupTurns = backend.turns.slice(0, 5);
    expect(new Set(lookupTurns).size).toBe(5);
    expect(lookupTurns.map((turn) => perTurn.get(turn))).toEqual([1, 1, 1, 1, 1]);
    // The rest need no lookup and share slices.
    expect(perTurn.size).toBeLessThan(100);
  });
});
