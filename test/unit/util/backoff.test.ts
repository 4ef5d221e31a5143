import { describe, expect, it } from 'vitest';
import { backoffDelayMs } from '../../../src/util/backoff.js';

describe('backoffDelayMs', () => {
  const options = { initialDelayMs: 100, maxDelayMs: 1_000 };

  it('doubles from the first delay and stops at the cap', () => {
    expect([1, 2, 3, 4, 5, 6].map((attempt) => backoffDelayMs(attempt, options))).toEqual([
      100, 200, 400, 800, 1_000, 1_000,
    ]);
    // An attempt count large enough to overflow 2^n is still capped.
    expect(backoffDelayMs(5_000, options)).toBe(1_000);
  });

  it('takes at most the jitter share off, never adds to the capped delay', () => {
    const jittered = { ...options, jitter: 0.25 };
    expect(backoffDelayMs(3, { ...jittered, random: () => 0 })).toBe(400);
    expect(backoffDelayMs(3, { ...jittered, random: () => 0.5 })).toBe(350);
    // random() < 1: strictly above the floor of 300.
    expect(backoffDelayMs(3, { ...jittered, random: () => 0.999_999 })).toBeGreaterThan(300);
    expect(backoffDelayMs(20, { ...jittered, random: () => 0.999_999 })).toBeGreaterThan(750);
    expect(backoffDelayMs(20, { ...jittered, random: () => 0 })).toBe(1_000);
  });

  it('keeps every draw of the default random source inside [capped · (1 − jitter), capped]', () => {
    const draws = Array.from({ length: 200 }, () => backoffDelayMs(4, { ...options, jitter: 0.5 }));
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(400);
    expect(Math.max(...draws)).toBeLessThanOrEqual(800);
    expect(new Set(draws).size).toBeGreaterThan(1);
  });

  it('clamps a jitter outside [0, 1]', () => {
    expect(backoffDelayMs(2, { ...options, jitter: 5, random: () => 0.5 })).toBe(100);
    expect(backoffDelayMs(2, { ...options, jitter: -1, random: () => 0.5 })).toBe(200);
  });
});
