/**
 * @module
 * `npm run eval-search -- --cold-start`: the ranking a catalog gets before any usage is recorded
 * (no graph, no query feedback) against BM25F with RM3 off, per cross-validation fold. Cold-start
 * rankings learn nothing, so the folds only partition the queries (the same partition as
 * `evaluateSearch`): they show how much a change moves on each held-out fifth, which is where a
 * rule chosen on the other folds, or on another data set, is judged.
 */
import { seededRandom } from '../../src/util/seeded-random.js';
import {
  DEFAULT_EVAL_SEED,
  type EvalIndexOptions,
  type EvalQuery,
} from '../../src/search/evaluate-search.js';
import type { RankingOptions } from '../../src/search/options.js';
import { createToolSearch, type SearchableTool } from '../../src/search/tool-search.js';

/** Options of {@link evaluateColdStart}. */
export interface ColdStartOptions {
  tools: readonly SearchableTool[];
  queries: readonly EvalQuery[];
  /** Folds the queries are split into (1 = one group). */
  folds: number;
  /** Cut-offs, ascending. */
  ks: readonly number[];
  /** Ranking options of the evaluated ranking (the baseline is the same with `expansionDocs: 0`). */
  ranking?: RankingOptions;
  index?: EvalIndexOptions;
  /** @defaultValue {@link DEFAULT_EVAL_SEED} */
  seed?: number;
}

/** NDCG@k of every query, and completeness@k of the queries that need two or more tools. */
export interface ColdStartMetrics {
  ndcg: Record<number, number>;
  multiToolCompleteness: Record<number, number>;
}

/** One group of queries (a fold, all of them, or the single-tool ones). */
export interface ColdStartGroup {
  queries: number;
  /** Queries that need two or more tools of the catalog. */
  multiTool: number;
  /** Queries whose top k (the largest cut-off) differs between the two rankings. */
  reranked: number;
  /** BM25F, RM3 off. */
  bm25f: ColdStartMetrics;
  /** The evaluated ranking. */
  ranking: ColdStartMetrics;
}

/** What {@link evaluateColdStart} returns. */
export interface ColdStartResult {
  ks: number[];
  /** Queries skipped: none of their tools is in the catalog, or the query is empty. */
  skipped: number;
  folds: ColdStartGroup[];
  all: ColdStartGroup;
  singleTool: ColdStartGroup;
  multiTool: ColdStartGroup;
}

interface Scored {
  fold: number;
  tools: number;
  reranked: boolean;
  bm25f: { ndcg: number[]; complete: boolean[] };
  ranking: { ndcg: number[]; complete: boolean[] };
}

function score(ranked: readonly string[], relevant: ReadonlySet<string>, ks: readonly number[]) {
  const ndcg: number[] = [];
  const complete: boolean[] = [];
  for (const k of ks) {
    let dcg = 0;
    let found = 0;
    ranked.slice(0, k).forEach((name, i) => {
      if (!relevant.has(name)) return;
      found++;
      dcg += 1 / Math.log2(i + 2);
    });
    let ideal = 0;
    for (let i = 0; i < Math.min(k, relevant.size); i++) ideal += 1 / Math.log2(i + 2);
    ndcg.push(dcg / ideal);
    complete.push(found === relevant.size);
  }
  return { ndcg, complete };
}

function summarize(rows: readonly Scored[], ks: readonly number[]): ColdStartGroup {
  const multi = rows.filter((row) => row.tools > 1);
  const metrics = (side: 'bm25f' | 'ranking'): ColdStartMetrics => ({
    ndcg: Object.fromEntries(
      ks.map((k, i) => [
        k,
        rows.reduce((sum, row) => sum + row[side].ndcg[i]!, 0) / Math.max(1, rows.length),
      ]),
    ),
    multiToolCompleteness: Object.fromEntries(
      ks.map((k, i) => [
        k,
        multi.reduce((sum, row) => sum + (row[side].complete[i] ? 1 : 0), 0) / Math.max(1, multi.length),
      ]),
    ),
  });
  return {
    queries: rows.length,
    multiTool: multi.length,
    reranked: rows.filter((row) => row.reranked).length,
    bm25f: metrics('bm25f'),
    ranking: metrics('ranking'),
  };
}

/**
 * Evaluates the cold-start ranking (`ranking` on a fresh index) against BM25F with RM3 off, per
 * fold, over all queries, and over the single-tool and multi-tool queries.
 *
 * @example
 * ```ts
 * const result = evaluateColdStart({ tools, queries, folds: 5, ks: [5, 10] });
 * result.folds.map((f) => f.ranking.ndcg[10]! - f.bm25f.ndcg[10]!); // change per fold
 * ```
 */
export function evaluateColdStart(options: ColdStartOptions): ColdStartResult {
  const ks = [...options.ks].sort((a, b) => a - b);
  const maxK = ks[ks.length - 1]!;
  const folds = Math.max(1, options.folds);
  // The fold assignment of evaluateSearch: a seeded shuffle, then round-robin.
  const order = options.queries.map((_, i) => i);
  const next = seededRandom(options.seed ?? DEFAULT_EVAL_SEED);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const foldOf = new Array<number>(options.queries.length);
  order.forEach((queryIndex, position) => (foldOf[queryIndex] = position % folds));

  const search = createToolSearch({ tools: options.tools, ...options.ranking, ...options.index });
  const rows: Scored[] = [];
  let skipped = 0;
  options.queries.forEach((q, i) => {
    const relevant = new Set(q.tools.filter((name) => search.has(name)));
    if (relevant.size === 0 || q.query.trim() === '') {
      skipped++;
      return;
    }
    const plain = search.search(q.query, { limit: maxK, expansionDocs: 0 }).map((hit) => hit.name);
    const ranked = search.search(q.query, { limit: maxK }).map((hit) => hit.name);
    rows.push({
      fold: foldOf[i]!,
      tools: relevant.size,
      reranked: plain.join('\n') !== ranked.join('\n'),
      bm25f: score(plain, relevant, ks),
      ranking: score(ranked, relevant, ks),
    });
  });
  return {
    ks,
    skipped,
    folds: Array.from({ length: folds }, (_, fold) =>
      summarize(
        rows.filter((row) => row.fold === fold),
        ks,
      ),
    ),
    all: summarize(rows, ks),
    singleTool: summarize(
      rows.filter((row) => row.tools === 1),
      ks,
    ),
    multiTool: summarize(
      rows.filter((row) => row.tools > 1),
      ks,
    ),
  };
}

function percent(value: number | undefined): string {
  return ((value ?? 0) * 100).toFixed(1);
}

function signed(points: number): string {
  const text = points.toFixed(1);
  if (text === '0.0' || text === '-0.0') return '0.0';
  return text.startsWith('-') ? text : `+${text}`;
}

/** The report of {@link evaluateColdStart} as a text table, one row per fold and group. */
export function formatColdStart(result: ColdStartResult, tools: number, ranking: RankingOptions): string {
  const { ks } = result;
  const lines: string[] = [];
  lines.push(
    `cold start: ${result.all.queries} queries (${result.all.multiTool} need several tools), ${tools} tools, ${result.folds.length} folds; no graph, no query feedback`,
  );
  if (result.skipped > 0)
    lines.push(`${result.skipped} queries skipped: none of their tools is in the catalog`);
  const flags = Object.entries(ranking).map(([key, value]) => `${key} ${String(value)}`);
  lines.push(`ranking: the default${flags.length > 0 ? ` with ${flags.join(', ')}` : ''}`, '');
  const header = ['group', 'queries'];
  for (const k of ks) header.push(`NDCG@${k} BM25F`, 'ranking', 'change');
  header.push('multi-tool');
  for (const k of ks) header.push(`C@${k} BM25F`, 'ranking');
  header.push('re-ranked');
  const row = (label: string, group: ColdStartGroup): string[] => {
    const cells = [label, String(group.queries)];
    for (const k of ks) {
      const before = group.bm25f.ndcg[k]!;
      const after = group.ranking.ndcg[k]!;
      cells.push(percent(before), percent(after), signed((after - before) * 100));
    }
    cells.push(String(group.multiTool));
    for (const k of ks) {
      if (group.multiTool === 0) cells.push('–', '–');
      else
        cells.push(
          percent(group.bm25f.multiToolCompleteness[k]),
          percent(group.ranking.multiToolCompleteness[k]),
        );
    }
    cells.push(String(group.reranked));
    return cells;
  };
  const rows = [
    header,
    ...result.folds.map((group, fold) => row(`fold ${fold + 1}`, group)),
    row('all', result.all),
    row('single-tool', result.singleTool),
    row('multi-tool', result.multiTool),
  ];
  const widths = header.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  rows.forEach((r, i) => {
    lines.push(
      r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '),
    );
    if (i === 0) lines.push(widths.map((w) => '-'.repeat(w)).join('  '));
  });
  const k = ks[ks.length - 1]!;
  const changes = result.folds.map((group) => group.ranking.ndcg[k]! - group.bm25f.ndcg[k]!);
  const worst = changes.indexOf(Math.min(...changes));
  lines.push(
    '',
    `Worst fold: ${worst + 1}, NDCG@${k} ${signed(changes[worst]! * 100)} points against BM25F.`,
    'BM25F: the same ranking with RM3 off (expansionDocs 0). Change in points. C@k: share of the',
    'multi-tool queries with all their tools in the top k. Re-ranked: queries whose top k the ranking changed.',
  );
  return `${lines.join('\n')}\n`;
}
