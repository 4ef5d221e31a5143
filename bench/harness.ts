/**
 * @module
 * Small helpers for benches: timing, percentiles, and a figure line with its target.
 * A bench exits non-zero when a figure misses its target (`finish()`), and with
 * {@link BENCH_SKIP_EXIT_CODE} when part of it could not run (`skip()`): bench/run.mjs reports
 * that as SKIP, never as met.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** Nanosecond-resolution timestamp in microseconds. */
export function nowUs(): number {
  return Number(process.hrtime.bigint()) / 1_000;
}

/** The p-th percentile (0–100) of `values`. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

/** Runs `fn` `iterations` times (after `warmup` runs) and returns each duration in µs. */
export async function sample(
  fn: () => unknown,
  iterations: number,
  warmup = Math.min(50, iterations),
): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = nowUs();
    await fn();
    out.push(nowUs() - start);
  }
  return out;
}

/**
 * Times several functions on the same inputs, interleaved, so a change of machine load hits all of
 * them alike (a ratio of two figures sampled one after the other moves with the load between
 * them). The inputs go in blocks of `block` consecutive rounds: each function runs the whole block
 * in turn, starting from function `b mod n` for block `b` and going round, so each comes first
 * equally often. With `block` 1, round `r` runs every function once on input `r`; a larger block
 * lets each function run on caches warmed by its own work (as a process serving one of them would)
 * instead of the others', while the blocks stay short enough that the load still hits all alike.
 * The first `warmup` rounds are run and not timed, as in {@link sample}; the timed rounds are the
 * next `iterations`. Returns each function's durations in µs, in the order of `fns`.
 */
export async function sampleInterleaved(
  fns: ReadonlyArray<(input: number) => unknown>,
  iterations: number,
  warmup = Math.min(50, iterations),
  block = 1,
): Promise<number[][]> {
  if (!Number.isInteger(block) || block < 1)
    throw new RangeError(`block must be an integer ≥ 1; got ${block}`);
  const out = fns.map((): number[] => []);
  const n = fns.length;
  const rounds = warmup + iterations;
  for (let first = 0, turn = 0; first < rounds; first += block, turn++) {
    const last = Math.min(first + block, rounds);
    for (let k = 0; k < n; k++) {
      const which = (turn + k) % n;
      for (let round = first; round < last; round++) {
        const start = nowUs();
        await fns[which]!(round);
        if (round >= warmup) out[which]!.push(nowUs() - start);
      }
    }
  }
  return out;
}

let misses = 0;

/**
 * Prints one figure: `label  value unit  [target]  PASS|FAIL`. `target` is checked as
 * `value <= max` (or `>= min`) when given; informational otherwise.
 */
export function figure(
  label: string,
  value: number,
  unit: string,
  target?: { max?: number; min?: number; note?: string },
): void {
  let verdict = '';
  if (target) {
    const ok =
      (target.max === undefined || value <= target.max) && (target.min === undefined || value >= target.min);
    if (!ok) misses++;
    const bound = target.max !== undefined ? `≤ ${target.max}` : `≥ ${target.min}`;
    verdict = `  target ${bound}${target.note ? ` ${target.note}` : ''}  ${ok ? 'PASS' : 'FAIL'}`;
  }
  const shown = Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(value >= 10 ? 1 : 3);
  console.log(`  ${label.padEnd(58)} ${shown.padStart(10)} ${unit}${verdict}`);
}

/**
 * Exit code of a bench that could not measure every figure (missing data, missing build) and
 * missed none of those it measured. bench/run.mjs (`BENCH_SKIP_EXIT_CODE` there) counts it as
 * skipped, never as met.
 */
export const BENCH_SKIP_EXIT_CODE = 3;

let skips = 0;

/** Says that part of the bench cannot run, and why: prints `SKIP: <reason>`; see {@link finish}. */
export function skip(reason: string): void {
  skips++;
  console.log(`  SKIP: ${reason}`);
}

/**
 * True when every `files` path (relative to `root`/dist) exists; otherwise calls {@link skip}
 * naming the missing build and returns false.
 */
export function hasBuild(root: string, files: readonly string[]): boolean {
  const missing = files.filter((file) => !existsSync(join(root, 'dist', file)));
  if (missing.length === 0) return true;
  skip(`dist/${missing[0]} is missing: run \`npm run build\` first`);
  return false;
}

/**
 * Ends the bench: exit code 1 when any figure missed its target, else
 * {@link BENCH_SKIP_EXIT_CODE} when any part was skipped, else 0.
 */
export function finish(): void {
  if (misses > 0) {
    console.log(`  ${misses} figure(s) missed their target`);
    process.exitCode = 1;
  } else if (skips > 0) {
    console.log(`  SKIP: ${skips} part(s) could not run; this bench does not count as met`);
    process.exitCode = BENCH_SKIP_EXIT_CODE;
  }
}
