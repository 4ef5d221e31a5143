/**
 * @module
 * The cancellation scope of one run: one signal that fires when the caller's signal fires, when
 * the orchestrator stops the run (closed, stream abandoned) or when `maxRunTimeMs` passes; the
 * stop error the run then throws (`RUN_TIMEOUT` or `ABORTED`, naming how far it got); and
 * {@link raceAbort}, which lets the loop leave work that ignores its signal.
 */
import { CodecallError } from '../../errors.js';
import { setLongTimeout, type LongTimeout } from '../../util/long-timeout.js';
import { raceAbort } from '../../util/race-abort.js';

/** Options of {@link RunScope}. */
export interface RunScopeOptions {
  /** The caller's signal (`RunOptions.signal`). */
  callerSignal: AbortSignal | undefined;
  /** The orchestrator's own stop (close, abandoned stream). */
  stopSignal: AbortSignal;
  maxRunTimeMs: number;
  /** Steps made so far, named in the stop error. */
  steps: () => number;
}

/** One run's cancellation: see the module comment. Dispose it when the run ends. */
export class RunScope {
  readonly signal: AbortSignal;
  readonly #controller = new AbortController();
  readonly #options: RunScopeOptions;
  readonly #timer: LongTimeout;
  readonly #onCallerAbort: () => void;
  readonly #onStop: () => void;
  #timedOut = false;

  constructor(options: RunScopeOptions) {
    this.#options = options;
    this.signal = this.#controller.signal;
    const { callerSignal, stopSignal } = options;
    this.#onCallerAbort = () => this.#controller.abort(callerSignal?.reason);
    this.#onStop = () => this.#controller.abort(stopSignal.reason);
    callerSignal?.addEventListener('abort', this.#onCallerAbort, { once: true });
    stopSignal.addEventListener('abort', this.#onStop, { once: true });
    if (callerSignal?.aborted) this.#onCallerAbort();
    if (stopSignal.aborted) this.#onStop();
    this.#timer = setLongTimeout(
      () => {
        this.#timedOut = true;
        this.#controller.abort(
          new CodecallError('RUN_TIMEOUT', 'The run took too long.', {
            details: { maxRunTimeMs: options.maxRunTimeMs },
          }),
        );
      },
      options.maxRunTimeMs,
      { unref: true },
    );
  }

  /** The error a stopped run throws: `RUN_TIMEOUT` after `maxRunTimeMs`, else `ABORTED`. */
  stopError(): CodecallError<'RUN_TIMEOUT' | 'ABORTED'> {
    const step = this.#options.steps();
    const steps = `${step} step${step === 1 ? '' : 's'}`;
    if (this.#timedOut) {
      const maxRunTimeMs = this.#options.maxRunTimeMs;
      return new CodecallError(
        'RUN_TIMEOUT',
        `The run took longer than ${maxRunTimeMs} ms (maxRunTimeMs) and was stopped after ${steps}. ` +
          'Raise maxRunTimeMs or make the task narrower.',
        { details: { maxRunTimeMs, steps: step } },
      );
    }
    return new CodecallError('ABORTED', `The run was cancelled after ${steps}.`, {
      cause: this.signal.reason,
      details: { steps: step },
    });
  }

  /** Throws the stop error when the run was stopped. */
  check(): void {
    if (this.signal.aborted) throw this.stopError();
  }

  /** `promise`, left as soon as the run stops (rejecting with the stop error then). */
  race<T>(promise: Promise<T>): Promise<T> {
    return raceAbort(promise, this.signal).catch((error: unknown) => {
      if (this.signal.aborted) throw this.stopError();
      throw error;
    });
  }

  dispose(): void {
    this.#timer.cancel();
    this.#options.callerSignal?.removeEventListener('abort', this.#onCallerAbort);
    this.#options.stopSignal.removeEventListener('abort', this.#onStop);
  }
}
