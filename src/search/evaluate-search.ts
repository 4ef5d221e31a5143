/**
 * @module
 * Offline evaluation of tool search: Recall@k, NDCG@k and completeness@k (every tool a query
 * needs is in the top k), for BM25 alone and BM25 plus the learned graph side by side, with an
 * optional k-fold cross-validation in which each fold's graph learns only from the other folds'
 * call chains. Pure: the data comes in as arrays; `npm run eval-search` (scripts/) reads the files.
 */
import { seededRandom } from '../util/seeded-random.js';
import { CodecallError } from '../errors.js';
import { DEFAULT_FIELD_WEIGHTS, type RankingOptions, type SearchFieldWeights } from './options.js';
import { ToolGraph } from './tool-graph.js';
import {
  createToolSearch,
  type CreateToolSearchOptions,
  type SearchableTool,
  type ToolUsage,
} from './tool-search.js';

/** Cut-offs reported when none are given. */
export const DEFAULT_EVAL_KS: readonly number[] = [5, 10];
/** Seed of the fold assignment (fixed, so runs are reproducible). */
export const DEFAULT_EVAL_SEED = 1;

/** Values each field weight may take in the grid search of {@link EvaluateSearchOptions.learnFieldWeights}. */
export const DEFAULT_FIELD_WEIGHT_GRID: readonly number[] = [0, 0.5, 1, 2, 3, 5];
/** Passes of coordinate ascent over the fields in that grid search. */
export const DEFAULT_FIELD_WEIGHT_ROUNDS = 2;

/** Index options an evaluation applies to every fold's index. */
export type EvalIndexOptions = Pick<
  CreateToolSearchOptions,
  'fieldWeights' | 'stemming' | 'verbNormalization'
>;

/** One labelled query: the tools it needs, in call order. */
export interface EvalQuery {
  id: string;
  query: string;
  tools: string[];
}

/** Metrics of one ranking method, each averaged over the evaluated queries. */
export interface SearchMetrics {
  /** k → mean Recall@k. */
  recall: Record<number, number>;
  /** k → mean NDCG@k (binary relevance). */
  ndcg: Record<number, number>;
  /** k → share of queries with all their tools in the top k. */
  completeness: Record<number, number>;
}

/** Options of {@link evaluateSearch}. */
export interface EvaluateSearchOptions {
  tools: readonly SearchableTool[];
  /** Queries to evaluate. */
  test: readonly EvalQuery[];
  /** Call chains the graph learns from before the test (all folds see them). */
  train?: readonly (readonly string[])[];
  /**
   * Queries with the tools they used that query feedback (and the graph, from their chains)
   * learns from before the test (all folds see them).
   */
  trainUsages?: readonly ToolUsage[];
  /**
   * Cross-validation folds over `test`: each fold is evaluated with a graph that also learned
   * the other folds' chains. 0 or 1: no cross-validation.
   * @defaultValue 0
   */
  folds?: number;
  /**
   * Cut-offs.
   * @defaultValue {@link DEFAULT_EVAL_KS}
   */
  ks?: readonly number[];
  /** Ranking options of the graph-augmented run. */
  ranking?: RankingOptions;
  /** Index options (field weights, stemming, verb normalization) of every run. */
  index?: EvalIndexOptions;
  /**
   * Learn BM25F field weights per fold: a grid search (coordinate ascent over
   * {@link DEFAULT_FIELD_WEIGHT_GRID}, the description's weight fixed at 1) on the fold's training
   * queries only (the other folds' queries and `trainUsages`), maximising BM25's NDCG at the
   * first cut-off; the held-out fold is then scored with the weights learned without it.
   * @defaultValue false
   */
  learnFieldWeights?: boolean;
  /**
   * Seed of the fold assignment.
   * @defaultValue {@link DEFAULT_EVAL_SEED}
   */
  seed?: number;
  /** Called after each fold with the number of folds done and in total. */
  onProgress?: (done: number, total: number) => void;
}

/** What {@link evaluateSearch} returns. */
export interface EvaluateSearchResult {
  /** Queries evaluated (those with at least one tool in the catalog). */
  queries: number;
  /** Queries skipped because none of their tools is in the catalog. */
  skipped: number;
  /** Labelled tool names not in the catalog (counted once per query). */
  unknownTools: number;
  folds: number;
  /** Chains the graph learned from, summed over folds. */
  trainChains: number;
  /** Uses (query, tools) query feedback learned from, summed over folds. */
  trainUsages: number;
  ks: number[];
  /** BM25 alone. */
  bm25: SearchMetrics;
  /** BM25 plus the tool graph (query feedback off). */
  graph: SearchMetrics;
  /** BM25 plus the graph plus query feedback: the default ranking, with `ranking` applied. */
  hybrid: SearchMetrics;
  /** With `learnFieldWeights`: the weights learned for each fold, in fold order. */
  learnedFieldWeights?: SearchFieldWeights[];
}

function emptyMetrics(ks: readonly number[]): SearchMetrics {
  const zero = (): Record<number, number> => Object.fromEntries(ks.map((k) => [k, 0]));
  return { recall: zero(), ndcg: zero(), completeness: zero() };
}

/** Adds one query's metrics of `ranked` against `relevant` into `into`. */
function accumulate(
  into: SearchMetrics,
  ranked: readonly string[],
  relevant: ReadonlySet<string>,
  ks: readonly number[],
): void {
  for (const k of ks) {
    const top = ranked.slice(0, k);
    let found = 0;
    let dcg = 0;
    top.forEach((name, i) => {
      if (relevant.has(name)) {
        found++;
        dcg += 1 / Math.log2(i + 2);
      }
    });
    let ideal = 0;
    for (let i = 0; i < Math.min(k, relevant.size); i++) ideal += 1 / Math.log2(i + 2);
    into.recall[k]! += found / relevant.size;
    into.ndcg[k]! += ideal > 0 ? dcg / ideal : 0;
    into.completeness[k]! += found === relevant.size ? 1 : 0;
  }
}

function average(metrics: SearchMetrics, n: number): SearchMetrics {
  const divide = (r: Record<number, number>): Record<number, number> =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, n > 0 ? v / n : 0]));
  return {
    recall: divide(metrics.recall),
    ndcg: divide(metrics.ndcg),
    completeness: divide(metrics.completeness),
  };
}

/**
 * Evaluates BM25 alone and BM25 plus the learned graph on the same queries.
 *
 * @example
 * ```ts
 * const result = evaluateSearch({ tools, test: queries, folds: 5 });
 * console.log(result.bm25.completeness[5], result.hybrid.completeness[5]);
 * ```
 */
export function evaluateSearch(options: EvaluateSearchOptions): EvaluateSearchResult {
  const ks = [...(options.ks ?? DEFAULT_EVAL_KS)].sort((a, b) => a - b);
  if (ks.length === 0 || ks.some((k) => !Number.isInteger(k) || k < 1)) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      'Evaluation cut-offs "ks" must be positive integers, e.g. [5, 10].',
      {
        details: { field: 'ks' },
      },
    );
  }
  const folds = options.folds ?? 0;
  if (!Number.isInteger(folds) || folds < 0 || (folds > 1 && folds > options.test.length)) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `Evaluation "folds" must be an integer from 0 to the number of queries (${options.test.length}); got ${folds}.`,
      { details: { field: 'folds' } },
    );
  }
  const maxK = ks[ks.length - 1]!;
  const graph = new ToolGraph();
  for (const chain of options.train ?? []) graph.record(chain);
  const trained = graph.toState();

  // Fold assignment: a seeded shuffle, then round-robin.
  const order = options.test.map((_, i) => i);
  const next = seededRandom(options.seed ?? DEFAULT_EVAL_SEED);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const foldCount = folds > 1 ? folds : 1;
  const foldOf = new Array<number>(options.test.length);
  order.forEach((queryIndex, position) => (foldOf[queryIndex] = position % foldCount));

  const bm25 = emptyMetrics(ks);
  const graphOnly = emptyMetrics(ks);
  const hybrid = emptyMetrics(ks);
  let trainUsages = 0;
  let evaluated = 0;
  let skipped = 0;
  let unknownTools = 0;
  let trainChains = 0;
  const learned: SearchFieldWeights[] = [];
  for (let fold = 0; fold < foldCount; fold++) {
    let indexOptions = options.index ?? {};
    if (options.learnFieldWeights) {
      const training: EvalQuery[] = [
        ...(options.trainUsages ?? []).map((u, i) => ({
          id: `train-${i}`,
          query: u.query,
          tools: [...u.tools],
        })),
        ...options.test.filter((_, i) => foldCount > 1 && foldOf[i] !== fold),
      ];
      const weights = learnFieldWeights(options.tools, training, indexOptions, options.ranking ?? {}, ks[0]!);
      learned.push(weights);
      indexOptions = { ...indexOptions, fieldWeights: weights };
    }
    const index = createToolSearch({
      tools: options.tools,
      ...options.ranking,
      ...indexOptions,
      state: trained,
    });
    trainChains += options.train?.length ?? 0;
    for (const usage of options.trainUsages ?? []) {
      index.recordSequence(usage.tools);
      index.recordUsage(usage);
      trainChains++;
      trainUsages++;
    }
    if (foldCount > 1) {
      options.test.forEach((q, i) => {
        if (foldOf[i] !== fold) {
          index.recordSequence(q.tools);
          trainChains++;
          if (q.query.trim() !== '') {
            index.recordUsage({ query: q.query, tools: q.tools });
            trainUsages++;
          }
        }
      });
    }
    options.test.forEach((q, i) => {
      if (foldOf[i] !== fold) return;
      const relevant = new Set(q.tools.filter((name) => index.has(name)));
      unknownTools += new Set(q.tools).size - relevant.size;
      if (relevant.size === 0 || q.query.trim() === '') {
        skipped++;
        return;
      }
      evaluated++;
      const lexical = index.search(q.query, { limit: maxK, mode: 'bm25' }).map((h) => h.name);
      const withGraph = index
        .search(q.query, { limit: maxK, mode: 'hybrid', feedbackWeight: 0 })
        .map((h) => h.name);
      const withAll = index.search(q.query, { limit: maxK, mode: 'hybrid' }).map((h) => h.name);
      accumulate(bm25, lexical, relevant, ks);
      accumulate(graphOnly, withGraph, relevant, ks);
      accumulate(hybrid, withAll, relevant, ks);
    });
    options.onProgress?.(fold + 1, foldCount);
  }
  return {
    queries: evaluated,
    skipped,
    unknownTools,
    folds: foldCount > 1 ? foldCount : 0,
    trainChains,
    trainUsages,
    ks,
    bm25: average(bm25, evaluated),
    graph: average(graphOnly, evaluated),
    hybrid: average(hybrid, evaluated),
    ...(options.learnFieldWeights ? { learnedFieldWeights: learned } : {}),
  };
}

/** Mean NDCG@k of BM25 alone over `queries` (those with a tool in the catalog). */
function bm25Ndcg(
  tools: readonly SearchableTool[],
  queries: readonly EvalQuery[],
  index: EvalIndexOptions,
  ranking: RankingOptions,
  k: number,
): number {
  const search = createToolSearch({ tools, ...ranking, ...index });
  const metrics = emptyMetrics([k]);
  let n = 0;
  for (const q of queries) {
    const relevant = new Set(q.tools.filter((name) => search.has(name)));
    if (relevant.size === 0 || q.query.trim() === '') continue;
    n++;
    accumulate(
      metrics,
      search.search(q.query, { limit: k, mode: 'bm25' }).map((h) => h.name),
      relevant,
      [k],
    );
  }
  return n > 0 ? metrics.ndcg[k]! / n : 0;
}

/**
 * BM25F field weights that maximise BM25's NDCG@k on `queries`: coordinate ascent over
 * {@link DEFAULT_FIELD_WEIGHT_GRID} from the given (or default) weights, the description's weight
 * fixed at 1 (BM25F is nearly scale-free in its weights); a change must improve the score.
 */
export function learnFieldWeights(
  tools: readonly SearchableTool[],
  queries: readonly EvalQuery[],
  index: EvalIndexOptions = {},
  ranking: RankingOptions = {},
  k: number = DEFAULT_EVAL_KS[0]!,
): SearchFieldWeights {
  let best: SearchFieldWeights = { ...DEFAULT_FIELD_WEIGHTS, ...index.fieldWeights };
  let bestScore = bm25Ndcg(tools, queries, { ...index, fieldWeights: best }, ranking, k);
  const fields: Array<keyof SearchFieldWeights> = [
    'name',
    'server',
    'parameterNames',
    'parameterDescriptions',
  ];
  for (let round = 0; round < DEFAULT_FIELD_WEIGHT_ROUNDS; round++) {
    let changed = false;
    for (const field of fields) {
      for (const value of DEFAULT_FIELD_WEIGHT_GRID) {
        if (value === best[field]) continue;
        const candidate = { ...best, [field]: value };
        const score = bm25Ndcg(tools, queries, { ...index, fieldWeights: candidate }, ranking, k);
        if (score > bestScore + 1e-9) {
          best = candidate;
          bestScore = score;
          changed = true;
        }
      }
    }
    if (!changed) break;
  }
  return best;
}
