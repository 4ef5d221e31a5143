/**
 * @module
 * Bounds the `execute_code` runs of one `codecall serve` process: at most `maxConcurrent` run
 * at once, at most `maxQueued` wait for a slot (first come, first served), and the rest are
 * refused at once so a flood of requests cannot pile up work or memory. Shared by every client
 * session of the process.
 */
import { DEFAULT_SERVE_MAX_CONCURRENT_RUNS, DEFAULT_SERVE_MAX_QUEUED_RUNS } from '../config/defaults.js';
import { CodecallError } from '../errors.js';

/** Options of {@link RunLimiter}. */
export interface RunLimiterOptions {
  /** Runs in flight at once. @defaultValue {@link DEFAULT_SERVE_MAX_CONCURRENT_RUNS} */
  maxConcurrent?: number;
  /** Runs waiting for a slot; more are refused. @defaultValue {@link DEFAULT_SERVE_MAX_QUEUED_RUNS} */
  maxQueued?: number;
}

/** Why {@link RunLimiter.acquire} did not give a slot. */
export type RunRefusal = 'busy' | 'aborted';

interface Waiter {
  grant: (release: () => void) => void;
  refuse: (reason: RunRefusal) => void;
}

/**
 * A counting semaphore with a bounded queue.
 *
 * @example
 * ```ts
 * const limiter = new RunLimiter({ maxConcurrent: 2, maxQueued: 8 });
 * const slot = await limiter.acquire(signal);
 * if (slot === 'busy' || slot === 'aborted') return;
 * try { await work(); } finally { slot(); }
 * ```
 */
export class RunLimiter {
  readonly maxConcurrent: number;
  readonly maxQueued: number;
  #running = 0;
  readonly #queue: Waiter[] = [];

  constructor(options: RunLimiterOptions = {}) {
    this.maxConcurrent = options.maxConcurrent ?? DEFAULT_SERVE_MAX_CONCURRENT_RUNS;
    this.maxQueued = options.maxQueued ?? DEFAULT_SERVE_MAX_QUEUED_RUNS;
    if (!Number.isInteger(this.maxConcurrent) || this.maxConcurrent < 1)
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `maxConcurrent must be a positive integer; got ${this.maxConcurrent}.`,
      );
    if (!Number.isInteger(this.maxQueued) || this.maxQueued < 0)
      throw new CodecallError('INVALID_ARGUMENT', `maxQueued must be an integer ≥ 0; got ${this.maxQueued}.`);
  }

  /** Runs in flight. */
  get running(): number {
    return this.#running;
  }

  /** Runs waiting for a slot. */
  get queued(): number {
    return this.#queue.length;
  }

  /**
   * Resolves with a release function once a slot is free, `"busy"` at once when the queue is
   * full, or `"aborted"` when `signal` aborts while waiting. Call the release function exactly
   * once (extra calls are ignored).
   */
  acquire(signal?: AbortSignal): Promise<(() => void) | RunRefusal> {
    if (signal?.aborted) return Promise.resolve('aborted');
    if (this.#running < this.maxConcurrent) {
      this.#running++;
      return Promise.resolve(this.#releaser());
    }
    if (this.#queue.length >= this.maxQueued) return Promise.resolve('busy');
    return new Promise((resolve) => {
      const waiter: Waiter = {
        grant: (release) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
        refuse: (reason) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(reason);
        },
      };
      const onAbort = (): void => {
        const index = this.#queue.indexOf(waiter);
        if (index >= 0) this.#queue.splice(index, 1);
        waiter.refuse('aborted');
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(waiter);
    });
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#queue.shift();
      // Hand the slot straight to the next waiter; the running count stays the same.
      if (next) next.grant(this.#releaser());
      else this.#running--;
    };
  }
}
