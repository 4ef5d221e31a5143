/**
 * @module
 * Measures how long the host's event loop was blocked while hostile input was processed, and
 * keeps work that blocks it for good from hanging the test.
 *
 * The measure is CPU time of the host's main thread between two turns of a 10 ms interval
 * timer: the work a turn of the loop did before the next timer could run. Unlike the wall time
 * between turns, it does not grow when other processes share the cores (a loaded CI machine),
 * while the stalls these tests guard against (a regex that backtracks, a schema expanded
 * exponentially) are seconds of CPU.
 *
 * A watchdog on another thread kills the test process when the loop has not turned for
 * {@link HUNG_LOOP_MS}: vitest's test timeout is a timer of the blocked thread and would never
 * fire, so without it a regression would hang the suite instead of failing it.
 */
import { Worker } from 'node:worker_threads';
import { threadCpuMs } from '../../fixtures/thread-cpu.js';

/**
 * Longest stall a test accepts while the host handles hostile input, in CPU ms of the host's
 * main thread (see the module comment); the stalls these tests guard against last many seconds.
 */
export const MAX_STALL_MS = 1_000;
/** Wall time the loop may go without a turn before the watchdog calls the work hung and kills the test process. */
export const HUNG_LOOP_MS = 20_000;
const TICK_MS = 10;

const WATCHDOG_SOURCE = `
const { workerData } = require('node:worker_threads');
const { writeSync } = require('node:fs');
const beats = new Int32Array(workerData.beats);
let seen = Atomics.load(beats, 0);
for (;;) {
  const woke = Atomics.wait(beats, 0, seen, workerData.hungMs);
  if (Atomics.load(beats, 1) === 1) break;
  if (woke === 'timed-out' && Atomics.load(beats, 0) === seen) {
    writeSync(2, '\\n' + workerData.message + '\\n');
    process.kill(process.pid, 'SIGKILL');
  }
  seen = Atomics.load(beats, 0);
}
`;

/**
 * Runs `work` under a watchdog thread that kills this process, saying why on stderr, when the
 * event loop goes {@link HUNG_LOOP_MS} without a turn; `onTick` runs on every turn (every
 * {@link TICK_MS}).
 */
export async function withLoopWatchdog<T>(work: () => Promise<T>, onTick: () => void = () => {}): Promise<T> {
  const beats = new Int32Array(new SharedArrayBuffer(8));
  const watchdog = new Worker(WATCHDOG_SOURCE, {
    eval: true,
    workerData: {
      beats: beats.buffer,
      hungMs: HUNG_LOOP_MS,
      message: `test/integration/host-stalls: the event loop has been blocked for ${HUNG_LOOP_MS / 1_000} s (a regex that backtracks? a schema expanded exponentially?); killing the test process so the run fails instead of hanging`,
    },
  });
  watchdog.unref();
  await new Promise((resolve) => watchdog.once('online', resolve));
  const beat = (): void => {
    Atomics.add(beats, 0, 1);
    Atomics.notify(beats, 0);
    onTick();
  };
  const timer = setInterval(beat, TICK_MS);
  try {
    return await work();
  } finally {
    clearInterval(timer);
    Atomics.store(beats, 1, 1);
    Atomics.notify(beats, 0);
    await watchdog.terminate();
  }
}

/**
 * Runs `work` under {@link withLoopWatchdog} and returns its value with the longest stall seen
 * meanwhile, in CPU ms of the main thread (see the module comment).
 */
export async function withLoopDelay<T>(work: () => Promise<T>): Promise<{ value: T; maxStallMs: number }> {
  let lastCpuMs = threadCpuMs();
  let maxStallMs = 0;
  const onTick = (): void => {
    const now = threadCpuMs();
    maxStallMs = Math.max(maxStallMs, now - lastCpuMs);
    lastCpuMs = now;
  };
  const value = await withLoopWatchdog(async () => {
    // A turn before the work starts, so the first stall is measured from a turn.
    await new Promise((resolve) => setTimeout(resolve, 2 * TICK_MS));
    const result = await work();
    // One more turn so a stall at the very end is measured.
    await new Promise((resolve) => setTimeout(resolve, 2 * TICK_MS));
    return result;
  }, onTick);
  return { value, maxStallMs };
}
