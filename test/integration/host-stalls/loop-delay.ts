/**
 * @module
 * Measures how long the host's event loop was blocked while hostile input was processed: a
 * `monitorEventLoopDelay` histogram around the work, reporting the longest delay in ms.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Longest event-loop stall a test accepts while the host handles hostile input. Generous, as
 * test machines are shared and loaded; the stalls these tests guard against last many seconds.
 */
export const MAX_LOOP_DELAY_MS = 1_000;

/** Runs `work` and returns its value with the longest event-loop delay seen meanwhile. */
export async function withLoopDelay<T>(work: () => Promise<T>): Promise<{ value: T; maxDelayMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  try {
    // Let the monitor take its first sample before the work starts.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const value = await work();
    // One more turn so a stall at the very end is sampled.
    await new Promise((resolve) => setTimeout(resolve, 20));
    return { value, maxDelayMs: histogram.max / 1e6 };
  } finally {
    histogram.disable();
  }
}
