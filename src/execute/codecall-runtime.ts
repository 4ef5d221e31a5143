/**
 * @module
 * The one composition root of codecall's host side: configuration → MCP tool pool → sandbox
 * pool → executor, plus tool search kept in sync with the live catalog and the usage history
 * that teaches it. Every entry point builds through it: the library (`createOrchestrator`,
 * `CodecallRuntime.open`), `codecall run|exec|search|tools|graph|serve` and the jobs worker. Parts a
 * command does not use are not paid for: the search index is built at the first search, the
 * sandbox can start at the first run (`parts.sandbox: 'lazy'`), and the MCP servers can stay
 * unstarted (`parts.servers: false`).
 *
 * Every execution and every direct tool call is usage history: the ordered names of the calls
 * that ran go to the tool graph (in memory at once) and to the history store (durably). A run's
 * result resolves only once its history and its approval decisions have settled in the store, so
 * a result a client was sent is never lost to a crash of the process.
 */
import { traceStartup } from '../util/startup-trace.js';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createScriptStore, type ScriptStore } from './script-store.js';
import { renderDeclarations, type RenderDeclarationsOptions } from '../compile/index.js';
import { loadConfig, type CodecallConfig, type LoadConfigOptions } from '../config/index.js';
import { CodecallError } from '../errors.js';
import { SandboxPool, type SandboxPoolOptions } from '../isolate/index.js';
import {
  createToolSearch,
  type SearchableTool,
  type ToolChain,
  type ToolSearch,
  type ToolSearchHit,
  type ToolSearchResult,
  type ToolSearchState,
  type ToolUsage,
} from '../search/index.js';
import {
  checkHistoryStore,
  MemoryHistoryStore,
  SqliteHistoryStore,
  type GraphCountStore,
  type LearnedShape,
  type QueryUsageStore,
  type UsageHistoryStore,
} from '../store/index.js';
import { DEFAULT_SEARCH_WORKER_MIN_TOOLS, SearchWorkerHost } from './search-host.js';
import {
  ToolPool,
  type ApprovalRecord,
  type Approver,
  type CatalogChange,
  type CatalogTool,
  type ToolCallOptions,
  type ToolPoolOptions,
  type UpstreamAsker,
  type UpstreamToolResult,
} from '../tools/index.js';
import type { ExecutionResult, ToolCaller } from '../types.js';
import type { CallTrace } from '../util/trace-context.js';
import type { ResultHandleOptions } from './result-handles.js';
import { ResultShapeBook, type ShapeSample } from './result-shapes.js';
import { DEFAULT_RESULT_HANDLE_MIN_BYTES } from '../config/defaults.js';
import { createExecutor, type ExecuteOptions, type Executor, type SequenceListener } from './executor.js';

/** Default number of hits of {@link CodecallRuntime.searchTools}. */
export const DEFAULT_RUNTIME_SEARCH_LIMIT = 8;

/** Which parts of a {@link CodecallRuntime} start, and when. */
export interface RuntimeParts {
  /**
   * Start the configured MCP servers. `false`: the catalog is empty and no tool can be called
   * (`codecall graph` without `--inferred` reads only the usage history).
   * @defaultValue true
   */
  servers?: boolean;
  /**
   * When the sandbox pool starts: `'eager'` beside the MCP servers (the first run answers
   * sooner), `'lazy'` at the first {@link CodecallRuntime.execute} or
   * {@link CodecallRuntime.startSandbox} (`codecall search`, `tools` and `graph` never start one;
   * stdio `serve` starts it once its client is initialized).
   * @defaultValue 'eager'
   */
  sandbox?: 'eager' | 'lazy';
}

/** Options of {@link CodecallRuntime.open}. */
export interface CodecallRuntimeOptions {
  /** A resolved configuration; when absent it is loaded with `load`. */
  config?: CodecallConfig;
  /** Where to load the configuration from (`--config`, cwd, env). */
  load?: LoadConfigOptions;
  /** Options of the tool pool (e.g. `onServerError`, in-memory `transports`). */
  tools?: ToolPoolOptions;
  /** Overrides of the configuration's `sandbox` section. */
  sandbox?: SandboxPoolOptions;
  /** Which parts start, and when. @defaultValue every part, the sandbox with the servers */
  parts?: RuntimeParts;
  /**
   * Decides tool calls that need approval (`requireApproval`), from scripts and direct calls
   * alike; a run or call may bring its own. Same as `tools.approver`, which it wins over.
   * @defaultValue none: such calls are denied with a message saying how to allow them
   */
  onApproval?: Approver;
  /**
   * Answers what upstream servers ask while a call is in flight (an `elicitation/create` or
   * `sampling/createMessage`: a 2026-07-28 server's `input_required` round, a 2025-11-25 server's
   * request), for runs and direct calls that bring no `asker` of their own (`codecall exec` and
   * `run` prompt at the terminal).
   * @defaultValue none: such a request fails the call with a message saying nobody can answer it
   */
  onUpstreamRequest?: UpstreamAsker;
  /**
   * Told of the tools each run called, in order, after the runtime learned them (see
   * `ExecutorOptions.onSequence`).
   */
  onSequence?: SequenceListener;
  /**
   * Answers scripts' `store.get` / `store.set` (see `ExecutorOptions.store`).
   * @defaultValue {@link CodecallRuntime.scriptStore}
   */
  store?: () => ScriptStore | undefined;
  /**
   * When a large tool result stays on the host as a handle, and the bounds of handles
   * (docs/data.md). @defaultValue the `DEFAULT_RESULT_HANDLE_*` constants
   */
  resultHandles?: ResultHandleOptions;
  /**
   * Stops opening: once aborted, `open` rejects at once with `ABORTED`, and the servers,
   * sandbox workers and history store still starting are closed as soon as their start settles.
   */
  signal?: AbortSignal;
  /**
   * Where usage history lives. `undefined`: the SQLite store at the configuration's
   * `history.path` when `history.enabled`, else an in-memory store; `false`: in memory only;
   * `'read-only'`: the configuration's store is read if it exists (else the folder's shared one
   * it would start from, `history.migrateFrom`), never created or written; what the runtime
   * learns stays in memory (`codecall search` and `codecall graph`).
   */
  history?: UsageHistoryStore | false | 'read-only';
  /**
   * How the runtime's own SQLite history store writes: `'thread'` on a writer thread (the
   * host's loop never waits for the disk), `'inline'` on the host's thread, one write per turn
   * (no thread to start: for a process that records one run and exits, like `codecall exec`).
   * @defaultValue 'thread'
   */
  historyWriter?: 'thread' | 'inline';
  /**
   * Called when recording usage fails (the run itself is unaffected): the history store could
   * not write a run (e.g. another process kept the file locked), or search could not learn it.
   * @defaultValue a process warning (`HistoryWarning`, code `CODECALL_HISTORY_NOT_SAVED`) on stderr
   */
  onHistoryError?: (error: unknown) => void;
  /**
   * Where {@link CodecallRuntime.findTools} runs queries: `true` on a worker thread (the host's
   * event loop never waits for a search), `false` in-process, `'auto'` on a worker thread when
   * embeddings are configured or the catalog has at least `DEFAULT_SEARCH_WORKER_MIN_TOOLS` tools.
   * @defaultValue 'auto'
   */
  searchWorker?: boolean | 'auto';
}

/** One hit of {@link CodecallRuntime.searchTools}. */
export interface RuntimeSearchHit extends ToolSearchHit {
  /** The catalog entry: server, sandbox name, schemas, who may call it. */
  tool: CatalogTool;
}

/** What {@link CodecallRuntime.searchTools} returns. */
export interface RuntimeSearchResult {
  hits: RuntimeSearchHit[];
  /** Likely call sequences from the tool graph, best first. */
  chains: ToolChain[];
  /** TypeScript declarations of the hits that code may call (`tools.<server>.<tool>`). */
  declarations: string;
  /** True when a regex search ran out of its time budget. */
  truncated: boolean;
  /** Set by {@link CodecallRuntime.findTools} when the embedder failed (the hits are lexical + graph). */
  embeddingError?: string;
}

/** Options of {@link CodecallRuntime.searchTools}. */
export interface RuntimeSearchOptions {
  /** @defaultValue the configuration's `search.limit`, else {@link DEFAULT_RUNTIME_SEARCH_LIMIT} */
  limit?: number;
  /** Treat the query as a regular expression. @defaultValue false */
  regex?: boolean;
  /** Options of the declarations rendered for the hits. */
  declarations?: RenderDeclarationsOptions;
}

/**
 * Options of {@link CodecallRuntime.execute}: the executor's {@link ExecuteOptions}, with the
 * runtime's defaults — `approver` defaults to the runtime's `onApproval`, `store` to
 * {@link CodecallRuntimeOptions.store}, `asker` to {@link CodecallRuntimeOptions.onUpstreamRequest}.
 */
export type RuntimeExecuteOptions = ExecuteOptions;

/** Options of {@link CodecallRuntime.callTool}. */
export interface RuntimeCallOptions {
  signal?: AbortSignal;
  /** @defaultValue 'direct' */
  caller?: ToolCaller;
  /** Decides this call if it needs approval. @defaultValue the runtime's `onApproval` */
  approver?: Approver;
  /** The run the call belongs to, for the approval request and the audit trail. */
  runId?: string;
  /** Told of the server's progress notifications (gateway pass-through). */
  onProgress?: ToolCallOptions['onProgress'];
  /** Answers the server's sampling/elicitation requests during the call (gateway pass-through). */
  asker?: ToolCallOptions['asker'];
  /** Whom the call is for: what its server sends meanwhile is that client's (gateway pass-through). */
  origin?: string;
  /** Relay a 2026-07-28 server's `input_required` to the caller (see `ToolCallOptions.relay`). */
  relay?: ToolCallOptions['relay'];
  /** Traces the call (its request carries the trace context; see `ToolCallOptions.trace`). */
  trace?: CallTrace | undefined;
  /** What a 2026-07-28 server's task answer does (see `ToolCallOptions.upstreamTask`). @defaultValue `await` */
  upstreamTask?: ToolCallOptions['upstreamTask'];
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

/** The sandbox pool's options: the configuration's `sandbox` section under the caller's overrides. */
function sandboxOptionsOf(
  config: CodecallConfig,
  overrides: SandboxPoolOptions | undefined,
): SandboxPoolOptions {
  return {
    mode: config.sandbox.mode,
    minWorkers: config.sandbox.minWorkers,
    maxWorkers: config.sandbox.maxWorkers,
    workerIdleMs: config.sandbox.workerIdleMs,
    workerSpinUs: config.sandbox.workerSpinUs,
    isolateRuns: config.sandbox.isolateRuns,
    limits: config.sandbox.limits,
    sessionTtlMs: config.sandbox.sessionTtlMs,
    maxSessions: config.sandbox.maxSessions,
    ...overrides,
  };
}

/** The usage history a runtime opens, the state search starts from, and the file it was read from. */
interface OpenedHistory {
  store: UsageHistoryStore;
  state: ToolSearchState | undefined;
  /** The file a `'read-only'` history was read from; undefined when there was none. */
  file?: string;
  /** True when the caller passed the store in (it stays theirs to close). */
  borrowed: boolean;
  /** The learned result shapes the store keeps. */
  shapes: LearnedShape[];
}

/**
 * The file a read-only history reads: the configuration's own store, else the folder's shared
 * one its first run would start from. Undefined when history is disabled or neither exists.
 */
function readableHistoryFile(config: CodecallConfig): string | undefined {
  if (!config.history.enabled) return undefined;
  if (existsSync(config.history.path)) return config.history.path;
  const shared = config.history.migrateFrom;
  return shared !== undefined && existsSync(shared) ? shared : undefined;
}

/**
 * What search starts from: the store's graph counts and its query usages (oldest first, as
 * search replays them).
 */
async function loadSearchState(store: GraphCountStore & QueryUsageStore): Promise<ToolSearchState> {
  const [counts, usages] = await Promise.all([store.loadCounts(), store.listUsages()]);
  const state: ToolSearchState = { version: 1, sequences: counts.sequences, transitions: counts.transitions };
  if (usages.length > 0) state.usages = usages.reverse().map((usage) => [usage.query, [...usage.tools]]);
  return state;
}

async function openHistory(
  config: CodecallConfig,
  option: CodecallRuntimeOptions['history'],
  writer: CodecallRuntimeOptions['historyWriter'],
): Promise<OpenedHistory> {
  if (option === 'read-only') {
    const file = readableHistoryFile(config);
    const store = new MemoryHistoryStore();
    if (file === undefined) return { store, state: undefined, borrowed: false, shapes: [] };
    const reader = await SqliteHistoryStore.open({ path: file });
    try {
      const [state, shapes] = await Promise.all([loadSearchState(reader), reader.loadShapes()]);
      return { store, state, file, borrowed: false, shapes };
    } finally {
      await reader.close();
    }
  }
  let store: UsageHistoryStore;
  if (option) store = checkHistoryStore(option);
  else if (option === false || !config.history.enabled) store = new MemoryHistoryStore();
  else
    store = await SqliteHistoryStore.open({
      path: config.history.path,
      migrateFrom: config.history.migrateFrom,
      maxRuns: config.history.maxRuns,
      ...(writer === undefined ? {} : { writer }),
    });
  try {
    const [state, shapes] = await Promise.all([loadSearchState(store), store.loadShapes()]);
    return { store, state, borrowed: option !== undefined && option !== false, shapes };
  } catch (error) {
    if (!option) await store.close().catch(() => {});
    throw error;
  }
}

function sandboxNotStarted(): CodecallError {
  return new CodecallError(
    'SANDBOX_UNAVAILABLE',
    'The sandbox starts at the first run (parts.sandbox: "lazy"): call execute() first, or open the runtime with parts.sandbox "eager".',
  );
}

/** The default of {@link CodecallRuntimeOptions.onHistoryError}: a process warning. */
function warnHistoryNotSaved(error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  process.emitWarning(`usage history not saved (the run itself is unaffected): ${message}`, {
    type: 'HistoryWarning',
    code: 'CODECALL_HISTORY_NOT_SAVED',
  });
}

function searchable(tool: CatalogTool): SearchableTool {
  return {
    name: tool.name,
    server: tool.server,
    description: tool.title ? `${tool.title}. ${tool.description}` : tool.description,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema,
    inputExamples: tool.inputExamples,
  };
}

/**
 * True when search would index `next` exactly as `previous`. Schemas are compared by identity:
 * the pool keeps a server's listed schema objects until that server's tool list changes.
 */
function sameSearchFields(previous: CatalogTool, next: CatalogTool): boolean {
  return (
    previous.server === next.server &&
    previous.title === next.title &&
    previous.description === next.description &&
    previous.inputSchema === next.inputSchema &&
    previous.outputSchema === next.outputSchema &&
    previous.inputExamples === next.inputExamples
  );
}

/**
 * Configuration, MCP servers, sandbox, search and usage history, opened and closed together.
 *
 * @example
 * ```ts
 * await using runtime = await CodecallRuntime.open({ load: { path: 'examples/codecall.json' } });
 * const found = await runtime.searchTools('travel expenses by member');
 * console.log(found.declarations);
 * const result = await runtime.execute('console.log((await tools.expenses.get_team_members()).members.length)');
 * ```
 */
export class CodecallRuntime {
  readonly config: CodecallConfig;
  /** The MCP tool pool. */
  readonly tools: ToolPool;
  readonly history: UsageHistoryStore;
  /**
   * The file a `'read-only'` history was read from (the configuration's store, or the folder's
   * shared one it would start from); undefined for other histories or when neither exists.
   */
  readonly historyFile: string | undefined;
  /**
   * Answers scripts' `store.get` / `store.set`: values in {@link history} under the
   * configuration's namespace; undefined when `store.enabled` is false.
   */
  readonly scriptStore: ScriptStore | undefined;
  readonly #options: CodecallRuntimeOptions;
  readonly #onHistoryError: (error: unknown) => void;
  readonly #unsubscribe: () => void;
  readonly #pending = new Set<Promise<void>>();
  /** The approval audit writes in flight, by run id (`''`: calls without one). */
  readonly #approvalWrites = new Map<string, Set<Promise<void>>>();
  readonly #searchWorker: boolean | 'auto';
  /** Knows the usage graph from the start; indexes the catalog at the first search. */
  readonly #search: ToolSearch;
  #indexed = false;
  #searchHost: SearchWorkerHost | undefined;
  #sandbox: SandboxPool | undefined;
  #executor: Executor | undefined;
  #sandboxOpening: Promise<Executor> | undefined;
  #closing: Promise<void> | undefined;
  /** Learned result types, read by every rendering of declarations. */
  readonly #shapes: ResultShapeBook;

  private constructor(
    config: CodecallConfig,
    tools: ToolPool,
    sandbox: SandboxPool | undefined,
    history: OpenedHistory,
    options: CodecallRuntimeOptions,
  ) {
    this.config = config;
    this.tools = tools;
    this.#options = options;
    this.#searchWorker = options.searchWorker ?? 'auto';
    this.#onHistoryError = options.onHistoryError ?? warnHistoryNotSaved;
    this.history = history.store;
    this.historyFile = history.file;
    this.#shapes = new ResultShapeBook(history.shapes);
    const storeConfig = config.store;
    this.scriptStore = storeConfig.enabled
      ? createScriptStore({
          history: history.store,
          namespace: storeConfig.namespace,
          maxValueBytes: storeConfig.maxValueBytes,
          maxNamespaceBytes: storeConfig.maxNamespaceBytes,
        })
      : undefined;
    const { limit: _limit, embeddings: _embeddings, ...ranking } = config.search;
    this.#search = createToolSearch({ tools: [], state: history.state, ...ranking });
    if (sandbox) this.#useSandbox(sandbox);
    // Servers that connect in the background join the catalog (and the index, once built).
    this.#unsubscribe = tools.onCatalogChange((_catalog, change) => this.#syncCatalog(change));
  }

  /**
   * Loads the configuration (unless given), then opens the tool pool, the sandbox (unless
   * `parts.sandbox` is `'lazy'`) and the history store concurrently; on failure, closes what
   * was opened and rethrows.
   */
  static async open(options: CodecallRuntimeOptions = {}): Promise<CodecallRuntime> {
    let runtime: CodecallRuntime | undefined;
    const onDecision = options.tools?.onApprovalDecision;
    const config = options.config ?? (await loadConfig(options.load ?? {}));
    if (options.signal?.aborted) throw abortedError();
    const toolOptions: ToolPoolOptions = {
      ...options.tools,
      ...(options.onApproval ? { approver: options.onApproval } : {}),
      onApprovalDecision: (record) => {
        // Awaited by the run (or direct call) the decision belongs to, before it answers.
        void runtime?.recordApproval(record);
        onDecision?.(record);
      },
    };
    const eagerSandbox = options.parts?.sandbox !== 'lazy';
    // Everything starts at once (start-up time): servers, sandbox workers, the history store.
    // The sandbox one turn later, so the MCP servers' processes are spawned first: they take
    // longest to be ready, and a sandbox worker's fork (or an in-process isolate) would delay them.
    const opening = Promise.allSettled([
      ToolPool.open(options.parts?.servers === false ? {} : config, toolOptions).then((pool) => {
        traceStartup('tool pool open');
        return pool;
      }),
      eagerSandbox
        ? new Promise<void>((resolve) => setImmediate(resolve)).then(() =>
            SandboxPool.open(sandboxOptionsOf(config, options.sandbox)).then((pool) => {
              traceStartup('sandbox pool open');
              return pool;
            }),
          )
        : Promise.resolve(undefined),
      openHistory(config, options.history, options.historyWriter).then((history) => {
        traceStartup('history open');
        return history;
      }),
    ] as const);
    const closeOpened = ([tools, sandbox, history]: Awaited<typeof opening>): Promise<unknown> =>
      Promise.allSettled([
        tools.status === 'fulfilled' ? tools.value.close() : undefined,
        sandbox.status === 'fulfilled' ? sandbox.value?.close() : undefined,
        // A store the caller passed in stays theirs to close.
        history.status === 'fulfilled' && !history.value.borrowed ? history.value.store.close() : undefined,
      ]);
    let settled: Awaited<typeof opening>;
    try {
      settled = await unlessAborted(opening, options.signal);
    } catch (error) {
      // Cancelled while starting: close each part once its start settles.
      void opening.then(closeOpened);
      throw error;
    }
    const [tools, sandbox, history] = settled;
    if (tools.status === 'rejected' || sandbox.status === 'rejected' || history.status === 'rejected') {
      await closeOpened(settled);
      const failed = [tools, sandbox, history].find((part) => part.status === 'rejected');
      throw (failed as PromiseRejectedResult).reason;
    }
    try {
      runtime = new CodecallRuntime(config, tools.value, sandbox.value, history.value, options);
      return runtime;
    } catch (error) {
      await closeOpened(settled);
      throw error;
    }
  }

  /**
   * Tool search over the live catalog, taught by the usage history. The catalog is indexed on
   * first use: a runtime that only executes never builds the index.
   */
  get search(): ToolSearch {
    if (!this.#indexed) {
      this.#indexed = true;
      try {
        this.#search.addTools(this.tools.catalog().map(searchable));
      } catch (error) {
        this.#onHistoryError(error);
      }
    }
    return this.#search;
  }

  /**
   * The sandbox pool. Throws `SANDBOX_UNAVAILABLE` when `parts.sandbox` is `'lazy'` and no run
   * has started it yet.
   */
  get sandbox(): SandboxPool {
    if (!this.#sandbox) throw sandboxNotStarted();
    return this.#sandbox;
  }

  /** The executor over the tool pool and the sandbox; throws like {@link CodecallRuntime.sandbox}. */
  get executor(): Executor {
    if (!this.#executor) throw sandboxNotStarted();
    return this.#executor;
  }

  /** Which lazy parts have started: the sandbox pool, the search index. */
  started(): { sandbox: boolean; searchIndex: boolean } {
    return { sandbox: this.#sandbox !== undefined, searchIndex: this.#indexed };
  }

  #useSandbox(sandbox: SandboxPool): Executor {
    const onSequence = this.#options.onSequence;
    this.#sandbox = sandbox;
    this.#executor = createExecutor({
      pool: this.tools,
      sandbox,
      maxCodeBytes: this.config.sandbox.maxCodeBytes,
      // The executor awaits this before it resolves the run: its history is durable by then.
      onSequence: async (sequence, result) => {
        const written = this.recordSequence(sequence);
        try {
          await onSequence?.(sequence, result);
        } finally {
          await written;
        }
      },
      store: this.#options.store ?? (() => this.scriptStore),
      resultHandles: this.#resultHandleOptions(),
      resultShapes: this.#shapes,
      onShapeSamples: (samples) => this.#learnShapes(samples),
    });
    return this.#executor;
  }

  /**
   * Starts the sandbox pool now when it is lazy (`parts.sandbox: 'lazy'`) and not started yet,
   * so the first run need not wait for it: a server answers its client first, then calls this.
   * Resolves once the pool is ready; rejects with its start error, and the next run (or call)
   * tries again. A no-op once started.
   *
   * @example
   * ```ts
   * const runtime = await CodecallRuntime.open({ parts: { sandbox: 'lazy' } });
   * // … answer the client, then:
   * runtime.startSandbox().catch((error) => console.error('sandbox:', error));
   * ```
   */
  async startSandbox(): Promise<void> {
    await this.#startedExecutor();
  }

  /** The executor, starting the sandbox first when it is lazy and not started yet. */
  #startedExecutor(): Promise<Executor> {
    if (this.#executor) return Promise.resolve(this.#executor);
    if (this.#closing) return Promise.reject(new CodecallError('CLOSED', 'The codecall runtime is closed.'));
    this.#sandboxOpening ??= SandboxPool.open(sandboxOptionsOf(this.config, this.#options.sandbox)).then(
      async (sandbox) => {
        if (this.#closing) {
          await sandbox.close();
          throw new CodecallError('CLOSED', 'The codecall runtime is closed.');
        }
        return this.#useSandbox(sandbox);
      },
      (error: unknown) => {
        // The next run tries again.
        this.#sandboxOpening = undefined;
        throw error;
      },
    );
    return this.#sandboxOpening;
  }

  /** The live catalog. */
  catalog(): CatalogTool[] {
    return [...this.tools.catalog()];
  }

  /**
   * Ranked tools for `query` with their TypeScript declarations. Throws `SEARCH_INVALID_QUERY`
   * for an empty query or a bad regex (callers facing a model turn that into a tool error).
   */
  searchTools(query: string, options: RuntimeSearchOptions = {}): RuntimeSearchResult {
    const limit = options.limit ?? this.config.search.limit ?? DEFAULT_RUNTIME_SEARCH_LIMIT;
    const found = this.search.searchDetailed(query, { limit, mode: options.regex ? 'regex' : 'hybrid' });
    return this.#resolveHits(found, options);
  }

  /**
   * Like {@link CodecallRuntime.searchTools}, off the event loop and with embeddings: queries run
   * on a search worker thread (see `searchWorker`) and, when the configuration has
   * `search.embeddings`, fuse the embedding ranking with the lexical + graph one. Without
   * embeddings the hits are exactly those of `searchTools`. What `search_tools` answers from in
   * the agent loop and in `codecall serve`.
   */
  async findTools(query: string, options: RuntimeSearchOptions = {}): Promise<RuntimeSearchResult> {
    const limit = options.limit ?? this.config.search.limit ?? DEFAULT_RUNTIME_SEARCH_LIMIT;
    const searchOptions = { limit, mode: options.regex ? ('regex' as const) : ('hybrid' as const) };
    const host = this.#searchHostFor();
    const found = host
      ? await host.search(query, searchOptions)
      : await this.search.searchAsync(query, searchOptions);
    return this.#resolveHits(found, options);
  }

  /** True when {@link CodecallRuntime.findTools} runs queries on the search worker thread. */
  get searchOnWorker(): boolean {
    return this.#searchHost?.onWorker ?? false;
  }

  /** The search worker, started on first use when {@link CodecallRuntimeOptions.searchWorker} asks for it. */
  #searchHostFor(): SearchWorkerHost | undefined {
    if (this.#searchHost || this.#closing) return this.#searchHost;
    const embeddings = this.config.search.embeddings;
    const wanted =
      this.#searchWorker === 'auto'
        ? embeddings !== undefined || this.tools.catalog().length >= DEFAULT_SEARCH_WORKER_MIN_TOOLS
        : this.#searchWorker;
    if (!wanted) return undefined;
    const { limit: _limit, embeddings: _embeddings, ...ranking } = this.config.search;
    this.#searchHost = SearchWorkerHost.open({
      tools: this.tools.catalog().map(searchable),
      state: this.search.serialize(),
      ranking,
      ...(embeddings ? { embeddings: { config: embeddings, baseDir: this.config.configDir } } : {}),
      fallback: this.search,
      onError: (error) => this.#onHistoryError(error),
    });
    return this.#searchHost;
  }

  #resolveHits(found: ToolSearchResult, options: RuntimeSearchOptions): RuntimeSearchResult {
    const hits: RuntimeSearchHit[] = [];
    for (const hit of found.hits) {
      const tool = this.tools.get(hit.name);
      if (tool) hits.push({ ...hit, tool });
    }
    const codeTools = hits.map((h) => h.tool).filter((t) => t.allowedCallers.includes('code_execution'));
    const declarations =
      codeTools.length > 0
        ? renderDeclarations(this.#shapes.declarable(codeTools), {
            callTool: false,
            resultHandleMinBytes: this.#resultHandleOptions().minBytes ?? DEFAULT_RESULT_HANDLE_MIN_BYTES,
            ...options.declarations,
          })
        : '';
    return {
      hits,
      chains: found.chains,
      declarations,
      truncated: found.truncated,
      ...(found.embeddingError !== undefined ? { embeddingError: found.embeddingError } : {}),
    };
  }

  /**
   * Compiles and runs model code; the calls it made feed the tool graph. Never throws for script
   * faults. Resolves once the run's call sequence and its approval decisions are written to the
   * history store (or their write failed, reported to `onHistoryError`).
   */
  async execute(code: string, options: RuntimeExecuteOptions = {}): Promise<ExecutionResult> {
    const executor = this.#executor ?? (await this.#startedExecutor());
    const runId = options.runId ?? randomUUID();
    try {
      const asker = options.asker ?? this.#options.onUpstreamRequest;
      return await executor.execute(code, { ...options, runId, ...(asker ? { asker } : {}) });
    } finally {
      await this.#approvalsWritten(runId);
    }
  }

  /** Ends the sandbox sessions of `owner` (their state is disposed; a run in one is cancelled). */
  closeSandboxSessions(owner = ''): void {
    this.#sandbox?.closeSessions(owner);
  }

  /**
   * Calls one tool directly (policy: `allowedCallers` must include `caller`). Settles once its
   * approval decision, if it needed one, is written to the history store.
   */
  callTool(name: string, args: unknown, options: RuntimeCallOptions = {}): Promise<unknown> {
    return this.#afterApprovals(options.runId, this.tools.call(name, args, this.#callOptions(options)));
  }

  /**
   * Calls one tool directly, as {@link CodecallRuntime.callTool} does, and resolves with the
   * server's result as it came (content blocks, `structuredContent`, `_meta`, `isError`): what
   * a gateway passes through to its client.
   */
  callToolResult(name: string, args: unknown, options: RuntimeCallOptions = {}): Promise<UpstreamToolResult> {
    return this.#afterApprovals(options.runId, this.tools.callResult(name, args, this.#callOptions(options)));
  }

  /** The pool's options of one direct call. */
  #callOptions(options: RuntimeCallOptions): ToolCallOptions {
    const asker = options.asker ?? this.#options.onUpstreamRequest;
    return {
      caller: options.caller ?? 'direct',
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.approver ? { approver: options.approver } : {}),
      ...(options.runId !== undefined ? { runId: options.runId } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(asker ? { asker } : {}),
      ...(options.origin !== undefined ? { origin: options.origin } : {}),
      ...(options.trace !== undefined ? { trace: options.trace } : {}),
      ...(options.upstreamTask !== undefined ? { upstreamTask: options.upstreamTask } : {}),
      ...(options.relay !== undefined ? { relay: options.relay } : {}),
    };
  }

  /** Settles like `call`, once the approval writes of `runId` have settled too. */
  async #afterApprovals<T>(runId: string | undefined, call: Promise<T>): Promise<T> {
    try {
      return await call;
    } finally {
      await this.#approvalsWritten(runId);
    }
  }

  /** Settles once the approval audit writes in flight of `runId` have settled. */
  async #approvalsWritten(runId: string | undefined): Promise<void> {
    const writes = this.#approvalWrites.get(runId ?? '');
    if (writes) await Promise.all(writes);
  }

  /** Tracks one history write: failures go to `onHistoryError`; the promise never rejects. */
  #track(write: Promise<void>): Promise<void> {
    const settled: Promise<void> = write
      .catch((error: unknown) => {
        try {
          this.#onHistoryError(error);
        } catch {
          // A listener's failure never fails the run that waits for this write.
        }
      })
      .finally(() => this.#pending.delete(settled));
    this.#pending.add(settled);
    return settled;
  }

  /**
   * Learns from one run: `names` are the tools it called, in order. Updates search at once and
   * appends to the history store; resolves once the store has committed the run (never rejects:
   * a failed write goes to `onHistoryError`). A caller that answers a client awaits it first, so
   * no acknowledged run is lost to a crash. Also awaited by {@link CodecallRuntime.flush}.
   */
  recordSequence(names: readonly string[]): Promise<void> {
    if (names.length === 0 || this.#closing) return Promise.resolve();
    try {
      this.#search.recordSequence(names);
      this.#searchHost?.recordSequence(names);
    } catch (error) {
      this.#onHistoryError(error);
      return Promise.resolve();
    }
    return this.#track(this.history.appendSequence(names));
  }

  /**
   * Records one approval decision in the history store's audit trail; resolves once it is
   * committed (never rejects, like {@link CodecallRuntime.recordSequence}). The run or direct
   * call the decision belongs to (by `runId`) awaits it before it answers.
   */
  recordApproval(record: ApprovalRecord): Promise<void> {
    if (this.#closing) return Promise.resolve();
    const key = record.runId ?? '';
    const writes = this.#approvalWrites.get(key) ?? new Set<Promise<void>>();
    this.#approvalWrites.set(key, writes);
    const written: Promise<void> = this.#track(this.history.appendApproval({ ...record })).finally(() => {
      writes.delete(written);
      if (writes.size === 0 && this.#approvalWrites.get(key) === writes) this.#approvalWrites.delete(key);
    });
    writes.add(written);
    return written;
  }

  /**
   * Learns from one use of search: a `search_tools` query and the tools the run then called
   * (query feedback). Updates search at once and appends to the history store; resolves once
   * the store has committed it (never rejects, like {@link CodecallRuntime.recordSequence}).
   */
  recordUsage(usage: ToolUsage): Promise<void> {
    if (usage.tools.length === 0 || this.#closing) return Promise.resolve();
    try {
      this.#search.recordUsage(usage);
      this.#searchHost?.recordUsage(usage);
    } catch (error) {
      this.#onHistoryError(error);
      return Promise.resolve();
    }
    return this.#track(this.history.appendUsage(usage));
  }

  /** The result handle options of runs: the configuration's thresholds, under the runtime option's. */
  #resultHandleOptions(): ResultHandleOptions {
    const { minBytes, spillBytes, linkRoots } = this.config.resultHandles;
    return { minBytes, spillBytes, linkRoots, ...this.#options.resultHandles };
  }

  /**
   * Learns from one run's sampled results (learned result types): on a later turn of the event
   * loop, so the run's answer does not wait, the samples become shapes, widen the book the
   * declarations read, and are merged into the history store (awaited by {@link flush}; a failed
   * write goes to `onHistoryError`).
   */
  #learnShapes(samples: ShapeSample[]): void {
    if (this.#closing) return;
    const learned = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      const shapes = ResultShapeBook.shapesOf(samples);
      for (const { tool, shape } of shapes) this.#shapes.learn(tool, shape);
      await Promise.all(shapes.map(({ tool, shape }) => this.history.mergeShape(tool, shape)));
    });
    void this.#track(learned);
  }

  /** Waits for every usage-history write in flight. */
  async flush(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  /** Declarations of every tool code may call (large catalogs: prefer {@link searchTools}). */
  declarations(options?: RenderDeclarationsOptions): string {
    if (this.#executor) return this.#executor.declarations(options);
    // The sandbox has not started (parts.sandbox: 'lazy'): the same tools the executor offers.
    return renderDeclarations(
      this.#shapes.declarable(
        this.tools.catalog().filter((t) => t.allowedCallers.includes('code_execution')),
      ),
      {
        resultHandleMinBytes: this.#resultHandleOptions().minBytes ?? DEFAULT_RESULT_HANDLE_MIN_BYTES,
        ...options,
      },
    );
  }

  /**
   * Brings search up to date with a catalog change (the pool's diff: nothing is compared here
   * but what changed). The in-thread index follows only once built (the first search indexes
   * the catalog as it is then); the search worker, once started, always does.
   */
  #syncCatalog(change: CatalogChange): void {
    if (!this.#indexed && this.#searchHost === undefined) return;
    const removed = change.removed.map((tool) => tool.name);
    const changed = [
      ...change.added,
      ...change.changed
        .filter(({ before, after }) => !sameSearchFields(before, after))
        .map(({ after }) => after),
    ];
    try {
      if (removed.length > 0) {
        if (this.#indexed) this.#search.removeTools(removed);
        this.#searchHost?.removeTools(removed);
      }
      if (changed.length > 0) {
        const tools = changed.map(searchable);
        if (this.#indexed) this.#search.addTools(tools);
        this.#searchHost?.addTools(tools);
      }
    } catch (error) {
      this.#onHistoryError(error);
    }
  }

  /**
   * Closes the sandbox and every MCP server while the usage history is flushed, then closes the
   * store: nothing written to the history needs a server or the sandbox, and a closing runtime
   * records nothing new, so the servers' shutdown (the longest part) does not wait for the disk.
   * Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#unsubscribe();
      const sandbox = this.#sandboxOpening?.then(
        () => this.#sandbox?.close(),
        () => undefined,
      );
      const history = this.flush().then(() => this.history.close());
      await Promise.allSettled([
        this.#sandbox?.close() ?? sandbox,
        this.tools.close(),
        history,
        this.#searchHost?.close(),
      ]);
    })();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
