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
    const [slow, fast] = await sampleInterleaved([() => spin(5), () => undefined], 4, 1);
    expect(slow).toHaveLength(4);
    expect(fast).toHaveLength(4);
    expect(Math.min(...slow!)).toBeGreaterThanOrEqual(5_000);
    expect(Math.max(...fast!)).toBeLessThan(5_000);
  });
});
