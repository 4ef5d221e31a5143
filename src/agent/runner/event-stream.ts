/**
 * @module
 * Turns a run that reports through `emit` into an async generator of its events: events queue
 * until read, the generator ends after the run settles, and closing it early stops the run (and
 * waits for it to wind down).
 */

/** How a run ended when it did not end with an event: an error that is not the run's to report. */
export interface StreamedRun<E> {
  /** Starts the run; it reports through `emit` and settles when it is over. */
  start: (emit: (event: E) => void) => Promise<void>;
  /** True for the event that ends the run; events emitted after it are dropped. */
  isLast: (event: E) => boolean;
  /** Called when the reader stops reading before the run ended; the run must then settle soon. */
  stop: () => void;
}

/** The events of `run` as they happen; see the module comment. */
export async function* streamEvents<E>(run: StreamedRun<E>): AsyncGenerator<E, void, undefined> {
  const queue: E[] = [];
  let wake: (() => void) | undefined;
  let finished = false;
  let failure: { error: unknown } | undefined;
  let ended = false;
  const emit = (event: E): void => {
    // Work cancelled by a stop may still report after the run ended: drop it.
    if (ended) return;
    if (run.isLast(event)) ended = true;
    queue.push(event);
    wake?.();
  };
  const done = run
    .start(emit)
    .catch((error: unknown) => {
      failure = { error };
    })
    .finally(() => {
      finished = true;
      wake?.();
    });
  try {
    for (;;) {
      while (queue.length > 0) yield queue.shift()!;
      if (finished) break;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
    if (failure !== undefined) throw failure.error;
  } finally {
    if (!finished) {
      run.stop();
      await done;
    }
  }
}
