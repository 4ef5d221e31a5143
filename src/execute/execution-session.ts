/**
 * @module
 * Everything `codecall exec` once needed, opened and closed as one resource: configuration → MCP
 * tool pool → sandbox pool → executor. Kept for compatibility as a thin view over the one
 * composition root, {@link CodecallRuntime}, opened with usage history in memory and no script
 * store unless one is given.
 */
import { CodecallRuntime, type CodecallRuntimeOptions } from './codecall-runtime.js';
import type { Executor } from './executor.js';
import type { CodecallConfig } from '../config/index.js';
import type { SandboxPool } from '../isolate/index.js';
import type { ToolPool } from '../tools/index.js';

/** Options of {@link ExecutionSession.open}: those of {@link CodecallRuntime.open} it passes on. */
export type ExecutionSessionOptions = Pick<
  CodecallRuntimeOptions,
  'config' | 'load' | 'tools' | 'sandbox' | 'onApproval' | 'onSequence' | 'store' | 'signal'
>;

/**
 * A configuration with its open tool pool, sandbox pool and executor: a thin wrapper over
 * {@link CodecallRuntime} (which also offers search and durable usage history; prefer it in new
 * code). Opening is concurrent and all-or-nothing; closing is idempotent.
 *
 * @example
 * ```ts
 * await using session = await ExecutionSession.open({ load: { path: 'examples/codecall.json' } });
 * const result = await session.executor.execute('console.log((await tools.expenses.get_team_members()).members.length)');
 * ```
 */
export class ExecutionSession {
  /** The runtime this session is a view of. */
  readonly runtime: CodecallRuntime;

  private constructor(runtime: CodecallRuntime) {
    this.runtime = runtime;
  }

  /** Loads the configuration (unless given), then opens the tool pool and the sandbox concurrently. */
  static async open(options: ExecutionSessionOptions = {}): Promise<ExecutionSession> {
    const runtime = await CodecallRuntime.open({
      ...options,
      // As before the runtime was the one root: nothing written to disk, no script store by default.
      history: false,
      store: options.store ?? (() => undefined),
    });
    return new ExecutionSession(runtime);
  }

  get config(): CodecallConfig {
    return this.runtime.config;
  }

  get tools(): ToolPool {
    return this.runtime.tools;
  }

  get sandbox(): SandboxPool {
    return this.runtime.sandbox;
  }

  get executor(): Executor {
    return this.runtime.executor;
  }

  /** Closes the sandbox and every MCP server (children exit). Idempotent. */
  close(): Promise<void> {
    return this.runtime.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
