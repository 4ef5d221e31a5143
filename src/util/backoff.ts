/**
 * @module
 * The one backoff of codecall: exponential growth from a first delay, capped, less a random
 * share (jitter) so that many clients retrying the same failure do not retry in step. Used by
 * provider retries, MCP server reconnection and the local job backend's retries.
 */

/** Options of {@link backoffDelayMs}. */
export interface BackoffOptions {
  /** Delay before the first retry. */
  initialDelayMs: number;
  /** Cap of any one delay (before jitter). */
  maxDelayMs: number;
  /**
   * Share of the delay jitter may take off, in [0, 1]: the delay is drawn from
   * `[capped · (1 − jitter), capped]`.
   * @defaultValue 0 (no jitter)
   */
  jitter?: number;
  /** Random source in [0, 1), for jitter. @defaultValue `Math.random` */
  random?: () => number;
}

/**
 * The delay before retry number `attempt` (1-based):
 * `min(maxDelayMs, initialDelayMs · 2^(attempt − 1)) · (1 − jitter · random())`.
 *
 * @example
 * ```ts
 * backoffDelayMs(3, { initialDelayMs: 100, maxDelayMs: 1_000 }); // 400
 * backoffDelayMs(9, { initialDelayMs: 100, maxDelayMs: 1_000, jitter: 0.25 }); // in [750, 1000]
 * ```
 */
export function backoffDelayMs(attempt: number, options: BackoffOptions): number {
  const { initialDelayMs, maxDelayMs } = options;
  const jitter = Math.min(1, Math.max(0, options.jitter ?? 0));
  // 2^(attempt − 1) overflows to Infinity for huge attempts; the cap still applies.
  const capped = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.max(0, attempt - 1));
  if (jitter === 0) return capped;
  return capped * (1 - jitter * (options.random ?? Math.random)());
}
