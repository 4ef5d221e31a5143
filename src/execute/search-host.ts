/**
 * @module
 * Tool search on a worker thread, so that one client's query (a regex over every description,
 * BM25 over a large catalog, embedding fusion) never stalls the host's event loop for the others.
 * The worker holds its own copy of the index: the host posts the catalog and usage diffs as they
 * happen and queries in between; the worker handles them in order. When the worker cannot start
 * or dies, queries are answered in-process by the fallback search (after yielding once).
 */
import { Worker } from 'node:worker_threads';
import { CodecallError } from '../errors.js';
import type {
  RankingOptions,
  SearchableTool,
  SearchFieldWeights,
  SearchOptions,
  Stemming,
  ToolSearch,
  ToolSearchResult,
  ToolSearchState,
  ToolUsage,
} from '../search/index.js';
import type { EmbeddingsConfig } from './open-embeddings.js';
import { disableOnnxRuntimeTelemetry } from '../search/index.js';
import { findDistFile } from '../util/dist-file.js';

export { DEFAULT_SEARCH_WORKER_MIN_TOOLS } from '../config/defaults.js';

/** What the worker builds its index with: `createToolSearch` options that cross a thread. */
export interface SearchWorkerRanking extends RankingOptions {
  fieldWeights?: Partial<SearchFieldWeights>;
  stemming?: Stemming;
  verbNormalization?: boolean;
}

/** A message to the search worker. */
export type SearchWorkerRequest =
  | {
      type: 'open';
      tools: SearchableTool[];
      state: ToolSearchState | undefined;
      ranking: SearchWorkerRanking;
      embeddings?: { config: EmbeddingsConfig; baseDir: string };
    }
  | { type: 'add'; tools: SearchableTool[] }
  | { type: 'remove'; names: string[] }
  | { type: 'sequence'; names: string[] }
  | { type: 'usage'; usage: ToolUsage }
  | { type: 'search'; id: number; query: string; options: SearchOptions }
  | { type: 'close' };

/** The worker's answer to a `search` (id -1: an update failed and the worker is unusable). */
export interface SearchWorkerReply {
  id: number;
  result?: ToolSearchResult;
  error?: { code: string; message: string; details?: unknown };
}

/** Options of {@link SearchWorkerHost.open}. */
export interface SearchWorkerHostOptions {
  tools: readonly SearchableTool[];
  state?: ToolSearchState | undefined;
  ranking?: SearchWorkerRanking;
  /** The configuration's `search.embeddings` and the folder its relative paths start from. */
  embeddings?: { config: EmbeddingsConfig; baseDir: string } | undefined;
  /** Answers queries when the worker cannot (kept in sync by the caller). */
  fallback: ToolSearch;
  /** Told once when the worker fails and the fallback takes over. */
  onError?: (error: unknown) => void;
}

interface Pending {
  resolve: (result: ToolSearchResult) => void;
  reject: (error: unknown) => void;
  query: string;
  options: SearchOptions;
}

function yieldOnce(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Tool search answered on a worker thread.
 *
 * @example
 * ```ts
 * const search = createToolSearch({ tools });
 * const host = SearchWorkerHost.open({ tools, fallback: search });
 * const found = await host.search('send a slack message', { limit: 5 });
 * await host.close();
 * ```
 */
export class SearchWorkerHost {
  readonly #fallback: ToolSearch;
  readonly #onError: (error: unknown) => void;
  readonly #pending = new Map<number, Pending>();
  #worker: Worker | undefined;
  #nextId = 0;
  #closed = false;

  private constructor(options: SearchWorkerHostOptions, entry: string | undefined) {
    this.#fallback = options.fallback;
    this.#onError = options.onError ?? (() => {});
    if (entry === undefined) return;
    try {
      // onnxruntime reads its telemetry switch from the process environment: set it here, on the
      // main thread, before the worker that loads a local model starts.
      if (options.embeddings?.config.onnx !== undefined) disableOnnxRuntimeTelemetry();
      const worker = new Worker(entry);
      worker.unref();
      worker.on('message', (reply: SearchWorkerReply) => this.#receive(reply));
      worker.on('error', (error) => this.#fail(error));
      worker.on('exit', (code) => {
        if (!this.#closed) this.#fail(new Error(`the search worker exited with code ${code}`));
      });
      this.#worker = worker;
      this.#post({
        type: 'open',
        tools: [...options.tools],
        state: options.state,
        ranking: options.ranking ?? {},
        ...(options.embeddings ? { embeddings: options.embeddings } : {}),
      });
    } catch (error) {
      this.#fail(error);
    }
  }

  /** Starts the worker with `tools` and `state` (a snapshot: post later changes with the methods below). */
  static open(options: SearchWorkerHostOptions): SearchWorkerHost {
    return new SearchWorkerHost(options, findDistFile('execute/search-worker.js'));
  }

  /** True while queries run on the worker thread (false: in-process fallback). */
  get onWorker(): boolean {
    return this.#worker !== undefined;
  }

  /** Ranked tools for `query` (as `ToolSearch.searchAsync`); throws what it would throw. */
  async search(query: string, options: SearchOptions = {}): Promise<ToolSearchResult> {
    if (this.#closed) throw new CodecallError('CLOSED', 'The search host is closed.');
    if (!this.#worker) {
      await yieldOnce();
      return this.#fallback.searchAsync(query, options);
    }
    const id = this.#nextId++;
    return new Promise<ToolSearchResult>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, query, options });
      this.#worker?.ref();
      this.#post({ type: 'search', id, query, options });
    });
  }

  addTools(tools: readonly SearchableTool[]): void {
    this.#post({ type: 'add', tools: [...tools] });
  }

  removeTools(names: readonly string[]): void {
    this.#post({ type: 'remove', names: [...names] });
  }

  recordSequence(names: readonly string[]): void {
    this.#post({ type: 'sequence', names: [...names] });
  }

  recordUsage(usage: ToolUsage): void {
    this.#post({ type: 'usage', usage: { query: usage.query, tools: [...usage.tools] } });
  }

  /** Stops the worker (closing its embedding cache). Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = undefined;
    for (const pending of this.#pending.values()) {
      pending.reject(new CodecallError('CLOSED', 'The search host closed before the query was answered.'));
    }
    this.#pending.clear();
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.ref();
    worker.postMessage({ type: 'close' } satisfies SearchWorkerRequest);
    const timer = setTimeout(() => void worker.terminate(), 1_000);
    await exited;
    clearTimeout(timer);
  }

  #post(request: SearchWorkerRequest): void {
    if (!this.#worker) return;
    try {
      this.#worker.postMessage(request);
    } catch (error) {
      // A value that cannot be cloned (a schema too deep): the worker's index would drift.
      this.#fail(error);
    }
  }

  #receive(reply: SearchWorkerReply): void {
    if (reply.id === -1) return this.#fail(new Error(reply.error?.message ?? 'the search worker failed'));
    const pending = this.#pending.get(reply.id);
    if (!pending) return;
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0) this.#worker?.unref();
    if (reply.result) return pending.resolve(reply.result);
    const error = reply.error ?? { code: 'SEARCH_FAILED', message: 'the search worker did not answer' };
    pending.reject(
      error.code === 'SEARCH_INVALID_QUERY'
        ? new CodecallError('SEARCH_INVALID_QUERY', error.message, {
            details: { query: '', ...(error.details as { query?: string } | undefined) },
          })
        : new Error(error.message),
    );
  }

  /** The worker is gone or out of step: answer what is pending, and all later queries, in-process. */
  #fail(error: unknown): void {
    const worker = this.#worker;
    if (!worker) return;
    this.#worker = undefined;
    void worker.terminate();
    this.#onError(error);
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) {
      void yieldOnce()
        .then(() => this.#fallback.searchAsync(p.query, p.options))
        .then(p.resolve, p.reject);
    }
  }
}
