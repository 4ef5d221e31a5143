/**
 * @module
 * A timeout for any delay. Node's `setTimeout` fires a delay above 2^31 - 1 ms (about 24.8 days)
 * after 1 ms, so a job deadline 30 days ahead or a `maxRunTimeMs` of 2^31 would end at once.
 * {@link setLongTimeout} chains timers of at most {@link MAX_TIMER_DELAY_MS} until the delay has
 * passed on the monotonic clock. Every timer whose delay comes from configuration, a job spec or
 * a caller goes through it.
 */

/**
 * Longest delay Node's `setTimeout` honours (2^31 - 1 ms, about 24.8 days): a longer one fires
 * after 1 ms. Node's, not a tunable (so not in `config/defaults.ts`): {@link setLongTimeout}
 * chains past it, and durations handed to timers codecall does not own (the MCP SDK's, provider
 * SDKs', isolated-vm's) are refused above it.
 */
export const MAX_TIMER_DELAY_MS = 2_147_483_647;

/** A pending {@link setLongTimeout}. */
export interface LongTimeout {
  /** Stops it; the callback will not run. Idempotent, and harmless after it fired. */
  cancel(): void;
}

/** Options of {@link setLongTimeout}. */
export interface LongTimeoutOptions {
  /**
   * Do not keep the process alive for it (each chained timer is `unref`'d).
   * @defaultValue false
   */
  unref?: boolean;
  /**
   * Longest single timer of the chain; tests set a small one to see chaining happen.
   * @defaultValue {@link MAX_TIMER_DELAY_MS}
   */
  maxStepMs?: number;
}

/**
 * Calls `callback` once `delayMs` have passed, for any delay: above Node's timer ceiling it
 * chains timers. It never fires early (each step re-reads the monotonic clock). A zero, negative
 * or NaN delay fires on the next turn of the timers (as `setTimeout(…, 0)`); an infinite one never.
 *
 * @example
 * ```ts
 * const deadline = setLongTimeout(() => controller.abort('deadline'), spec.deadline - Date.now(), { unref: true });
 * // …
 * deadline.cancel();
 * ```
 */
export function setLongTimeout(
  callback: () => void,
  delayMs: number,
  options: LongTimeoutOptions = {},
): LongTimeout {
  const maxStepMs = Math.min(Math.max(1, options.maxStepMs ?? MAX_TIMER_DELAY_MS), MAX_TIMER_DELAY_MS);
  const dueAt = performance.now() + (delayMs > 0 ? delayMs : 0);
  let timer: NodeJS.Timeout | undefined;
  let done = false;
  const step = (): void => {
    if (done) return;
    const leftMs = dueAt - performance.now();
    if (leftMs <= 0) {
      done = true;
      timer = undefined;
      callback();
      return;
    }
    // Node's timers may fire up to a loop turn before a delay measured from now: the next step
    // checks again, so the callback never runs early.
    timer = setTimeout(step, Math.min(Math.ceil(leftMs), maxStepMs));
    if (options.unref === true) timer.unref();
  };
  if (delayMs !== Number.POSITIVE_INFINITY) {
    timer = setTimeout(step, Math.min(delayMs > 0 ? Math.ceil(delayMs) : 0, maxStepMs));
    if (options.unref === true) timer.unref();
  }
  return {
    cancel: () => {
      done = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
