/**
 * @module
 * `npm run eval-search -- --cold-start` (scripts/eval-search/cold-start.ts): the cold-start
 * ranking against BM25F with RM3 off, per fold, on a self-made catalog.
 */
import { describe, expect, it } from 'vitest';
import { evaluateColdStart, formatColdStart } from '../../../scripts/eval-search/cold-start.js';
import type { EvalQuery } from '../../../src/search/evaluate-search.js';
import { EXPANSION_TOOLS, FLAT_QUERY, HEAD_QUERY } from './expansion-catalog.js';

const queries: EvalQuery[] = [
  {
    id: 'head',
    query: HEAD_QUERY,
    tools: ['currency.convert_currency', 'mail.send_email', 'currency.list_rates'],
  },
  // First of the tied exports by name; expanded, three others would be lifted above it.
  { id: 'flat', query: FLAT_QUERY, tools: ['assets.export_assets'] },
  { id: 'gone', query: 'export', tools: ['not.in_catalog'] },
];
const base = { tools: EXPANSION_TOOLS, queries, folds: 2, ks: [10, 3] };

describe('evaluateColdStart', () => {
  it('scores the ranking and BM25F with RM3 off on the same queries, per fold and group', () => {
    const result = evaluateColdStart(base);
    expect(result.ks).toEqual([3, 10]);
    expect(result.skipped).toBe(1);
    expect([result.all.queries, result.all.multiTool, result.singleTool.queries]).toEqual([2, 1, 1]);
    expect(result.folds.map((fold) => fold.queries).sort()).toEqual([1, 1]);
    // The default expands the multi-intent query (its third tool joins the top 3), not the flat one.
    expect(result.multiTool.bm25f.multiToolCompleteness[3]).toBe(0);
    expect(result.multiTool.ranking.multiToolCompleteness[3]).toBe(1);
    expect(result.singleTool.ranking).toEqual(result.singleTool.bm25f);
    expect(result.all.reranked).toBe(1);
    // RM3 on every query: the flat one drifts.
    const always = evaluateColdStart({ ...base, ranking: { expansionWhen: 'no-feedback' } });
    expect(always.singleTool.ranking.ndcg[3]).toBeLessThan(always.singleTool.bm25f.ndcg[3]!);
    // With RM3 off in the evaluated ranking too, the two sides are one ranking.
    const off = evaluateColdStart({ ...base, ranking: { expansionDocs: 0 } });
    expect(off.all.ranking).toEqual(off.all.bm25f);
    expect(off.all.reranked).toBe(0);
  });

  it('reports one row per fold and group, and the worst fold', () => {
    const result = evaluateColdStart({ ...base, ranking: { expansionWhen: 'no-feedback' } });
    const text = formatColdStart(result, EXPANSION_TOOLS.length, { expansionWhen: 'no-feedback' });
    expect(text).toMatch(/^cold start: 2 queries \(1 need several tools\), 15 tools, 2 folds/);
    expect(text).toContain('ranking: the default with expansionWhen no-feedback');
    for (const label of ['fold 1', 'fold 2', 'all', 'single-tool', 'multi-tool'])
      expect(text).toMatch(new RegExp(`^${label} `, 'm'));
    expect(text).toMatch(/Worst fold: [12], NDCG@10 -\d/);
  });
});
