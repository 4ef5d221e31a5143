/**
 * @module
 * Runs model code against the MCP tool pool: compile (esbuild), bind the catalog into the
 * sandbox, dispatch every call through the pool with `caller: "code_execution"` (policy and
 * input schema checked on the host), and report. A script's failure is a result, never a throw.
 * After each run the ordered list of tools it called successfully goes to `onSequence` (usage
 * history for tool search).
 */
import { randomUUID } from 'node:crypto';
import { compileScriptAsync, renderDeclarations, type RenderDeclarationsOptions } from '../compile/index.js';
import { DEFAULT_MAX_CODE_BYTES } from '../config/defaults.js';
import {
  resolveSandboxLimits,
  type SandboxLimits,
  type SandboxPool,
  type UnknownToolResolver,
} from '../isolate/index.js';
import type { Approver, CatalogTool, ToolPool, UpstreamAsker } from '../tools/index.js';
import type { ExecutionResult, SandboxToolBinding, ToolInvoker } from '../types.js';
import type { CallTrace } from '../util/trace-context.js';
import { isStoreCall, STORE_BINDINGS, type ScriptStore } from './script-store.js';
import {
  HANDLE_BINDING,
  HandleTable,
  isHandleCall,
  resolveResultHandleOptions,
  type ResultHandleOptions,
} from './result-handles.js';
import { CodecallError } from '../errors.js';
import { JsonText } from '../util/json-text.js';
import { HeldResult } from '../util/held-result.js';
import { ShapeSampler, type ResultShapeBook, type ShapeSample } from './result-shapes.js';
import { createJournaledInvoker, type ReplayInDoubtPolicy } from './journaled-invoker.js';
import { hashCode, type RunJournal, type RunJournalEntry } from '../store/index.js';

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
  /**
   * Answers `store.get` / `store.set` of scripts, read at each run (the runtime's store opens
   * after the executor). Without one, or when it returns undefined, scripts have no `store`.
   */
  store?: (() => ScriptStore | undefined) | undefined;
  /**
   * When a tool result stays on the host as a handle, and the bounds of handles (docs/data.md).
   * @defaultValue the `DEFAULT_RESULT_HANDLE_*` constants
   */
  resultHandles?: ResultHandleOptions | undefined;
  /**
   * Learned result types: the declarations show a tool without an `outputSchema` with the
   * shape this book learned of its results (docs/data.md).
   */
  resultShapes?: ResultShapeBook | undefined;
  /**
   * Called after each run that learns (`learn` not false) with samples of its tools' results
   * (tools of the pool without an `outputSchema`; a few per tool; no value is copied). Errors it
   * throws are ignored. Without it, no result is sampled.
   */
  onShapeSamples?: ((samples: ShapeSample[]) => void) | undefined;
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
  /**
   * Records every tool call of this run in this journal (`started` before the call is made,
   * `finished` before its answer reaches the script), so the run can be resumed with `replay`.
   */
  journal?: RunJournal;
  /**
   * Resume the run recorded in `journal`: re-run the script, answer the calls the journal has
   * from it without calling their servers, make the calls past it live (and journal them). Throws
   * `REPLAY_DIVERGED` when the script is not the journaled one or makes a call the journal does
   * not have while journaled calls remain, and `REPLAY_IN_DOUBT` per `replayInDoubt`.
   * @defaultValue false
   */
  replay?: boolean;
  /**
   * What a replay does with a journaled call that was in flight when the earlier run stopped (it
   * may or may not have happened): `refuse` stops the run with `REPLAY_IN_DOUBT` unless the tool
   * is annotated `idempotentHint` or `readOnlyHint` (then it is called again); `repeat` calls it
   * again whatever the tool.
   * @defaultValue 'refuse'
   */
  replayInDoubt?: ReplayInDoubtPolicy;
  /**
   * Decides this run's calls that need approval (`requireApproval`).
   * @defaultValue the tool pool's `approver`
   */
  approver?: Approver;
  /**
   * The run's id, carried by its approval requests and audit records.
   * @defaultValue a random UUID
   */
  runId?: string;
  /**
   * Runs the script in this sandbox session: globals and top-level declarations of the
   * session's earlier runs are kept (see `SandboxRunOptions.session`).
   */
  session?: string;
  /** Whose session it is (sessions of different owners never share state). @defaultValue `''` */
  sessionOwner?: string;
  /**
   * Whose run it is: runs of one owner may take turns in one isolate, each in a fresh context
   * with nothing of the earlier runs reachable (see `SandboxRunOptions.owner`); runs of different
   * owners never share an isolate. @defaultValue none: the run gets an isolate of its own
   */
  owner?: string;
  /**
   * Answers this run's `store.get` / `store.set` (one client's own store in `codecall serve`).
   * @defaultValue the executor's `store`
   */
  store?: ScriptStore;
  /**
   * Tools the caller answers itself, bound beside the catalog (a vendor endpoint's client tools:
   * `tools.<namespace>.<member>`): their calls go to `invoke` instead of the MCP pool, through
   * the run's journal like any other call. @defaultValue none
   */
  extraTools?: ExtraTools;
  /** Traces the run's MCP calls (their requests carry its trace context). @defaultValue none */
  trace?: CallTrace | undefined;
  /**
   * Answers what an upstream server asks while one of this run's calls is in flight: the
   * `elicitation/create` / `sampling/createMessage` of a 2026-07-28 server's `input_required`
   * round, which belongs to that call (`ToolCallOptions.asker`). @defaultValue none: such a
   * round is refused unless the pool can route it (see `ToolPool.soleOrigin`), and the call fails
   */
  asker?: UpstreamAsker | undefined;
}

/** Tools bound into one run and answered by the caller (see {@link ExecuteOptions.extraTools}). */
export interface ExtraTools {
  tools: readonly SandboxToolBinding[];
  invoke: ToolInvoker;
}

/** Runs model code against MCP tools. */
export interface Executor {
  /**
   * Compiles and runs `source`. Resolves with `status: "error"` for anything the script does
   * wrong (syntax, throw, timeout, forbidden tool, bad arguments…); throws only for developer
   * faults (closed pools, invalid limits) and for a run journal that cannot be written or
   * replayed (`JOURNAL_WRITE_FAILED`, `REPLAY_DIVERGED`, `REPLAY_IN_DOUBT`).
   */
  execute(source: string, options?: ExecuteOptions): Promise<ExecutionResult>;
  /** The tools scripts may call (`allowedCallers` includes `"code_execution"`). */
  codeTools(): CatalogTool[];
  /** TypeScript declarations of {@link Executor.codeTools}, for the model's prompt or `tsc`. */
  declarations(options?: RenderDeclarationsOptions): string;
}

/** How a script reaches `tool`: `tools.<namespace>.<member>`, with its qualified name. */
function bindingOf(tool: CatalogTool): SandboxToolBinding {
  // Tools that may need approval report the script line of their calls (the request names it).
  return tool.requireApproval !== undefined && tool.requireApproval !== false
    ? { name: tool.name, namespace: tool.namespace, member: tool.member, reportsLine: true }
    : { name: tool.name, namespace: tool.namespace, member: tool.member };
}

/**
 * The event of a call that succeeded. A result passed through as JSON text is parsed only when a
 * listener reads `result` (most read only the name and `ok`), once.
 */
function okEvent(name: string, args: unknown, result: unknown): ToolResultEvent {
  if (!JsonText.isInstance(result)) return { name, args, result, ok: true };
  let parsed: { value: unknown } | undefined;
  const event = { name, args, ok: true } as ToolResultEvent;
  Object.defineProperty(event, 'result', {
    enumerable: true,
    get: () => (parsed ??= { value: result.value() }).value,
  });
  return event;
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

/** Result codes of a run cut short from outside: journaled calls it did not reach are no divergence. */
const INTERRUPTED_CODES: ReadonlySet<string> = new Set([
  'ABORTED',
  'WALL_TIMEOUT',
  'CPU_TIMEOUT',
  'MEMORY_LIMIT',
  'SANDBOX_CRASHED',
]);

interface OpenedJournal {
  invoker: ReturnType<typeof createJournaledInvoker>;
  controller: AbortController;
  stopped: CodecallError | undefined;
  dispose(): void;
}

/**
 * Checks that `recorded` (a journal's entries) is one run of this script: empty, or its header
 * (first entry, and only that one) has `codeHash`, and it is resumed (`replay`), not run again.
 */
function checkJournalHeader(recorded: readonly RunJournalEntry[], codeHash: string, replay: boolean): void {
  if (recorded.length === 0) return;
  const invalid = (message: string): CodecallError =>
    new CodecallError('INVALID_ARGUMENT', message, { details: { field: 'journal' } });
  if (!replay)
    throw invalid(
      `The run journal already holds a run (${recorded.length} entries): resume it with replay: true (--resume), or give a new journal.`,
    );
  const [first] = recorded;
  if (first?.type !== 'run')
    throw invalid(
      'The run journal has no header line (its first entry is not {"type":"run","codeHash":…}): nothing says which script wrote it, so it cannot be replayed. Give the journal codecall wrote, or start a new run with a new journal.',
    );
  const runs = recorded.filter((entry) => entry.type === 'run').length;
  if (runs > 1)
    throw invalid(
      `The run journal holds ${runs} runs (${runs} header lines): two runs were recorded into it, and a replay of either would repeat calls of the other. Start a new run with a new journal.`,
    );
  if (first.codeHash !== codeHash) {
    throw new CodecallError(
      'REPLAY_DIVERGED',
      'The run journal was written by another script (its code hash differs): a replay runs the same script. Give the script of the journaled run, or start a new run with a new journal.',
      { details: {} },
    );
  }
}

/** Reads and starts the journal of one run; the run is stopped through `controller`. */
async function openJournal(
  source: string,
  options: ExecuteOptions,
  pool: ToolPool,
  invoke: ToolInvoker,
): Promise<OpenedJournal> {
  const journal = options.journal!;
  const codeHash = hashCode(source);
  // Read on a fresh run too: a journal holds one run, and its first entry names the script.
  const recorded: readonly RunJournalEntry[] = await journal.entries();
  checkJournalHeader(recorded, codeHash, options.replay === true);
  if (recorded.length === 0) await journal.append({ type: 'run', codeHash, at: Date.now() });
  const controller = new AbortController();
  const outer = options.signal;
  const onAbort = (): void => controller.abort(outer?.reason);
  if (outer?.aborted) onAbort();
  else outer?.addEventListener('abort', onAbort, { once: true });
  const opened: OpenedJournal = {
    controller,
    stopped: undefined,
    invoker: createJournaledInvoker({
      invoke,
      journal,
      recorded,
      inDoubt: options.replayInDoubt ?? 'refuse',
      isRepeatable: (name) => {
        // A store call sets or reads one key: doing it again has the same effect.
        if (isStoreCall(name)) return true;
        const hints = pool.get(name)?.annotations;
        return hints?.idempotentHint === true || hints?.readOnlyHint === true;
      },
      stop: (error) => {
        opened.stopped = error;
        controller.abort(error);
      },
    }),
    dispose: () => outer?.removeEventListener('abort', onAbort),
  };
  return opened;
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
  const handleOptions = resolveResultHandleOptions(options.resultHandles);
  /** The run's invoker with result handles: large results held, handle calls answered, handles in arguments replaced. */
  const withHandles =
    (handles: HandleTable, inner: ToolInvoker, sampler: ShapeSampler | undefined): ToolInvoker =>
    async (invocation) => {
      if (isHandleCall(invocation.name)) return handles.answer(invocation.args);
      const args = await handles.substitute(invocation.args);
      const value = await inner(args === invocation.args ? invocation : { ...invocation, args });
      const held = await handles.hold(invocation.name, value);
      // A held result was sampled from the value the table parsed to hold it.
      if (sampler !== undefined && !HeldResult.isInstance(held)) sampler.observe(invocation.name, value);
      return held;
    };
  /** Tools whose results teach a learned type: the pool's, without a declared `outputSchema`. */
  const learnsShape = (name: string): boolean => {
    const tool = pool.get(name);
    return tool !== undefined && tool.outputSchema === undefined;
  };
  /** The invoker of one run: its calls carry the run id and their index (approvals, audit). */
  const invokerOf = (
    approver: Approver | undefined,
    runId: string,
    store: ScriptStore | undefined,
    trace: CallTrace | undefined,
    asker: UpstreamAsker | undefined,
  ): ToolInvoker => {
    let calls = 0;
    return ({ name, args, signal, line }) =>
      store !== undefined && isStoreCall(name)
        ? store.answer(name, args)
        : pool.call(name, args, {
            caller: 'code_execution',
            signal,
            approver,
            runId,
            callIndex: calls++,
            line,
            // A JSON text result goes to the sandbox unparsed (it parses it once, itself); the
            // host consumers that read values (the journal, `onToolResult`) parse it themselves.
            jsonText: true,
            trace,
            // The asker learns which call asks (a 2026 client's run pauses on that call).
            ...(asker ? { asker: (request, signal) => asker(request, signal, { tool: name, args }) } : {}),
          });
  };
  const observed = (listener: ToolResultListener, inner: ToolInvoker): ToolInvoker => {
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
        result = await inner(invocation);
      } catch (error) {
        tell({ name: invocation.name, args: invocation.args, result: error, ok: false });
        throw error;
      }
      tell(okEvent(invocation.name, invocation.args, result));
      return result;
    };
  };
  // One bindings array per catalog snapshot, so runs share what the sandbox derives from it
  // (the unknown-name index).
  let bound: { catalog: readonly CatalogTool[]; withStore: boolean; tools: SandboxToolBinding[] } | undefined;
  const bindingsOf = (catalog: readonly CatalogTool[], withStore: boolean): SandboxToolBinding[] => {
    if (bound?.catalog !== catalog || bound.withStore !== withStore) {
      const tools = catalog
        // The store's and handles' names are the host's own: a tool of that name is never reached from code.
        .filter((t) => !isStoreCall(t.name) && !isHandleCall(t.name))
        .map(bindingOf);
      bound = {
        catalog,
        withStore,
        tools: withStore ? [...STORE_BINDINGS, HANDLE_BINDING, ...tools] : [HANDLE_BINDING, ...tools],
      };
    }
    return bound.tools;
  };
  /**
   * A name the run's bindings lack (see `SandboxRunOptions.resolveUnknown`): a tool of a server
   * that was still starting when the run began is called once that server has started (bounded
   * by its connect timeout and by the run's wall time); a tool of a server that failed is
   * refused with the reason. Any other name stays unknown.
   */
  const resolveUnknown: UnknownToolResolver = (name, signal) => {
    if (isStoreCall(name) || isHandleCall(name)) return undefined;
    const server = pool.serverOfTool(name);
    if (server === undefined) return undefined;
    const late = (): SandboxToolBinding | string | undefined => {
      const tool = pool.get(name);
      if (tool !== undefined) return bindingOf(tool);
      const failure = pool.failureOf(server);
      return failure === undefined
        ? undefined
        : `Unknown tool "${name}": MCP server "${server}" failed to start (${failure}), so its tools are unavailable. Do not retry it in this run.`;
    };
    if (pool.isStarting(server)) return pool.whenStarted(server, signal).then(late);
    const found = late();
    return found === undefined ? undefined : Promise.resolve(found);
  };
  const codeTools = (): CatalogTool[] =>
    pool.catalog().filter((t) => t.allowedCallers.includes('code_execution'));

  return {
    async execute(source: string, executeOptions: ExecuteOptions = {}): Promise<ExecutionResult> {
      const session = executeOptions.session;
      // Off the event loop (esbuild's service process), so tool calls of other runs go on.
      const compiled = await compileScriptAsync(source, {
        maxCodeBytes,
        persistTopLevel: session !== undefined,
      });
      if (!compiled.ok) return emptyResult('SYNTAX_ERROR', compiled.error.message);
      // Every tool is bound, so a call to one not opened to code reaches the host and is
      // refused there with a message naming the `allowedCallers` key that would open it.
      const store = executeOptions.store ?? options.store?.();
      const bindings = bindingsOf(pool.catalog(), store !== undefined);
      const tools = executeOptions.extraTools ? [...bindings, ...executeOptions.extraTools.tools] : bindings;
      const limits = { ...options.limits, ...executeOptions.limits };
      if (executeOptions.replay && !executeOptions.journal)
        throw new CodecallError(
          'INVALID_ARGUMENT',
          '`replay: true` needs the `journal` of the run to resume.',
          {
            details: { field: 'replay', value: true },
          },
        );
      const pooled = invokerOf(
        executeOptions.approver,
        executeOptions.runId ?? randomUUID(),
        store,
        executeOptions.trace,
        executeOptions.asker,
      );
      const extra = executeOptions.extraTools;
      const extraNames = new Set(extra?.tools.map((t) => t.name));
      const invoke: ToolInvoker =
        extra === undefined
          ? pooled
          : (invocation) => (extraNames.has(invocation.name) ? extra.invoke(invocation) : pooled(invocation));
      const journaled = executeOptions.journal
        ? await openJournal(source, executeOptions, pool, invoke)
        : undefined;
      const base = journaled?.invoker.invoke ?? invoke;
      const sampler =
        options.onShapeSamples !== undefined && executeOptions.learn !== false
          ? new ShapeSampler(learnsShape)
          : undefined;
      const handles = HandleTable.open(
        handleOptions,
        sampler === undefined ? undefined : (tool, value) => sampler.observeHeld(tool, value),
      );
      let result: ExecutionResult;
      try {
        const signal = journaled?.controller.signal ?? executeOptions.signal;
        result = await sandbox.run({
          code: compiled.code,
          tools,
          invoke: withHandles(
            handles,
            executeOptions.onToolResult ? observed(executeOptions.onToolResult, base) : base,
            sampler,
          ),
          resolveUnknown,
          ...(Object.keys(limits).length > 0 ? { limits } : {}),
          ...(signal ? { signal } : {}),
          ...(session !== undefined ? { session } : {}),
          ...(executeOptions.sessionOwner !== undefined ? { sessionOwner: executeOptions.sessionOwner } : {}),
          ...(executeOptions.owner !== undefined ? { owner: executeOptions.owner } : {}),
        });
      } finally {
        journaled?.dispose();
        // Handles live as long as their run: held results and the temp folder go now.
        await handles.close();
        const samples = sampler?.drain() ?? [];
        if (samples.length > 0)
          try {
            options.onShapeSamples?.(samples);
          } catch {
            // Learning never fails a run.
          }
      }
      if (journaled) {
        if (journaled.stopped) throw journaled.stopped;
        const unmatched = executeOptions.replay ? journaled.invoker.unmatched() : [];
        if (unmatched.length > 0 && !INTERRUPTED_CODES.has(result.error?.code ?? '')) {
          throw new CodecallError(
            'REPLAY_DIVERGED',
            `The replayed script ended without making ${unmatched.length} call(s) the journal has (${unmatched.slice(0, 5).join(', ')}${unmatched.length > 5 ? ', …' : ''}): it took another path than the journaled run, whose calls were made. Check their effects; start a new run with a new journal.`,
            { details: { unmatched } },
          );
        }
      }
      if (onSequence && executeOptions.learn !== false && result.toolCalls.length > 0) {
        // The store's and handles' calls are no tools: they never teach the tool graph.
        const sequence = result.toolCalls
          .filter((c) => c.ok && !isStoreCall(c.tool) && !isHandleCall(c.tool))
          .map((c) => c.tool);
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
      const tools = options.resultShapes ? options.resultShapes.declarable(codeTools()) : codeTools();
      return renderDeclarations(tools, { resultHandleMinBytes: handleOptions.minBytes, ...renderOptions });
    },
  };
}
