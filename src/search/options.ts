/**
 * @module
 * Ranking parameters of tool search, their tested defaults, and their resolution into one
 * fully-required internal form. The defaults were chosen by 5-fold cross-validation on UltraTool
 * chains and checked not to hurt ToolBench (see docs/search.md for the figures and the command
 * lines that reproduce them).
 */
import { CodecallError } from '../errors.js';
import { DEFAULT_FEEDBACK_MIN_COUNT } from './query-feedback.js';
import {
  DEFAULT_BEAM_WIDTH,
  DEFAULT_BEAM_DEPTH,
  DEFAULT_GRAPH_WEIGHT,
  DEFAULT_EXPANSION_DOCS,
  DEFAULT_EXPANSION_FLAT_SHARE,
  DEFAULT_EXPANSION_RERANK_DOCS,
  DEFAULT_EXPANSION_TERMS,
  DEFAULT_EXPANSION_WEIGHT,
} from '../config/defaults.js';
import { DEFAULT_EXPANSION_WHEN } from '../config/defaults.js';
export { DEFAULT_EXPANSION_WHEN };
export {
  DEFAULT_BEAM_WIDTH,
  DEFAULT_BEAM_DEPTH,
  DEFAULT_GRAPH_WEIGHT,
  DEFAULT_EXPANSION_DOCS,
  DEFAULT_EXPANSION_FLAT_SHARE,
  DEFAULT_EXPANSION_RERANK_DOCS,
  DEFAULT_EXPANSION_TERMS,
  DEFAULT_EXPANSION_WEIGHT,
};

/** BM25 term-frequency saturation. */
export const DEFAULT_BM25_K1 = 1.2;
/** BM25 length normalisation (0 = none, 1 = full). */
export const DEFAULT_BM25_B = 0.75;

/** Weight of each indexed field in BM25F (a term in the name counts this many times). */
export interface SearchFieldWeights {
  /** Words of the tool name (`get_team_members` → get, team, members). */
  name: number;
  /** Words of the server name. */
  server: number;
  description: number;
  /** Words of the input parameter names. */
  parameterNames: number;
  /** Words of the input parameter descriptions. */
  parameterDescriptions: number;
  /**
   * Words of the example arguments' values (`inputExamples`, and JSON Schema `examples` in the
   * input schema).
   */
  examples: number;
}

/** Tested field weights of BM25F. */
export const DEFAULT_FIELD_WEIGHTS: Readonly<SearchFieldWeights> = Object.freeze({
  name: 3,
  server: 2,
  description: 1,
  parameterNames: 1,
  parameterDescriptions: 0.5,
  examples: 0.5,
});

/**
 * Pseudo-count κ of the evidence shrinkage: an edge observed `c` times out of `n` transitions
 * from its source counts as `c / (n + κ)`, so one lucky observation weighs little and a
 * well-observed edge approaches its probability `c / n`.
 */
export const DEFAULT_EVIDENCE_PRIOR = 2;
/**
 * Absolute discount δ of observed counts: an edge counts `max(0, count − δ)`. A transition seen
 * once is what random, structureless usage produces by the thousand, so it is not evidence yet;
 * evidence that repeats keeps nearly all its weight.
 */
export const DEFAULT_EDGE_DISCOUNT = 1;
/**
 * Share of the prior mass κ that edges inferred from the schemas (cold start) receive: an inferred
 * edge weighs `κ · share / (n + κ)` split across the source's inferred edges, so it fades as
 * real usage of the source accrues. Off by default: on ToolBench dev it moved no query into or out
 * of the top 5, and it lowered NDCG on a real-MCP catalog (docs/search.md); 0.25 is the tested
 * value when it is turned on.
 */
export const DEFAULT_INFERRED_EDGE_SHARE = 0;
/**
 * Weight of query feedback (learned query-term → tool associations) against the normalised
 * lexical score: a tool used by every past run whose query shared all of this query's terms
 * gains this much.
 */
export const DEFAULT_FEEDBACK_WEIGHT = 2;
/**
 * Rank a strong lexical match keeps: the best {@link DEFAULT_LEXICAL_GUARD_HITS} lexical hits,
 * each scoring at least {@link DEFAULT_LEXICAL_GUARD_SHARE} of the best, are never ranked below
 * this position (nor below the search's `limit`) by graph neighbours or feedback, so they are
 * never pushed out of the results (0 turns the guard off).
 */
export const DEFAULT_LEXICAL_GUARD = 10;
/** Lexical hits, at most, that the guard protects (the best ones). */
export const DEFAULT_LEXICAL_GUARD_HITS = 2;
/** Normalised lexical score (best hit = 1) from which a hit counts as a strong match for the guard. */
export const DEFAULT_LEXICAL_GUARD_SHARE = 0.9;
/**
 * When the hybrid ranking uses RM3: `'selective'` for queries without learned feedback whose first
 * pass is not flat (the tested default: see {@link DEFAULT_EXPANSION_FLAT_SHARE}), `'no-feedback'`
 * for every query without learned feedback, `'cold-start'` until the first run or use is
 * recorded, `'always'`. The lexical ranking (`mode: 'bm25'`) uses it whenever
 * `expansionDocs > 0`, except that under `'selective'` it skips flat first passes too.
 */
export type ExpansionPolicy = 'selective' | 'no-feedback' | 'cold-start' | 'always';
/**
 * Rank of the first-pass hit that tells a flat first pass from one with a head (the default
 * search limit: a page of results).
 */
export const DEFAULT_EXPANSION_FLAT_RANK = 10;
/** Most likely chains returned by `searchDetailed`. */
export const DEFAULT_CHAIN_LIMIT = 3;
/** Hits returned by `search` when no `limit` is given. */
export const DEFAULT_SEARCH_LIMIT = 10;

/** Ranking parameters; every one can be set per index and overridden per query. */
export interface RankingOptions {
  /**
   * Lexical seeds of the graph walk and paths kept per step.
   * @defaultValue {@link DEFAULT_BEAM_WIDTH}
   */
  beamWidth?: number;
  /**
   * Steps walked along successors (0 turns the walk off).
   * @defaultValue {@link DEFAULT_BEAM_DEPTH}
   */
  beamDepth?: number;
  /**
   * Weight of graph evidence against lexical evidence (0 = BM25 alone).
   * @defaultValue {@link DEFAULT_GRAPH_WEIGHT}
   */
  graphWeight?: number;
  /**
   * Pseudo-count κ that shrinks sparsely observed edges.
   * @defaultValue {@link DEFAULT_EVIDENCE_PRIOR}
   */
  evidencePrior?: number;
  /**
   * Absolute discount δ of observed counts.
   * @defaultValue {@link DEFAULT_EDGE_DISCOUNT}
   */
  edgeDiscount?: number;
  /**
   * Share of κ given to edges inferred from schemas (0 turns cold-start edges off).
   * @defaultValue {@link DEFAULT_INFERRED_EDGE_SHARE}
   */
  inferredEdgeShare?: number;
  /**
   * Weight of query feedback against lexical evidence (0 = none).
   * @defaultValue {@link DEFAULT_FEEDBACK_WEIGHT}
   */
  feedbackWeight?: number;
  /**
   * Decayed co-occurrences a query term and a tool need before feedback counts them.
   * @defaultValue {@link DEFAULT_FEEDBACK_MIN_COUNT}
   */
  feedbackMinCount?: number;
  /**
   * Rank below which graph and feedback evidence may not push the best lexical hits (those
   * scoring at least {@link DEFAULT_LEXICAL_GUARD_SHARE} of the best; 0 = no guard).
   * @defaultValue {@link DEFAULT_LEXICAL_GUARD}
   */
  lexicalGuard?: number;
  /**
   * Top lexical hits RM3 pseudo-relevance feedback reads to expand the query (0 = off).
   * @defaultValue {@link DEFAULT_EXPANSION_DOCS}
   */
  expansionDocs?: number;
  /**
   * When the hybrid ranking uses RM3.
   * @defaultValue {@link DEFAULT_EXPANSION_WHEN}
   */
  expansionWhen?: ExpansionPolicy;
  /**
   * Under `expansionWhen: 'selective'`, RM3 skips a query whose
   * {@link DEFAULT_EXPANSION_FLAT_RANK}th first-pass hit scores at least this share of the best
   * (0–1; 0 skips every query with that many hits, 1 only those whose hits all tie).
   * @defaultValue {@link DEFAULT_EXPANSION_FLAT_SHARE}
   */
  expansionFlatShare?: number;
  /**
   * Best first-pass hits RM3's expanded query re-scores.
   * @defaultValue {@link DEFAULT_EXPANSION_RERANK_DOCS}
   */
  expansionRerankDocs?: number;
  /**
   * Terms RM3 adds to the query.
   * @defaultValue {@link DEFAULT_EXPANSION_TERMS}
   */
  expansionTerms?: number;
  /**
   * Weight of RM3's expansion terms against the original query (0–1).
   * @defaultValue {@link DEFAULT_EXPANSION_WEIGHT}
   */
  expansionWeight?: number;
  /**
   * BM25 k1.
   * @defaultValue {@link DEFAULT_BM25_K1}
   */
  k1?: number;
  /**
   * BM25 b.
   * @defaultValue {@link DEFAULT_BM25_B}
   */
  b?: number;
}

/** {@link RankingOptions} with every field present. */
export type ResolvedRankingOptions = Required<RankingOptions>;

function check(name: string, value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `Search option "${name}" must be a number from ${min} to ${max}; got ${String(value)}.`,
      { details: { field: name, value } },
    );
  }
  return value;
}

const POLICIES: readonly ExpansionPolicy[] = ['selective', 'no-feedback', 'cold-start', 'always'];

function checkPolicy(value: ExpansionPolicy | undefined, fallback: ExpansionPolicy): ExpansionPolicy {
  if (value === undefined) return fallback;
  if (!POLICIES.includes(value)) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `Search option "expansionWhen" must be "selective", "no-feedback", "cold-start" or "always"; got ${JSON.stringify(value)}.`,
      { details: { field: 'expansionWhen', value } },
    );
  }
  return value;
}

/** The fields of {@link ResolvedRankingOptions} (the `satisfies` keeps the list complete). */
const RANKING_KEYS: ReadonlySet<string> = new Set(
  Object.keys({
    beamWidth: true,
    beamDepth: true,
    graphWeight: true,
    evidencePrior: true,
    edgeDiscount: true,
    inferredEdgeShare: true,
    feedbackWeight: true,
    feedbackMinCount: true,
    lexicalGuard: true,
    expansionDocs: true,
    expansionWhen: true,
    expansionFlatShare: true,
    expansionRerankDocs: true,
    expansionTerms: true,
    expansionWeight: true,
    k1: true,
    b: true,
  } satisfies Record<keyof ResolvedRankingOptions, true>),
);

/** True when `options` sets a ranking option (an own key of {@link RANKING_KEYS}, even undefined). */
function setsRankingOption(options: RankingOptions): boolean {
  for (const key of Object.keys(options)) if (RANKING_KEYS.has(key)) return true;
  return false;
}

/** Fills `options` over `base` and checks every value's range. */
export function resolveRankingOptions(
  options: RankingOptions = {},
  base?: ResolvedRankingOptions,
): ResolvedRankingOptions {
  // Most queries set none (only `limit`, `mode`…): they rank with the base as it is.
  if (base !== undefined && !setsRankingOption(options)) return base;
  const b = base ?? {
    beamWidth: DEFAULT_BEAM_WIDTH,
    beamDepth: DEFAULT_BEAM_DEPTH,
    graphWeight: DEFAULT_GRAPH_WEIGHT,
    evidencePrior: DEFAULT_EVIDENCE_PRIOR,
    edgeDiscount: DEFAULT_EDGE_DISCOUNT,
    inferredEdgeShare: DEFAULT_INFERRED_EDGE_SHARE,
    feedbackWeight: DEFAULT_FEEDBACK_WEIGHT,
    feedbackMinCount: DEFAULT_FEEDBACK_MIN_COUNT,
    lexicalGuard: DEFAULT_LEXICAL_GUARD,
    expansionDocs: DEFAULT_EXPANSION_DOCS,
    expansionWhen: DEFAULT_EXPANSION_WHEN,
    expansionFlatShare: DEFAULT_EXPANSION_FLAT_SHARE,
    expansionRerankDocs: DEFAULT_EXPANSION_RERANK_DOCS,
    expansionTerms: DEFAULT_EXPANSION_TERMS,
    expansionWeight: DEFAULT_EXPANSION_WEIGHT,
    k1: DEFAULT_BM25_K1,
    b: DEFAULT_BM25_B,
  };
  return {
    beamWidth: Math.floor(check('beamWidth', options.beamWidth, b.beamWidth, 1, 100)),
    beamDepth: Math.floor(check('beamDepth', options.beamDepth, b.beamDepth, 0, 6)),
    graphWeight: check('graphWeight', options.graphWeight, b.graphWeight, 0, 100),
    evidencePrior: check('evidencePrior', options.evidencePrior, b.evidencePrior, 0, 1_000_000),
    edgeDiscount: check('edgeDiscount', options.edgeDiscount, b.edgeDiscount, 0, 1_000_000),
    inferredEdgeShare: check('inferredEdgeShare', options.inferredEdgeShare, b.inferredEdgeShare, 0, 1),
    feedbackWeight: check('feedbackWeight', options.feedbackWeight, b.feedbackWeight, 0, 100),
    feedbackMinCount: check('feedbackMinCount', options.feedbackMinCount, b.feedbackMinCount, 1, 1_000_000),
    lexicalGuard: Math.floor(check('lexicalGuard', options.lexicalGuard, b.lexicalGuard, 0, 100)),
    expansionDocs: Math.floor(check('expansionDocs', options.expansionDocs, b.expansionDocs, 0, 100)),
    expansionWhen: checkPolicy(options.expansionWhen, b.expansionWhen),
    expansionFlatShare: check('expansionFlatShare', options.expansionFlatShare, b.expansionFlatShare, 0, 1),
    expansionRerankDocs: Math.floor(
      check('expansionRerankDocs', options.expansionRerankDocs, b.expansionRerankDocs, 1, 100_000),
    ),
    expansionTerms: Math.floor(check('expansionTerms', options.expansionTerms, b.expansionTerms, 1, 100)),
    expansionWeight: check('expansionWeight', options.expansionWeight, b.expansionWeight, 0, 1),
    k1: check('k1', options.k1, b.k1, 0, 100),
    b: check('b', options.b, b.b, 0, 1),
  };
}
