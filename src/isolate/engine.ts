/**
 * @module
 * The isolate engine: creates one fresh isolated-vm isolate and context per run (keeping one
 * pre-warmed spare so a run starts fast), installs the prelude, and drives the script.
 *
 * The spare is refilled only while the engine is idle (no run in progress), at the next turn of
 * the event loop after its last run ends: a run's tool-call answer never waits behind the ~3 ms
 * of isolate creation (in a worker process, a tool result would otherwise queue behind it).
 *
 * Scheduling is "run to quiescence" on the calling thread: the host enters the isolate
 * synchronously (start the script, or settle a tool call) and V8 runs the script and its
 * microtasks until everything left is waiting on tool calls; then control returns to the host
 * event loop. Each entry carries a timeout equal to the CPU (and wall) budget left, and CPU
 * time is re-checked after every entry, so a script that loops after an `await` is still
 * stopped. A run that has made {@link WATCH_AFTER_ENTRIES} entries is handed to a watchdog
 * (watchdog.ts): a thread of isolated-vm's pool that disposes the isolate when a budget runs
 * out, so its later entries (tool calls) go without the per-entry timeout's cost. There are no
 * timers in the sandbox, so a script that is waiting while no tool call is in flight can never
 * progress: it ends at once with a clear error instead of waiting for the wall timer.
 *
 * A run may belong to a session (`request.session`): its isolate and context then outlive the
 * run, and the next run of the session starts in the same context (the REPL behaviour of
 * `execute_code` sessions; the compiler turns top-level declarations into globals). A session
 * run that is stopped from outside (a budget, memory, cancellation, a crash) disposes the
 * isolate and the session with it; the host decides when sessions expire and asks for
 * {@link IsolateEngine.dropSession}.
 *
 * Runs in the host process (in-process mode) or inside a sandbox worker process. It never
 * sees the tool invoker: tool calls leave through {@link EngineSink.call} and come back through
 * {@link EngineRun.settle}.
 */
import ivm from 'isolated-vm';
import { DEFAULT_SANDBOX_ISOLATE_RUNS } from '../config/defaults.js';
import { isErrorLike } from '../errors.js';
import './young-generation.js';

import { SCRIPT_FILENAME } from './describe-error.js';
import { WATCH_AFTER_ENTRIES, Watchdogs, type Watch } from './watchdog.js';
import type { SandboxLimits } from './limits.js';
import type { EngineToolCatalog } from './tool-catalog.js';

export { SCRIPT_FILENAME };

/** Where an engine run sends what the script does. */
export interface EngineSink {
  /** Console text (`stream` 0 = stdout, 1 = stderr), already cut to the stream budget. */
  output(stream: number, text: string, droppedBytes: number): void;
  /**
   * A tool call; answer it with {@link EngineRun.settle}. `site` is the generated `line:column`
   * of the call in the script, sent only for tools bound with a line report.
   */
  call(id: number, name: string, argsJson: string, site?: string): void;
}

/** What to run. */
export interface EngineRunRequest {
  code: string;
  /** The run's catalog: its list crosses into the isolate only when the script enumerates `tools`. */
  tools: EngineToolCatalog;
  limits: SandboxLimits;
  /** Milliseconds of wall time left when the request was made. */
  wallTimeLeftMs: number;
  /**
   * The session the run belongs to: `isNew` creates it (the host decides); otherwise the
   * session's kept context is used, and a session this engine does not hold fails the run.
   */
  session?: { key: string; isNew: boolean };
  /**
   * Whose run it is. Runs of one owner take turns in one isolate, each in a fresh context (its
   * own globals and built-ins; nothing of an earlier run is reachable), up to the engine's
   * `isolateRuns`; runs of different owners never share an isolate. Unset: the run's isolate
   * serves it alone.
   */
  owner?: string;
}

/** A thrown value, read inside the isolate into strings. */
export interface ThrownReport {
  name?: string;
  message?: string;
  stack?: string;
  code?: string;
  /** Set when the thrown value was not an error object. */
  value?: string;
}

/** Failures decided outside the script: budgets, memory, cancellation, the sandbox itself. */
export type EngineFaultCode =
  | 'CPU_TIMEOUT'
  | 'WALL_TIMEOUT'
  | 'MEMORY_LIMIT'
  | 'SANDBOX_CRASHED'
  | 'ABORTED'
  | 'STALLED'
  | 'SESSION_LOST';

/** How an engine run ended. */
export interface EngineOutcome {
  ok: boolean;
  /** JSON of the script's return value, when it returned JSON data. */
  returnJson?: string;
  /** What the script threw, when it threw. */
  thrown?: ThrownReport;
  /** Set when the run was stopped from outside the script. */
  fault?: { code: EngineFaultCode; message?: string };
  cpuMs: number;
}

/** Options for {@link IsolateEngine}. */
export interface IsolateEngineOptions {
  /** Source of the prelude (the bundle of `sandbox/`). */
  prelude: string;
  /** Heap limit of the pre-warmed spare isolate; runs with another limit start cold. */
  spareMemoryMb: number;
  /**
   * Runs of one owner an isolate serves, each in a fresh context, before it is disposed; `1`:
   * an isolate per run. @defaultValue {@link DEFAULT_SANDBOX_ISOLATE_RUNS}
   */
  isolateRuns?: number;
}

interface Sandbox {
  isolate: ivm.Isolate;
  context: ivm.Context;
  start: ivm.Reference<(config: string, main: unknown) => void>;
  /**
   * Settles calls, one after another in one argument list: `id, payload` for a success with
   * host-written JSON, `-id, ok, payload, code` for any other answer.
   */
  settle: ivm.Reference<(...answers: SettleArgument[]) => void>;
  memoryMb: number;
  /** The owner of the runs the isolate served (see {@link EngineRunRequest.owner}); unset: none yet. */
  owner?: string;
  /** Runs the isolate has served, this one included. */
  runs: number;
  /** The run the bridge callbacks talk to; unset while the sandbox is spare. */
  run?: EngineRun;
  /** Set for a session's sandbox: called when it is disposed, so the engine forgets it. */
  onDisposed?: () => void;
}

/**
 * Answers of tool calls, four entries each, one after another: `id, ok, payload, code` (as the
 * arguments of {@link EngineRun.settle}). One flat list crosses into the isolate (and over IPC)
 * without building an object per answer.
 */
export type EngineAnswers = (number | boolean | string | undefined)[];
type SettleArgument = EngineAnswers[number];

const NS_PER_MS = 1_000_000;
/**
 * Milliseconds an entry that threw may fall short of its own timeout and still count as timed
 * out: our clock is read before isolated-vm arms its timer, so a timed-out entry never lasts less.
 */
const TIMEOUT_SLACK_MS = 1;
/**
 * Answers settled in one isolate entry at most (four arguments each). Answers that arrive
 * while other calls of the run are still in flight wait for the end of the host's current
 * turn and enter together: one entry (one timeout armed, one CPU check) for all of them.
 */
const MAX_ANSWERS_PER_ENTRY = 1_024;
/**
 * Milliseconds of a monotonic clock, read at every entry: `process.hrtime.bigint()` costs about a
 * third of `performance.now()` (instructions counted under valgrind: ~0.4k against ~1.2k).
 */
function nowMs(): number {
  return Number(process.hrtime.bigint()) / NS_PER_MS;
}
/** The prelude's script name (the same each time, so V8's compilation cache finds it). */
const PRELUDE_FILENAME = 'codecall:prelude';
/** Time the prelude's warm-up may take in a new isolate. */
const WARM_TIMEOUT_MS = 1_000;
/**
 * Share of its heap limit an isolate may hold (live or garbage) after a run and still serve the
 * owner's next run; a run that used more leaves its isolate to be disposed.
 */
const RECYCLE_MAX_HEAP_SHARE = 0.25;

/** Creates isolates, keeps a warm spare, and starts runs. One per process. */
export class IsolateEngine {
  readonly #prelude: string;
  readonly #spareMemoryMb: number;
  readonly #isolateRuns: number;
  /** Ready for a run: a context with the prelude, in a new isolate or in one an owner's runs used. */
  #spare: Sandbox | undefined;
  /** An isolate an owner's run ended in cleanly, its context released: the owner's next run's. */
  #recycled: Omit<Sandbox, 'context' | 'start' | 'settle'> | undefined;
  #refill: NodeJS.Immediate | undefined;
  /** Runs started and not yet ended; the spare is refilled only when there are none. */
  #active = 0;
  #closed = false;
  #isolatesCreated = 0;
  #cachedPrelude: ivm.ExternalCopy<ArrayBuffer> | undefined;
  /** Set once the code cache was remade after a warm-up (see `#cacheWarmPrelude`). */
  #preludeCacheHasFunctions = false;
  readonly #sessions = new Map<string, Sandbox>();
  /** The stops of long runs (see watchdog.ts). */
  readonly #watchdogs = new Watchdogs();

  constructor(options: IsolateEngineOptions) {
    this.#prelude = options.prelude;
    this.#spareMemoryMb = options.spareMemoryMb;
    this.#isolateRuns = options.isolateRuns ?? DEFAULT_SANDBOX_ISOLATE_RUNS;
  }

  /**
   * Prepares the spare now (otherwise the first run starts cold): a fresh context in the isolate
   * an owner's last run left (the owner's next run takes it), else a new warmed isolate.
   */
  warm(): void {
    if (this.#closed) return;
    const recycled = this.#recycled;
    if (recycled !== undefined) {
      this.#recycled = undefined;
      if (recycled.isolate.isDisposed) return this.warm();
      const spare = this.#spare;
      // An unused spare of no owner gives way to the owner's isolate (it costs a new isolate).
      if (spare !== undefined && spare.owner === undefined) {
        this.#spare = undefined;
        disposeSandbox(spare);
      }
      if (this.#spare === undefined) {
        this.#spare = this.#prepare(recycled.isolate, recycled.memoryMb, false, recycled);
        return;
      }
      recycled.isolate.dispose();
    }
    if (this.#spare === undefined) this.#spare = this.#create(this.#spareMemoryMb, true);
  }

  /** Starts a run in a fresh isolate, or in its session's kept one. */
  start(request: EngineRunRequest, sink: EngineSink): EngineRun {
    const session = request.session;
    if (session !== undefined && !session.isNew) {
      const kept = this.#sessions.get(session.key);
      if (kept === undefined || kept.isolate.isDisposed) {
        const run = new EngineRun(undefined, request, sink, this.#watchdogs);
        run.cancel('SESSION_LOST');
        return run;
      }
      const run = new EngineRun(kept, request, sink, this.#watchdogs);
      this.#track(run);
      run.begin();
      return run;
    }
    if (session !== undefined) this.dropSession(session.key);
    const memoryMb = request.limits.memoryMb;
    const owner = request.owner;
    let sandbox: Sandbox;
    const spare = this.#spare;
    const recycled = this.#recycled;
    if (
      spare !== undefined &&
      spare.memoryMb === memoryMb &&
      (spare.owner === undefined || spare.owner === owner) &&
      !spare.isolate.isDisposed
    ) {
      sandbox = spare;
      this.#spare = undefined;
    } else if (
      recycled !== undefined &&
      owner !== undefined &&
      recycled.owner === owner &&
      recycled.memoryMb === memoryMb &&
      !recycled.isolate.isDisposed
    ) {
      // The owner's isolate, not yet given its next context (the run came before the refill).
      this.#recycled = undefined;
      sandbox = this.#prepare(recycled.isolate, memoryMb, false, recycled);
    } else {
      // Cold: no warm-up entry (about 1.8 ms, mostly compiling the prelude's functions, which the
      // run compiles anyway, only those it uses): back-to-back runs find no spare (it is refilled
      // only while the engine is idle), and wait for this.
      sandbox = this.#create(memoryMb, false);
    }
    sandbox.runs++;
    // A run without an owner has its isolate to itself: it is never recycled (see #retire).
    if (owner !== undefined && session === undefined) sandbox.owner = owner;
    else sandbox.runs = Number.POSITIVE_INFINITY;
    if (session !== undefined) {
      const key = session.key;
      this.#sessions.set(key, sandbox);
      sandbox.onDisposed = () => {
        if (this.#sessions.get(key) === sandbox) this.#sessions.delete(key);
      };
    }
    const run = new EngineRun(sandbox, request, sink, this.#watchdogs, this.#retire);
    this.#track(run);
    run.begin();
    return run;
  }

  /**
   * Disposes the sandbox of a run that ended, or keeps its isolate for the owner's next run: only
   * when the run ended cleanly (returned or threw; no budget, memory, cancel or crash), the
   * isolate has served fewer than `isolateRuns` runs, its heap holds less than
   * {@link RECYCLE_MAX_HEAP_SHARE} of its limit, and no other owner's isolate is kept.
   */
  readonly #retire = (sandbox: Sandbox, clean: boolean): void => {
    const spare = this.#spare;
    if (
      !clean ||
      this.#closed ||
      sandbox.owner === undefined ||
      sandbox.runs >= this.#isolateRuns ||
      this.#recycled !== undefined ||
      (spare !== undefined && spare.owner !== undefined && spare.owner !== sandbox.owner) ||
      sandbox.isolate.isDisposed
    ) {
      return disposeSandbox(sandbox);
    }
    let heapBytes: number;
    try {
      const stats = sandbox.isolate.getHeapStatisticsSync();
      heapBytes = stats.used_heap_size + stats.externally_allocated_size;
    } catch {
      return disposeSandbox(sandbox);
    }
    if (heapBytes > sandbox.memoryMb * 1024 * 1024 * RECYCLE_MAX_HEAP_SHARE) return disposeSandbox(sandbox);
    delete sandbox.run;
    try {
      sandbox.start.release();
      sandbox.settle.release();
      sandbox.context.release();
    } catch {
      return disposeSandbox(sandbox);
    }
    this.#recycled = {
      isolate: sandbox.isolate,
      memoryMb: sandbox.memoryMb,
      owner: sandbox.owner,
      runs: sandbox.runs,
    };
  };

  /** Counts a run as active until it ends; the engine refills its spare once none is left. */
  #track(run: EngineRun): void {
    this.#active++;
    void run.outcome.then(() => {
      this.#active--;
      if (this.#active === 0) this.#scheduleRefill();
    });
  }

  /** Isolates created so far, for tests and measurement. */
  get isolatesCreated(): number {
    return this.#isolatesCreated;
  }

  /** Whether the warm spare is ready, for tests and measurement. */
  get spareReady(): boolean {
    return this.#spare !== undefined && !this.#spare.isolate.isDisposed;
  }

  /** V8 heap bytes (total heap plus external memory) of the warm spare, for measurement. */
  spareHeapBytes(): number | undefined {
    const spare = this.#spare;
    if (spare === undefined || spare.isolate.isDisposed) return undefined;
    const stats = spare.isolate.getHeapStatisticsSync();
    return stats.total_heap_size + stats.externally_allocated_size;
  }

  /**
   * Ends a session: a run in progress is cancelled (`ABORTED`), the isolate is disposed.
   * Unknown keys are ignored.
   */
  dropSession(key: string): void {
    const sandbox = this.#sessions.get(key);
    if (sandbox === undefined) return;
    this.#sessions.delete(key);
    if (sandbox.run) sandbox.run.cancel('ABORTED');
    else disposeSandbox(sandbox);
  }

  /** Disposes the spare and every session; running isolates end with their runs. */
  close(): void {
    this.#closed = true;
    for (const key of [...this.#sessions.keys()]) this.dropSession(key);
    if (this.#refill) clearImmediate(this.#refill);
    this.#spare?.isolate.dispose();
    this.#spare = undefined;
    if (this.#recycled !== undefined && !this.#recycled.isolate.isDisposed) this.#recycled.isolate.dispose();
    this.#recycled = undefined;
    this.#watchdogs.close();
  }

  /**
   * Refills the spare at the next turn of the event loop, unless a run has started by then (the
   * refill then waits for the engine to be idle again).
   */
  #scheduleRefill(): void {
    if (
      this.#closed ||
      this.#refill !== undefined ||
      (this.#spare !== undefined && this.#recycled === undefined)
    ) {
      return;
    }
    this.#refill = setImmediate(() => {
      this.#refill = undefined;
      if (this.#active > 0) return;
      try {
        this.warm();
      } catch {
        // the next run creates its isolate itself and reports the failure
      }
    });
    this.#refill.unref();
  }

  /**
   * Replaces the prelude's code cache, made when the prelude was first compiled (its top level
   * only: V8 compiles functions when first called), by one made after a warm-up has run every
   * path: compiling the same source again in that isolate finds the script, functions compiled,
   * in V8's compilation cache. Later isolates then start with the functions compiled (a cold run
   * skips about 1 ms of lazy compiles). Made once, from an isolate no script has run in.
   */
  #cacheWarmPrelude(isolate: ivm.Isolate): void {
    this.#preludeCacheHasFunctions = true;
    try {
      const again = isolate.compileScriptSync(this.#prelude, {
        filename: PRELUDE_FILENAME,
        produceCachedData: true,
      });
      const full = (again as unknown as ivm.CachedDataResult).cachedData;
      if (full) this.#cachedPrelude = full;
      again.release();
    } catch {
      // the top-level cache stays
    }
  }

  /** Bytes of the prelude's code cache (for tests and measurement). */
  get preludeCacheBytes(): number {
    return this.#cachedPrelude?.copy().byteLength ?? 0;
  }

  /** A new isolate with a context ready for a run. */
  #create(memoryMb: number, warmUp: boolean): Sandbox {
    this.#isolatesCreated++;
    return this.#prepare(new ivm.Isolate({ memoryLimit: memoryMb }), memoryMb, warmUp, { runs: 0 });
  }

  /**
   * A fresh context with the prelude in `isolate`, new or kept from the owner's earlier runs
   * (`from`: their owner and count). The isolate is disposed if this fails.
   */
  #prepare(
    isolate: ivm.Isolate,
    memoryMb: number,
    warmUp: boolean,
    from: { owner?: string | undefined; runs: number },
  ): Sandbox {
    try {
      const context = isolate.createContextSync();
      const global = context.global;
      const sandbox = { isolate, context, memoryMb, runs: from.runs } as Sandbox;
      if (from.owner !== undefined) sandbox.owner = from.owner;
      global.setSync(
        '__codecall_out',
        new ivm.Callback((stream: unknown, text: unknown, dropped: unknown) => {
          sandbox.run?.onOutput(stream, text, dropped);
        }),
      );
      global.setSync(
        '__codecall_call',
        new ivm.Callback((id: unknown, name: unknown, args: unknown, site: unknown) => {
          sandbox.run?.onCall(id, name, args, site);
        }),
      );
      global.setSync('__codecall_list', new ivm.Callback(() => sandbox.run?.listTools() ?? '[]'));
      global.setSync(
        '__codecall_done',
        new ivm.Callback((ok: unknown, payload: unknown) => {
          sandbox.run?.onDone(ok, payload);
        }),
      );
      const options: ivm.ScriptInfo = { filename: PRELUDE_FILENAME };
      if (this.#cachedPrelude) options.cachedData = this.#cachedPrelude;
      else options.produceCachedData = true;
      const script = isolate.compileScriptSync(this.#prelude, options);
      const produced = (script as unknown as ivm.CachedDataResult).cachedData;
      if (produced && !this.#cachedPrelude) this.#cachedPrelude = produced;
      script.runSync(context, { release: true });
      sandbox.start = global.getSync('__codecall_start', { reference: true }) as Sandbox['start'];
      sandbox.settle = global.getSync('__codecall_settle', { reference: true }) as Sandbox['settle'];
      const warm = global.getSync('__codecall_warm', { reference: true }) as ivm.Reference<() => void>;
      global.deleteSync('__codecall_start');
      global.deleteSync('__codecall_settle');
      global.deleteSync('__codecall_warm');
      if (warmUp) {
        warm.applySync(undefined, [], { timeout: WARM_TIMEOUT_MS });
        if (!this.#preludeCacheHasFunctions) this.#cacheWarmPrelude(isolate);
      }
      warm.release();
      return sandbox;
    } catch (error) {
      isolate.dispose();
      throw error;
    }
  }
}

/** Releases a sandbox's references and disposes its isolate (idempotent). */
function disposeSandbox(sandbox: Sandbox): void {
  delete sandbox.run;
  try {
    sandbox.start.release();
    sandbox.settle.release();
    sandbox.context.release();
  } catch {
    // already released with the isolate
  }
  try {
    if (!sandbox.isolate.isDisposed) sandbox.isolate.dispose();
  } catch {
    // disposed meanwhile by the run's watchdog, from its own thread
  }
  const onDisposed = sandbox.onDisposed;
  delete sandbox.onDisposed;
  onDisposed?.();
}

/** Never the id of a call (the prelude numbers calls from 1): the entry that keeps a run's set of calls in flight from emptying. */
const NO_CALL = 0;

/** Faults after which a session's context is kept: the script itself is at fault, not the sandbox. */
const KEEPS_SESSION = new Set<EngineFaultCode>(['STALLED']);

/** One script run inside one isolate. */
export class EngineRun {
  readonly outcome: Promise<EngineOutcome>;
  readonly #sandbox: Sandbox | undefined;
  readonly #request: EngineRunRequest;
  readonly #sink: EngineSink;
  readonly #wallDeadline: number;
  /** The isolate's CPU time (ns) at the start of the run, and where the budget ends. */
  readonly #cpuStartNs: number;
  readonly #cpuBudgetNs: number;
  /** The options of every entry: only `timeout` changes, set before each entry. */
  readonly #entryOptions: { timeout: number } = { timeout: 1 };
  /**
   * Ids of the calls in flight, and {@link NO_CALL}: kept in the set so that it never empties. A
   * set that goes from one entry to none shrinks its table, and grows it again at the next call
   * (a sequential script does both at every call).
   */
  readonly #outstanding = new Set<number>([NO_CALL]);
  /** Answers waiting for the next entry, as `__codecall_settle` takes them (see `#push`). */
  #answers: SettleArgument[] = [];
  #answerCount = 0;
  #flush: NodeJS.Immediate | undefined;
  /** The isolate's CPU time as read after the last entry (nothing runs in it between entries). */
  #cpuNowNs: number;
  #resolve!: (outcome: EngineOutcome) => void;
  readonly #watchdogs: Watchdogs;
  /** Disposes the run's sandbox when it ends, or keeps its isolate for the owner's next run. */
  readonly #retire: (sandbox: Sandbox, clean: boolean) => void;
  /** The watchdog's watch, once the run has made {@link WATCH_AFTER_ENTRIES} entries. */
  #watch: Watch | undefined;
  /** Set after an entry without a timeout: `#cpuNowNs` was not read since. */
  #cpuUnread = false;
  #entries = 0;
  #watchedEntries = 0;
  #ended = false;
  #finished: { ok: boolean; payload: string | undefined } | undefined;

  /** `sandbox` is unset for a run of a session the engine no longer holds (it ends at once). */
  constructor(
    sandbox: Sandbox | undefined,
    request: EngineRunRequest,
    sink: EngineSink,
    watchdogs: Watchdogs,
    retire: (sandbox: Sandbox, clean: boolean) => void = disposeSandbox,
  ) {
    this.#sandbox = sandbox;
    this.#watchdogs = watchdogs;
    this.#retire = retire;
    this.#request = request;
    this.#sink = sink;
    this.#wallDeadline = nowMs() + request.wallTimeLeftMs;
    // Nanoseconds as a double: exact to 2^53 ns (104 days of CPU time).
    this.#cpuStartNs = sandbox === undefined ? 0 : Number(sandbox.isolate.cpuTime);
    this.#cpuNowNs = this.#cpuStartNs;
    this.#cpuBudgetNs = this.#cpuStartNs + request.limits.cpuTimeMs * NS_PER_MS;
    this.outcome = new Promise((resolve) => (this.#resolve = resolve));
    if (sandbox) sandbox.run = this;
    // Stored a second time, so that V8 never takes these fields for constants: it does so for a
    // field stored only once, and throws away the optimised code that relied on that when the
    // first run ends and stores it again (the whole per-call path, which then takes thousands of
    // calls, several runs, to be optimised again).
    this.#ended = false;
    this.#finished = undefined;
    this.#flush = undefined;
    this.#answers = [];
    this.#answerCount = 0;
  }

  /** Entries into the isolate so far (the start, then one per batch of answers). */
  get entries(): number {
    return this.#entries;
  }

  /** Entries made under the run's watchdog, without a timeout of their own. */
  get watchedEntries(): number {
    return this.#watchedEntries;
  }

  /** Compiles the script in the isolate and starts it. */
  begin(): void {
    this.#enter(undefined);
  }

  /** The body of the first entry: compiles the script and starts it with the run's configuration. */
  #startScript(timeout: number): void {
    const { isolate, context, start } = this.#sandbox!;
    const tools = this.#request.tools;
    const config = JSON.stringify({
      lineTools: tools.lineNames,
      store: tools.store ? 1 : 0,
      maxStdoutBytes: this.#request.limits.maxStdoutBytes,
      maxStderrBytes: this.#request.limits.maxStderrBytes,
      maxToolArgsBytes: this.#request.limits.maxToolArgsBytes,
      maxToolCalls: this.#request.limits.maxToolCalls,
      maxPendingToolArgsBytes: this.#request.limits.maxPendingToolArgsBytes,
      maxToolNameChars: Math.max(this.#request.limits.maxToolNameChars, tools.maxNameChars),
      maxFormattedValues: this.#request.limits.maxFormattedValues,
    });
    const script = isolate.compileScriptSync(this.#request.code, { filename: SCRIPT_FILENAME });
    const main = script.runSync(context, {
      reference: true,
      timeout,
      release: true,
    }) as ivm.Reference<unknown>;
    start.applySync(undefined, [config, main.derefInto({ release: true })], { timeout });
  }

  /** JSON `[[namespace, member], …]` of the run's tools, for a script that enumerates `tools`. */
  listTools(): string {
    return this.#ended ? '[]' : this.#request.tools.list();
  }

  /**
   * Delivers the end of a tool call: `payload` is result JSON (ok) or the error message. The
   * last call in flight enters the isolate at once (with any answers waiting); an answer that
   * arrives while other calls are in flight waits for the end of this turn of the host's event
   * loop, so the calls that end together are settled in one entry.
   */
  settle(id: number, ok: boolean, payload: string | undefined, code?: string): void {
    if (this.#ended || id === NO_CALL || !this.#outstanding.delete(id)) return;
    if (this.#outstanding.size === 1 && this.#answerCount === 0) {
      // The last call in flight and no answer waiting (every call of a sequential script): it
      // enters alone, in a list of its own.
      return this.#enter(
        ok && code === undefined && payload !== undefined ? [id, payload] : [-id, ok, payload, code],
      );
    }
    this.#push(id, ok, payload, code);
    if (this.#outstanding.size === 1 || this.#answerCount >= MAX_ANSWERS_PER_ENTRY) this.#settleWaiting();
    else this.#flush ??= setImmediate(() => this.#settleWaiting());
  }

  /**
   * Delivers answers that arrived together (`id, ok, payload, code` each, see
   * {@link EngineAnswers}): all of them, and any waiting, are settled in one entry now. Answers
   * of calls that are not in flight, and malformed ones, are ignored.
   */
  settleMany(answers: EngineAnswers): void {
    if (this.#ended) return;
    for (let index = 0; index + 3 < answers.length; index += 4) {
      const id = answers[index];
      const ok = answers[index + 1];
      const payload = answers[index + 2];
      const code = answers[index + 3];
      if (
        typeof id !== 'number' ||
        typeof ok !== 'boolean' ||
        id === NO_CALL ||
        !this.#outstanding.delete(id)
      ) {
        continue;
      }
      this.#push(
        id,
        ok,
        typeof payload === 'string' ? payload : undefined,
        typeof code === 'string' ? code : undefined,
      );
      if (this.#answerCount >= MAX_ANSWERS_PER_ENTRY) this.#settleWaiting();
    }
    this.#settleWaiting();
  }

  /**
   * Queues an answer for the next entry, in the prelude's form (`__codecall_settle`): a success
   * whose payload is JSON the host wrote, the common case, as `id, payload`; any other as
   * `-id, ok, payload, code`. Every argument is copied into the isolate: two are cheaper than four.
   */
  #push(id: number, ok: boolean, payload: string | undefined, code: string | undefined): void {
    if (ok && code === undefined && payload !== undefined) this.#answers.push(id, payload);
    else this.#answers.push(-id, ok, payload, code);
    this.#answerCount++;
  }

  #settleWaiting(): void {
    if (this.#flush !== undefined) {
      clearImmediate(this.#flush);
      this.#flush = undefined;
    }
    const answers = this.#answers;
    if (answers.length === 0 || this.#ended) return;
    // A new list for the answers that arrive during the entry: emptying this one instead (setting
    // its length) is a call into the runtime that also drops its storage, grown again at the next push.
    this.#answers = [];
    this.#answerCount = 0;
    this.#enter(answers);
  }

  /** Stops the run from outside (wall timer, abort, pool shutdown). */
  cancel(code: EngineFaultCode, message?: string): void {
    this.#end({ ok: false, fault: message === undefined ? { code } : { code, message } });
  }

  /** @internal Called by the bridge. */
  onOutput(stream: unknown, text: unknown, dropped: unknown): void {
    if (this.#ended || (stream !== 0 && stream !== 1) || typeof text !== 'string') return;
    this.#sink.output(stream, text, typeof dropped === 'number' && dropped > 0 ? dropped : 0);
  }

  /** @internal Called by the bridge. */
  onCall(id: unknown, name: unknown, args: unknown, site?: unknown): void {
    if (this.#ended || typeof id !== 'number' || typeof name !== 'string' || typeof args !== 'string') return;
    // A call of that id in flight, or NO_CALL, leaves the set as it was (one lookup, not two).
    const outstanding = this.#outstanding;
    const size = outstanding.size;
    if (outstanding.add(id).size === size) return;
    if (typeof site === 'string') this.#sink.call(id, name, args, site);
    else this.#sink.call(id, name, args);
  }

  /** @internal Called by the bridge. */
  onDone(ok: unknown, payload: unknown): void {
    if (this.#ended || this.#finished) return;
    this.#finished = { ok: ok === true, payload: typeof payload === 'string' ? payload : undefined };
  }

  #cpuMs(): number {
    if (this.#sandbox === undefined) return 0;
    const { isolate } = this.#sandbox;
    try {
      return (Number(isolate.cpuTime) - this.#cpuStartNs) / NS_PER_MS;
    } catch {
      return 0; // disposed (a watchdog may dispose it from its own thread at any time)
    }
  }

  /**
   * One entry into the isolate: the start (`answers` unset) or a batch of answers. Under the
   * run's watchdog it goes as it is; otherwise see {@link EngineRun.#enterTimed}. No closure or
   * options object is made per entry: this is every tool call's path. Kept short, the cold paths
   * in functions of their own: V8 optimises a function once it has run about as many bytecodes
   * as a few thousand calls through all of it would, so a long function whose calls take a short
   * path stays unoptimised for tens of thousands of calls.
   */
  #enter(answers: SettleArgument[] | undefined): void {
    const sandbox = this.#sandbox;
    if (this.#ended || sandbox === undefined) return;
    const watch = this.#watch;
    if (watch === undefined || answers === undefined || !watch.armed) {
      return this.#enterTimed(sandbox, answers);
    }
    // Watched: the watchdog stops the entry if a budget runs out; no timeout, no clock read. A
    // watchdog that stops the run disposes its isolate before it disarms: an entry made meanwhile
    // throws, and ends the run with the watchdog's stop (see `#failed`).
    this.#entries++;
    this.#watchedEntries++;
    this.#cpuUnread = true;
    try {
      sandbox.settle.applySync(undefined, answers);
    } catch (error) {
      return this.#failed(sandbox, error, undefined);
    }
    this.#afterEntry();
  }

  /** Ends the run with its watchdog's stop. */
  #endStopped(watch: Watch): void {
    this.#end({ ok: false, fault: { code: watch.stopped! } });
  }

  /**
   * An entry that carries a timeout of the CPU or wall budget left (whichever is less), with the
   * isolate's CPU time read after it: the run's first entries, and any its watchdog does not watch.
   */
  #enterTimed(sandbox: Sandbox, answers: SettleArgument[] | undefined): void {
    // The watchdog may have stopped the run between entries (its isolate is disposed, and the
    // watchdog no longer armed): the run ends with its stop.
    const watch = this.#watch;
    if (watch !== undefined && watch.stopped !== undefined) return this.#endStopped(watch);
    if (this.#cpuUnread) {
      this.#cpuUnread = false;
      try {
        this.#cpuNowNs = Number(sandbox.isolate.cpuTime);
      } catch (error) {
        return this.#failed(sandbox, error, undefined); // disposed (by the watchdog, from its thread)
      }
    }
    const cpuLeftMs = (this.#cpuBudgetNs - this.#cpuNowNs) / NS_PER_MS;
    const enteredMs = nowMs();
    const wallLeftMs = this.#wallDeadline - enteredMs;
    if (cpuLeftMs <= 0) return this.#end({ ok: false, fault: { code: 'CPU_TIMEOUT' } });
    if (wallLeftMs <= 0) return this.#end({ ok: false, fault: { code: 'WALL_TIMEOUT' } });
    const cpuBound = cpuLeftMs <= wallLeftMs;
    const timeout = Math.max(1, Math.ceil(cpuBound ? cpuLeftMs : wallLeftMs));
    this.#entries++;
    try {
      if (answers === undefined) this.#startScript(timeout);
      else {
        const options = this.#entryOptions;
        options.timeout = timeout;
        sandbox.settle.applySync(undefined, answers, options);
      }
    } catch (error) {
      // The entry carried a timeout of our own: it ran out when the entry lasted that long.
      const timedOut = nowMs() - enteredMs >= timeout - TIMEOUT_SLACK_MS;
      return this.#failed(sandbox, error, timedOut ? (cpuBound ? 'CPU_TIMEOUT' : 'WALL_TIMEOUT') : undefined);
    }
    let cpuNowNs: number;
    try {
      cpuNowNs = Number(sandbox.isolate.cpuTime);
    } catch (error) {
      return this.#failed(sandbox, error, undefined); // disposed (by the watchdog, from its thread)
    }
    this.#cpuNowNs = cpuNowNs;
    if (cpuNowNs > this.#cpuBudgetNs) return this.#end({ ok: false, fault: { code: 'CPU_TIMEOUT' } });
    if (this.#entries === WATCH_AFTER_ENTRIES && !this.#ended) {
      this.#watch = this.#watchdogs.watch(sandbox.isolate, this.#cpuBudgetNs, this.#wallDeadline - nowMs());
    }
    this.#afterEntry();
  }

  /**
   * Ends the run after an entry threw, from structured signals only (no message is matched): the
   * watchdog's stop; memory (isolated-vm disposes an isolate that hits its memory limit, and
   * nothing else disposes one while a run holds it but the watchdog, checked first); a syntax
   * error (by `name`); `timedOut`, the budget the entry's own timeout stood for when the entry
   * lasted that timeout; else a crash.
   */
  #failed(sandbox: Sandbox, error: unknown, timedOut: 'CPU_TIMEOUT' | 'WALL_TIMEOUT' | undefined): void {
    if (this.#ended) return;
    const stopped = this.#watch?.stopped;
    if (stopped !== undefined) return this.#end({ ok: false, fault: { code: stopped } });
    if (sandbox.isolate.isDisposed) return this.#end({ ok: false, fault: { code: 'MEMORY_LIMIT' } });
    const message = isErrorLike(error) ? error.message : String(error);
    if (isErrorLike(error) && error.name === 'SyntaxError') {
      return this.#end({ ok: false, thrown: { name: 'SyntaxError', message } });
    }
    if (timedOut !== undefined) return this.#end({ ok: false, fault: { code: timedOut } });
    return this.#end({ ok: false, fault: { code: 'SANDBOX_CRASHED', message } });
  }

  #afterEntry(): void {
    const finished = this.#finished;
    if (finished !== undefined) return this.#endFinished(finished);
    if (this.#outstanding.size === 1 && this.#answers.length === 0) {
      this.#end({ ok: false, fault: { code: 'STALLED' } });
    }
  }

  /** Ends the run the script finished (returned or threw). */
  #endFinished(finished: { ok: boolean; payload: string | undefined }): void {
    if (finished.ok) {
      const outcome: Omit<EngineOutcome, 'cpuMs'> = { ok: true };
      if (finished.payload !== undefined) outcome.returnJson = finished.payload;
      return this.#end(outcome);
    }
    let thrown: ThrownReport;
    try {
      thrown = JSON.parse(finished.payload ?? '{}') as ThrownReport;
    } catch {
      thrown = { value: '[unreadable]' };
    }
    this.#end({ ok: false, thrown });
  }

  #end(outcome: Omit<EngineOutcome, 'cpuMs'> & { cpuMs?: number }): void {
    if (this.#ended) return;
    // A watchdog that claimed the run first has stopped it (its isolate is being disposed),
    // whatever the run was ending with.
    const stopped = this.#watch?.end();
    if (stopped !== undefined && outcome.fault?.code !== stopped)
      outcome = { ok: false, fault: { code: stopped } };
    const cpuMs = this.#cpuMs();
    // Entries under the watchdog are not checked one by one: a run whose last entries spent
    // its CPU budget and ended before the watchdog woke is over budget all the same.
    if (this.#watchedEntries > 0 && outcome.fault === undefined && cpuMs > this.#request.limits.cpuTimeMs) {
      outcome = { ok: false, fault: { code: 'CPU_TIMEOUT' } };
    }
    const ended: EngineOutcome = { ...outcome, cpuMs };
    this.#ended = true;
    this.#outstanding.clear();
    this.#outstanding.add(NO_CALL);
    this.#answers = [];
    this.#answerCount = 0;
    if (this.#flush !== undefined) clearImmediate(this.#flush);
    this.#flush = undefined;
    const sandbox = this.#sandbox;
    if (sandbox) {
      delete sandbox.run;
      const keep =
        sandbox.onDisposed !== undefined &&
        !sandbox.isolate.isDisposed &&
        (outcome.fault === undefined || KEEPS_SESSION.has(outcome.fault.code));
      if (!keep) this.#retire(sandbox, ended.fault === undefined && sandbox.onDisposed === undefined);
    }
    this.#resolve(ended);
  }
}
