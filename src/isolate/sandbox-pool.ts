/**
 * @module
 * {@link SandboxPool}: where compiled model code runs. Each run gets a fresh isolated-vm isolate
 * and context with `console`, `tools.<namespace>.<member>(args)` and `callTool(name, args)`;
 * nothing else from the host is reachable, and only copies of JSON data cross the boundary.
 *
 * Two modes:
 * - `'process'` (default): isolates live in a pool of supervised worker processes. The host
 *   survives anything a script does: a worker that overruns its budget, stops answering or
 *   dies (V8 heap OOM abort, uninterruptible BigInt work) is killed and replaced, and the run
 *   reports it. Tool calls are relayed over IPC; the invoker, MCP clients and secrets never
 *   enter a worker. Each worker runs one script at a time. The pool is sized by load: it keeps
 *   `minWorkers`, starts another worker when a run waits and fewer than `maxWorkers` exist (the
 *   run takes whichever worker frees up or starts first), and shuts a worker above the minimum
 *   down once it has been idle for `workerIdleMs`. A worker holding a session is kept; a worker
 *   that dies is replaced (up to the minimum, and beyond while runs wait).
 * - `'in-process'`: isolates live in the host process, for the lowest latency. It gives up
 *   that protection: script code runs on the host's thread between `await`s (a CPU-heavy
 *   script blocks the host's event loop for up to its CPU budget), and a failure V8 cannot
 *   contain (a heap OOM abort, work V8 cannot interrupt) hangs or takes down the host process.
 *
 * Sessions (`run({ session })`): runs of one session share one isolate and context, kept alive
 * between runs (and pinned to one worker in process mode), so globals persist like a REPL. They
 * are bounded: a session unused for `sessionTtlMs` is dropped, at most `maxSessions` are kept
 * (opening another evicts the least recently used idle one), the isolate's heap limit counts
 * everything the session keeps, and runs of one session wait for each other. A run stopped by
 * a limit (time, memory, a crash, cancellation) drops its session and says so in its message; a
 * session that expired, was evicted or lost its worker fails its next run with
 * `SESSION_EXPIRED` telling the model to start over, never silently starting empty.
 */
import { availableParallelism, loadavg } from 'node:os';

import {
  DEFAULT_SANDBOX_HEARTBEAT_MS,
  DEFAULT_SANDBOX_KILL_GRACE_MS,
  DEFAULT_SANDBOX_MAX_ENDED_SESSIONS,
  DEFAULT_SANDBOX_MAX_SESSION_NAME_CHARS,
  DEFAULT_SANDBOX_MAX_SESSIONS,
  DEFAULT_SANDBOX_SESSION_TTL_MS,
  DEFAULT_SANDBOX_MODE,
  DEFAULT_SANDBOX_START_TIMEOUT_MS,
  DEFAULT_SANDBOX_MAX_WORKERS,
  DEFAULT_SANDBOX_MIN_WORKERS,
  DEFAULT_SANDBOX_WORKER_IDLE_MS,
  DEFAULT_SANDBOX_WORKER_SPIN_US,
} from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import type { ExecutionErrorCode, ExecutionResult, SandboxToolBinding, ToolInvoker } from '../types.js';
import { findDistFile, loadPreludeSource } from './assets.js';
import type { EngineRunRequest, IsolateEngine } from './engine.js';
import { resolveSandboxLimits, type SandboxLimits } from './limits.js';
import { RunController, type RunBackend, type UnknownToolResolver } from './run-controller.js';
import { SandboxToolCatalog } from './tool-catalog.js';
import { WorkerProcess, type WorkerProcessOptions } from './worker-process.js';

/** Where isolates run: supervised worker processes, or the host process. */
export type SandboxMode = 'process' | 'in-process';

/** Options for {@link SandboxPool.open}. */
export interface SandboxPoolOptions {
  /**
   * `'process'` isolates scripts in supervised worker processes; `'in-process'` runs them in the
   * host for lower latency, giving up protection against failures V8 cannot contain.
   * @defaultValue {@link DEFAULT_SANDBOX_MODE} (`'process'`)
   */
  mode?: SandboxMode;
  /**
   * A fixed number of worker processes (process mode): sets both `minWorkers` and `maxWorkers`,
   * and wins over them.
   * @defaultValue unset: the pool is sized by load between `minWorkers` and `maxWorkers`
   */
  workers?: number;
  /**
   * Worker processes kept even when idle (process mode); started by {@link SandboxPool.open}.
   * @defaultValue {@link DEFAULT_SANDBOX_MIN_WORKERS} (1)
   */
  minWorkers?: number;
  /**
   * Worker processes the pool may grow to while runs wait for one (process mode): the number of
   * scripts that run at once.
   * @defaultValue {@link DEFAULT_SANDBOX_MAX_WORKERS} (`os.availableParallelism()`), or `minWorkers` when larger
   */
  maxWorkers?: number;
  /**
   * Milliseconds a worker above `minWorkers` may stay idle before it is shut down.
   * @defaultValue {@link DEFAULT_SANDBOX_WORKER_IDLE_MS}
   */
  workerIdleMs?: number;
  /**
   * Microseconds a worker may keep its core busy after sending a tool call, reading for the
   * answer instead of sleeping until it comes (process mode; 0 turns it off). A worker spins only
   * while its run's answers come within this window (a slow tool is waited for asleep), only
   * when the running scripts, counting this one, leave at least one core for the host
   * (`os.availableParallelism()` − 1) and the machine's load average, less the pool's own running
   * workers, is below its core count,
   * and not while its spins keep being preempted. The cost is CPU: up to this long per call, on a core that
   * is otherwise idle. The gain is a wake-up per call: a sleeping process woken on an idle core
   * pays tens of µs before it runs (see docs/sandbox.md).
   * @defaultValue {@link DEFAULT_SANDBOX_WORKER_SPIN_US}
   */
  workerSpinUs?: number;
  /**
   * Called when a worker process starts or stops (process mode), e.g. to log or count them.
   * Exceptions it throws are ignored.
   */
  onWorkerEvent?: (event: SandboxWorkerEvent) => void;
  /** Default limits of every run; each run may override them. @defaultValue see {@link SandboxLimits} */
  limits?: Partial<SandboxLimits>;
  /**
   * Milliseconds a worker may stay unresponsive past a run's CPU budget, or take to confirm a
   * cancellation, before it is killed and replaced.
   * @defaultValue {@link DEFAULT_SANDBOX_KILL_GRACE_MS}
   */
  killGraceMs?: number;
  /**
   * Milliseconds a session may stay unused before it is dropped (its next run then fails with
   * `SESSION_EXPIRED`).
   * @defaultValue {@link DEFAULT_SANDBOX_SESSION_TTL_MS}
   */
  sessionTtlMs?: number;
  /**
   * Sessions kept at once; opening another evicts the least recently used idle one.
   * @defaultValue {@link DEFAULT_SANDBOX_MAX_SESSIONS}
   */
  maxSessions?: number;
  /**
   * Characters of a session name.
   * @defaultValue {@link DEFAULT_SANDBOX_MAX_SESSION_NAME_CHARS}
   */
  maxSessionNameChars?: number;
}

/**
 * A worker process started or stopped. `workers` is the number of live workers after the event;
 * `reason` says why one stopped: shut down after `workerIdleMs` idle, exited on its own or was
 * killed (a crash, an overrun: it is replaced as needed), or the pool closed.
 */
export type SandboxWorkerEvent =
  | { type: 'started'; pid: number; workers: number }
  | { type: 'stopped'; pid: number; workers: number; reason: 'idle' | 'exited' | 'closed' };

/** Options for {@link SandboxPool.run}. */
export interface SandboxRunOptions {
  /** Compiled code: `CompileResult.code` from `compileScript`. */
  code: string;
  /**
   * The tools the script may call. What the sandbox derives from them is built once per array
   * and shared by the runs that get the same array: pass one array per catalog version, and do
   * not change it after its first run.
   */
  tools: SandboxToolBinding[];
  /** Host-side dispatcher of tool calls. */
  invoke: ToolInvoker;
  /** Limits of this run, over the pool's. */
  limits?: Partial<SandboxLimits>;
  /** Cancels the run; the result has `error.code` `ABORTED`. */
  signal?: AbortSignal;
  /**
   * Runs the script in this session: the context (globals) of the session's earlier runs is kept.
   * Compile with `compileScript(source, { persistTopLevel: true })` so top-level declarations
   * persist too.
   */
  session?: string;
  /**
   * Whose session it is: sessions of different owners never share state, even with the same
   * name (`codecall serve` passes the MCP session id). See {@link SandboxPool.closeSessions}.
   * @defaultValue `''`
   */
  sessionOwner?: string;
  /**
   * Asked for a name the script calls that `tools` lacks, before it is refused as unknown (see
   * {@link UnknownToolResolver}); waiting for it counts against the run's wall time.
   * @defaultValue none: names outside `tools` are unknown
   */
  resolveUnknown?: UnknownToolResolver;
}

/** A session: the key of its kept context, where it lives, and the runs waiting on it. */
interface SessionEntry {
  key: string;
  name: string;
  owner: string;
  /** The worker holding the context (process mode), once chosen. */
  worker: WorkerProcess | undefined;
  /** Whether a run has created the context. */
  created: boolean;
  /** Runs queued or running in this session. */
  busy: number;
  /** The last queued run, so runs of one session go one at a time. */
  tail: Promise<unknown>;
  timer: NodeJS.Timeout | undefined;
  /** Why the session ended, once it has. */
  endedWith: string | undefined;
  /** Whether a run's result has told the model that the session ended. */
  reported: boolean;
}

/** How often a pool whose workers spin reads the load average (ms). */
const LOAD_READ_EVERY_MS = 1_000;

/**
 * Whether a machine at `load` (its 1-minute load average) leaves a core for a spinning worker:
 * the load less the pool's own running workers is below the core count. The pool's workers are
 * counted in the average they are judged by (a spinning worker is a runnable process nearly all
 * the time): counted in, a 2-core machine read 1.4–1.6 with one worker spinning, and load left
 * from earlier work tipped it over 2, which stopped the spinning for minutes (and lowered the
 * load, so it flapped).
 */
export function roomToSpin(load: number, cores: number, ownRunning: number): boolean {
  return load - ownRunning < cores;
}

/** Result codes after which a session's context is gone. */
const DROPS_SESSION = new Set<ExecutionErrorCode>([
  'CPU_TIMEOUT',
  'WALL_TIMEOUT',
  'MEMORY_LIMIT',
  'SANDBOX_CRASHED',
  'ABORTED',
  'SESSION_EXPIRED',
]);

function sessionResult(code: 'SESSION_EXPIRED' | 'SESSION_LIMIT', message: string): ExecutionResult {
  return {
    status: 'error',
    stdout: '',
    stderr: '',
    error: { code, message },
    toolCalls: [],
    stats: { wallMs: 0, cpuMs: 0, toolResultBytes: 0, stdoutBytes: 0 },
  };
}

function positiveInteger(value: number, field: string): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `Sandbox "${field}" must be a positive integer; got ${JSON.stringify(value)}.`,
      { details: { field } },
    );
  }
  return value;
}

/** How many worker processes the pool runs (process mode), resolved from the options. */
interface WorkerSizing {
  min: number;
  max: number;
  idleMs: number;
  /** See {@link SandboxPoolOptions.workerSpinUs}. */
  spinUs: number;
}

function resolveWorkerSizing(options: SandboxPoolOptions): WorkerSizing {
  const idleMs = positiveInteger(options.workerIdleMs ?? DEFAULT_SANDBOX_WORKER_IDLE_MS, 'workerIdleMs');
  const spinUs = options.workerSpinUs ?? DEFAULT_SANDBOX_WORKER_SPIN_US;
  if (!Number.isSafeInteger(spinUs) || spinUs < 0) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `Sandbox "workerSpinUs" must be a whole number of microseconds, 0 or more (0 turns spinning off); got ${JSON.stringify(spinUs)}.`,
      { details: { field: 'workerSpinUs' } },
    );
  }
  if (options.workers !== undefined) {
    const fixed = positiveInteger(options.workers, 'workers');
    return { min: fixed, max: fixed, idleMs, spinUs };
  }
  const min = positiveInteger(options.minWorkers ?? DEFAULT_SANDBOX_MIN_WORKERS, 'minWorkers');
  // An explicit minimum above the core count raises the default maximum with it.
  const max = positiveInteger(options.maxWorkers ?? Math.max(min, DEFAULT_SANDBOX_MAX_WORKERS), 'maxWorkers');
  if (min > max) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `Sandbox "minWorkers" (${min}) is above "maxWorkers" (${max}). Fix: lower minWorkers or raise maxWorkers.`,
      { details: { field: 'minWorkers' } },
    );
  }
  return { min, max, idleMs, spinUs };
}

type Waiter = {
  resolve: (worker: WorkerProcess) => void;
  reject: (error: unknown) => void;
  /** The only worker this waiter can use (a session's). */
  target?: WorkerProcess;
};

/**
 * True when this process runs without Node's start-up snapshot (`--no-node-snapshot` on the
 * command line or in `NODE_OPTIONS`), as isolated-vm requires of a process that creates isolates.
 */
function nodeSnapshotDisabled(): boolean {
  const flag = '--no-node-snapshot';
  return process.execArgv.includes(flag) || (process.env.NODE_OPTIONS ?? '').split(/\s+/).includes(flag);
}

/**
 * A pool of sandboxes that run compiled model code.
 *
 * @example
 * ```ts
 * await using pool = await SandboxPool.open({ mode: 'process' });
 * const compiled = compileScript('console.log(await tools.math.add({ a: 1, b: 2 }))');
 * if (compiled.ok) {
 *   const result = await pool.run({
 *     code: compiled.code,
 *     tools: [{ name: 'math.add', namespace: 'math', member: 'add' }],
 *     invoke: async ({ args }) => (args as { a: number; b: number }).a + (args as { a: number; b: number }).b,
 *   });
 *   console.log(formatResultForModel(result));
 * }
 * ```
 */
export class SandboxPool {
  readonly mode: SandboxMode;
  readonly #limits: Partial<SandboxLimits>;
  readonly #engine: IsolateEngine | undefined;
  readonly #workerOptions: WorkerProcessOptions | undefined;
  readonly #workers = new Set<WorkerProcess>();
  readonly #sizing: WorkerSizing;
  readonly #waiters: Waiter[] = [];
  /** Shut-down timers of idle workers (armed while the pool is above its minimum). */
  readonly #idleTimers = new Map<WorkerProcess, NodeJS.Timeout>();
  /** Workers being shut down for idleness (their exit is not a crash). */
  readonly #stopping = new WeakSet<WorkerProcess>();
  readonly #active = new Set<RunBackend>();
  /** CPU cores this process may use (read once: the affinity a host gives it at start). */
  readonly #cores = availableParallelism();
  /**
   * Whether the machine's load average, less this pool's running workers, was below its core
   * count when last read ({@link roomToSpin}; at most once per {@link LOAD_READ_EVERY_MS}, off
   * the run's path; the kernel updates it every 5 s).
   */
  #loadBelowCores = loadavg()[0]! < this.#cores;
  #loadReadAt = performance.now();
  #loadRead: NodeJS.Immediate | undefined;
  #spawning = 0;
  #closed = false;
  #closing: Promise<void> | undefined;
  /** Live sessions by key, least recently used first. */
  readonly #sessions = new Map<string, SessionEntry>();
  /** Sessions that ended unseen (expired, evicted, lost their worker), by key → why. */
  readonly #ended = new Map<string, { owner: string; why: string }>();
  readonly #sessionTtlMs: number;
  readonly #maxSessions: number;
  readonly #maxSessionNameChars: number;
  readonly #onWorkerEvent: ((event: SandboxWorkerEvent) => void) | undefined;

  private constructor(
    mode: SandboxMode,
    limits: Partial<SandboxLimits>,
    sizing: WorkerSizing,
    sessions: { ttlMs: number; max: number; nameChars: number },
    engine?: IsolateEngine,
    workerOptions?: WorkerProcessOptions,
    onWorkerEvent?: (event: SandboxWorkerEvent) => void,
  ) {
    this.mode = mode;
    this.#limits = limits;
    this.#sizing = sizing;
    this.#sessionTtlMs = sessions.ttlMs;
    this.#maxSessions = sessions.max;
    this.#maxSessionNameChars = sessions.nameChars;
    this.#engine = engine;
    this.#workerOptions = workerOptions;
    this.#onWorkerEvent = onWorkerEvent;
  }

  /**
   * How long a run starting now may spin for its answers (see
   * {@link SandboxPoolOptions.workerSpinUs}): 0 unless the running scripts, this one counted,
   * leave a core for the host, and the machine's load (the last minute's average of runnable
   * threads, other processes' included) is below its core count. The worker also stops
   * spinning by itself when its spins keep being preempted.
   */
  #spinUs(): number {
    if (this.#sizing.spinUs === 0 || this.#active.size + 1 > this.#cores - 1) return 0;
    if (performance.now() - this.#loadReadAt >= LOAD_READ_EVERY_MS && this.#loadRead === undefined) {
      // Read after the run has gone out: reading /proc/loadavg takes tens of µs on a cold core,
      // which every run would otherwise wait for.
      this.#loadRead = setImmediate(() => this.#readLoad());
      this.#loadRead.unref();
    }
    return this.#loadBelowCores ? this.#sizing.spinUs : 0;
  }

  #readLoad(): void {
    this.#loadRead = undefined;
    this.#loadReadAt = performance.now();
    this.#loadBelowCores = roomToSpin(loadavg()[0]!, this.#cores, this.#active.size);
  }

  /** Opens a pool: starts and warms its workers (or its in-process engine). */
  static async open(options: SandboxPoolOptions = {}): Promise<SandboxPool> {
    const mode = options.mode ?? DEFAULT_SANDBOX_MODE;
    if (mode !== 'process' && mode !== 'in-process') {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `Sandbox mode must be "process" or "in-process"; got ${JSON.stringify(mode)}.`,
        {
          details: { field: 'mode' },
        },
      );
    }
    const sizing = resolveWorkerSizing(options);
    const limits = { ...(options.limits ?? {}) };
    const resolved = resolveSandboxLimits(limits);
    const sessions = {
      ttlMs: positiveInteger(options.sessionTtlMs ?? DEFAULT_SANDBOX_SESSION_TTL_MS, 'sessionTtlMs'),
      max: positiveInteger(options.maxSessions ?? DEFAULT_SANDBOX_MAX_SESSIONS, 'maxSessions'),
      nameChars: positiveInteger(
        options.maxSessionNameChars ?? DEFAULT_SANDBOX_MAX_SESSION_NAME_CHARS,
        'maxSessionNameChars',
      ),
    };
    const prelude = loadPreludeSource();
    if (mode === 'in-process') {
      if (!nodeSnapshotDisabled()) {
        throw new CodecallError(
          'SANDBOX_UNAVAILABLE',
          'The in-process sandbox needs Node started with --no-node-snapshot (isolated-vm requires it: ' +
            "an isolate created beside Node's start-up snapshot can crash the process). Fix: run " +
            '`node --no-node-snapshot …` (or NODE_OPTIONS=--no-node-snapshot), or use mode "process", ' +
            'whose worker processes get the flag themselves.',
          { details: { field: 'mode' } },
        );
      }
      // Loaded only here: a process-mode host never loads isolated-vm.
      const { IsolateEngine } = await import('./engine.js');
      const engine = new IsolateEngine({ prelude, spareMemoryMb: resolved.memoryMb });
      engine.warm();
      return new SandboxPool(mode, limits, sizing, sessions, engine);
    }
    const workerOptions: WorkerProcessOptions = {
      entry: findDistFile('isolate/worker.js'),
      prelude,
      spareMemoryMb: resolved.memoryMb,
      startTimeoutMs: DEFAULT_SANDBOX_START_TIMEOUT_MS,
      heartbeatMs: DEFAULT_SANDBOX_HEARTBEAT_MS,
      killGraceMs: options.killGraceMs ?? DEFAULT_SANDBOX_KILL_GRACE_MS,
    };
    const pool = new SandboxPool(
      mode,
      limits,
      sizing,
      sessions,
      undefined,
      workerOptions,
      options.onWorkerEvent,
    );
    const started = await Promise.allSettled(Array.from({ length: sizing.min }, () => pool.#spawn()));
    const failure = started.find((entry) => entry.status === 'rejected');
    if (failure) {
      await pool.close();
      throw (failure as PromiseRejectedResult).reason;
    }
    return pool;
  }

  /**
   * Runs compiled code. Never throws for anything the script does: failures come back as
   * `status: 'error'` with a code and a message for the model. Throws `CLOSED` after
   * {@link SandboxPool.close}, `INVALID_ARGUMENT` for bad limits, and `SANDBOX_UNAVAILABLE`
   * when no worker can be started.
   */
  async run(options: SandboxRunOptions): Promise<ExecutionResult> {
    if (this.#closed) throw new CodecallError('CLOSED', 'The sandbox pool is closed; open a new one.');
    const limits = resolveSandboxLimits({ ...this.#limits, ...(options.limits ?? {}) });
    if (options.session !== undefined) return this.#runInSession(options, limits);
    return this.#runOnce(options, limits);
  }

  /** Live sessions (kept contexts). */
  get sessionCount(): number {
    return this.#sessions.size;
  }

  /**
   * Ends every session of `owner` (their contexts are disposed; a run in progress is cancelled).
   * Call it when the owner goes away, e.g. an MCP client session closes.
   */
  closeSessions(owner = ''): void {
    for (const entry of [...this.#sessions.values()]) {
      if (entry.owner === owner) this.#endSession(entry, `The session "${entry.name}" was closed.`, false);
    }
    for (const [key, ended] of [...this.#ended]) if (ended.owner === owner) this.#ended.delete(key);
  }

  async #runInSession(options: SandboxRunOptions, limits: SandboxLimits): Promise<ExecutionResult> {
    const name = options.session!;
    if (typeof name !== 'string' || name.length === 0 || name.length > this.#maxSessionNameChars) {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `A session name must be a string of 1 to ${this.#maxSessionNameChars} characters; got ${typeof name === 'string' ? `${name.length} characters` : typeof name}.`,
        { details: { field: 'session' } },
      );
    }
    const owner = options.sessionOwner ?? '';
    // Unambiguous whatever the characters of either part.
    const key = JSON.stringify([owner, name]);
    let entry = this.#sessions.get(key);
    if (entry === undefined) {
      const ended = this.#ended.get(key);
      if (ended !== undefined) {
        this.#ended.delete(key);
        return sessionResult('SESSION_EXPIRED', ended.why);
      }
      if (this.#sessions.size >= this.#maxSessions) {
        const victim = [...this.#sessions.values()].find((candidate) => candidate.busy === 0);
        if (victim === undefined) {
          return sessionResult(
            'SESSION_LIMIT',
            `All ${this.#maxSessions} sessions are running scripts, so session "${name}" cannot start now. Run the script without a session, or reuse a session.`,
          );
        }
        this.#endSession(
          victim,
          `The session "${victim.name}" was closed to make room for newer sessions (at most ${this.#maxSessions} are kept), so its variables are gone. Start over: run the script again, fetching the data it needs.`,
          true,
        );
      }
      entry = {
        key,
        name,
        owner,
        worker: undefined,
        created: false,
        busy: 0,
        tail: Promise.resolve(),
        timer: undefined,
        endedWith: undefined,
        reported: false,
      };
      this.#sessions.set(key, entry);
    }
    const session = entry;
    session.busy++;
    if (session.timer) clearTimeout(session.timer);
    session.timer = undefined;
    const run = session.tail.then(() => this.#sessionRun(session, options, limits));
    session.tail = run.catch(() => undefined);
    return run;
  }

  async #sessionRun(
    entry: SessionEntry,
    options: SandboxRunOptions,
    limits: SandboxLimits,
  ): Promise<ExecutionResult> {
    try {
      if (entry.endedWith !== undefined) {
        entry.reported = true;
        return sessionResult('SESSION_EXPIRED', entry.endedWith);
      }
      let worker: WorkerProcess | undefined;
      if (!this.#engine) {
        // A new session takes the first worker free (the pool grows for it like for any run),
        // then stays pinned to it.
        worker = await this.#acquire(entry.worker);
        entry.worker ??= worker;
        if (entry.endedWith !== undefined || worker !== entry.worker) {
          if (worker.reserved) {
            worker.reserved = false;
            this.#dispatchWaiters();
          }
          entry.reported = true;
          return sessionResult('SESSION_EXPIRED', entry.endedWith ?? 'The session lost its sandbox.');
        }
      }
      if (options.signal?.aborted) {
        // Cancelled before it started: nothing ran, so the session keeps its state.
        if (worker?.reserved) {
          worker.reserved = false;
          this.#dispatchWaiters();
        }
        const controller = new RunController({
          code: options.code,
          tools: options.tools,
          invoke: options.invoke,
          limits,
          signal: options.signal,
        });
        return controller.run(() => {
          throw new Error('a cancelled run never starts');
        });
      }
      const isNew = !entry.created;
      entry.created = true;
      const result = await this.#runOnce(options, limits, { key: entry.key, isNew }, worker);
      const code = result.error?.code;
      if (code !== undefined && DROPS_SESSION.has(code)) {
        this.#endSession(
          entry,
          `The session "${entry.name}" ended when a run in it failed (${code}).`,
          false,
        );
        entry.reported = true;
        result.error!.message +=
          code === 'SESSION_EXPIRED'
            ? ''
            : ` The session "${entry.name}" was discarded with its variables: your next run in it starts empty, so fetch the data again.`;
      }
      return result;
    } finally {
      entry.busy--;
      if (entry.busy === 0) this.#idle(entry);
    }
  }

  /** After a session's last queued run: arm its expiry, or remember that it ended unseen. */
  #idle(entry: SessionEntry): void {
    if (entry.endedWith !== undefined) {
      if (!entry.reported) this.#remember(entry, entry.endedWith);
      return;
    }
    if (this.#sessions.get(entry.key) !== entry) return;
    // Most recently used last.
    this.#sessions.delete(entry.key);
    this.#sessions.set(entry.key, entry);
    const ttl = this.#sessionTtlMs;
    entry.timer = setTimeout(
      () =>
        this.#endSession(
          entry,
          `The session "${entry.name}" expired after ${ttl} ms unused, so its variables are gone. Start over: run the script again, fetching the data it needs.`,
          true,
        ),
      ttl,
    );
    entry.timer.unref();
  }

  #remember(entry: SessionEntry, why: string): void {
    this.#ended.delete(entry.key);
    this.#ended.set(entry.key, { owner: entry.owner, why });
    while (this.#ended.size > DEFAULT_SANDBOX_MAX_ENDED_SESSIONS) {
      this.#ended.delete(this.#ended.keys().next().value!);
    }
  }

  /** Ends a session: frees its context; `remember` makes its next run fail with SESSION_EXPIRED. */
  #endSession(entry: SessionEntry, why: string, remember: boolean): void {
    if (entry.endedWith !== undefined) return;
    entry.endedWith = why;
    entry.reported = !remember;
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = undefined;
    if (this.#sessions.get(entry.key) === entry) this.#sessions.delete(entry.key);
    if (remember && entry.busy === 0) this.#remember(entry, why);
    if (!entry.created) return;
    if (this.#engine) this.#engine.dropSession(entry.key);
    else {
      entry.worker?.post({ t: 'drop-session', key: entry.key });
      // Its worker may now be free to shut down.
      this.#armIdleTimers();
    }
  }

  /** Sessions pinned to `worker`. */
  #sessionsOn(worker: WorkerProcess): number {
    let count = 0;
    for (const entry of this.#sessions.values()) if (entry.worker === worker) count++;
    return count;
  }

  /** An idle worker, preferring one that holds fewer sessions. */
  #idleWorker(): WorkerProcess | undefined {
    let best: WorkerProcess | undefined;
    let bestCount = Infinity;
    for (const worker of this.#workers) {
      if (!worker.idle) continue;
      const count = this.#sessionsOn(worker);
      if (count < bestCount) {
        best = worker;
        bestCount = count;
      }
    }
    return best;
  }

  /** Hands `worker` to a run: it is no longer idle, so its shut-down timer stops. */
  #reserve(worker: WorkerProcess): void {
    worker.reserved = true;
    const timer = this.#idleTimers.get(worker);
    if (timer) clearTimeout(timer);
    this.#idleTimers.delete(worker);
  }

  #liveWorkers(): number {
    let live = 0;
    for (const worker of this.#workers) if (!worker.retired) live++;
    return live;
  }

  /** Arms the shut-down timer of every idle worker while the pool is above its minimum. */
  #armIdleTimers(): void {
    if (this.#closed || this.#liveWorkers() <= this.#sizing.min) return;
    for (const worker of this.#workers) {
      if (!worker.idle || this.#idleTimers.has(worker)) continue;
      const timer = setTimeout(() => this.#idleTimeout(worker), this.#sizing.idleMs);
      timer.unref();
      this.#idleTimers.set(worker, timer);
    }
  }

  /** A worker stayed idle for `idleMs`: stop it unless that would go below the minimum or lose a session. */
  #idleTimeout(worker: WorkerProcess): void {
    this.#idleTimers.delete(worker);
    if (this.#closed || !worker.idle || this.#sessionsOn(worker) > 0) return;
    if (this.#liveWorkers() <= this.#sizing.min) return;
    this.#stopping.add(worker);
    worker.kill();
  }

  #emit(event: SandboxWorkerEvent): void {
    try {
      this.#onWorkerEvent?.(event);
    } catch {
      // an observer's failure is not the pool's
    }
  }

  async #runOnce(
    options: SandboxRunOptions,
    limits: SandboxLimits,
    session?: { key: string; isNew: boolean },
    reserved?: WorkerProcess,
  ): Promise<ExecutionResult> {
    // Built once per bindings array and shared by its runs: nothing here scales with the catalog.
    const tools = SandboxToolCatalog.of(options.tools).engine;
    const controllerOptions: ConstructorParameters<typeof RunController>[0] = {
      code: options.code,
      tools: options.tools,
      invoke: options.invoke,
      limits,
    };
    if (options.signal) controllerOptions.signal = options.signal;
    if (options.resolveUnknown) controllerOptions.resolveUnknown = options.resolveUnknown;
    const controller = new RunController(controllerOptions);
    const request = (): EngineRunRequest => ({
      code: options.code,
      tools,
      limits,
      wallTimeLeftMs: controller.wallTimeLeftMs(),
      ...(session ? { session } : {}),
    });
    if (this.#engine) {
      const engine = this.#engine;
      return controller.run((sink) => this.#track(engine.start(request(), sink)));
    }
    const worker = reserved ?? (await this.#acquire());
    try {
      return await controller.run((sink) => this.#track(worker.start(request(), sink, this.#spinUs())));
    } finally {
      if (worker.reserved) {
        // The run ended before it started (an already-aborted signal): hand the worker back.
        worker.reserved = false;
        this.#dispatchWaiters();
      }
    }
  }

  #track(backend: RunBackend): RunBackend {
    this.#active.add(backend);
    void backend.outcome.then(() => {
      this.#active.delete(backend);
      this.#dispatchWaiters();
    });
    return backend;
  }

  /**
   * An idle worker, reserved for the caller; with `target`, that worker only (a session's). A
   * target that dies before it is free is handed back retired: the caller checks.
   */
  #acquire(target?: WorkerProcess): Promise<WorkerProcess> {
    if (target?.retired) return Promise.resolve(target);
    const found = target ? (target.idle ? target : undefined) : this.#idleWorker();
    if (found) {
      this.#reserve(found);
      return Promise.resolve(found);
    }
    return new Promise((resolve, reject) => {
      this.#waiters.push(target ? { resolve, reject, target } : { resolve, reject });
      this.#replenish();
    });
  }

  #dispatchWaiters(): void {
    for (let index = 0; index < this.#waiters.length;) {
      const waiter = this.#waiters[index]!;
      let found: WorkerProcess | undefined;
      if (waiter.target) {
        if (waiter.target.retired || waiter.target.idle) found = waiter.target;
      } else found = this.#idleWorker();
      if (found === undefined) {
        index++;
        continue;
      }
      if (!found.retired) this.#reserve(found);
      this.#waiters.splice(index, 1);
      waiter.resolve(found);
    }
    this.#armIdleTimers();
  }

  /**
   * Starts workers up to the minimum, and one more per run waiting for any worker, up to the
   * maximum (a run waiting for its session's worker needs no new one).
   */
  #replenish(): void {
    if (this.#closed) return;
    const live = this.#liveWorkers();
    let waiting = 0;
    for (const waiter of this.#waiters) if (waiter.target === undefined) waiting++;
    const wanted = Math.max(this.#sizing.min, Math.min(this.#sizing.max, live + waiting));
    for (let missing = wanted - live - this.#spawning; missing > 0; missing--) {
      this.#spawn().catch((error: unknown) => {
        if (this.#workers.size === 0 && this.#spawning === 0) {
          for (const waiter of this.#waiters.splice(0)) waiter.reject(error);
        }
      });
    }
  }

  async #spawn(): Promise<WorkerProcess> {
    this.#spawning++;
    try {
      const worker = await WorkerProcess.spawn(this.#workerOptions!);
      if (this.#closed) {
        worker.kill();
        return worker;
      }
      this.#workers.add(worker);
      const pid = worker.pid;
      this.#emit({ type: 'started', pid, workers: this.#liveWorkers() });
      worker.onExit(() => {
        this.#workers.delete(worker);
        const timer = this.#idleTimers.get(worker);
        if (timer) clearTimeout(timer);
        this.#idleTimers.delete(worker);
        const reason = this.#stopping.has(worker) ? 'idle' : 'exited';
        this.#emit({ type: 'stopped', pid, workers: this.#liveWorkers(), reason });
        for (const entry of [...this.#sessions.values()]) {
          if (entry.worker !== worker) continue;
          this.#endSession(
            entry,
            `The session "${entry.name}" was lost when its sandbox process stopped, so its variables are gone. Start over: run the script again, fetching the data it needs.`,
            true,
          );
        }
        this.#dispatchWaiters();
        this.#replenish();
      });
      this.#dispatchWaiters();
      return worker;
    } finally {
      this.#spawning--;
    }
  }

  /** Cancels running scripts (they end with `ABORTED`), stops the workers. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#closed = true;
    for (const entry of this.#sessions.values()) if (entry.timer) clearTimeout(entry.timer);
    for (const timer of this.#idleTimers.values()) clearTimeout(timer);
    this.#idleTimers.clear();
    this.#sessions.clear();
    this.#ended.clear();
    for (const waiter of this.#waiters.splice(0)) {
      waiter.reject(new CodecallError('CLOSED', 'The sandbox pool was closed before the run started.'));
    }
    for (const backend of this.#active) backend.cancel('ABORTED');
    this.#engine?.close();
    let left = this.#workers.size;
    const exits = [...this.#workers].map(
      (worker) =>
        new Promise<void>((resolve) => {
          worker.onExit(() => {
            this.#emit({ type: 'stopped', pid: worker.pid, workers: --left, reason: 'closed' });
            resolve();
          });
          worker.kill();
        }),
    );
    await Promise.all(exits);
    this.#workers.clear();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
