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
  DEFAULT_SANDBOX_MAX_SESSION_NAME_CHARS,
  DEFAULT_SANDBOX_MAX_SESSIONS,
  DEFAULT_SANDBOX_ISOLATE_RUNS,
  DEFAULT_SANDBOX_SESSION_TTL_MS,
  DEFAULT_SANDBOX_MODE,
  DEFAULT_SANDBOX_START_TIMEOUT_MS,
} from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import type { ExecutionResult } from '../types.js';
import { findDistFile, loadPreludeSource } from './assets.js';
import type { EngineRunRequest, IsolateEngine } from './engine.js';
import { resolveSandboxLimits, type SandboxLimits } from './limits.js';
import { RunController, type RunBackend } from './run-controller.js';
import {
  nodeSnapshotDisabled,
  positiveInteger,
  resolveWorkerSizing,
  roomToSpin,
  type SandboxMode,
  type SandboxPoolOptions,
  type SandboxRunOptions,
  type SandboxWorkerEvent,
  type WorkerSizing,
} from './sandbox-pool-options.js';
import { SandboxSessions, sessionResult, type SessionEntry } from './sandbox-sessions.js';

export { roomToSpin };
export type { SandboxMode, SandboxPoolOptions, SandboxRunOptions, SandboxWorkerEvent };

/** How often a pool whose workers spin reads the load average (ms). */
const LOAD_READ_EVERY_MS = 1_000;

import { SandboxToolCatalog } from './tool-catalog.js';
import { WorkerProcess, type WorkerProcessOptions } from './worker-process.js';

type Waiter = {
  resolve: (worker: WorkerProcess) => void;
  reject: (error: unknown) => void;
  /** The only worker this waiter can use (a session's). */
  target?: WorkerProcess;
};

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
  readonly #sessions: SandboxSessions;
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
    this.#sessions = new SandboxSessions(sessions, (entry) => this.#dropContext(entry));
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
    const isolateRuns = positiveInteger(options.isolateRuns ?? DEFAULT_SANDBOX_ISOLATE_RUNS, 'isolateRuns');
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
      const engine = new IsolateEngine({ prelude, spareMemoryMb: resolved.memoryMb, isolateRuns });
      engine.warm();
      return new SandboxPool(mode, limits, sizing, sessions, engine);
    }
    const workerOptions: WorkerProcessOptions = {
      entry: findDistFile('isolate/worker.js'),
      prelude,
      spareMemoryMb: resolved.memoryMb,
      isolateRuns,
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
    this.#sessions.closeOwner(owner);
  }

  #runInSession(options: SandboxRunOptions, limits: SandboxLimits): Promise<ExecutionResult> {
    const opened = this.#sessions.open(options.session, options.sessionOwner ?? '');
    if (!('key' in opened)) return Promise.resolve(opened);
    return this.#sessions.enqueue(opened, () => this.#sessionRun(opened, options, limits));
  }

  async #sessionRun(
    entry: SessionEntry,
    options: SandboxRunOptions,
    limits: SandboxLimits,
  ): Promise<ExecutionResult> {
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
    return this.#sessions.afterRun(entry, result);
  }

  /** Frees the context of a session that ended: in the engine, or on its worker. */
  #dropContext(entry: SessionEntry): void {
    if (this.#engine) this.#engine.dropSession(entry.key);
    else {
      entry.worker?.post({ t: 'drop-session', key: entry.key });
      // Its worker may now be free to shut down.
      this.#armIdleTimers();
    }
  }

  /** Sessions pinned to `worker`. */
  #sessionsOn(worker: WorkerProcess): number {
    return this.#sessions.countOn(worker);
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
      ...(options.owner !== undefined ? { owner: options.owner } : {}),
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
        this.#sessions.endOn(worker);
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
    this.#sessions.clear();
    for (const timer of this.#idleTimers.values()) clearTimeout(timer);
    this.#idleTimers.clear();
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
