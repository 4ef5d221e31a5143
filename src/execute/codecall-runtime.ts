/**
 * @module
 * The whole of codecall's host side as one resource: configuration → MCP tool pool → sandbox
 * pool → executor, plus tool search kept in sync with the live catalog and the usage history
 * that teaches it. The agent loop and `codecall serve` both stand on this; so can a user's own
 * host.
 *
 * Every execution and every direct tool call is usage history: the ordered names of the calls
 * that ran go to the tool graph (in memory at once) and to the history store (durably).
 */
import { createScriptStore, storeNamespaceOf, type ScriptStore } from './script-store.js';
import { renderDeclarations, type RenderDeclarationsOptions } from '../compile/index.js';
import { loadConfig } from '../config/index.js';
import type { SandboxLimits } from '../isolate/index.js';
import {
  createToolSearch,
  DEFAULT_SEARCH_WORKER_MIN_TOOLS,
  MemoryHistoryStore,
  SearchWorkerHost,
  SqliteHistoryStore,
  type SearchableTool,
  type ToolChain,
  type ToolSearch,
  type ToolSearchHit,
  type ToolSearchResult,
  type ToolUsage,
  type UsageHistoryStore,
} from '../search/index.js';
import type {
  ApprovalRecord,
  Approver,
  CatalogChange,
  CatalogTool,
  ToolCallOptions,
  ToolPool,
  UpstreamToolResult,
} from '../tools/index.js';
import { diffCatalogs } from '../tools/index.js';
import type { ExecutionResult, ToolCaller } from '../types.js';
import { ExecutionSession, type ExecutionSessionOptions } from './execution-session.js';
import type { ToolResultListener } from './executor.js';
import type { ReplayInDoubtPolicy } from './journaled-invoker.js';
import type { RunJournal } from './run-journal.js';

/** Default number of hits of {@link CodecallRuntime.searchTools}. */
export const DEFAULT_RUNTIME_SEARCH_LIMIT = 8;

/** Options of {@link CodecallRuntime.open}. */
export interface CodecallRuntimeOptions extends Omit<ExecutionSessionOptions, 'onSequence'> {
  /**
   * Where usage history lives. `undefined`: the SQLite store at the configuration's
   * `history.path` when `history.enabled`, else an in-memory store; `false`: in memory only.
   */
  history?: UsageHistoryStore | false;
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

/** Options of {@link CodecallRuntime.execute}. */
export interface RuntimeExecuteOptions {
  signal?: AbortSignal;
  limits?: Partial<SandboxLimits>;
  /**
   * Called on the host after each tool call of this run, with its result (see
   * `ExecuteOptions.onToolResult`); keep it cheap, errors it throws are ignored.
   */
  onToolResult?: ToolResultListener;
  /** Whether the run teaches the tool graph (and history). @defaultValue true */
  learn?: boolean;
  /** Records the run's tool calls for replay (see `ExecuteOptions.journal`). */
  journal?: RunJournal;
  /** Resumes the run recorded in `journal` (see `ExecuteOptions.replay`). @defaultValue false */
  replay?: boolean;
  /** See `ExecuteOptions.replayInDoubt`. @defaultValue 'refuse' */
  replayInDoubt?: ReplayInDoubtPolicy;
  /** Decides this run's calls that need approval. @defaultValue the runtime's `onApproval` */
  approver?: Approver;
  /** The run's id in approval requests and the audit trail. @defaultValue a random UUID */
  runId?: string;
  /** Runs the script in this sandbox session (globals kept between runs; see `ExecuteOptions.session`). */
  session?: string;
  /** Whose session it is (sessions of different owners never share state). @defaultValue `''` */
  sessionOwner?: string;
}

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
    previous.outputSchema === next.outputSchema
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
  readonly session: ExecutionSession;
  readonly search: ToolSearch;
  readonly history: UsageHistoryStore;
  /**
   * Answers scripts' `store.get` / `store.set`: values in {@link history} under the
   * configuration's namespace; undefined when `store.enabled` is false.
   */
  readonly scriptStore: ScriptStore | undefined;
  readonly #onHistoryError: (error: unknown) => void;
  readonly #unsubscribe: () => void;
  readonly #pending = new Set<Promise<void>>();
  readonly #searchWorker: boolean | 'auto';
  #searchHost: SearchWorkerHost | undefined;
  #closing: Promise<void> | undefined;

  private constructor(
    session: ExecutionSession,
    search: ToolSearch,
    history: UsageHistoryStore,
    onHistoryError: (error: unknown) => void,
    indexed: readonly CatalogTool[],
    searchWorker: boolean | 'auto',
  ) {
    this.#searchWorker = searchWorker;
    this.session = session;
    this.search = search;
    this.history = history;
    const storeConfig = session.config.store;
    this.scriptStore =
      storeConfig?.enabled === false
        ? undefined
        : createScriptStore({
            history,
            namespace: storeNamespaceOf(session.config),
            maxValueBytes: storeConfig?.maxValueBytes,
            maxNamespaceBytes: storeConfig?.maxNamespaceBytes,
          });
    this.#onHistoryError = onHistoryError;
    this.#unsubscribe = session.tools.onCatalogChange((_catalog, change) => this.#syncCatalog(change));
    // Servers that connected (in the background) while history loaded: index them now.
    const current = session.tools.catalog();
    if (current !== indexed) this.#syncCatalog(diffCatalogs(indexed, current));
  }

  /** Opens everything; on failure, closes what was opened and rethrows. */
  static async open(options: CodecallRuntimeOptions = {}): Promise<CodecallRuntime> {
    const onHistoryError = options.onHistoryError ?? warnHistoryNotSaved;
    let runtime: CodecallRuntime | undefined;
    const onDecision = options.tools?.onApprovalDecision;
    const config = options.config ?? (await loadConfig(options.load ?? {}));
    // The history store opens while the MCP servers and the sandbox start (start-up time).
    const opening = Promise.allSettled([
      ExecutionSession.open({
        ...options,
        config,
        tools: {
          ...options.tools,
          onApprovalDecision: (record) => {
            runtime?.recordApproval(record);
            onDecision?.(record);
          },
        },
        onSequence: (sequence) => runtime?.recordSequence(sequence),
        store: () => runtime?.scriptStore,
      }),
      (async (): Promise<UsageHistoryStore> => {
        if (options.history) return options.history;
        if (options.history === false || !config.history.enabled) return new MemoryHistoryStore();
        return SqliteHistoryStore.open({
          path: config.history.path,
          migrateFrom: config.history.migrateFrom,
          maxRuns: config.history.maxRuns,
        });
      })(),
    ]);
    const [opened, store] = await opening;
    if (opened.status === 'rejected' || store.status === 'rejected') {
      await Promise.allSettled([
        opened.status === 'fulfilled' ? opened.value.close() : undefined,
        // A store the caller passed in stays theirs to close.
        store.status === 'fulfilled' && !options.history ? store.value.close() : undefined,
      ]);
      throw opened.status === 'rejected' ? opened.reason : (store as PromiseRejectedResult).reason;
    }
    const session = opened.value;
    const history: UsageHistoryStore = store.value;
    try {
      const state = await history.load();
      const { limit: _limit, embeddings: _embeddings, ...ranking } = session.config.search;
      const indexed = session.tools.catalog();
      const search = createToolSearch({ tools: indexed.map(searchable), state, ...ranking });
      runtime = new CodecallRuntime(
        session,
        search,
        history,
        onHistoryError,
        indexed,
        options.searchWorker ?? 'auto',
      );
      return runtime;
    } catch (error) {
      await Promise.allSettled([session.close(), history.close()]);
      throw error;
    }
  }

  /** The resolved configuration. */
  get config(): ExecutionSession['config'] {
    return this.session.config;
  }

  /** The MCP tool pool. */
  get tools(): ToolPool {
    return this.session.tools;
  }

  /** The live catalog. */
  catalog(): CatalogTool[] {
    return [...this.session.tools.catalog()];
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
        ? embeddings !== undefined || this.session.tools.catalog().length >= DEFAULT_SEARCH_WORKER_MIN_TOOLS
        : this.#searchWorker;
    if (!wanted) return undefined;
    const { limit: _limit, embeddings: _embeddings, ...ranking } = this.config.search;
    this.#searchHost = SearchWorkerHost.open({
      tools: this.session.tools.catalog().map(searchable),
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
      const tool = this.session.tools.get(hit.name);
      if (tool) hits.push({ ...hit, tool });
    }
    const codeTools = hits.map((h) => h.tool).filter((t) => t.allowedCallers.includes('code_execution'));
    const declarations =
      codeTools.length > 0 ? renderDeclarations(codeTools, { callTool: false, ...options.declarations }) : '';
    return {
      hits,
      chains: found.chains,
      declarations,
      truncated: found.truncated,
      ...(found.embeddingError !== undefined ? { embeddingError: found.embeddingError } : {}),
    };
  }

  /** Compiles and runs model code; the calls it made feed the tool graph. Never throws for script faults. */
  execute(code: string, options: RuntimeExecuteOptions = {}): Promise<ExecutionResult> {
    return this.session.executor.execute(code, options);
  }

  /** Ends the sandbox sessions of `owner` (their state is disposed; a run in one is cancelled). */
  closeSandboxSessions(owner = ''): void {
    this.session.sandbox.closeSessions(owner);
  }

  /** Calls one tool directly (policy: `allowedCallers` must include `caller`). */
  callTool(name: string, args: unknown, options: RuntimeCallOptions = {}): Promise<unknown> {
    return this.tools.call(name, args, {
      caller: options.caller ?? 'direct',
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.approver ? { approver: options.approver } : {}),
      ...(options.runId !== undefined ? { runId: options.runId } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.asker ? { asker: options.asker } : {}),
    });
  }

  /**
   * Calls one tool directly, as {@link CodecallRuntime.callTool} does, and resolves with the
   * server's result as it came (content blocks, `structuredContent`, `_meta`, `isError`): what
   * a gateway passes through to its client.
   */
  callToolResult(name: string, args: unknown, options: RuntimeCallOptions = {}): Promise<UpstreamToolResult> {
    return this.tools.callResult(name, args, {
      caller: options.caller ?? 'direct',
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.approver ? { approver: options.approver } : {}),
      ...(options.runId !== undefined ? { runId: options.runId } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.asker ? { asker: options.asker } : {}),
    });
  }

  /**
   * Learns from one run: `names` are the tools it called, in order. Updates search at once and
   * appends to the history store in the background (awaited by {@link CodecallRuntime.flush}).
   */
  recordSequence(names: readonly string[]): void {
    if (names.length === 0 || this.#closing) return;
    try {
      this.search.recordSequence(names);
      this.#searchHost?.recordSequence(names);
    } catch (error) {
      this.#onHistoryError(error);
      return;
    }
    const write = this.history
      .append(names)
      .catch((error: unknown) => this.#onHistoryError(error))
      .finally(() => this.#pending.delete(write));
    this.#pending.add(write);
  }

  /**
   * Records one approval decision in the history store's audit trail (in the background,
   * awaited by {@link CodecallRuntime.flush}); stores without `appendApproval` keep none.
   */
  recordApproval(record: ApprovalRecord): void {
    if (this.#closing || !this.history.appendApproval) return;
    const write = this.history
      .appendApproval({ ...record })
      .catch((error: unknown) => this.#onHistoryError(error))
      .finally(() => this.#pending.delete(write));
    this.#pending.add(write);
  }

  /**
   * Learns from one use of search: a `search_tools` query and the tools the run then called
   * (query feedback). Updates search at once and appends to the history store in the background.
   */
  recordUsage(usage: ToolUsage): void {
    if (usage.tools.length === 0 || this.#closing) return;
    try {
      this.search.recordUsage(usage);
      this.#searchHost?.recordUsage(usage);
    } catch (error) {
      this.#onHistoryError(error);
      return;
    }
    if (!this.history.appendUsage) return;
    const write = this.history
      .appendUsage(usage)
      .catch((error: unknown) => this.#onHistoryError(error))
      .finally(() => this.#pending.delete(write));
    this.#pending.add(write);
  }

  /** Waits for every usage-history write in flight. */
  async flush(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  /** Declarations of every tool code may call (large catalogs: prefer {@link searchTools}). */
  declarations(options?: RenderDeclarationsOptions): string {
    return this.session.executor.declarations(options);
  }

  /** Updates the search index incrementally: only tools that were removed, added or changed. */
  /** Brings search up to date with a catalog change (the pool's diff: nothing is compared here but what changed). */
  #syncCatalog(change: CatalogChange): void {
    const removed = change.removed.map((tool) => tool.name);
    const changed = [
      ...change.added,
      ...change.changed
        .filter(({ before, after }) => !sameSearchFields(before, after))
        .map(({ after }) => after),
    ];
    try {
      if (removed.length > 0) {
        this.search.removeTools(removed);
        this.#searchHost?.removeTools(removed);
      }
      if (changed.length > 0) {
        const tools = changed.map(searchable);
        this.search.addTools(tools);
        this.#searchHost?.addTools(tools);
      }
    } catch (error) {
      this.#onHistoryError(error);
    }
  }

  /** Flushes usage history, then closes the sandbox, every MCP server and the store. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#unsubscribe();
      await this.flush();
      await Promise.allSettled([this.session.close(), this.history.close(), this.#searchHost?.close()]);
    })();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
