/**
 * @module
 * Tool search: BM25F over each tool's name, server, description and parameters, a regex mode
 * with the semantics of Anthropic's regex tool search, and a tool graph learned from executed
 * call sequences that a beam search walks from the best lexical matches, so one query returns
 * the tools a multi-step task needs, with a reason for each. Pure: no I/O; the usage history is
 * persisted by a {@link UsageHistoryStore}.
 */
import { CodecallError } from '../errors.js';
import type { JsonSchema } from '../types.js';
import { Bm25Index } from './bm25.js';
import { CatalogLinks, describeLink, schemaProperties, type InferredLink } from './catalog-links.js';
import {
  DEFAULT_FUSION_DEPTH,
  DEFAULT_RRF_K,
  embeddingText,
  fuseRankings,
  ToolEmbeddings,
  type EmbedFunction,
  type EmbeddingCache,
} from './embeddings.js';
import {
  DEFAULT_CHAIN_LIMIT,
  DEFAULT_FIELD_WEIGHTS,
  DEFAULT_LEXICAL_GUARD_HITS,
  DEFAULT_LEXICAL_GUARD_SHARE,
  DEFAULT_SEARCH_LIMIT,
  resolveRankingOptions,
  type RankingOptions,
  type ResolvedRankingOptions,
  type SearchFieldWeights,
} from './options.js';
import { QueryFeedback } from './query-feedback.js';
import { compileRegexQuery, DEFAULT_MAX_REGEX_FIELD_CHARS } from './regex-query.js';
import { DEFAULT_STEMMING, splitName, tokenize, type Stemming, type TokenizeOptions } from './tokenize.js';
import { DEFAULT_MAX_TOOL_NAME_CHARS, ToolGraph, type ToolSearchState } from './tool-graph.js';

/** Characters of a query that are read (the rest is ignored). */
export const DEFAULT_MAX_QUERY_CHARS = 4_000;
/** Characters of one tool text (description, parameter descriptions) that are indexed. */
export const DEFAULT_MAX_INDEXED_TEXT_CHARS = 8_000;
/** Time one regex search may spend testing tools before it returns what it found. */
export const DEFAULT_REGEX_SEARCH_BUDGET_MS = 250;
/** Recorded uses (query, tools) kept for `serialize()`, newest last (older ones live on in the counts). */
export const DEFAULT_MAX_SERIALIZED_USES = 10_000;

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
   * @defaultValue 1
   */
  embeddingWeight?: number;
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

const FIELD_LABELS = ['name', 'server', 'description', 'parameter names', 'parameter descriptions'] as const;

interface Entry {
  id: number;
  name: string;
  /** The tool as given (its schemas feed the inferred links, built only when asked for). */
  tool: SearchableTool;
  server: string;
  /** For regex mode: bounded texts. */
  description: string;
  parameterNames: string;
  parameterDescriptions: string;
}

/** One edge the walk may take; its reason is formatted only if it reaches the result. */
interface Step {
  /** The node added. */
  node: string;
  /** The node it was reached from. */
  from: string;
  /** True when `node` is called after `from`; false when before. */
  forward: boolean;
  weight: number;
  /** Observed runs behind the edge, and all observed transitions out of (into) `from`. */
  count: number;
  total: number;
  /** Set when the edge is only inferred from the schemas. */
  link?: InferredLink;
}

function describeStep(step: Step): string {
  if (step.link) {
    return step.forward
      ? `may follow ${step.from}: ${describeLink(step.from, step.node, step.link)}`
      : `may precede ${step.from}: ${describeLink(step.node, step.from, step.link)}`;
  }
  return `called ${step.forward ? 'after' : 'before'} ${step.from} ${step.count} of ${step.total} times`;
}

/** Graph evidence for one tool. */
interface Credit {
  /** Sum of the scores of the paths that reached it. */
  score: number;
  /** The best single path score, whose step gives the reason. */
  best: number;
  step: Step;
}

interface Path {
  nodes: string[];
  score: number;
  steps: Step[];
}

const NO_LINKS: ReadonlyMap<string, InferredLink> = new Map();

function cut(text: unknown, max: number): string {
  return typeof text === 'string' ? text.slice(0, max) : '';
}

function invalidArgument(message: string, field: string): CodecallError {
  return new CodecallError('INVALID_ARGUMENT', message, { details: { field } });
}

function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

class ToolSearchIndex implements ToolSearch {
  readonly #ranking: ResolvedRankingOptions;
  readonly #weights: SearchFieldWeights;
  /** Stemming and verb normalization, the same for the index and every query. */
  readonly #lexical: Pick<TokenizeOptions, 'stemming' | 'verbNormalization'>;
  readonly #index: Bm25Index;
  readonly #embeddings: ToolEmbeddings | undefined;
  readonly #embeddingWeight: number;
  readonly #graph = new ToolGraph();
  /** Schema-inferred links, built on first use (they cost as much memory as the index). */
  #catalogLinks: CatalogLinks | undefined;
  readonly #feedback = new QueryFeedback();
  /** Raw uses for `serialize()`, bounded by {@link DEFAULT_MAX_SERIALIZED_USES}. */
  #usages: Array<[string, string[]]> = [];
  readonly #entries = new Map<string, Entry>();
  readonly #byId: Array<Entry | undefined> = [];
  /** Lowercase full and unqualified names → tool names, for exact-name queries. */
  readonly #exact = new Map<string, string | string[]>();
  #nextId = 0;

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
    const embeddingWeight = options.embeddingWeight ?? 1;
    if (typeof embeddingWeight !== 'number' || !Number.isFinite(embeddingWeight) || embeddingWeight < 0) {
      throw invalidArgument('"embeddingWeight" must be a non-negative number.', 'embeddingWeight');
    }
    this.#embeddingWeight = embeddingWeight;
    this.#index = new Bm25Index([
      this.#weights.name,
      this.#weights.server,
      this.#weights.description,
      this.#weights.parameterNames,
      this.#weights.parameterDescriptions,
    ]);
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
    return [...this.#entries.keys()].sort();
  }

  addTools(tools: readonly SearchableTool[]): void {
    if (!Array.isArray(tools)) throw invalidArgument('addTools needs an array of tools.', 'tools');
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
      this.#addOne(tool);
    });
  }

  #addOne(tool: SearchableTool): void {
    this.#removeOne(tool.name);
    const description = cut(tool.description, DEFAULT_MAX_INDEXED_TEXT_CHARS);
    const server = cut(tool.server, DEFAULT_MAX_TOOL_NAME_CHARS);
    const properties = schemaProperties(tool.inputSchema);
    const parameterNames = properties.map((p) => p.name).join(' ');
    const parameterDescriptions = cut(
      properties.map((p) => p.description).join('\n'),
      DEFAULT_MAX_INDEXED_TEXT_CHARS,
    );
    const id = this.#nextId++;
    const exactKeys = this.#exactKeys(tool.name, server);
    const entry: Entry = {
      id,
      name: tool.name,
      tool,
      server,
      description,
      parameterNames,
      parameterDescriptions,
    };
    this.#entries.set(tool.name, entry);
    this.#byId[id] = entry;
    this.#index.add(id, indexedFields(entry, this.#lexical));
    this.#embeddings?.set(tool.name, embeddingText(tool.name, description, parameterNames));
    this.#catalogLinks?.add(
      { name: tool.name, server, description, outputSchema: tool.outputSchema },
      properties,
    );
    for (const key of exactKeys) {
      // One name per key is the rule; an array only where names collide.
      const names = this.#exact.get(key);
      if (names === undefined) this.#exact.set(key, tool.name);
      else if (typeof names === 'string') {
        if (names !== tool.name) this.#exact.set(key, [names, tool.name]);
      } else if (!names.includes(tool.name)) names.push(tool.name);
    }
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

  #exactKeys(name: string, server: string): string[] {
    const lower = name.toLowerCase();
    const keys = new Set([lower, splitName(name).join(' ')]);
    const s = server.toLowerCase();
    if (s && lower.startsWith(s) && lower.length > s.length + 1) {
      const bare = lower.slice(s.length).replace(/^(?:\.|::|__|_|-|\/)/, '');
      keys.add(bare);
      keys.add(splitName(bare).join(' '));
    }
    return [...keys].filter((k) => k !== '');
  }

  removeTools(names: readonly string[]): void {
    if (!Array.isArray(names)) throw invalidArgument('removeTools needs an array of tool names.', 'names');
    for (const name of names) if (typeof name === 'string') this.#removeOne(name);
  }

  #removeOne(name: string): void {
    const entry = this.#entries.get(name);
    if (!entry) return;
    this.#index.remove(entry.id, indexedFields(entry, this.#lexical));
    this.#catalogLinks?.remove(name);
    this.#embeddings?.delete(name);
    this.#entries.delete(name);
    this.#byId[entry.id] = undefined;
    for (const key of this.#exactKeys(entry.name, entry.server)) {
      const names = this.#exact.get(key);
      if (names === name) this.#exact.delete(key);
      else if (Array.isArray(names)) {
        const rest = names.filter((n) => n !== name);
        this.#exact.set(key, rest.length === 1 ? rest[0]! : rest);
      }
    }
  }

  recordSequence(names: readonly string[]): void {
    if (!Array.isArray(names))
      throw invalidArgument('recordSequence needs an array of tool names in call order.', 'names');
    this.#graph.record(names);
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
    if (!embeddings || options.mode === 'regex') return this.searchDetailed(query, options);
    const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
    const base = this.searchDetailed(query, { ...options, limit: Math.max(limit, DEFAULT_FUSION_DEPTH) });
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
    // Exact tool names stay first, as in the lexical ranking.
    const exactSet = new Set(exact);
    const ordered = [
      ...fused.filter(([name]) => exactSet.has(name)),
      ...fused.filter(([name]) => !exactSet.has(name)),
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
    if (mode === 'regex') return this.#searchRegex(query, limit);
    if (mode !== 'hybrid' && mode !== 'bm25') {
      throw invalidArgument(
        `Search "mode" must be "hybrid", "bm25" or "regex"; got ${JSON.stringify(mode)}.`,
        'mode',
      );
    }
    const ranking = resolveRankingOptions(options, this.#ranking);
    const text = query.slice(0, DEFAULT_MAX_QUERY_CHARS);
    const terms = tokenize(text, this.#lexical);

    // Query feedback: learned term → tool associations, added to the lexical score.
    const feedback = new Map<string, { score: number; term: string }>();
    if (mode === 'hybrid' && ranking.feedbackWeight > 0 && !this.#feedback.empty) {
      const learned = this.#feedback.score(terms, {
        evidencePrior: ranking.evidencePrior,
        minCount: ranking.feedbackMinCount,
      });
      for (const [name, value] of learned) if (this.#entries.has(name)) feedback.set(name, value);
    }

    // Lexical scores (normalised to 0–1 by the best one when read), after RM3 at cold start:
    // pseudo-relevance feedback stands in for learned evidence, so by default the hybrid ranking
    // uses it only until the first run or use is recorded (with usage it lowered UltraTool's
    // graph ranking; see `expansionWhen`).
    const { scores, ids } = this.#index.score(terms, ranking);
    const expand =
      mode === 'bm25' ||
      ranking.expansionWhen === 'always' ||
      (ranking.expansionWhen === 'no-feedback' && feedback.size === 0) ||
      (this.#graph.sequences === 0 && this.#feedback.empty);
    if (ranking.expansionDocs > 0 && ids.length > 0 && expand) {
      // The expanded query re-scores the best first-pass hits: the query's own terms weigh
      // (1 − w) everywhere (scaling keeps the order of the rest), the expansion on top.
      const candidates = selectTop(ids, scores, Math.max(ranking.expansionRerankDocs, ranking.expansionDocs));
      const expanded = this.#expandQuery(terms, candidates.slice(0, ranking.expansionDocs), scores, ranking);
      const keep = 1 - ranking.expansionWeight;
      for (const id of ids) scores[id]! *= keep;
      for (const term of new Set(terms)) {
        const extra = (expanded.get(term) ?? 0) - keep;
        if (extra > 0) expanded.set(term, extra);
        else expanded.delete(term);
      }
      this.#index.addToCandidates(candidates, expanded, ranking);
    }
    let best = 0;
    for (const id of ids) if (scores[id]! > best) best = scores[id]!;
    const lexicalScore = (name: string): number => {
      const entry = this.#entries.get(name)!;
      return this.#index.matched(entry.id) ? scores[entry.id]! / best : 0;
    };
    const topLexical = (k: number): Array<[string, number]> =>
      selectTop(ids, scores, k).map((id) => [this.#byId[id]!.name, scores[id]! / best]);
    const exactNames =
      this.#exact.get(text.trim().toLowerCase()) ?? this.#exact.get(splitName(text).join(' '));
    const exact =
      exactNames === undefined
        ? undefined
        : new Set(typeof exactNames === 'string' ? [exactNames] : exactNames);

    /** Lexical plus feedback score of the best `k` such tools (the walk's seeds). */
    const topBase = (k: number): Array<[string, number]> => {
      const base = new Map(topLexical(k + feedback.size));
      for (const [name, value] of feedback)
        base.set(name, (base.get(name) ?? lexicalScore(name)) + ranking.feedbackWeight * value.score);
      return [...base].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, k);
    };

    const graphReasons = new Map<string, Credit>();
    let chains: ToolChain[] = [];
    if (
      mode === 'hybrid' &&
      ranking.graphWeight > 0 &&
      ranking.beamDepth > 0 &&
      (ids.length > 0 || feedback.size > 0)
    ) {
      const walk = this.#walk(topBase(ranking.beamWidth), ranking);
      for (const [name, credit] of walk.credits) graphReasons.set(name, credit);
      chains = walk.paths
        .slice(0, chainLimit)
        .map((p) => ({ tools: p.nodes, score: round(p.score), reasons: p.steps.map(describeStep) }));
    }
    // Only the top `limit + credited` lexical hits can make the cut (see selectTop).
    const strong = ranking.lexicalGuard;
    const lexicalTop =
      ids.length > 0
        ? topLexical(Math.max(limit, strong) + graphReasons.size + feedback.size + (exact?.size ?? 0))
        : [];
    const final = new Map<string, number>(lexicalTop);
    for (const [name, value] of feedback)
      final.set(name, (final.get(name) ?? lexicalScore(name)) + ranking.feedbackWeight * value.score);
    for (const [name, credit] of graphReasons) {
      const base = final.get(name) ?? lexicalScore(name);
      final.set(name, base + ranking.graphWeight * credit.score);
    }
    for (const name of exact ?? []) {
      const base = final.get(name) ?? lexicalScore(name);
      final.set(name, base + 1 + ranking.graphWeight + ranking.feedbackWeight);
    }

    const sorted = [...final].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const guarded = new Set(
      lexicalTop
        .slice(0, Math.min(strong, DEFAULT_LEXICAL_GUARD_HITS))
        .filter(([, score]) => score >= DEFAULT_LEXICAL_GUARD_SHARE)
        .map(([name]) => name),
    );
    const ranked = guardLexical(sorted, guarded, exact, Math.min(strong, limit)).slice(0, limit);
    const originals = originalWords(text, this.#lexical);
    const hits = ranked.map(([name, score]) => {
      const reasons: string[] = [];
      if (exact?.has(name)) reasons.push('exact tool name');
      const lexicalReason = this.#lexicalReason(name, terms, originals);
      if (lexicalReason) reasons.push(lexicalReason);
      const learned = feedback.get(name);
      if (learned) reasons.push(`used after queries with '${originals.get(learned.term) ?? learned.term}'`);
      const graph = graphReasons.get(name);
      if (graph) reasons.push(describeStep(graph.step));
      return { name, score: round(score), reasons };
    });
    return { hits, chains, truncated: false };
  }

  /**
   * RM3 (Lavrenko & Croft's relevance model, interpolated with the query): the term distribution
   * of the `top` lexical hits, each weighted by its score, `P(t|R) = Σ_d s(d) · P(t|d)` with
   * `P(t|d)` the field-weighted term frequency of `d`; its `expansionTerms` most probable terms
   * are mixed with the query's own as `(1 − w) · P(t|Q) + w · P(t|R)` and the query is scored
   * again with those weights.
   */
  #expandQuery(
    terms: readonly string[],
    top: readonly number[],
    scores: Float64Array,
    ranking: ResolvedRankingOptions,
  ): Map<string, number> {
    const fieldWeights = [
      this.#weights.name,
      this.#weights.server,
      this.#weights.description,
      this.#weights.parameterNames,
      this.#weights.parameterDescriptions,
    ];
    let total = 0;
    for (const id of top) total += scores[id]!;
    const relevance = new Map<string, number>();
    for (const id of top) {
      const entry = this.#byId[id];
      if (!entry || total <= 0) continue;
      const counts = new Map<string, number>();
      let length = 0;
      indexedFields(entry, this.#lexical).forEach((tokens, f) => {
        const w = fieldWeights[f]!;
        for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + w);
        length += w * tokens.length;
      });
      if (length <= 0) continue;
      const share = scores[id]! / total;
      for (const [term, count] of counts)
        relevance.set(term, (relevance.get(term) ?? 0) + (share * count) / length);
    }
    const expansion = [...relevance]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, ranking.expansionTerms);
    const mass = expansion.reduce((sum, [, p]) => sum + p, 0);
    const distinct = new Set(terms);
    const weights = new Map<string, number>();
    // Scaled so the original query's terms weigh (1 − w) each, as if P(t|Q) · |Q|.
    for (const term of distinct) weights.set(term, 1 - ranking.expansionWeight);
    if (mass > 0) {
      for (const [term, p] of expansion)
        weights.set(term, (weights.get(term) ?? 0) + (ranking.expansionWeight * distinct.size * p) / mass);
    }
    return weights;
  }

  #lexicalReason(name: string, terms: readonly string[], originals: Map<string, string>): string | undefined {
    const entry = this.#entries.get(name)!;
    const byField = new Map<number, string[]>();
    for (const term of new Set(terms)) {
      for (const field of this.#index.fieldsContaining(entry.id, term)) {
        let words = byField.get(field);
        if (!words) byField.set(field, (words = []));
        if (words.length < 4) words.push(`'${originals.get(term) ?? term}'`);
      }
    }
    if (byField.size === 0) return undefined;
    const parts = [...byField]
      .sort((a, b) => a[0] - b[0])
      .map(([field, words]) => `${words.join(', ')} in ${FIELD_LABELS[field]}`);
    return `matches ${parts.join('; ')}`;
  }

  /**
   * The `k` heaviest successors (forward) or predecessors (backward) of `node` in the catalog,
   * with their effective weights `(max(0, count − δ) + prior) / (total + κ)`.
   */
  #neighbours(node: string, forward: boolean, k: number, ranking: ResolvedRankingOptions): Step[] {
    const observed = forward ? this.#graph.successors(node) : this.#graph.predecessors(node);
    const total = forward ? this.#graph.outTotal(node) : this.#graph.inTotal(node);
    const inferred: ReadonlyMap<string, InferredLink> =
      ranking.inferredEdgeShare > 0
        ? forward
          ? this.#links().successors(node)
          : this.#links().predecessors(node)
        : NO_LINKS;
    const denominator = total + ranking.evidencePrior;
    if (denominator <= 0) return [];
    const prior = inferred.size > 0 ? (ranking.evidencePrior * ranking.inferredEdgeShare) / inferred.size : 0;
    // A bounded buffer of the k best, so hubs with many successors allocate nothing per edge.
    const best: Step[] = [];
    const offer = (other: string, weight: number, count: number, link: InferredLink | undefined): void => {
      if (best.length === k) {
        const last = best[k - 1]!;
        if (weight < last.weight || (weight === last.weight && other > last.node)) return;
      }
      if (!this.#entries.has(other)) return;
      const step: Step = { node: other, from: node, forward, weight, count, total };
      if (link) step.link = link;
      let at = best.length;
      while (
        at > 0 &&
        (best[at - 1]!.weight < weight || (best[at - 1]!.weight === weight && best[at - 1]!.node > other))
      )
        at--;
      best.splice(at, 0, step);
      if (best.length > k) best.pop();
    };
    for (const [other, count] of observed) {
      offer(
        other,
        (Math.max(0, count - ranking.edgeDiscount) + (inferred.has(other) ? prior : 0)) / denominator,
        count,
        undefined,
      );
    }
    for (const [other, link] of inferred) {
      if (!observed.has(other)) offer(other, prior / denominator, 0, link);
    }
    return best;
  }

  /**
   * Beam search from the best lexical matches: each step extends every kept path by one tool
   * after its last node or before its first, scoring `path score × edge weight`; the best
   * `beamWidth` paths survive each step. A tool's graph credit is the sum of the scores of the
   * paths that reached it (several lexical hits pointing at one tool is stronger evidence than
   * one); its reason is the strongest path's last step.
   */
  #walk(
    seeds: Array<[string, number]>,
    ranking: ResolvedRankingOptions,
  ): { credits: Map<string, Credit>; paths: Path[] } {
    let beam: Path[] = seeds.map(([name, score]) => ({ nodes: [name], score, steps: [] }));
    const credits = new Map<string, Credit>();
    const paths: Path[] = [];
    const neighbourCache = new Map<string, Step[]>();
    const neighbours = (node: string, forward: boolean): Step[] => {
      const key = `${forward ? '>' : '<'}${node}`;
      let steps = neighbourCache.get(key);
      if (!steps) {
        steps = this.#neighbours(node, forward, ranking.beamWidth, ranking);
        neighbourCache.set(key, steps);
      }
      return steps;
    };
    for (let depth = 0; depth < ranking.beamDepth && beam.length > 0; depth++) {
      const candidates: Path[] = [];
      for (const path of beam) {
        for (const forward of [true, false]) {
          const end = forward ? path.nodes[path.nodes.length - 1]! : path.nodes[0]!;
          for (const step of neighbours(end, forward)) {
            if (path.nodes.includes(step.node)) continue;
            const score = path.score * step.weight;
            if (score <= 0) continue;
            candidates.push({
              nodes: forward ? [...path.nodes, step.node] : [step.node, ...path.nodes],
              score,
              steps: [...path.steps, step],
            });
            const credit = credits.get(step.node);
            if (!credit) credits.set(step.node, { score, best: score, step });
            else {
              credit.score += score;
              if (score > credit.best) Object.assign(credit, { best: score, step });
            }
          }
        }
      }
      candidates.sort((a, b) => b.score - a.score);
      const seen = new Set<string>();
      beam = [];
      for (const c of candidates) {
        const key = c.nodes.join('\u0000');
        if (seen.has(key)) continue;
        seen.add(key);
        beam.push(c);
        paths.push(c);
        if (beam.length >= ranking.beamWidth) break;
      }
    }
    paths.sort((a, b) => b.score - a.score);
    return { credits, paths: dedupeChains(paths) };
  }

  #searchRegex(pattern: string, limit: number): ToolSearchResult {
    const { regex } = compileRegexQuery(pattern);
    const started = Date.now();
    const scored: Array<[Entry, number, string[]]> = [];
    let truncated = false;
    let tested = 0;
    for (const entry of this.#entries.values()) {
      if (++tested % 64 === 0 && Date.now() - started > DEFAULT_REGEX_SEARCH_BUDGET_MS) {
        truncated = true;
        break;
      }
      const fields: Array<[string, string, number]> = [
        ['name', entry.name, this.#weights.name],
        ['description', entry.description, this.#weights.description],
        ['argument names', entry.parameterNames, this.#weights.parameterNames],
        ['argument descriptions', entry.parameterDescriptions, this.#weights.parameterDescriptions],
      ];
      let score = 0;
      const matched: string[] = [];
      for (const [label, text, weight] of fields) {
        if (text === '') continue;
        if (regex.test(text.slice(0, DEFAULT_MAX_REGEX_FIELD_CHARS))) {
          score += Math.max(weight, 0.01);
          matched.push(label);
        }
      }
      if (matched.length > 0) scored.push([entry, score, [`pattern matches ${matched.join(', ')}`]]);
    }
    scored.sort(
      (a, b) => b[1] - a[1] || a[0].name.length - b[0].name.length || (a[0].name < b[0].name ? -1 : 1),
    );
    return {
      hits: scored
        .slice(0, limit)
        .map(([entry, score, reasons]) => ({ name: entry.name, score: round(score), reasons })),
      chains: [],
      truncated,
    };
  }

  graphEdges(options: GraphEdgesOptions = {}): ToolGraphEdge[] {
    const minCount = options.minCount ?? 1;
    if (!Number.isInteger(minCount) || minCount < 0)
      throw invalidArgument('"minCount" must be a non-negative integer.', 'minCount');
    const ranking = this.#ranking;
    const edges: ToolGraphEdge[] = [];
    const sources = new Set<string>();
    for (const [from] of this.#graph.edges()) sources.add(from);
    if (options.includeInferred) for (const name of this.#entries.keys()) sources.add(name);
    for (const from of [...sources].sort()) {
      const total = this.#graph.outTotal(from);
      const inferred = options.includeInferred
        ? this.#links().successors(from)
        : new Map<string, InferredLink>();
      const denominator = total + ranking.evidencePrior;
      const prior =
        inferred.size > 0 ? (ranking.evidencePrior * ranking.inferredEdgeShare) / inferred.size : 0;
      const group: ToolGraphEdge[] = [];
      for (const [to, count] of this.#graph.successors(from)) {
        if (count < minCount) continue;
        const discounted = Math.max(0, count - ranking.edgeDiscount);
        const weight = denominator > 0 ? (discounted + (inferred.has(to) ? prior : 0)) / denominator : 0;
        group.push({
          from,
          to,
          count,
          probability: round(count / total),
          weight: round(weight),
          kind: 'observed',
        });
      }
      for (const [to, link] of inferred) {
        if (this.#graph.count(from, to) > 0) continue;
        group.push({
          from,
          to,
          count: 0,
          probability: 0,
          weight: round(denominator > 0 ? prior / denominator : 0),
          kind: 'inferred',
          reason: describeLink(from, to, link),
        });
      }
      group.sort((a, b) => b.weight - a.weight || (a.to < b.to ? -1 : 1));
      edges.push(...group);
    }
    return edges;
  }
}

/**
 * The ids of the `k` best scores (ties by id, i.e. insertion order), best first, without sorting
 * every match: a bounded sorted buffer, O(n log k).
 */
function selectTop(ids: readonly number[], scores: Float64Array, k: number): number[] {
  if (k >= ids.length) return [...ids].sort((a, b) => scores[b]! - scores[a]! || a - b);
  const top: number[] = [];
  const better = (a: number, b: number): boolean =>
    scores[a]! > scores[b]! || (scores[a] === scores[b] && a < b);
  for (const id of ids) {
    if (top.length === k && !better(id, top[k - 1]!)) continue;
    let lo = 0;
    let hi = top.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (better(top[mid]!, id)) lo = mid + 1;
      else hi = mid;
    }
    top.splice(lo, 0, id);
    if (top.length > k) top.pop();
  }
  return top;
}

/**
 * The per-query guard: each strong lexical hit (`guarded`, best first) that graph or feedback
 * evidence pushed below rank `rank` is moved back up to it, so a tool the query names plainly is
 * never crowded out by neighbours of weaker matches.
 */
function guardLexical(
  sorted: Array<[string, number]>,
  guarded: ReadonlySet<string>,
  exact: ReadonlySet<string> | undefined,
  rank: number,
): Array<[string, number]> {
  if (guarded.size === 0 || rank < 1) return sorted;
  const top = sorted.slice(0, rank);
  const inTop = new Set(top.map(([name]) => name));
  const missing = sorted.slice(rank).filter(([name]) => guarded.has(name));
  if (missing.length === 0) return sorted;
  // Displace the lowest-ranked hits of the top that are neither guarded nor exact names.
  const kept: Array<[string, number]> = [];
  let displace = missing.length;
  for (let i = top.length - 1; i >= 0; i--) {
    const [name] = top[i]!;
    if (displace > 0 && !guarded.has(name) && !exact?.has(name)) {
      displace--;
      inTop.delete(name);
      continue;
    }
    kept.unshift(top[i]!);
  }
  const lifted = missing.slice(0, missing.length - displace);
  for (const [name] of lifted) inTop.add(name);
  return [...kept, ...lifted, ...sorted.filter(([name]) => !inTop.has(name))];
}

/** Keeps the best-scored path of each set of tools (A→B and B→A reached twice are one chain). */
function dedupeChains(paths: Path[]): Path[] {
  const seen = new Set<string>();
  return paths.filter((p) => {
    const key = [...p.nodes].sort().join('\u0000');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * The tool's own name without its server prefix (`github.create_issue` → `create_issue`), so
 * the server's words count once, in the server field, instead of in every tool name.
 */
function bareName(name: string, server: string): string {
  if (server === '' || !name.toLowerCase().startsWith(server.toLowerCase())) return name;
  const rest = name.slice(server.length).replace(/^(?:\.|::|__|_|-|\/)/, '');
  return rest === '' ? name : rest;
}

/** The BM25F fields of a tool: its own name, server, description, parameter names and descriptions. */
function indexedFields(entry: Entry, lexical: TokenizeOptions): string[][] {
  const keep = { ...lexical, keepStopWords: true };
  return [
    tokenize(bareName(entry.name, entry.server), keep),
    tokenize(entry.server, keep),
    tokenize(entry.description, lexical),
    tokenize(entry.parameterNames, keep),
    tokenize(entry.parameterDescriptions, lexical),
  ];
}

/** Maps each search term of `text` to the word of the query it came from. */
function originalWords(text: string, lexical: TokenizeOptions): Map<string, string> {
  const out = new Map<string, string>();
  for (const word of text.split(/\s+/)) {
    const clean = word.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
    for (const term of tokenize(clean, lexical)) if (!out.has(term)) out.set(term, clean.slice(0, 40));
  }
  return out;
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
