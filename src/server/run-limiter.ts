/**
 * @module
 * Bounds the `execute_code` runs of one `codecall serve` process: at most `maxConcurrent` run
 * at once, at most `maxQueued` wait for a slot (first come, first served), and the rest are
 * refused at once so a flood of requests cannot pile up work or memory. Shared by every client
 * session of the process.
 */
import { DEFAULT_SERVE_MAX_CONCURRENT_RUNS, DEFAULT_SERVE_MAX_QUEUED_RUNS } from '../config/defaults.js';
import PQueue from 'p-queue';
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

/**
 * A counting semaphore with a bounded queue, over `p-queue` (the one limiter of the host's
 * coarse work: runs, jobs, the agent's parallel tool calls). Only the per-call limit of an MCP
 * server stays hand-written (see `ServerConnection`), for its synchronous fast path.
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
  readonly #queue: PQueue;
  /** Slots granted and not yet released (p-queue counts a slot free a few microtasks later). */
  #running = 0;

  constructor(options: RunLimiterOptions = {}) {
    this.maxConcurrent = options.maxConcurrent ?? DEFAULT_SERVE_MAX_CONCURRENT_RUNS;
    this.maxQueued = options.maxQueued ?? DEFAULT_SERVE_MAX_QUEUED_RUNS;
    if (!Number.isInteger(this.maxConcurrent) || this.maxConcurrent < 1)
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `maxConcurrent must be a positive integer; got ${this.maxConcurrent}.`,
        { details: { field: 'maxConcurrent', value: this.maxConcurrent } },
      );
    if (!Number.isInteger(this.maxQueued) || this.maxQueued < 0)
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `maxQueued must be an integer ≥ 0; got ${this.maxQueued}.`,
        {
          details: { field: 'maxQueued', value: this.maxQueued },
        },
      );
    this.#queue = new PQueue({ concurrency: this.maxConcurrent });
  }

  /** Runs in flight. */
  get running(): number {
    return this.#running;
  }

  /** Runs waiting for a slot. */
  get queued(): number {
    return this.#queue.size;
  }

  /**
   * Resolves with a release function once a slot is free, `"busy"` at once when the queue is
   * full, or `"aborted"` when `signal` aborts while waiting. Call the release function exactly
   * once (extra calls are ignored).
   */
  acquire(signal?: AbortSignal): Promise<(() => void) | RunRefusal> {
    if (signal?.aborted) return Promise.resolve('aborted');
    if (this.#running >= this.maxConcurrent && this.#queue.size >= this.maxQueued)
      return Promise.resolve('busy');
    // Only the wait is cancellable: once granted, the slot is held until released, whatever
    // the signal does (p-queue would free the slot of a running task whose signal aborts).
    const waiting = new AbortController();
    const onAbort = (): void => waiting.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    return new Promise((resolve) => {
      this.#queue
        .add(
          () =>
            new Promise<void>((release) => {
              signal?.removeEventListener('abort', onAbort);
              this.#running++;
              let released = false;
              resolve(() => {
                if (released) return;
                released = true;
                this.#running--;
                release();
              });
            }),
          { signal: waiting.signal },
        )
        .catch(() => {
          signal?.removeEventListener('abort', onAbort);
          resolve('aborted');
        });
    });
  }
}
