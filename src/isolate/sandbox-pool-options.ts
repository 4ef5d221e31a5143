/**
 * @module
 * The options of a {@link SandboxPool} and of one run, and their resolution: the worker pool's
 * sizing (fixed, or by load between a minimum and a maximum), spinning, and the checks that
 * name the field and the fix.
 */
import {
  DEFAULT_SANDBOX_MAX_WORKERS,
  DEFAULT_SANDBOX_MIN_WORKERS,
  DEFAULT_SANDBOX_WORKER_IDLE_MS,
  DEFAULT_SANDBOX_WORKER_SPIN_US,
} from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import type { SandboxToolBinding, ToolInvoker } from '../types.js';
import type { SandboxLimits } from './limits.js';
import type { UnknownToolResolver } from './run-controller.js';

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
   * Runs of one owner (see {@link SandboxRunOptions.owner}) one isolate serves, each in a fresh
   * context, before it is disposed; `1`: an isolate per run.
   * @defaultValue {@link DEFAULT_SANDBOX_ISOLATE_RUNS}
   */
  isolateRuns?: number;
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
   * Whose run it is: runs of one owner may take turns in one isolate, each in a fresh context (its
   * own globals and built-ins; nothing of an earlier run is reachable), which saves creating an
   * isolate per run (see {@link SandboxPoolOptions.isolateRuns}); runs of different owners never
   * share an isolate. Pass one owner per trust domain: a client of a server, an agent run, a
   * queue's jobs. @defaultValue none: the run gets an isolate of its own
   */
  owner?: string;
  /**
   * Asked for a name the script calls that `tools` lacks, before it is refused as unknown (see
   * {@link UnknownToolResolver}); waiting for it counts against the run's wall time.
   * @defaultValue none: names outside `tools` are unknown
   */
  resolveUnknown?: UnknownToolResolver;
}

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

export function positiveInteger(value: number, field: string): number {
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
export interface WorkerSizing {
  min: number;
  max: number;
  idleMs: number;
  /** See {@link SandboxPoolOptions.workerSpinUs}. */
  spinUs: number;
}

export function resolveWorkerSizing(options: SandboxPoolOptions): WorkerSizing {
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

/**
 * True when this process runs without Node's start-up snapshot (`--no-node-snapshot` on the
 * command line or in `NODE_OPTIONS`), as isolated-vm requires of a process that creates isolates.
 */
export function nodeSnapshotDisabled(): boolean {
  const flag = '--no-node-snapshot';
  return process.execArgv.includes(flag) || (process.env.NODE_OPTIONS ?? '').split(/\s+/).includes(flag);
}
