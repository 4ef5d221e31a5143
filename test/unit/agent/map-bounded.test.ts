import { describe, expect, it } from 'vitest';
import { mapBounded } from '../../../src/agent/runner/map-bounded.js';

describe('mapBounded', () => {
  it('keeps at most `limit` in flight and returns results in input order', async () => {
    let inFlight = 0;
    let most = 0;
    const started: number[] = [];
    const finish = new Map<number, () => void>();
    const mapped = mapBounded([0, 1, 2, 3, 4], 2, async (item) => {
      inFlight++;
      most = Math.max(most, inFlight);
      started.push(item);
      await new Promise<void>((resolve) => finish.set(item, resolve));
      inFlight--;
      return item * 10;
    });
    // Finish in reverse order of start, each once it started: results still follow the input.
    for (const item of [1, 0, 3, 2, 4]) {
      await expect.poll(() => finish.has(item)).toBe(true);
      finish.get(item)!();
    }
    expect(await mapped).toEqual([0, 10, 20, 30, 40]);
    expect(most).toBe(2);
    expect(started.slice(0, 2)).toEqual([0, 1]);
  });

  it('maps an empty list to an empty list', async () => {
    expect(await mapBounded([], 4, () => Promise.resolve(1))).toEqual([]);
  });
});
