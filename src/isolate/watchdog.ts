/**
 * @module
 * The stop of a long run: one watchdog per run instead of a timeout armed on every entry.
 *
 * Every entry into a sandbox isolate must end within the run's CPU and wall budget, or a loop
 * in the script would hold the host's thread forever. isolated-vm's per-entry `timeout` does
 * that, at a price paid on every tool call: each entry takes a global mutex, allocates a timer
 * record and pushes it into its timer thread's queue, where it stays until the budget it was
 * armed with expires (seconds later), dead. A run that makes thousands of calls pays that
 * thousands of times.
 *
 * A watchdog is a small isolate of its own, running on isolated-vm's thread pool (not the
 * host's thread): it holds the run's isolate handle, sleeps on a shared word
 * (`Atomics.wait`) until the budget could first be spent, reads the isolate's CPU time and the
 * wall clock, and disposes the isolate once either budget is spent. Disposal stops the script
 * at once, even inside a synchronous entry (the same interrupt isolated-vm's timeout and its
 * memory limit use). The host ends the watch with one store and one `Atomics.notify` when the
 * run ends.
 *
 * A watch costs 32–38 µs of CPU on a busy machine, 91–97 µs on an idle one (the hand-off to the
 * thread pool, one wake at the end; `npm run bench -- sandbox` prints it), what the timeouts of
 * some 35–95 entries cost in-process, so the engine keeps the per-entry timeout for a run's first entries and hands a run to a
 * watchdog only once it has made {@link WATCH_AFTER_ENTRIES}:
 * short runs pay nothing new, long ones stop paying per call. The engine goes on arming
 * timeouts until the watchdog reports itself watching, and again if it ever stops.
 *
 * The shared words, by index:
 *   0 `state`: 0 watching, 1 the run ended (host), 2 the watchdog stopped the run;
 *     the two sides claim it with a compare-and-swap, so a run that ends as its budget runs out
 *     is either ended by the host or stopped by the watchdog, never both;
 *   1 `reason` (written before the watchdog claims `state`): 1 CPU budget, 2 wall budget;
 *   2 `armed`: 1 while the watchdog's loop runs;
 *   3 `done`: 1 once the loop has returned (its last act): the watchdog may take the next watch.
 *
 * A watchdog is reused as soon as its loop has returned, which the host reads in `done`, not
 * when isolated-vm reports the call finished: that report is a task of the host's event loop,
 * and runs that follow one another without a turn of the loop (tools answered in microtasks)
 * would otherwise use up every watchdog, and every run after the 16th would pay per-entry
 * timeouts until the loop turned.
 */
import ivm from 'isolated-vm';

/** Entries a run makes with per-entry timeouts before it is handed to a watchdog. */
export const WATCH_AFTER_ENTRIES = 64;
/** Watchdogs an engine keeps at most (runs watched at once); further runs keep per-entry timeouts. */
const MAX_WATCHDOGS = 16;
/** Idle watchdogs kept for the next long runs; more are disposed once their loops return. */
const MAX_IDLE_WATCHDOGS = 2;
/** Heap of a watchdog isolate (the smallest isolated-vm accepts is 8 MB; it uses far less). */
const WATCHDOG_MEMORY_MB = 8;

const STATE = 0;
const REASON = 1;
const ARMED = 2;
const DONE = 3;
const WATCHING = 0;
const ENDED = 1;
const STOPPED = 2;

/** Why a watchdog stopped its run. */
export type WatchStop = 'CPU_TIMEOUT' | 'WALL_TIMEOUT';

/**
 * The watch loop, run inside the watchdog isolate. `cpuBudgetNs` is the isolate CPU time at
 * which the run must stop, `wallDeadline` the `Date.now()` at which it must. It sleeps no longer
 * than the least budget left: CPU time cannot grow faster than the clock.
 */
const WATCH_SOURCE = `(function watch(target, cpuBudgetNs, wallDeadline) {
  const words = new Int32Array(shared);
  Atomics.wait(words, ${STATE}, -1, 0); // throws here, before arming, if this thread may not wait
  Atomics.store(words, ${ARMED}, 1);
  try {
    while (true) {
      let cpuLeftMs;
      try {
        cpuLeftMs = (cpuBudgetNs - Number(target.cpuTime)) / 1e6;
      } catch {
        return; // the run's isolate is gone: nothing to watch
      }
      const wallLeftMs = wallDeadline - Date.now();
      if (cpuLeftMs <= 0 || wallLeftMs <= 0) {
        Atomics.store(words, ${REASON}, cpuLeftMs <= 0 ? 1 : 2);
        if (Atomics.compareExchange(words, ${STATE}, ${WATCHING}, ${STOPPED}) !== ${WATCHING}) return;
        try { target.dispose(); } catch {}
        return;
      }
      if (Atomics.wait(words, ${STATE}, ${WATCHING}, Math.min(cpuLeftMs, wallLeftMs)) === 'not-equal') return;
    }
  } finally {
    Atomics.store(words, ${ARMED}, 0);
    Atomics.store(words, ${DONE}, 1);
  }
})`;

/** One watchdog isolate and the words it shares with the host. */
class Watchdog {
  readonly isolate: ivm.Isolate;
  readonly watch: ivm.Reference<(target: ivm.Isolate, cpuBudgetNs: number, wallDeadline: number) => void>;
  readonly words: Int32Array;
  /** Watches given so far: a report of isolated-vm's about an earlier one is stale. */
  round = 0;
  disposed = false;

  constructor() {
    const shared = new SharedArrayBuffer(4 * Int32Array.BYTES_PER_ELEMENT);
    this.words = new Int32Array(shared);
    this.isolate = new ivm.Isolate({ memoryLimit: WATCHDOG_MEMORY_MB });
    try {
      const context = this.isolate.createContextSync();
      context.global.setSync('shared', new ivm.ExternalCopy(shared).copyInto({ release: true }));
      this.watch = context.evalSync(WATCH_SOURCE, { reference: true }) as Watchdog['watch'];
      context.release();
    } catch (error) {
      this.isolate.dispose();
      throw error;
    }
  }

  dispose(): void {
    this.disposed = true;
    try {
      this.watch.release();
      if (!this.isolate.isDisposed) this.isolate.dispose();
    } catch {
      // already disposed
    }
  }
}

/** A run's watch, from {@link Watchdogs.watch}. */
export class Watch {
  /** Settles when the watchdog has let go of the run's isolate (its loop has returned). */
  readonly finished: Promise<void>;
  readonly #words: Int32Array;
  readonly #onEnd: () => void;
  #ended = false;

  /** @internal */
  constructor(words: Int32Array, finished: Promise<void>, onEnd: () => void) {
    this.#words = words;
    this.finished = finished;
    this.#onEnd = onEnd;
    // Stored a second time: V8 takes a field stored only once for a constant, and throws away
    // the optimised code that relied on that (the engine's entry) when the first watch ends.
    this.#ended = false;
  }

  /** Whether the watchdog is watching now (entries may go without a timeout). */
  get armed(): boolean {
    return Atomics.load(this.#words, ARMED) === 1;
  }

  /** Whether the watchdog has stopped the run, and why (its isolate is disposed, or about to be). */
  get stopped(): WatchStop | undefined {
    if (Atomics.load(this.#words, STATE) !== STOPPED) return undefined;
    return Atomics.load(this.#words, REASON) === 1 ? 'CPU_TIMEOUT' : 'WALL_TIMEOUT';
  }

  /**
   * Ends the watch as the run ends (idempotent). Returns why the watchdog stopped the run if it
   * claimed the run first: the run then counts as stopped, whatever it was ending with.
   */
  end(): WatchStop | undefined {
    if (!this.#ended) {
      this.#ended = true;
      Atomics.compareExchange(this.#words, STATE, WATCHING, ENDED);
      Atomics.notify(this.#words, STATE);
      this.#onEnd();
    }
    return this.stopped;
  }
}

/**
 * The watchdogs of one engine (one thread): created on first need, reused by later runs, at
 * most {@link MAX_WATCHDOGS} at once.
 */
export class Watchdogs {
  /** Watchdogs whose last watch has ended on the host: each is free once its loop has returned. */
  readonly #resting: Watchdog[] = [];
  /** Watchdogs not disposed: watching, or resting. */
  #alive = 0;
  #closed = false;

  /**
   * Hands `target` to a watchdog until the returned watch ends. `cpuBudgetNs` is the isolate CPU
   * time (`isolate.cpuTime`, in ns) at which the run must stop; `wallLeftMs` the wall time it has
   * left. Returns undefined when no watchdog can be had (the run keeps its per-entry timeouts).
   */
  watch(target: ivm.Isolate, cpuBudgetNs: number, wallLeftMs: number): Watch | undefined {
    if (this.#closed) return undefined;
    let watchdog = this.#free();
    if (watchdog === undefined) {
      if (this.#alive >= MAX_WATCHDOGS) return undefined;
      try {
        watchdog = new Watchdog();
      } catch {
        return undefined;
      }
      this.#alive++;
    }
    const words = watchdog.words;
    Atomics.store(words, STATE, WATCHING);
    Atomics.store(words, REASON, 0);
    Atomics.store(words, ARMED, 0);
    Atomics.store(words, DONE, 0);
    const round = ++watchdog.round;
    const given = watchdog;
    const finished = watchdog.watch.apply(undefined, [target, cpuBudgetNs, Date.now() + wallLeftMs]).then(
      () => this.#returned(given, round),
      // A watchdog that failed is not used again (a stale report of an earlier watch, the loop
      // having returned, cannot be a failure of the watchdog's).
      () => {
        if (round === given.round) this.#dispose(given);
      },
    );
    return new Watch(words, finished, () => this.#rest(given));
  }

  /** Watchdogs not disposed, watching or resting (for tests and diagnostics). */
  get alive(): number {
    return this.#alive;
  }

  /** Disposes the resting watchdogs; watching ones are disposed when their runs end. */
  close(): void {
    this.#closed = true;
    for (const watchdog of this.#resting.splice(0)) this.#dispose(watchdog);
  }

  /** A resting watchdog whose loop has returned, taken off the list. */
  #free(): Watchdog | undefined {
    const resting = this.#resting;
    for (let index = resting.length - 1; index >= 0; index--) {
      if (Atomics.load(resting[index]!.words, DONE) === 1) return resting.splice(index, 1)[0];
    }
    return undefined;
  }

  /** The host has ended the watch of `watchdog`. */
  #rest(watchdog: Watchdog): void {
    if (watchdog.disposed) return;
    // One whose loop still runs waits in the list: the report of its return disposes the extra
    // ones (disposing it now would cut its loop short).
    const returned = Atomics.load(watchdog.words, DONE) === 1;
    if (returned && (this.#closed || this.#resting.length >= MAX_IDLE_WATCHDOGS))
      return this.#dispose(watchdog);
    this.#resting.push(watchdog);
  }

  /** isolated-vm reports the loop of watch `round` returned: an extra resting watchdog goes. */
  #returned(watchdog: Watchdog, round: number): void {
    if (watchdog.disposed || round !== watchdog.round) return;
    const index = this.#resting.indexOf(watchdog);
    if (index === -1) return; // its watch has not ended on the host yet: `#rest` decides then
    if (this.#closed || this.#resting.length > MAX_IDLE_WATCHDOGS) {
      this.#resting.splice(index, 1);
      this.#dispose(watchdog);
    }
  }

  #dispose(watchdog: Watchdog): void {
    if (watchdog.disposed) return;
    const index = this.#resting.indexOf(watchdog);
    if (index !== -1) this.#resting.splice(index, 1);
    this.#alive--;
    watchdog.dispose();
  }
}
