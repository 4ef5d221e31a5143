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
 *   2 `armed`: 1 while the watchdog's loop runs.
 */
import ivm from 'isolated-vm';

/** Entries a run makes with per-entry timeouts before it is handed to a watchdog. */
export const WATCH_AFTER_ENTRIES = 64;
/** Watchdogs an engine keeps at most (runs watched at once); further runs keep per-entry timeouts. */
const MAX_WATCHDOGS = 16;
/** Idle watchdogs kept for the next long runs; more are disposed when they come back. */
const MAX_IDLE_WATCHDOGS = 2;
/** Heap of a watchdog isolate (the smallest isolated-vm accepts is 8 MB; it uses far less). */
const WATCHDOG_MEMORY_MB = 8;

const STATE = 0;
const REASON = 1;
const ARMED = 2;
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
  }
})`;

/** One watchdog isolate and the words it shares with the host. */
class Watchdog {
  readonly isolate: ivm.Isolate;
  readonly watch: ivm.Reference<(target: ivm.Isolate, cpuBudgetNs: number, wallDeadline: number) => void>;
  readonly words: Int32Array;

  constructor() {
    const shared = new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT);
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
  #ended = false;

  /** @internal */
  constructor(words: Int32Array, finished: Promise<void>) {
    this.#words = words;
    this.finished = finished;
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
    }
    return this.stopped;
  }
}

/**
 * The watchdogs of one engine (one thread): created on first need, reused by later runs, at
 * most {@link MAX_WATCHDOGS} watching at once.
 */
export class Watchdogs {
  readonly #idle: Watchdog[] = [];
  #busy = 0;
  #closed = false;

  /**
   * Hands `target` to a watchdog until the returned watch ends. `cpuBudgetNs` is the isolate CPU
   * time (`isolate.cpuTime`, in ns) at which the run must stop; `wallLeftMs` the wall time it has
   * left. Returns undefined when no watchdog can be had (the run keeps its per-entry timeouts).
   */
  watch(target: ivm.Isolate, cpuBudgetNs: number, wallLeftMs: number): Watch | undefined {
    if (this.#closed || this.#busy >= MAX_WATCHDOGS) return undefined;
    let watchdog = this.#idle.pop();
    if (watchdog === undefined) {
      try {
        watchdog = new Watchdog();
      } catch {
        return undefined;
      }
    }
    const words = watchdog.words;
    Atomics.store(words, STATE, WATCHING);
    Atomics.store(words, REASON, 0);
    Atomics.store(words, ARMED, 0);
    this.#busy++;
    const back = watchdog;
    const release = (reusable: boolean) => {
      this.#busy--;
      if (reusable && !this.#closed && this.#idle.length < MAX_IDLE_WATCHDOGS) this.#idle.push(back);
      else back.dispose();
    };
    const finished = watchdog.watch.apply(undefined, [target, cpuBudgetNs, Date.now() + wallLeftMs]).then(
      () => release(true),
      () => release(false),
    );
    return new Watch(words, finished);
  }

  /** Disposes the idle watchdogs; busy ones are disposed when their runs end. */
  close(): void {
    this.#closed = true;
    for (const watchdog of this.#idle.splice(0)) watchdog.dispose();
  }
}
