/**
 * @module
 * Everything `codecall exec` needs, opened and closed as one resource: configuration → MCP tool
 * pool → sandbox pool → executor. Opening is concurrent and all-or-nothing (a failure closes
 * what was opened); closing is idempotent and deterministic.
 */
import { CodecallError } from '../errors.js';
import { loadConfig, type CodecallConfig, type LoadConfigOptions } from '../config/index.js';
import { SandboxPool, type SandboxPoolOptions } from '../isolate/index.js';
import { ToolPool, type Approver, type ToolPoolOptions } from '../tools/index.js';
import { createExecutor, type Executor, type SequenceListener } from './executor.js';
import type { ScriptStore } from './script-store.js';

/** Options of {@link ExecutionSession.open}. */
export interface ExecutionSessionOptions {
  /** A resolved configuration; when absent it is loaded with `load`. */
  config?: CodecallConfig;
  /** Where to load the configuration from (`--config`, cwd, env). */
  load?: LoadConfigOptions;
  /** Options of the tool pool (e.g. `onServerError`, in-memory `transports`). */
  tools?: ToolPoolOptions;
  /** Overrides of the configuration's `sandbox` section. */
  sandbox?: SandboxPoolOptions;
  /**
   * Decides tool calls that need approval (`requireApproval`), from scripts and direct calls
   * alike; a run or call may bring its own. Same as `tools.approver`, which it wins over.
   * @defaultValue none: such calls are denied with a message saying how to allow them
   */
  onApproval?: Approver;
  /** Usage-history hook, see {@link ExecutorOptions.onSequence}. */
  onSequence?: SequenceListener;
  /** Answers scripts' `store.get` / `store.set`, see {@link ExecutorOptions.store}. */
  store?: () => ScriptStore | undefined;
  /**
   * Stops opening: once aborted, `open` rejects at once with `ABORTED`, and the servers and
   * sandbox workers still starting are closed as soon as their start settles.
   */
  signal?: AbortSignal;
}

function abortedError(): CodecallError {
  return new CodecallError('ABORTED', 'Opening the MCP servers and the sandbox was cancelled.');
}

/** Resolves `work`, or rejects with `ABORTED` as soon as `signal` aborts. */
function unlessAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(abortedError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortedError());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * A configuration with its open tool pool, sandbox pool and executor.
 *
 * @example
 * ```ts
 * await using session = await ExecutionSession.open({ load: { path: 'examples/codecall.json' } });
 * const result = await session.executor.execute('console.log((await tools.expenses.get_team_members()).members.length)');
 * ```
 */
export class ExecutionSession {
  readonly config: CodecallConfig;
  readonly tools: ToolPool;
  readonly sandbox: SandboxPool;
  readonly executor: Executor;
  #closing: Promise<void> | undefined;

  private constructor(config: CodecallConfig, tools: ToolPool, sandbox: SandboxPool, executor: Executor) {
    this.config = config;
    this.tools = tools;
    this.sandbox = sandbox;
    this.executor = executor;
  }

  /** Loads the configuration (unless given), then opens the tool pool and the sandbox concurrently. */
  static async open(options: ExecutionSessionOptions = {}): Promise<ExecutionSession> {
    const config = options.config ?? (await loadConfig(options.load ?? {}));
    const sandboxOptions: SandboxPoolOptions = {
      mode: config.sandbox.mode,
      minWorkers: config.sandbox.minWorkers,
      maxWorkers: config.sandbox.maxWorkers,
      workerIdleMs: config.sandbox.workerIdleMs,
      limits: config.sandbox.limits,
      sessionTtlMs: config.sandbox.sessionTtlMs,
      maxSessions: config.sandbox.maxSessions,
      ...options.sandbox,
    };
    if (options.signal?.aborted) throw abortedError();
    const opening = Promise.allSettled([
      ToolPool.open(config, {
        ...options.tools,
        ...(options.onApproval ? { approver: options.onApproval } : {}),
      }),
      SandboxPool.open(sandboxOptions),
    ]);
    let settled: Awaited<typeof opening>;
    try {
      settled = await unlessAborted(opening, options.signal);
    } catch (error) {
      // Cancelled while starting: close each part once its start settles.
      void opening.then(([tools, sandbox]) =>
        Promise.allSettled([
          tools.status === 'fulfilled' ? tools.value.close() : undefined,
          sandbox.status === 'fulfilled' ? sandbox.value.close() : undefined,
        ]),
      );
      throw error;
    }
    const [tools, sandbox] = settled;
    if (tools.status === 'rejected' || sandbox.status === 'rejected') {
      await Promise.allSettled([
        tools.status === 'fulfilled' ? tools.value.close() : undefined,
        sandbox.status === 'fulfilled' ? sandbox.value.close() : undefined,
      ]);
      throw tools.status === 'rejected' ? tools.reason : (sandbox as PromiseRejectedResult).reason;
    }
    const executor = createExecutor({
      pool: tools.value,
      sandbox: sandbox.value,
      maxCodeBytes: config.sandbox.maxCodeBytes,
      ...(options.onSequence ? { onSequence: options.onSequence } : {}),
      ...(options.store ? { store: options.store } : {}),
    });
    return new ExecutionSession(config, tools.value, sandbox.value, executor);
  }

  /** Closes the sandbox and every MCP server (children exit). Idempotent. */
  close(): Promise<void> {
    this.#closing ??= Promise.allSettled([this.sandbox.close(), this.tools.close()]).then(() => undefined);
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
