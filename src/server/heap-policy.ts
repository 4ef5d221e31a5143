/**
 * @module
 * Memory habits of a long-running `codecall serve` process. Under a soak of thousands of mixed
 * runs the host retains nothing (live heap after a full collection stays at 23–25 MB), yet its
 * resident memory swung between 200 and 285 MB, for two reasons this module addresses:
 *
 * - V8 doubles the young generation whenever many objects survive a scavenge, up to 128 MB on
 *   64-bit Node 24, and keeps it. {@link capYoungGeneration} holds it at a ceiling. V8 takes the
 *   ceiling from `--max-semi-space-size` at start-up only, so growth is switched off
 *   (`--semi-space-growth-factor=1`, read by V8 at each growth) once the next doubling would pass
 *   it, and back on if V8 shrinks the space below it.
 * - Dead large strings (tool results, arguments, messages over 128 KB) that survived a scavenge
 *   stay in memory until V8's next full collection, which an idle server never reaches: V8
 *   collects on allocation. {@link collectWhenIdle} runs one full collection once the event
 *   loop has been idle for a while after activity.
 */
import { performance, PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { DEFAULT_SERVE_IDLE_COLLECT_MS, DEFAULT_SERVE_YOUNG_GENERATION_MAX_MB } from '../config/defaults.js';

/** V8's own growth factor of the young generation (`--semi-space-growth-factor`). */
const V8_SEMI_SPACE_GROWTH_FACTOR = 2;
/** How often {@link collectWhenIdle} looks at the event loop. */
const IDLE_CHECK_INTERVAL_MS = 1_000;
/** Event-loop utilization under which an interval counts as idle (housekeeping timers stay under it). */
const IDLE_UTILIZATION = 0.05;

/** A running policy; `close()` stops it. */
export interface HeapPolicyHandle {
  close(): void;
}

/** The young-generation cap, with its current size. */
export interface YoungGenerationCap extends HeapPolicyHandle {
  /** Size of the young generation now (both semi-spaces), in MB. */
  readonly sizeMb: number;
}

function newSpaceBytes(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
}

/**
 * Keeps this process's young generation (new space, both semi-spaces) within `maxMb` from now
 * on, checked after every garbage collection: it settles at half of `maxMb` (V8 grows it by
 * doubling) and reaches `maxMb` only when V8 grows it twice between two checks. `0` leaves V8's default. Changes a
 * process-wide V8 setting: for processes that are a codecall server and nothing else.
 *
 * @example
 * ```ts
 * const cap = capYoungGeneration(64);
 * // … serve …
 * cap.close();
 * ```
 */
export function capYoungGeneration(maxMb: number): YoungGenerationCap {
  const limitBytes = maxMb * 1_048_576;
  let factor = V8_SEMI_SPACE_GROWTH_FACTOR;
  const setFactor = (next: number): void => {
    if (next === factor) return;
    setFlagsFromString(`--semi-space-growth-factor=${next}`);
    factor = next;
  };
  // GC entries reach observers after the fact, and V8 may double the space again before: stop
  // growth once the next doubling would reach the cap, so that one more stays within it.
  const check = (): void =>
    setFactor(newSpaceBytes() * V8_SEMI_SPACE_GROWTH_FACTOR >= limitBytes ? 1 : V8_SEMI_SPACE_GROWTH_FACTOR);
  const observer = maxMb > 0 ? new PerformanceObserver(check) : undefined;
  if (observer) {
    observer.observe({ entryTypes: ['gc'] });
    check();
  }
  return {
    get sizeMb() {
      return newSpaceBytes() / 1_048_576;
    },
    close() {
      observer?.disconnect();
      setFactor(V8_SEMI_SPACE_GROWTH_FACTOR);
    },
  };
}

/** Options of V8's `gc()` extension (V8 ≥ 12: Node 22 and later). */
interface GcOptions {
  type: 'major';
  execution: 'sync';
  /** `last-resort`: collect everything collectable, shrink the young generation, release pooled pages. */
  flavor: 'last-resort';
}

/** The full collection of V8 (`global.gc`), reached without starting Node with `--expose-gc`. */
function fullCollection(): (options: GcOptions) => void {
  const exposed = (globalThis as { gc?: (options: GcOptions) => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as (options: GcOptions) => void;
}

/**
 * Runs one full, memory-reducing garbage collection each time the event loop has been idle for
 * `idleMs` after being busy, so that a quiet server gives back what its last runs left for the
 * collector, and the young generation they grew.
 * `0` disables it. The timer does not keep the process alive.
 *
 * @example
 * ```ts
 * const idle = collectWhenIdle(5_000, () => collections++);
 * ```
 */
export function collectWhenIdle(idleMs: number, onCollect?: () => void): HeapPolicyHandle {
  if (idleMs <= 0) return { close() {} };
  const collect = fullCollection();
  let last = performance.eventLoopUtilization();
  let idleFor = 0;
  let busySinceCollect = false;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const utilization = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    if (utilization >= IDLE_UTILIZATION) {
      busySinceCollect = true;
      idleFor = 0;
      return;
    }
    idleFor += IDLE_CHECK_INTERVAL_MS;
    if (busySinceCollect && idleFor >= idleMs) {
      busySinceCollect = false;
      // The memory-reducing collection: an idle server also gives back the young generation it
      // grew while busy and V8's pooled pages (a plain full collection keeps both: a process
      // whose new space had grown to 64 MB kept 117 of its 121 MB resident, this one 57).
      collect({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      // The collection's own time is not activity.
      last = performance.eventLoopUtilization();
      onCollect?.();
    }
  }, IDLE_CHECK_INTERVAL_MS);
  timer.unref();
  return { close: () => clearInterval(timer) };
}

/** Options of {@link startHeapPolicy} (`serve.youngGenerationMaxMb`, `serve.idleCollectMs`). */
export interface HeapPolicyOptions {
  /** Largest young generation in MB; 0: V8's default. @defaultValue {@link DEFAULT_SERVE_YOUNG_GENERATION_MAX_MB} */
  youngGenerationMaxMb?: number;
  /** Idle milliseconds before a full collection; 0: never. @defaultValue {@link DEFAULT_SERVE_IDLE_COLLECT_MS} */
  idleCollectMs?: number;
}

/**
 * Both policies, as `codecall serve` runs them.
 *
 * @example
 * ```ts
 * const heap = startHeapPolicy({ youngGenerationMaxMb: config.serve.youngGenerationMaxMb });
 * // … serve …
 * heap.close();
 * ```
 */
export function startHeapPolicy(options: HeapPolicyOptions = {}): HeapPolicyHandle {
  const cap = capYoungGeneration(options.youngGenerationMaxMb ?? DEFAULT_SERVE_YOUNG_GENERATION_MAX_MB);
  const idle = collectWhenIdle(options.idleCollectMs ?? DEFAULT_SERVE_IDLE_COLLECT_MS);
  return {
    close() {
      idle.close();
      cap.close();
    },
  };
}
