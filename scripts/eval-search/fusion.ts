/**
 * @module
 * `npm run eval-search -- --embeddings-onnx <model> | --embeddings-base-url <url>`: fused ranking
 * (`searchAsync`: the ranking fused with an embedding model's by reciprocal-rank fusion) against
 * the ranking it fuses, per cross-validation fold, for each embedding weight asked for. Two
 * settings: cold start (a fresh index: the lexical ranking, BM25F with RM3 where the first pass
 * has a head) and with usage (the other folds' queries and chains learned: the default ranking).
 * The fold assignment is `evaluateSearch`'s. Every vector is computed once per text (tool texts
 * and queries are the same in every fold and weight).
 */
import { seededRandom } from '../../src/util/seeded-random.js';
import {
  DEFAULT_EVAL_SEED,
  type EvalIndexOptions,
  type EvalQuery,
} from '../../src/search/evaluate-search.js';
import type { EmbedFunction } from '../../src/search/embeddings.js';
import type { RankingOptions } from '../../src/search/options.js';
import { createToolSearch, type SearchableTool } from '../../src/search/tool-search.js';

/** Options of {@link evaluateFusion}. */
export interface FusionOptions {
  tools: readonly SearchableTool[];
  queries: readonly EvalQuery[];
  /** Folds the queries are split into (at least 2: the usage setting learns the other folds). */
  folds: number;
  /** Cut-offs, ascending. */
  ks: readonly number[];
  embed: EmbedFunction;
  /** Embedding weights to measure (`embeddingWeight`; 0 is the unfused ranking). */
  weights: readonly number[];
  /** Guards to measure with each weight (`embeddingGuard`: hits of the ranking kept in place). */
  guards: readonly number[];
  /**
   * Flat shares to measure with each weight and guard (`embeddingFlatShare`: a query is fused
   * only when its ranking's 10th hit scores at least this share of the best; 0 = every query).
   */
  flatShares: readonly number[];
  ranking?: RankingOptions;
  index?: EvalIndexOptions;
  /** @defaultValue {@link DEFAULT_EVAL_SEED} */
  seed?: number;
  /** Called after each fold with the number of folds done and in total. */
  onProgress?: (done: number, total: number) => void;
}

/** Mean NDCG@k of one ranking over a group of queries: k → value. */
export type Ndcg = Record<number, number>;

/** One fused ranking measured: an embedding weight, a guard and a flat share. */
export interface FusionVariant {
  weight: number;
  guard: number;
  flatShare: number;
}

/** One fold (or all queries): the unfused ranking and each variant's fused ranking. */
export interface FusionGroup {
  queries: number;
  /** Cold start: the lexical ranking, and fused with each variant (same order as `variants`). */
  lexical: Ndcg;
  lexicalFused: Ndcg[];
  /** With the other folds' usage: the default ranking, and fused with each weight. */
  usage: Ndcg;
  usageFused: Ndcg[];
}

/** What {@link evaluateFusion} returns. */
export interface FusionResult {
  ks: number[];
  /** Every weight with every guard and flat share, weights outermost, then guards. */
  variants: FusionVariant[];
  skipped: number;
  /** Embedding failures (a fused search that answered without the embedding ranking). */
  embeddingErrors: string[];
  folds: FusionGroup[];
  all: FusionGroup;
}

function ndcgs(ranked: readonly string[], relevant: ReadonlySet<string>, ks: readonly number[]): number[] {
  return ks.map((k) => {
    let dcg = 0;
    ranked.slice(0, k).forEach((name, i) => {
      if (relevant.has(name)) dcg += 1 / Math.log2(i + 2);
    });
    let ideal = 0;
    for (let i = 0; i < Math.min(k, relevant.size); i++) ideal += 1 / Math.log2(i + 2);
    return dcg / ideal;
  });
}

/** `embed` with every text's vector kept after its first call (texts repeat across folds and weights). */
function memoized(embed: EmbedFunction): EmbedFunction {
  const memo = new Map<string, number[]>();
  return async (texts) => {
    const missing = [...new Set(texts.filter((text) => !memo.has(text)))];
    if (missing.length > 0) {
      const vectors = await embed(missing);
      missing.forEach((text, i) => {
        const vector = vectors[i];
        if (vector !== undefined) memo.set(text, vector);
      });
    }
    return texts.map((text) => memo.get(text) ?? []);
  };
}

interface Row {
  fold: number;
  lexical: number[];
  lexicalFused: number[][];
  usage: number[];
  usageFused: number[][];
}

function summarize(
  rows: readonly Row[],
  ks: readonly number[],
  variants: readonly FusionVariant[],
): FusionGroup {
  const mean = (pick: (row: Row) => number[]): Ndcg =>
    Object.fromEntries(
      ks.map((k, i) => [k, rows.reduce((sum, row) => sum + pick(row)[i]!, 0) / Math.max(1, rows.length)]),
    );
  return {
    queries: rows.length,
    lexical: mean((row) => row.lexical),
    lexicalFused: variants.map((_, v) => mean((row) => row.lexicalFused[v]!)),
    usage: mean((row) => row.usage),
    usageFused: variants.map((_, v) => mean((row) => row.usageFused[v]!)),
  };
}

/**
 * Fused against unfused ranking per fold, at cold start and with the other folds' usage.
 *
 * @example
 * ```ts
 * const result = await evaluateFusion({ tools, queries, folds: 5, ks: [10], embed, weights: [0.5, 1] });
 * result.folds.map((f) => f.lexicalFused[1]![10]! - f.lexical[10]!); // change per fold at weight 1
 * ```
 */
export async function evaluateFusion(options: FusionOptions): Promise<FusionResult> {
  const ks = [...options.ks].sort((a, b) => a - b);
  const maxK = ks[ks.length - 1]!;
  const folds = Math.max(2, options.folds);
  const weights = [...options.weights];
  const variants = weights.flatMap((weight) =>
    options.guards.flatMap((guard) => options.flatShares.map((flatShare) => ({ weight, guard, flatShare }))),
  );
  const order = options.queries.map((_, i) => i);
  const next = seededRandom(options.seed ?? DEFAULT_EVAL_SEED);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const foldOf = new Array<number>(options.queries.length);
  order.forEach((queryIndex, position) => (foldOf[queryIndex] = position % folds));

  // Loading a model can take longer than one embedding request's deadline: load it first.
  await options.embed(['codecall']);
  const embed = memoized(options.embed);
  const errors = new Set<string>();
  const base = { tools: options.tools, ...options.ranking, ...options.index };
  const cold = weights.map((weight) => createToolSearch({ ...base, embed, embeddingWeight: weight }));
  const rows: Row[] = [];
  let skipped = 0;
  for (let fold = 0; fold < folds; fold++) {
    const learned = weights.map((weight) => {
      const search = createToolSearch({ ...base, embed, embeddingWeight: weight });
      options.queries.forEach((q, i) => {
        if (foldOf[i] === fold) return;
        search.recordSequence(q.tools);
        if (q.query.trim() !== '') search.recordUsage({ query: q.query, tools: q.tools });
      });
      return search;
    });
    for (let i = 0; i < options.queries.length; i++) {
      const q = options.queries[i]!;
      if (foldOf[i] !== fold) continue;
      const relevant = new Set(q.tools.filter((name) => cold[0]!.has(name)));
      if (relevant.size === 0 || q.query.trim() === '') {
        skipped++;
        continue;
      }
      const fused = async (
        search: (typeof cold)[number],
        mode: 'bm25' | 'hybrid',
        { guard, flatShare }: FusionVariant,
      ) => {
        const result = await search.searchAsync(q.query, {
          limit: maxK,
          mode,
          embeddingGuard: guard,
          embeddingFlatShare: flatShare,
        });
        if (result.embeddingError !== undefined) errors.add(result.embeddingError);
        return ndcgs(
          result.hits.map((hit) => hit.name),
          relevant,
          ks,
        );
      };
      const lexicalFused: number[][] = [];
      const usageFused: number[][] = [];
      for (const variant of variants) {
        const w = weights.indexOf(variant.weight);
        lexicalFused.push(await fused(cold[w]!, 'bm25', variant));
        usageFused.push(await fused(learned[w]!, 'hybrid', variant));
      }
      rows.push({
        fold,
        lexical: ndcgs(
          cold[0]!.search(q.query, { limit: maxK, mode: 'bm25' }).map((hit) => hit.name),
          relevant,
          ks,
        ),
        lexicalFused,
        usage: ndcgs(
          learned[0]!.search(q.query, { limit: maxK, mode: 'hybrid' }).map((hit) => hit.name),
          relevant,
          ks,
        ),
        usageFused,
      });
    }
    options.onProgress?.(fold + 1, folds);
  }
  return {
    ks,
    variants,
    skipped,
    embeddingErrors: [...errors].slice(0, 5),
    folds: Array.from({ length: folds }, (_, fold) =>
      summarize(
        rows.filter((row) => row.fold === fold),
        ks,
        variants,
      ),
    ),
    all: summarize(rows, ks, variants),
  };
}

function signed(points: number): string {
  const text = points.toFixed(2);
  if (text === '0.00' || text === '-0.00') return '0.00';
  return text.startsWith('-') ? text : `+${text}`;
}

/** The variant a data set chooses: the largest mean change of the two settings with no fold below 0. */
export function chooseVariant(result: FusionResult, k: number): number | undefined {
  let best: number | undefined;
  let bestMean = -Infinity;
  result.variants.forEach((_, v) => {
    const changes = (group: FusionGroup) => [
      group.lexicalFused[v]![k]! - group.lexical[k]!,
      group.usageFused[v]![k]! - group.usage[k]!,
    ];
    // A fold "at or above" the unfused ranking up to float noise (a change of 1e-9 points).
    if (result.folds.some((group) => changes(group).some((change) => change < -1e-11))) return;
    const [cold, usage] = changes(result.all);
    const mean = (cold! + usage!) / 2;
    if (mean > bestMean + 1e-12) {
      best = v;
      bestMean = mean;
    }
  });
  return best;
}

/**
 * The report of {@link evaluateFusion}: NDCG at the largest cut-off of the unfused ranking per
 * fold, then one row per variant with its change per fold, at cold start and with usage, and the
 * variant this data set would choose.
 */
export function formatFusion(result: FusionResult, tools: number, model: string): string {
  const k = result.ks[result.ks.length - 1]!;
  const lines: string[] = [
    `fusion: ${result.all.queries} queries, ${tools} tools, ${result.folds.length} folds; embeddings: ${model}`,
  ];
  if (result.skipped > 0)
    lines.push(`${result.skipped} queries skipped: none of their tools is in the catalog`);
  for (const error of result.embeddingErrors) lines.push(`embedding error: ${error}`);
  lines.push('');
  const groups = [...result.folds, result.all];
  const foldLabels = [...result.folds.map((_, fold) => `fold ${fold + 1}`), 'all'];
  const label = ({ weight, guard, flatShare }: FusionVariant) => `w=${weight} g=${guard} f=${flatShare}`;
  const header = [`NDCG@${k}`, ...foldLabels.map((f) => `cold ${f}`), ...foldLabels.map((f) => `usage ${f}`)];
  const rows = [
    header,
    [
      'unfused',
      ...groups.map((group) => (group.lexical[k]! * 100).toFixed(1)),
      ...groups.map((group) => (group.usage[k]! * 100).toFixed(1)),
    ],
    ...result.variants.map((variant, v) => [
      label(variant),
      ...groups.map((group) => signed((group.lexicalFused[v]![k]! - group.lexical[k]!) * 100)),
      ...groups.map((group) => signed((group.usageFused[v]![k]! - group.usage[k]!) * 100)),
    ]),
  ];
  const widths = header.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  rows.forEach((r, i) => {
    lines.push(
      r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '),
    );
    if (i === 1) lines.push(widths.map((w) => '-'.repeat(w)).join('  '));
  });
  const chosen = chooseVariant(result, k);
  lines.push(
    '',
    chosen === undefined
      ? 'chosen on this data set: none (every variant has a fold below the unfused ranking)'
      : `chosen on this data set (largest mean change of the two settings, no fold below the unfused ranking): ${label(result.variants[chosen]!)}`,
    '',
    'cold: the cold-start ranking (BM25F, RM3 where the first pass has a head) and its change, in points,',
    'when fused with the embedding ranking (searchAsync) at weight w, guard g (hits kept in place) and',
    'flat share f (fused only when the 10th hit scores at least f of the best; 0 = every query).',
    "usage: the default ranking after learning the other folds' queries and chains, and fused.",
  );
  return `${lines.join('\n')}\n`;
}
