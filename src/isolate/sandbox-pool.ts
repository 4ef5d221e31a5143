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
 *   enter a worker. Each worker runs one script at a time; further runs wait their turn.
 * - `'in-process'`: isolates live in the host process, for the lowest latency. It gives up
 *   that protection: script code runs on the host's thread between `await`s (a CPU-heavy
 *   script blocks the host's event loop for up to its CPU budget), and a failure V8 cannot
 *   contain (a heap OOM abort, work V8 cannot interrupt) hangs or takes down the host process.
 */
import {
  DEFAULT_SANDBOX_HEARTBEAT_MS,
  DEFAULT_SANDBOX_KILL_GRACE_MS,
  DEFAULT_SANDBOX_MODE,
  DEFAULT_SANDBOX_START_TIMEOUT_MS,
  DEFAULT_SANDBOX_WORKERS,
} from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import type { ExecutionResult, SandboxToolBinding, ToolInvoker } from '../types.js';
import { findDistFile, loadPreludeSource } from './assets.js';
import type { EngineRunRequest, IsolateEngine } from './engine.js';
import { resolveSandboxLimits, type SandboxLimits } from './limits.js';
import { RunController, type RunBackend } from './run-controller.js';
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
   * Worker processes (process mode): the number of scripts that run at once.
   * @defaultValue {@link DEFAULT_SANDBOX_WORKERS}
   */
  workers?: number;
  /** Default limits of every run; each run may override them. @defaultValue see {@link SandboxLimits} */
  limits?: Partial<SandboxLimits>;
  /**
   * Milliseconds a worker may stay unresponsive past a run's CPU budget, or take to confirm a
   * cancellation, before it is killed and replaced.
   * @defaultValue {@link DEFAULT_SANDBOX_KILL_GRACE_MS}
   */
  killGraceMs?: number;
}

/** Options for {@link SandboxPool.run}. */
export interface SandboxRunOptions {
  /** Compiled code: `CompileResult.code` from `compileScript`. */
  code: string;
  /** The tools the script may call. */
  tools: SandboxToolBinding[];
  /** Host-side dispatcher of tool calls. */
  invoke: ToolInvoker;
  /** Limits of this run, over the pool's. */
  limits?: Partial<SandboxLimits>;
  /** Cancels the run; the result has `error.code` `ABORTED`. */
  signal?: AbortSignal;
}

/**
 * True when this process runs without Node's start-up snapshot (`--no-node-snapshot` on the
 * command line or in `NODE_OPTIONS`), as isolated-vm requires of a process that creates isolates.
 */
function nodeSnapshotDisabled(): boolean {
  const flag = '--no-node-snapshot';
  return process.execArgv.includes(flag) || (process.env.NODE_OPTIONS ?? '').split(/\s+/).includes(flag);
}

type Waiter = { resolve: (worker: WorkerProcess) => void; reject: (error: unknown) => void };

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
  readonly #size: number;
  readonly #waiters: Waiter[] = [];
  readonly #active = new Set<RunBackend>();
  #spawning = 0;
  #closed = false;
  #closing: Promise<void> | undefined;

  private constructor(
    mode: SandboxMode,
    limits: Partial<SandboxLimits>,
    size: number,
    engine?: IsolateEngine,
    workerOptions?: WorkerProcessOptions,
  ) {
    this.mode = mode;
    this.#limits = limits;
    this.#size = size;
    this.#engine = engine;
    this.#workerOptions = workerOptions;
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
    const size = options.workers ?? DEFAULT_SANDBOX_WORKERS;
    if (!Number.isInteger(size) || size < 1) {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `Sandbox "workers" must be a positive integer; got ${JSON.stringify(size)}.`,
        {
          details: { field: 'workers' },
        },
      );
    }
    const limits = { ...(options.limits ?? {}) };
    const resolved = resolveSandboxLimits(limits);
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
      return new SandboxPool(mode, limits, 1, engine);
    }
    const workerOptions: WorkerProcessOptions = {
      entry: findDistFile('isolate/worker.js'),
      prelude,
      spareMemoryMb: resolved.memoryMb,
      startTimeoutMs: DEFAULT_SANDBOX_START_TIMEOUT_MS,
      heartbeatMs: DEFAULT_SANDBOX_HEARTBEAT_MS,
      killGraceMs: options.killGraceMs ?? DEFAULT_SANDBOX_KILL_GRACE_MS,
    };
    const pool = new SandboxPool(mode, limits, size, undefined, workerOptions);
    const started = await Promise.allSettled(Array.from({ length: size }, () => pool.#spawn()));
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
    const tools: [string, string, string][] = options.tools.map((tool) => [
      tool.name,
      tool.namespace,
      tool.member,
    ]);
    const controllerOptions: ConstructorParameters<typeof RunController>[0] = {
      code: options.code,
      tools: options.tools,
      invoke: options.invoke,
      limits,
    };
    if (options.signal) controllerOptions.signal = options.signal;
    const controller = new RunController(controllerOptions);
    const request = (): EngineRunRequest => ({
      code: options.code,
      tools,
      limits,
      wallTimeLeftMs: controller.wallTimeLeftMs(),
    });
    if (this.#engine) {
      const engine = this.#engine;
      return controller.run((sink) => this.#track(engine.start(request(), sink)));
    }
    const worker = await this.#acquire();
    try {
      return await controller.run((sink) => this.#track(worker.start(request(), sink)));
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

  #acquire(): Promise<WorkerProcess> {
    for (const worker of this.#workers) {
      if (worker.idle) {
        worker.reserved = true;
        return Promise.resolve(worker);
      }
    }
    return new Promise((resolve, reject) => {
      this.#waiters.push({ resolve, reject });
      this.#replenish();
    });
  }

  #dispatchWaiters(): void {
    for (const worker of this.#workers) {
      if (this.#waiters.length === 0) return;
      if (worker.idle) {
        worker.reserved = true;
        this.#waiters.shift()!.resolve(worker);
      }
    }
  }

  #replenish(): void {
    if (this.#closed) return;
    const live = [...this.#workers].filter((worker) => !worker.retired).length;
    for (let missing = this.#size - live - this.#spawning; missing > 0; missing--) {
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
      worker.onExit(() => {
        this.#workers.delete(worker);
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
    for (const waiter of this.#waiters.splice(0)) {
      waiter.reject(new CodecallError('CLOSED', 'The sandbox pool was closed before the run started.'));
    }
    for (const backend of this.#active) backend.cancel('ABORTED');
    this.#engine?.close();
    const exits = [...this.#workers].map(
      (worker) =>
        new Promise<void>((resolve) => {
          worker.onExit(resolve);
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
