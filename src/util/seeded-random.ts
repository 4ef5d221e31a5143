/**
 * @module
 * A small seeded pseudo-random generator (mulberry32), for reproducible data sets, fold
 * assignment and benchmarks. Not for anything secret.
 */

/**
 * Returns a function yielding numbers in [0, 1), the same sequence for the same `seed`.
 *
 * @example
 * ```ts
 * const random = seededRandom(42);
 * const pick = Math.floor(random() * 10);
 * ```
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
