import { describe, expect, it } from 'vitest';
import { isCodecallError } from '../../../src/errors.js';
import { evaluateSearch, type EvalQuery } from '../../../src/search/evaluate-search.js';
import { CATALOG } from './catalog.js';

describe('evaluateSearch', () => {
  it('computes recall, NDCG and completeness against hand-checked rankings', () => {
    // "weather forecast" ranks weather.get_forecast first; the second label never appears.
    const test: EvalQuery[] = [
      { id: '1', query: 'weather forecast', tools: ['weather.get_forecast', 'files.read_file'] },
    ];
    const result = evaluateSearch({ tools: CATALOG, test, ks: [1, 5] });
    expect(result.queries).toBe(1);
    expect(result.bm25.recall[1]).toBe(0.5);
    expect(result.bm25.completeness[5]).toBe(0);
    // DCG@1 = 1, IDCG@1 = 1.
    expect(result.bm25.ndcg[1]).toBe(1);
    // DCG@5 = 1 (rank 1 only), IDCG@5 = 1 + 1/log2(3).
    expect(result.bm25.ndcg[5]).toBeCloseTo(1 / (1 + 1 / Math.log2(3)));
  });

  it('learns the graph from training chains and reports both methods', () => {
    const test: EvalQuery[] = [
      { id: '1', query: 'weather forecast', tools: ['weather.get_forecast', 'files.write_file'] },
    ];
    const train = Array.from({ length: 10 }, () => ['weather.get_forecast', 'files.write_file']);
    const result = evaluateSearch({ tools: CATALOG, test, train, ks: [2] });
    expect(result.bm25.completeness[2]).toBe(0);
    expect(result.hybrid.completeness[2]).toBe(1);
    expect(result.trainChains).toBe(10);
  });

  it('cross-validates: a fold never learns from its own chains', () => {
    // Two queries whose chains appear nowhere else: with folds the graph cannot help them.
    const test: EvalQuery[] = [
      { id: 'a', query: 'list chat channels', tools: ['chat.list_channels', 'files.write_file'] },
      { id: 'b', query: 'weather forecast', tools: ['weather.get_forecast', 'files.read_file'] },
    ];
    const result = evaluateSearch({
      tools: CATALOG,
      test,
      folds: 2,
      ks: [2],
      ranking: { inferredEdgeShare: 0 },
    });
    expect(result.folds).toBe(2);
    expect(result.hybrid.completeness[2]).toBe(result.bm25.completeness[2]);
  });

  it('skips queries whose tools are unknown and validates its options', () => {
    const result = evaluateSearch({ tools: CATALOG, test: [{ id: 'x', query: 'q', tools: ['nope'] }] });
    expect(result).toMatchObject({ queries: 0, skipped: 1, unknownTools: 1 });
    for (const options of [{ ks: [0] }, { ks: [] }, { folds: 5 }]) {
      try {
        evaluateSearch({ tools: CATALOG, test: [], ...options });
        expect.unreachable();
      } catch (error) {
        expect(isCodecallError(error) && error.code).toBe('INVALID_ARGUMENT');
      }
    }
  });
});
