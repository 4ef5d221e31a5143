/**
 * `sampleInterleaved` (bench/harness.ts): the functions compared by a bench ratio are timed on the
 * same input in turn, the first of them rotating, so a change of machine load hits them alike.
 */
import { describe, expect, it } from 'vitest';
import { sampleInterleaved } from '../../../bench/harness.js';

/** Waits `ms` milliseconds without yielding (a cost the timer must attribute to the caller). */
function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

describe('sampleInterleaved', () => {
  it('runs every function once per round on that round’s input, the first rotating, warm-up rounds untimed', async () => {
    const calls: string[] = [];
    const times = await sampleInterleaved(
      ['a', 'b', 'c'].map((name) => (round: number) => calls.push(`${name}${round}`)),
      3,
      2,
    );
    expect(calls).toEqual([
      ...['a0', 'b0', 'c0'],
      ...['b1', 'c1', 'a1'],
      ...['c2', 'a2', 'b2'],
      ...['a3', 'b3', 'c3'],
      ...['b4', 'c4', 'a4'],
    ]);
    expect(times.map((series) => series.length)).toEqual([3, 3, 3]);
  });

  it('gives each function its own durations, in the order of the functions', async () => {
    const [slow, fast] = await sampleInterleaved([() => spin(5), () => undefined], 9, 1);
    expect(slow).toHaveLength(9);
    expect(fast).toHaveLength(9);
    expect(Math.min(...slow!)).toBeGreaterThanOrEqual(5_000);
    // The median: one scheduler stall on a busy machine must not decide it.
    expect([...fast!].sort((x, y) => x - y)[4]).toBeLessThan(5_000);
  });

  it('in blocks: each function runs a whole block of inputs in turn, the first rotating per block', async () => {
    const calls: string[] = [];
    const times = await sampleInterleaved(
      ['a', 'b'].map((name) => (round: number) => calls.push(`${name}${round}`)),
      5,
      1,
      2,
    );
    expect(calls).toEqual([
      ...['a0', 'a1', 'b0', 'b1'],
      ...['b2', 'b3', 'a2', 'a3'],
      ...['a4', 'a5', 'b4', 'b5'],
    ]);
    expect(times.map((series) => series.length)).toEqual([5, 5]);
  });

  it('refuses a block that is not a whole number of rounds', async () => {
    await expect(sampleInterleaved([() => undefined], 1, 0, 0)).rejects.toThrow(
      /block must be an integer ≥ 1/,
    );
  });
});
