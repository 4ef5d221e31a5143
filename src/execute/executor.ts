/**
 * @module
 * Runs model code against the MCP tool pool: compile (esbuild), bind the catalog into the
 * sandbox, dispatch every call through the pool with `caller: "code_execution"` (policy and
 * input schema checked on the host), and report. A script's failure is a result, never a throw.
 * After each run the ordered list of tools it called successfully goes to `onSequence` (usage
 * history for tool search).
 */
import { compileScriptAsync, renderDeclarations, type RenderDeclarationsOptions } from '../compile/index.js';
import { DEFAULT_MAX_CODE_BYTES } from '../config/defaults.js';
import { resolveSandboxLimits, type SandboxLimits, type SandboxPool } from '../isolate/index.js';
import type { CatalogTool, ToolPool } from '../tools/index.js';
import type { ExecutionResult, SandboxToolBinding, ToolInvoker } from '../types.js';

/** Receives the qualified names of the tools a run called successfully, in dispatch order. */
export type SequenceListener = (sequence: string[], result: ExecutionResult) => void | Promise<void>;

/** Options of {@link createExecutor}. */
export interface ExecutorOptions {
  /** The MCP tools scripts may call (policy is enforced by the pool on every call). */
  pool: ToolPool;
  /** Where scripts run. */
  sandbox: SandboxPool;
  /** Limits of every run, over the sandbox pool's own. */
  limits?: Partial<SandboxLimits>;
  /**
   * Bytes of model code accepted.
   * @defaultValue {@link DEFAULT_MAX_CODE_BYTES}
   */
  maxCodeBytes?: number;
  /**
   * Called after every run that dispatched at least one call, with the qualified names of the
   * calls that succeeded, in dispatch order. Errors it throws are ignored (they never fail a run).
   */
  onSequence?: SequenceListener;
}

/** One tool call of a run, as the host saw it finish (see {@link ExecuteOptions.onToolResult}). */
export interface ToolResultEvent {
  /** Qualified name, `server.tool`. */
  name: string;
  /** The arguments the script passed (a copy of plain data). */
  args: unknown;
  /**
   * `ok`: the call's result, as the MCP pool returned it (before the sandbox's size limits: a
   * result the sandbox then refuses as too large is still reported here). Otherwise the error
   * the call failed with (its `message` is what the script sees).
   */
  result: unknown;
  /** The call succeeded on the host. */
  ok: boolean;
}

/** Receives every tool call of a run as it finishes; see {@link ExecuteOptions.onToolResult}. */
export type ToolResultListener = (event: ToolResultEvent) => void;

/** Options of {@link Executor.execute}. */
export interface ExecuteOptions {
  /** Cancels the run (the result has `error.code` `"ABORTED"`; tool calls in flight are cancelled). */
  signal?: AbortSignal;
  /** Limits of this run, over the executor's. */
  limits?: Partial<SandboxLimits>;
  /**
   * Called on the host after each tool call of this run finishes, before its result goes back
   * to the script, with the result itself (the only way to see results as data: the
   * {@link ExecutionResult} carries only their sizes). It runs on the path of every call, so keep
   * it cheap; errors it throws are ignored.
   */
  onToolResult?: ToolResultListener;
  /**
   * Whether this run's tool calls go to `onSequence` (usage history, the tool graph).
   * @defaultValue true
   */
  learn?: boolean;
}

/** Runs model code against MCP tools. */
export interface Executor {
  /**
   * Compiles and runs `source`. Resolves with `status: "error"` for anything the script does
   * wrong (syntax, throw, timeout, forbidden tool, bad arguments…); throws only for developer
   * faults (closed pools, invalid limits).
   */
  execute(source: string, options?: ExecuteOptions): Promise<ExecutionResult>;
  /** The tools scripts may call (`allowedCallers` includes `"code_execution"`). */
  codeTools(): CatalogTool[];
  /** TypeScript declarations of {@link Executor.codeTools}, for the model's prompt or `tsc`. */
  declarations(options?: RenderDeclarationsOptions): string;
}

function emptyResult(code: 'SYNTAX_ERROR', message: string): ExecutionResult {
  return {
    status: 'error',
    stdout: '',
    stderr: '',
    error: { code, message },
    toolCalls: [],
    stats: { wallMs: 0, cpuMs: 0, toolResultBytes: 0, stdoutBytes: 0 },
  };
}

/**
 * Creates an executor over an open tool pool and sandbox pool.
 *
 * @example
 * ```ts
 * const executor = createExecutor({ pool, sandbox, onSequence: (names) => history.record(names) });
 * const result = await executor.execute('const { members } = await tools.expenses.get_team_members(); console.log(members.length);');
 * ```
 */
export function createExecutor(options: ExecutorOptions): Executor {
  const { pool, sandbox, onSequence } = options;
  const maxCodeBytes = options.maxCodeBytes ?? DEFAULT_MAX_CODE_BYTES;
  // Validate limits once, up front: bad limits are a developer fault.
  if (options.limits) resolveSandboxLimits(options.limits);
  const invoke: ToolInvoker = ({ name, args, signal }) =>
    pool.call(name, args, { caller: 'code_execution', signal });
  const observed = (listener: ToolResultListener): ToolInvoker => {
    const tell = (event: ToolResultEvent): void => {
      try {
        listener(event);
      } catch {
        // An observer never fails a call.
      }
    };
    return async (invocation) => {
      let result: unknown;
      try {
        result = await invoke(invocation);
      } catch (error) {
        tell({ name: invocation.name, args: invocation.args, result: error, ok: false });
        throw error;
      }
      tell({ name: invocation.name, args: invocation.args, result, ok: true });
      return result;
    };
  };
  // One bindings array per catalog snapshot, so runs share what the sandbox derives from it
  // (the unknown-name index).
  let bound: { catalog: readonly CatalogTool[]; tools: SandboxToolBinding[] } | undefined;
  const bindingsOf = (catalog: readonly CatalogTool[]): SandboxToolBinding[] => {
    if (bound?.catalog !== catalog)
      bound = {
        catalog,
        tools: catalog.map((t) => ({ name: t.name, namespace: t.namespace, member: t.member })),
      };
    return bound.tools;
  };
  const codeTools = (): CatalogTool[] =>
    pool.catalog().filter((t) => t.allowedCallers.includes('code_execution'));

  return {
    async execute(source: string, executeOptions: ExecuteOptions = {}): Promise<ExecutionResult> {
      const compiled = await compileScriptAsync(source, { maxCodeBytes });
      if (!compiled.ok) return emptyResult('SYNTAX_ERROR', compiled.error.message);
      // Every tool is bound, so a call to one not opened to code reaches the host and is
      // refused there with a message naming the `allowedCallers` key that would open it.
      const tools = bindingsOf(pool.catalog());
      const limits = { ...options.limits, ...executeOptions.limits };
      const result = await sandbox.run({
        code: compiled.code,
        tools,
        invoke: executeOptions.onToolResult ? observed(executeOptions.onToolResult) : invoke,
        ...(Object.keys(limits).length > 0 ? { limits } : {}),
        ...(executeOptions.signal ? { signal: executeOptions.signal } : {}),
      });
      if (onSequence && executeOptions.learn !== false && result.toolCalls.length > 0) {
        const sequence = result.toolCalls.filter((c) => c.ok).map((c) => c.tool);
        try {
          await onSequence(sequence, result);
        } catch {
          // History is best effort from here; it never fails a run.
        }
      }
      return result;
    },
    codeTools,
    declarations(renderOptions?: RenderDeclarationsOptions): string {
      return renderDeclarations(codeTools(), renderOptions);
    },
  };
}
