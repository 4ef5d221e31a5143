/**
 * @module
 * The public shapes of tool search: the tools it indexes, the options of a query, its hits,
 * chains and graph edges, and the {@link ToolSearch} interface that `createToolSearch` returns.
 */
import type { JsonSchema } from '../types.js';
import type { EmbedFunction, EmbeddingCache } from './embeddings.js';
import type { RankingOptions, SearchFieldWeights } from './options.js';
import type { Stemming } from './tokenize.js';
import type { ToolSearchState } from './tool-graph.js';

/** One use of search: what was asked, and which tools the run then called. */
export interface ToolUsage {
  /** The `search_tools` query. */
  query: string;
  /** Tools the run called after it (any order; repeats count once). */
  tools: readonly string[];
}

/** A tool as search sees it. `name` is whatever the caller dispatches on (`server.tool` for MCP). */
export interface SearchableTool {
  name: string;
  description?: string | undefined;
  server?: string | undefined;
  inputSchema?: JsonSchema | undefined;
  outputSchema?: JsonSchema | undefined;
  /**
   * Example arguments (codecall's `tools.<name>.inputExamples`): the values are indexed as the
   * BM25F field `examples`, as are JSON Schema `examples` in `inputSchema`. Bounded per tool.
   */
  inputExamples?: readonly unknown[] | undefined;
}

/**
 * `hybrid`: BM25 plus the tool graph (default); `bm25`: lexical only; `regex`: the query is a
 * pattern tested against names, descriptions and argument names and descriptions.
 */
export type SearchMode = 'hybrid' | 'bm25' | 'regex';

/** Options of one search. */
export interface SearchOptions extends RankingOptions {
  /**
   * Hits returned.
   * @defaultValue {@link DEFAULT_SEARCH_LIMIT}
   */
  limit?: number;
  /**
   * How the query is read.
   * @defaultValue 'hybrid'
   */
  mode?: SearchMode;
  /**
   * Chains returned by `searchDetailed`.
   * @defaultValue {@link DEFAULT_CHAIN_LIMIT}
   */
  chainLimit?: number;
  /**
   * `searchAsync` with embeddings: the default ranking's best this many hits keep their places;
   * the fusion with the embedding ranking orders what follows (0 = fuse the whole list).
   * @defaultValue the index's `embeddingGuard`
   */
  embeddingGuard?: number;
  /**
   * `searchAsync` with embeddings: fuse only when the default ranking has no head (its 10th hit
   * scores at least this share of its best); otherwise keep it and only add embedding hits after
   * its last when it has fewer than `limit` (0 = fuse every query).
   * @defaultValue the index's `embeddingFlatShare`
   */
  embeddingFlatShare?: number;
}

/** One ranked tool. */
export interface ToolSearchHit {
  name: string;
  /** Higher is better; comparable within one result only. */
  score: number;
  /** Why it ranks here, for people and models ("matches 'expenses' in description"). */
  reasons: string[];
}

/** A likely sequence of calls, from the graph walk. */
export interface ToolChain {
  /** Tool names in call order. */
  tools: string[];
  score: number;
  reasons: string[];
}

/** What {@link ToolSearch.searchDetailed} returns. */
export interface ToolSearchResult {
  hits: ToolSearchHit[];
  /** The most likely call sequences (two tools or more), best first; empty without graph evidence. */
  chains: ToolChain[];
  /** True when a regex search ran out of its time budget and the hits are partial. */
  truncated: boolean;
  /**
   * Set by `searchAsync` when the embedder failed: the hits are then the lexical + graph ranking
   * alone, and this says why.
   */
  embeddingError?: string;
}

/** One edge of the tool graph, for inspection (`codecall graph`). */
export interface ToolGraphEdge {
  from: string;
  to: string;
  /** Runs in which `to` was called right after `from` (0 for inferred edges). */
  count: number;
  /** `count / Σ_k count(from → k)`; 0 for inferred edges. */
  probability: number;
  /** The weight search uses: shrunk by the evidence, including the inferred prior. */
  weight: number;
  /** `observed` from recorded runs, `inferred` from the schemas (cold start). */
  kind: 'observed' | 'inferred';
  /** Why an inferred edge exists. */
  reason?: string;
}

/** Options of {@link ToolSearch.graphEdges}. */
export interface GraphEdgesOptions {
  /**
   * Observed edges with fewer runs are left out.
   * @defaultValue 1
   */
  minCount?: number;
  /**
   * Include edges inferred from the schemas (between tools of the current catalog).
   * @defaultValue false
   */
  includeInferred?: boolean;
}

/** Options of {@link createToolSearch}. */
export interface CreateToolSearchOptions extends RankingOptions {
  /** The catalog to index. */
  tools: readonly SearchableTool[];
  /** Learned counts to restore (from `serialize()` or `UsageHistoryStore.load()`). */
  state?: ToolSearchState | undefined;
  /**
   * BM25F field weights.
   * @defaultValue {@link DEFAULT_FIELD_WEIGHTS}
   */
  fieldWeights?: Partial<SearchFieldWeights>;
  /**
   * How words are reduced to terms: the light stemmer, Porter's (`stemmer` package), or none.
   * Applies to the index and the queries alike.
   * @defaultValue {@link DEFAULT_STEMMING}
   */
  stemming?: Stemming;
  /**
   * Map the verbs users say and the verbs tools are named with onto one term per class
   * (create/make/generate, get/fetch/list/show/retrieve, delete/remove), in the index and the
   * queries. Off by default: it helps UltraTool's BM25 and hurts ToolBench (docs/search.md).
   * @defaultValue false
   */
  verbNormalization?: boolean;
  /**
   * Optional embeddings: turns texts into vectors (see `createOpenAIEmbedder`). When given,
   * `searchAsync` fuses the embedding ranking with BM25 + graph by reciprocal-rank fusion;
   * `search` and `searchDetailed` stay lexical + graph and never wait for it.
   */
  embed?: EmbedFunction | undefined;
  /** Where tool vectors are kept between runs (e.g. `SqliteEmbeddingCache`). */
  embeddingCache?: EmbeddingCache | undefined;
  /**
   * Weight of the embedding ranking in the fusion (the lexical + graph ranking weighs 1).
   * @defaultValue {@link DEFAULT_EMBEDDING_WEIGHT}
   */
  embeddingWeight?: number;
  /**
   * The default ranking's best this many hits keep their places in `searchAsync`; the fusion
   * orders what follows (0 = fuse the whole list).
   * @defaultValue {@link DEFAULT_EMBEDDING_GUARD}
   */
  embeddingGuard?: number;
  /**
   * `searchAsync` fuses a query's ranking only when it has no head: its 10th hit scores at least
   * this share of its best. A ranking with a head keeps its order; the embedding then only adds
   * hits after its last, when it has fewer than the `limit` asked (0 = fuse every query).
   * @defaultValue {@link DEFAULT_EMBEDDING_FLAT_SHARE}
   */
  embeddingFlatShare?: number;
}

/** A searchable, learning index of tools. Create it with {@link createToolSearch}. */
export interface ToolSearch {
  /** Tools in the index. */
  readonly size: number;
  /** Ranked tools for `query`. Throws `SEARCH_INVALID_QUERY` for a bad regex or an empty query. */
  search(query: string, options?: SearchOptions): ToolSearchHit[];
  /** Ranked tools plus the most likely chains of calls. */
  searchDetailed(query: string, options?: SearchOptions): ToolSearchResult;
  /**
   * Like `searchDetailed`, fused with embedding similarity when an `embed` function was given
   * (reciprocal-rank fusion); without one, exactly `searchDetailed`. If the embedder fails, the
   * lexical + graph result comes back with `embeddingError` set.
   */
  searchAsync(query: string, options?: SearchOptions): Promise<ToolSearchResult>;
  /** Learns from one run: the tool names it dispatched, in order. */
  recordSequence(names: readonly string[]): void;
  /**
   * Learns from one use: a query and the tools the run then called (query feedback: the query's
   * words will lead to those tools once the pairing has repeated).
   */
  recordUsage(usage: ToolUsage): void;
  /** Adds tools, replacing any with the same name (a `list_changed` update). */
  addTools(tools: readonly SearchableTool[]): void;
  /** Removes tools by name; their learned counts stay, for when they come back. */
  removeTools(names: readonly string[]): void;
  /** True when `name` is in the index. */
  has(name: string): boolean;
  /** Names in the index, sorted. */
  toolNames(): string[];
  /** The learned counts as plain JSON, for `createToolSearch({ tools, state })`. */
  serialize(): ToolSearchState;
  /** Edges of the tool graph, strongest first per source tool. */
  graphEdges(options?: GraphEdgesOptions): ToolGraphEdge[];
}
