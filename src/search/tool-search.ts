/**
 * @module
 * Tool search: BM25F over each tool's name, server, description and parameters, a regex mode
 * with the semantics of Anthropic's regex tool search, and a tool graph learned from executed
 * call sequences that a beam search walks from the best lexical matches, so one query returns
 * the tools a multi-step task needs, with a reason for each. Pure: no I/O; the usage history is
 * persisted by a {@link UsageHistoryStore}.
 */
import { CodecallError } from '../errors.js';
import { Bm25Index } from './bm25.js';
import {
  DEFAULT_EMBEDDING_GUARD,
  DEFAULT_EMBEDDING_WEIGHT,
  DEFAULT_GRAPH_NEIGHBOUR_CACHE_ENTRIES,
  DEFAULT_MAX_EMBEDDING_GUARD,
  DEFAULT_EMBEDDING_FLAT_SHARE,
} from '../config/defaults.js';
import {
  Extensions,
  GraphCredits,
  listGraphEdges,
  NeighbourCache,
  walkGraph,
  type GraphView,
} from './beam-walk.js';
import { CatalogLinks, schemaProperties } from './catalog-links.js';
import {
  DEFAULT_FUSION_DEPTH,
  DEFAULT_RRF_K,
  embeddingText,
  fuseRankings,
  hasNoHead,
  ToolEmbeddings,
} from './embeddings.js';
import {
  DEFAULT_CHAIN_LIMIT,
  DEFAULT_EXPANSION_FLAT_RANK,
  DEFAULT_FIELD_WEIGHTS,
  DEFAULT_LEXICAL_GUARD_HITS,
  DEFAULT_LEXICAL_GUARD_SHARE,
  DEFAULT_SEARCH_LIMIT,
  resolveRankingOptions,
  type ResolvedRankingOptions,
  type SearchFieldWeights,
} from './options.js';
import { expandQuery, isFlatFirstPass, selectTop } from './query-expansion.js';
import { QueryFeedback } from './query-feedback.js';
import { coveringDepth, RankedIds } from './ranked-ids.js';
import { ScoreMerge } from './score-merge.js';
import { BuildMemo, indexedFields, SearchEntries } from './search-entries.js';
import { describeStep, lexicalReason, originalWords, round } from './search-reasons.js';
import { DEFAULT_STEMMING, tokenize, type TokenizeOptions } from './tokenize.js';
import { DEFAULT_MAX_TOOL_NAME_CHARS, ToolGraph, type ToolSearchState } from './tool-graph.js';
import type {
  CreateToolSearchOptions,
  GraphEdgesOptions,
  SearchableTool,
  SearchOptions,
  ToolChain,
  ToolGraphEdge,
  ToolSearch,
  ToolSearchHit,
  ToolSearchResult,
  ToolUsage,
} from './tool-search-types.js';

export type {
  CreateToolSearchOptions,
  GraphEdgesOptions,
  SearchableTool,
  SearchMode,
  SearchOptions,
  ToolChain,
  ToolGraphEdge,
  ToolSearch,
  ToolSearchHit,
  ToolSearchResult,
  ToolUsage,
} from './tool-search-types.js';

/** Characters of a query that are read (the rest is ignored). */
export const DEFAULT_MAX_QUERY_CHARS = 4_000;
export { DEFAULT_MAX_INDEXED_TEXT_CHARS, DEFAULT_REGEX_SEARCH_BUDGET_MS } from './search-entries.js';
/** Recorded uses (query, tools) kept for `serialize()`, newest last (older ones live on in the counts). */
export const DEFAULT_MAX_SERIALIZED_USES = 10_000;

function invalidArgument(message: string, field: string): CodecallError {
  return new CodecallError('INVALID_ARGUMENT', message, { details: { field } });
}

/**
 * The index: it holds the catalog ({@link SearchEntries}), the BM25F index, the learned graph
 * and query feedback, and orchestrates a query; expansion, the graph walk and the reasons live
 * in their own files beside it.
 */
/** Checks an `embeddingGuard` value: an integer from 0 to {@link DEFAULT_MAX_EMBEDDING_GUARD}. */
function checkEmbeddingGuard(guard: unknown): number {
  if (
    typeof guard !== 'number' ||
    !Number.isInteger(guard) ||
    guard < 0 ||
    guard > DEFAULT_MAX_EMBEDDING_GUARD
  ) {
    throw invalidArgument(
      `"embeddingGuard" must be an integer from 0 to ${DEFAULT_MAX_EMBEDDING_GUARD} (hits of the default ranking kept in place); got ${String(guard)}.`,
      'embeddingGuard',
    );
  }
  return guard;
}

/** Checks an `embeddingFlatShare` value: a number from 0 to 1. */
function checkEmbeddingFlatShare(share: unknown): number {
  if (typeof share !== 'number' || !Number.isFinite(share) || share < 0 || share > 1) {
    throw invalidArgument(
      `"embeddingFlatShare" must be a number from 0 to 1 (fuse when the 10th hit scores at least this share of the best; 0 = every query); got ${String(share)}.`,
      'embeddingFlatShare',
    );
  }
  return share;
}

class ToolSearchIndex implements ToolSearch {
  readonly #ranking: ResolvedRankingOptions;
  readonly #weights: SearchFieldWeights;
  /** Stemming and verb normalization, the same for the index and every query. */
  readonly #lexical: Pick<TokenizeOptions, 'stemming' | 'verbNormalization'>;
  readonly #index: Bm25Index;
  /** The BM25F field weights in index order (name, server, description, parameter names, descriptions, examples). */
  readonly #fieldWeights: readonly number[];
  readonly #embeddings: ToolEmbeddings | undefined;
  readonly #embeddingWeight: number;
  readonly #embeddingGuard: number;
  readonly #embeddingFlatShare: number;
  readonly #graph = new ToolGraph();
  /** Schema-inferred links, built on first use (they cost as much memory as the index). */
  #catalogLinks: CatalogLinks | undefined;
  readonly #feedback = new QueryFeedback();
  /** Raw uses for `serialize()`, bounded by {@link DEFAULT_MAX_SERIALIZED_USES}. */
  #usages: Array<[string, string[]]> = [];
  readonly #entries = new SearchEntries();
  /** The merge of one query's scores by entry id (reused). */
  readonly #merge = new ScoreMerge();
  /** The lexical hits of one query in rank order, popped as far as asked (reused). */
  readonly #ranked = new RankedIds();
  /**
   * The entry id of each feedback tool id, as `entry id + 1` (`-1`: not in the catalog, `0`: not
   * looked up yet), valid while the catalog and the feedback's names are as they were when it was
   * filled (see {@link #feedbackEntry}).
   */
  #feedbackEntries = new Int32Array(0);
  #feedbackEntriesFor: [catalog: number, names: number] = [-1, -1];
  /** Bumped by every add and remove of a tool. */
  #catalogVersion = 0;
  /**
   * The walk's neighbour lists under the default ranking options, kept across queries; cleared
   * when a run is recorded, the catalog changes or it reaches its bound.
   */
  readonly #neighbours = new NeighbourCache();
  /** The graph credits of one query's walk by entry id (reused). */
  readonly #credits = new GraphCredits();
  readonly #extensions = new Extensions();
  /** What the graph walk reads (see beam-walk.ts). */
  readonly #view: GraphView = {
    graph: this.#graph,
    links: () => this.#links(),
    has: (name) => this.#entries.has(name),
    idOf: (name) => this.#entries.get(name)?.id,
    nameOf: (id) => this.#entries.byId(id)!.name,
    capacity: () => this.#entries.capacity,
    names: () => this.#entries.names(),
  };

  constructor(options: CreateToolSearchOptions) {
    if (typeof options !== 'object' || options === null || !Array.isArray(options.tools)) {
      throw invalidArgument(
        'createToolSearch needs { tools: [...] } (an array of { name, description?, ... }).',
        'tools',
      );
    }
    this.#ranking = resolveRankingOptions(options);
    this.#weights = { ...DEFAULT_FIELD_WEIGHTS, ...options.fieldWeights };
    for (const [field, weight] of Object.entries(this.#weights)) {
      if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0) {
        throw invalidArgument(
          `fieldWeights.${field} must be a non-negative number.`,
          `fieldWeights.${field}`,
        );
      }
    }
    const stemming = options.stemming ?? DEFAULT_STEMMING;
    if (stemming !== 'light' && stemming !== 'porter' && stemming !== 'none') {
      throw invalidArgument(
        `"stemming" must be "light", "porter" or "none"; got ${JSON.stringify(stemming)}.`,
        'stemming',
      );
    }
    if (options.verbNormalization !== undefined && typeof options.verbNormalization !== 'boolean') {
      throw invalidArgument('"verbNormalization" must be true or false.', 'verbNormalization');
    }
    this.#lexical = { stemming, verbNormalization: options.verbNormalization === true };
    if (options.embed !== undefined && typeof options.embed !== 'function') {
      throw invalidArgument('"embed" must be a function (texts: string[]) => Promise<number[][]>.', 'embed');
    }
    this.#embeddings = options.embed ? new ToolEmbeddings(options.embed, options.embeddingCache) : undefined;
    const embeddingWeight = options.embeddingWeight ?? DEFAULT_EMBEDDING_WEIGHT;
    if (typeof embeddingWeight !== 'number' || !Number.isFinite(embeddingWeight) || embeddingWeight < 0) {
      throw invalidArgument('"embeddingWeight" must be a non-negative number.', 'embeddingWeight');
    }
    this.#embeddingWeight = embeddingWeight;
    this.#embeddingGuard = checkEmbeddingGuard(options.embeddingGuard ?? DEFAULT_EMBEDDING_GUARD);
    this.#embeddingFlatShare = checkEmbeddingFlatShare(
      options.embeddingFlatShare ?? DEFAULT_EMBEDDING_FLAT_SHARE,
    );
    this.#fieldWeights = [
      this.#weights.name,
      this.#weights.server,
      this.#weights.description,
      this.#weights.parameterNames,
      this.#weights.parameterDescriptions,
      this.#weights.examples,
    ];
    this.#index = new Bm25Index(this.#fieldWeights);
    if (options.state !== undefined) {
      this.#graph.load(options.state);
      const usages = (options.state as { usages?: unknown }).usages;
      if (usages !== undefined) this.#loadUsages(usages);
    }
    this.addTools(options.tools);
  }

  get size(): number {
    return this.#entries.size;
  }

  has(name: string): boolean {
    return this.#entries.has(name);
  }

  toolNames(): string[] {
    return [...this.#entries.names()].sort();
  }

  addTools(tools: readonly SearchableTool[]): void {
    if (!Array.isArray(tools)) throw invalidArgument('addTools needs an array of tools.', 'tools');
    const memo = new BuildMemo();
    tools.forEach((tool, index) => {
      if (
        typeof tool !== 'object' ||
        tool === null ||
        typeof tool.name !== 'string' ||
        tool.name.trim() === ''
      ) {
        throw invalidArgument(`tools[${index}] needs a non-empty string "name".`, `tools[${index}].name`);
      }
      if (tool.name.length > DEFAULT_MAX_TOOL_NAME_CHARS) {
        throw invalidArgument(
          `tools[${index}].name is longer than ${DEFAULT_MAX_TOOL_NAME_CHARS} characters.`,
          `tools[${index}].name`,
        );
      }
      this.#addOne(tool, memo);
    });
    this.#index.seal();
  }

  #addOne(tool: SearchableTool, memo: BuildMemo): void {
    this.#removeOne(tool.name);
    this.#clearNeighbours();
    this.#catalogVersion++;
    const { entry, properties } = this.#entries.add(tool);
    const { server, description, parameterNames } = entry;
    this.#index.add(entry.id, indexedFields(entry, this.#lexical, memo));
    this.#embeddings?.set(tool.name, embeddingText(tool.name, description, parameterNames));
    this.#catalogLinks?.add(
      { name: tool.name, server, description, outputSchema: tool.outputSchema },
      properties,
    );
  }

  #clearNeighbours(): void {
    // Checked first: a catalog build calls this once per tool, nearly always with nothing kept.
    if (this.#neighbours.size > 0) this.#neighbours.clear();
  }

  /** The schema-inferred links of the catalog, built from the entries on first use. */
  #links(): CatalogLinks {
    if (!this.#catalogLinks) {
      const links = new CatalogLinks();
      for (const entry of this.#entries.values()) {
        const { tool, server, description } = entry;
        links.add(
          { name: tool.name, server, description, outputSchema: tool.outputSchema },
          schemaProperties(tool.inputSchema),
        );
      }
      this.#catalogLinks = links;
    }
    return this.#catalogLinks;
  }

  removeTools(names: readonly string[]): void {
    if (!Array.isArray(names)) throw invalidArgument('removeTools needs an array of tool names.', 'names');
    for (const name of names) if (typeof name === 'string') this.#removeOne(name);
  }

  #removeOne(name: string): void {
    const entry = this.#entries.get(name);
    if (!entry) return;
    this.#clearNeighbours();
    this.#catalogVersion++;
    this.#index.remove(entry.id);
    this.#catalogLinks?.remove(name);
    this.#embeddings?.delete(name);
    this.#entries.remove(name);
  }

  recordSequence(names: readonly string[]): void {
    if (!Array.isArray(names))
      throw invalidArgument('recordSequence needs an array of tool names in call order.', 'names');
    this.#graph.record(names);
    this.#clearNeighbours();
  }

  recordUsage(usage: ToolUsage): void {
    if (
      typeof usage !== 'object' ||
      usage === null ||
      typeof usage.query !== 'string' ||
      !Array.isArray(usage.tools) ||
      usage.tools.some((tool) => typeof tool !== 'string')
    ) {
      throw invalidArgument(
        'recordUsage needs { query: string, tools: string[] } (the tools the run called after the query).',
        'usage',
      );
    }
    const query = usage.query.slice(0, DEFAULT_MAX_QUERY_CHARS);
    const tools = [...new Set(usage.tools)].filter(
      (tool) => tool !== '' && tool.length <= DEFAULT_MAX_TOOL_NAME_CHARS,
    );
    if (query.trim() === '' || tools.length === 0) return;
    this.#feedback.record(tokenize(query, this.#lexical), tools);
    this.#usages.push([query, tools]);
    if (this.#usages.length > DEFAULT_MAX_SERIALIZED_USES * 2)
      this.#usages = this.#usages.slice(-DEFAULT_MAX_SERIALIZED_USES);
  }

  #loadUsages(usages: unknown): void {
    if (!Array.isArray(usages)) {
      throw invalidArgument(
        'Tool search state: "usages" must be an array of [query, tools].',
        'state.usages',
      );
    }
    usages.forEach((usage: unknown, index) => {
      if (
        !Array.isArray(usage) ||
        typeof usage[0] !== 'string' ||
        !Array.isArray(usage[1]) ||
        (usage[1] as unknown[]).some((tool) => typeof tool !== 'string')
      ) {
        throw invalidArgument(
          `Tool search state: usages[${index}] must be [query: string, tools: string[]].`,
          `state.usages[${index}]`,
        );
      }
      this.recordUsage({ query: usage[0], tools: usage[1] as string[] });
    });
  }

  serialize(): ToolSearchState {
    const state = this.#graph.toState();
    if (this.#usages.length > 0)
      state.usages = this.#usages.slice(-DEFAULT_MAX_SERIALIZED_USES).map(([q, t]) => [q, [...t]]);
    return state;
  }

  search(query: string, options: SearchOptions = {}): ToolSearchHit[] {
    return this.searchDetailed(query, { ...options, chainLimit: 0 }).hits;
  }

  async searchAsync(query: string, options: SearchOptions = {}): Promise<ToolSearchResult> {
    const embeddings = this.#embeddings;
    const guard = checkEmbeddingGuard(options.embeddingGuard ?? this.#embeddingGuard);
    const flatShare = checkEmbeddingFlatShare(options.embeddingFlatShare ?? this.#embeddingFlatShare);
    if (!embeddings || options.mode === 'regex') return this.searchDetailed(query, options);
    const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
    let base = this.searchDetailed(query, { ...options, limit: Math.max(limit, DEFAULT_FUSION_DEPTH) });
    // Fused only where the ranking has no head (or nothing at all); elsewhere it keeps its order
    // and the embedding may only add hits after its last, when it has fewer than `limit`.
    const fuse =
      base.hits.length === 0 ||
      hasNoHead(
        base.hits.map((hit) => hit.score),
        flatShare,
      );
    if (!fuse) {
      base = this.searchDetailed(query, options);
      if (base.hits.length >= limit) return base;
    }
    let semantic: Array<[string, number]>;
    try {
      await embeddings.update();
      const vector = await embeddings.embedQuery(query.slice(0, DEFAULT_MAX_QUERY_CHARS));
      semantic = embeddings.rank(vector, DEFAULT_FUSION_DEPTH).filter(([name]) => this.#entries.has(name));
    } catch (error) {
      return {
        ...this.searchDetailed(query, options),
        embeddingError: (error as Error)?.message ?? String(error),
      };
    }
    const semanticRank = new Map(semantic.map(([name], i) => [name, i + 1]));
    const byName = new Map(base.hits.map((hit) => [hit.name, hit]));
    const exact = base.hits.filter((hit) => hit.reasons[0] === 'exact tool name').map((hit) => hit.name);
    const fused = fuseRankings(
      [
        { names: base.hits.map((hit) => hit.name), weight: 1 },
        { names: semantic.map(([name]) => name), weight: this.#embeddingWeight },
      ],
      DEFAULT_RRF_K,
    );
    // Exact tool names stay first, as in the lexical ranking, and so do the ranking's best
    // `guard` hits: the fusion orders what follows them.
    const fusedScore = new Map(fused);
    const kept = new Set([...exact, ...base.hits.slice(0, fuse ? guard : undefined).map((hit) => hit.name)]);
    const ordered: Array<[string, number]> = [
      ...base.hits
        .filter((hit) => kept.has(hit.name))
        .map((hit): [string, number] => [hit.name, fusedScore.get(hit.name) ?? 0]),
      ...fused.filter(([name]) => !kept.has(name)),
    ];
    const hits = ordered.slice(0, limit).map(([name, score]) => {
      const reasons = [...(byName.get(name)?.reasons ?? [])];
      const rank = semanticRank.get(name);
      if (rank !== undefined) reasons.push(`close in meaning to the query (embedding rank ${rank})`);
      return { name, score: round(score), reasons };
    });
    return { ...base, hits };
  }

  searchDetailed(query: string, options: SearchOptions = {}): ToolSearchResult {
    if (typeof query !== 'string' || query.trim() === '') {
      throw new CodecallError(
        'SEARCH_INVALID_QUERY',
        'The search query is empty. Describe the task ("send a slack message"), give keywords, or a tool name.',
        { details: { query } },
      );
    }
    const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
    if (!Number.isInteger(limit) || limit < 1)
      throw invalidArgument('Search "limit" must be a positive integer.', 'limit');
    const chainLimit = options.chainLimit ?? DEFAULT_CHAIN_LIMIT;
    if (!Number.isInteger(chainLimit) || chainLimit < 0) {
      throw invalidArgument('Search "chainLimit" must be a non-negative integer.', 'chainLimit');
    }
    const mode = options.mode ?? 'hybrid';
    if (mode === 'regex') return this.#entries.searchRegex(query, limit, this.#weights);
    if (mode !== 'hybrid' && mode !== 'bm25') {
      throw invalidArgument(
        `Search "mode" must be "hybrid", "bm25" or "regex"; got ${JSON.stringify(mode)}.`,
        'mode',
      );
    }
    const ranking = resolveRankingOptions(options, this.#ranking);
    const text = query.slice(0, DEFAULT_MAX_QUERY_CHARS);
    const terms = tokenize(text, this.#lexical);

    // Query feedback: learned term → tool associations, added to the lexical score, by entry id
    // (with the query term that contributed most to each, for its reason).
    const feedbackIds: number[] = [];
    const feedbackScores: number[] = [];
    const feedbackTerms: string[] = [];
    if (mode === 'hybrid' && ranking.feedbackWeight > 0 && !this.#feedback.empty) {
      const learned = this.#feedback.scoreIds(terms, {
        evidencePrior: ranking.evidencePrior,
        minCount: ranking.feedbackMinCount,
      });
      const entries = this.#feedbackEntriesNow();
      for (let i = 0; i < learned.length; i++) {
        const tool = learned.tools[i]!;
        const slot = tool < entries.length ? entries[tool]! : 0;
        const id = slot > 0 ? slot - 1 : slot < 0 ? -1 : this.#feedbackEntry(tool);
        if (id < 0) continue;
        feedbackIds.push(id);
        feedbackScores.push(learned.scores[i]!);
        feedbackTerms.push(learned.terms[i]!);
      }
    }

    // Lexical scores (normalised to 0–1 by the best one when read), after RM3 where it pays:
    // pseudo-relevance feedback stands in for learned evidence, so by default the hybrid ranking
    // uses it only for queries that learned feedback does not cover (with usage it lowered
    // UltraTool's graph ranking), and only when the first pass is not flat (see `expansionWhen`).
    const { scores, ids } = this.#index.score(terms, ranking);
    const expand = this.#expands(mode, ranking, feedbackIds.length > 0, ids, scores);
    if (expand) {
      // The expanded query re-scores the best first-pass hits: the query's own terms weigh
      // (1 − w) everywhere (scaling keeps the order of the rest), the expansion on top.
      const candidates = selectTop(ids, scores, Math.max(ranking.expansionRerankDocs, ranking.expansionDocs));
      const expanded = expandQuery(
        terms,
        candidates.slice(0, ranking.expansionDocs),
        scores,
        ranking,
        this.#fieldWeights,
        this.#index,
      );
      const keep = 1 - ranking.expansionWeight;
      for (const id of ids) scores[id]! *= keep;
      for (const term of new Set(terms)) {
        const extra = (expanded.get(term) ?? 0) - keep;
        if (extra > 0) expanded.set(term, extra);
        else expanded.delete(term);
      }
      this.#index.addToCandidates(candidates, expanded, ranking);
    }
    const index = this.#index;
    const nameOf = (id: number): string => this.#entries.byId(id)!.name;
    // The best k lexical hits, popped in rank order as far as the longest request so far: the
    // first request (the walk's seeds, or the result's) reads as deep as the result's will, so the
    // matches are passed over once.
    const rankedIds = this.#ranked;
    const guardHits = Math.min(ranking.lexicalGuard, DEFAULT_LEXICAL_GUARD_HITS);
    rankedIds.reset(ids, scores, coveringDepth(limit + guardHits));
    // The best lexical score, the first hit's (what a lexical score is normalised by).
    const first = rankedIds.first();
    const best = first < 0 ? 0 : scores[first]!;
    const lexicalScore = (id: number): number => (index.matched(id) ? scores[id]! / best : 0);
    const exact = this.#entries.exactNames(text);
    const merge = this.#merge;

    // The lexical hits the merge holds (a prefix of the lexical order), when the walk's seeds
    // were merged: the result's merge then goes on from there instead of starting over.
    let merged = -1;
    /** Lexical plus feedback score of the best `k` such tools (the walk's seeds). */
    const topBase = (k: number): Array<[number, number]> => {
      merge.begin(this.#entries.capacity);
      // Of the best `k + feedback` lexical hits, only as many as the top `k` can depend on.
      const lexical = rankedIds.covering(k, k + feedbackIds.length, best);
      for (const id of lexical) merge.set(id, scores[id]! / best);
      merged = lexical.length;
      for (let i = 0; i < feedbackIds.length; i++) {
        const id = feedbackIds[i]!;
        const base = merge.has(id) ? merge.get(id) : lexicalScore(id);
        merge.set(id, base + ranking.feedbackWeight * feedbackScores[i]!);
      }
      return merge.top(k, nameOf).map((id) => [id, merge.get(id)]);
    };

    // The graph credits by entry id, when the walk ran.
    let credits: GraphCredits | undefined;
    let chains: ToolChain[] = [];
    if (
      mode === 'hybrid' &&
      ranking.graphWeight > 0 &&
      ranking.beamDepth > 0 &&
      (ids.length > 0 || feedbackIds.length > 0) &&
      // Nothing observed and no inferred edges: the walk would find no step.
      (!this.#graph.empty || ranking.inferredEdgeShare > 0)
    ) {
      // Neighbour lists are kept across queries for the default options only (others weigh edges
      // differently).
      if (this.#neighbours.size >= DEFAULT_GRAPH_NEIGHBOUR_CACHE_ENTRIES) this.#clearNeighbours();
      const walk = walkGraph(this.#view, topBase(ranking.beamWidth), ranking, {
        chains: chainLimit,
        neighbours: ranking === this.#ranking ? this.#neighbours : undefined,
        credits: this.#credits,
        extensions: this.#extensions,
      });
      credits = walk.credits;
      chains = walk.paths.map((p) => ({
        tools: p.nodes,
        score: round(p.score),
        reasons: p.steps.map(describeStep),
      }));
    }
    // Only the top `limit + credited` lexical hits can make the cut (see selectTop), and of those
    // only as many as the merge's top can depend on (see RankedIds.covering).
    const strong = ranking.lexicalGuard;
    const lexicalBound =
      Math.max(limit, strong) + (credits?.ids.length ?? 0) + feedbackIds.length + (exact?.size ?? 0);
    const exactIds: number[] = [];
    for (const name of exact ?? []) exactIds.push(this.#entries.get(name)!.id);
    // The merge's top is `limit` plus the guarded hits (at most `guardHits`): a longer prefix than
    // it needs changes nothing.
    const lexicalTop = ids.length > 0 ? rankedIds.covering(limit + guardHits, lexicalBound, best) : [];
    const guardedIds = lexicalTop
      .slice(0, guardHits)
      .filter((id) => scores[id]! / best >= DEFAULT_LEXICAL_GUARD_SHARE);
    if (merged >= 0 && merged <= lexicalTop.length) {
      // The seeds' merge holds the first `merged` of these hits and every feedback tool, each
      // scored as below (a feedback tool further down the lexical order was scored by its lexical
      // score, the same number); the rest of the hits are added.
      for (let i = merged; i < lexicalTop.length; i++) {
        const id = lexicalTop[i]!;
        if (!merge.has(id)) merge.set(id, scores[id]! / best);
      }
    } else {
      merge.begin(this.#entries.capacity);
      for (const id of lexicalTop) merge.set(id, scores[id]! / best);
      for (let i = 0; i < feedbackIds.length; i++) {
        const id = feedbackIds[i]!;
        const base = merge.has(id) ? merge.get(id) : lexicalScore(id);
        merge.set(id, base + ranking.feedbackWeight * feedbackScores[i]!);
      }
    }
    for (const id of credits?.ids ?? []) {
      const base = merge.has(id) ? merge.get(id) : lexicalScore(id);
      merge.set(id, base + ranking.graphWeight * credits!.score(id));
    }
    for (const id of exactIds) {
      const base = merge.has(id) ? merge.get(id) : lexicalScore(id);
      merge.set(id, base + 1 + ranking.graphWeight + ranking.feedbackWeight);
    }

    const guarded = new Set(guardedIds);
    // The guard reads the top `limit` and where the guarded hits stand: the best `limit + guarded`
    // of the merge, then any guarded hit below them, in the same order.
    const topIds = merge.top(limit + guardedIds.length, nameOf);
    const inTop = new Set(topIds);
    const below = guardedIds.filter((id) => !inTop.has(id));
    if (below.length > 0) {
      const value = (id: number): number => merge.get(id);
      below.sort((a, b) => value(b) - value(a) || (nameOf(a) < nameOf(b) ? -1 : 1));
      topIds.push(...below);
    }
    const exactSet = exactIds.length > 0 ? new Set(exactIds) : undefined;
    const ranked = guardLexical(topIds, guarded, exactSet, Math.min(strong, limit)).slice(0, limit);
    const originals = originalWords(text, this.#lexical);
    const distinct = [...new Set(terms)];
    const looked = this.#index.lookup(distinct);
    const masks: number[] = [];
    // Reasons are worded for the returned hits only.
    const hits = ranked.map((id) => {
      const reasons: string[] = [];
      if (exactSet?.has(id)) reasons.push('exact tool name');
      const matched = lexicalReason(this.#index, id, distinct, looked, originals, masks);
      if (matched) reasons.push(matched);
      const at = feedbackIds.indexOf(id);
      const learned = at < 0 ? undefined : feedbackTerms[at]!;
      if (learned !== undefined)
        reasons.push(`used after queries with '${originals.get(learned) ?? learned}'`);
      if (credits?.has(id)) reasons.push(describeStep(credits.step(id)));
      return { name: nameOf(id), score: round(merge.get(id)), reasons };
    });
    return { hits, chains, truncated: false };
  }

  /**
   * The entry ids of feedback tool ids looked up so far (per tool id: its entry id + 1, −1 when
   * not in the catalog, 0 when not looked up yet), emptied first when the catalog changed or the
   * feedback forgot or reused an id since: checked once per query, then read directly.
   */
  #feedbackEntriesNow(): Int32Array {
    const names = this.#feedback.namesVersion;
    const kept = this.#feedbackEntriesFor;
    if (kept[0] !== this.#catalogVersion || kept[1] !== names) {
      this.#feedbackEntries.fill(0);
      this.#feedbackEntriesFor = [this.#catalogVersion, names];
    }
    return this.#feedbackEntries;
  }

  /**
   * The entry id of a feedback tool id, or -1 when that tool is not in the catalog. Looked up by
   * name once, then kept until the catalog changes or the feedback forgets or reuses an id.
   */
  #feedbackEntry(tool: number): number {
    this.#feedbackEntriesNow();
    if (tool >= this.#feedbackEntries.length) {
      const grown = new Int32Array(Math.max(64, (tool + 1) * 2));
      grown.set(this.#feedbackEntries);
      this.#feedbackEntries = grown;
    }
    let slot = this.#feedbackEntries[tool]!;
    if (slot === 0) {
      const entry = this.#entries.get(this.#feedback.toolName(tool));
      slot = entry === undefined ? -1 : entry.id + 1;
      this.#feedbackEntries[tool] = slot;
    }
    return slot < 0 ? -1 : slot - 1;
  }

  /**
   * Whether RM3 expands this query: by `expansionWhen`, from what has been learned (feedback is
   * only ever read in the hybrid mode) and, under `'selective'`, from the first pass's own
   * scores (a flat first pass is not expanded, in either mode).
   */
  #expands(
    mode: 'hybrid' | 'bm25',
    ranking: ResolvedRankingOptions,
    hasFeedback: boolean,
    ids: readonly number[],
    scores: Float64Array,
  ): boolean {
    if (ranking.expansionDocs === 0 || ids.length === 0) return false;
    const when = ranking.expansionWhen;
    if (when === 'selective') {
      if (hasFeedback) return false;
      return !isFlatFirstPass(ids, scores, DEFAULT_EXPANSION_FLAT_RANK, ranking.expansionFlatShare);
    }
    return (
      mode === 'bm25' ||
      when === 'always' ||
      (when === 'no-feedback' && !hasFeedback) ||
      (this.#graph.sequences === 0 && this.#feedback.empty)
    );
  }

  graphEdges(options: GraphEdgesOptions = {}): ToolGraphEdge[] {
    const minCount = options.minCount ?? 1;
    if (!Number.isInteger(minCount) || minCount < 0)
      throw invalidArgument('"minCount" must be a non-negative integer.', 'minCount');
    return listGraphEdges(this.#view, this.#ranking, options, minCount);
  }
}

/**
 * The per-query guard: each strong lexical hit (`guarded`, best first) that graph or feedback
 * evidence pushed below rank `rank` is moved back up to it, so a tool the query names plainly is
 * never crowded out by neighbours of weaker matches.
 */
function guardLexical(
  sorted: number[],
  guarded: ReadonlySet<number>,
  exact: ReadonlySet<number> | undefined,
  rank: number,
): number[] {
  if (guarded.size === 0 || rank < 1) return sorted;
  const top = sorted.slice(0, rank);
  const inTop = new Set(top);
  const missing = sorted.slice(rank).filter((id) => guarded.has(id));
  if (missing.length === 0) return sorted;
  // Displace the lowest-ranked hits of the top that are neither guarded nor exact names.
  const kept: number[] = [];
  let displace = missing.length;
  for (let i = top.length - 1; i >= 0; i--) {
    const id = top[i]!;
    if (displace > 0 && !guarded.has(id) && !exact?.has(id)) {
      displace--;
      inTop.delete(id);
      continue;
    }
    kept.unshift(id);
  }
  const lifted = missing.slice(0, missing.length - displace);
  for (const id of lifted) inTop.add(id);
  return [...kept, ...lifted, ...sorted.filter((id) => !inTop.has(id))];
}

/**
 * Creates a tool search index over `tools`, restoring learned counts from `state` when given.
 *
 * @example
 * ```ts
 * const search = createToolSearch({ tools: [
 *   { name: 'get_team_members', description: 'List the members of a team' },
 *   { name: 'get_expenses', description: 'Expenses of one employee' },
 * ] });
 * search.recordSequence(['get_team_members', 'get_expenses']);
 * search.search('team expenses', { limit: 5 }); // [{ name, score, reasons }, …]
 * ```
 */
export function createToolSearch(options: CreateToolSearchOptions): ToolSearch {
  return new ToolSearchIndex(options);
}
