/**
 * @module
 * The per-query decision of RM3 under `expansionWhen: 'selective'` (the default): a query whose
 * first pass is flat (a page of tools scoring about as well as the best) is not expanded; one
 * whose first pass has a head (a few tools clearly above the rest, as when each intent of a
 * multi-step request names its tool) is.
 */
import { describe, expect, it } from 'vitest';
import { isCodecallError } from '../../../src/errors.js';
import {
  DEFAULT_EXPANSION_FLAT_RANK,
  DEFAULT_EXPANSION_FLAT_SHARE,
  DEFAULT_EXPANSION_WHEN,
} from '../../../src/search/options.js';
import { isFlatFirstPass } from '../../../src/search/query-expansion.js';
import { createToolSearch } from '../../../src/search/tool-search.js';
import { EXPANSION_TOOLS, FLAT_QUERY, HEAD_QUERY } from './expansion-catalog.js';

const names = (hits: { name: string }[]): string[] => hits.map((hit) => hit.name);

describe('isFlatFirstPass', () => {
  const scores = Float64Array.from([10, 9, 6, 5, 4.9, 1]);
  const ids = [0, 1, 2, 3, 4, 5];

  it('is flat when `rank` hits score at least `share` of the best', () => {
    expect(isFlatFirstPass(ids, scores, 4, 0.5)).toBe(true); // 10, 9, 6, 5
    expect(isFlatFirstPass(ids, scores, 5, 0.5)).toBe(false); // the 5th scores 4.9 < 5
    expect(isFlatFirstPass(ids, scores, 5, 0.49)).toBe(true);
    // Fewer hits than `rank`: a head, whatever the scores.
    expect(isFlatFirstPass([0, 1], Float64Array.from([1, 1]), 10, 0.5)).toBe(false);
  });

  it('reads only the matched ids, in any order', () => {
    const sparse = new Float64Array(10);
    sparse[7] = 2;
    sparse[3] = 1.5;
    sparse[9] = 0.1;
    expect(isFlatFirstPass([9, 3, 7], sparse, 2, 0.5)).toBe(true);
    expect(isFlatFirstPass([9, 3, 7], sparse, 3, 0.5)).toBe(false);
  });
});

describe("RM3 under expansionWhen: 'selective' (the default)", () => {
  it('is the default, with a flat first pass defined at rank 10 and half the best score', () => {
    expect(DEFAULT_EXPANSION_WHEN).toBe('selective');
    expect(DEFAULT_EXPANSION_FLAT_RANK).toBe(10);
    expect(DEFAULT_EXPANSION_FLAT_SHARE).toBe(0.5);
  });

  it('does not expand a query whose first pass is flat', () => {
    const search = createToolSearch({ tools: EXPANSION_TOOLS });
    const plain = search.search(FLAT_QUERY, { limit: 15, expansionDocs: 0 });
    expect(plain.length).toBeGreaterThanOrEqual(DEFAULT_EXPANSION_FLAT_RANK);
    expect(plain.slice(0, DEFAULT_EXPANSION_FLAT_RANK).every((hit) => hit.score === 1)).toBe(true);
    // Expanded, three of the tied tools (the first ids) would feed their own words back and rise
    // far above the others: an arbitrary pick.
    const expanded = search.search(FLAT_QUERY, { limit: 15, expansionWhen: 'no-feedback' });
    expect(expanded.filter((hit) => hit.score === 1)).toHaveLength(3);
    // The default keeps the first pass, in both modes.
    expect(search.search(FLAT_QUERY, { limit: 15 })).toEqual(plain);
    expect(search.search(FLAT_QUERY, { limit: 15, mode: 'bm25' })).toEqual(plain);
  });

  it('expands a query whose first pass has a head, bringing in a sibling of its best hits', () => {
    const search = createToolSearch({ tools: EXPANSION_TOOLS });
    const plain = search.search(HEAD_QUERY, { limit: 15, expansionDocs: 0 });
    expect(plain.length).toBeGreaterThanOrEqual(DEFAULT_EXPANSION_FLAT_RANK);
    expect(names(plain).slice(0, 2).sort()).toEqual(['currency.convert_currency', 'mail.send_email']);
    expect(names(plain).indexOf('currency.list_rates')).toBeGreaterThan(2); // tied with the exports
    const ranked = search.search(HEAD_QUERY, { limit: 15 });
    expect(ranked).toEqual(search.search(HEAD_QUERY, { limit: 15, expansionWhen: 'no-feedback' }));
    expect(names(ranked).indexOf('currency.list_rates')).toBe(2);
    expect(search.search(HEAD_QUERY, { limit: 15, mode: 'bm25' })).toEqual(ranked);
  });

  it('takes its share from expansionFlatShare', () => {
    const search = createToolSearch({ tools: EXPANSION_TOOLS });
    const plain = search.search(HEAD_QUERY, { limit: 15, expansionDocs: 0 });
    // The 10th hit scores 4% of the best: a share below that makes this first pass flat.
    expect(search.search(HEAD_QUERY, { limit: 15, expansionFlatShare: 0.01 })).toEqual(plain);
    expect(search.search(HEAD_QUERY, { limit: 15, expansionFlatShare: 0.1 })).not.toEqual(plain);
    expect(() => search.search(HEAD_QUERY, { expansionFlatShare: 2 })).toThrow(/expansionFlatShare/);
  });

  it('stands aside where learned query feedback covers the query, like no-feedback', () => {
    const search = createToolSearch({ tools: EXPANSION_TOOLS });
    for (let i = 0; i < 3; i++)
      search.recordUsage({ query: HEAD_QUERY, tools: ['currency.convert_currency', 'mail.send_email'] });
    const plain = search.search(HEAD_QUERY, { limit: 15, expansionDocs: 0 });
    expect(search.search(HEAD_QUERY, { limit: 15 })).toEqual(plain);
    expect(search.search(HEAD_QUERY, { limit: 15, expansionWhen: 'always' })).not.toEqual(plain);
  });

  it('keeps the other policies: no-feedback, cold-start and always expand a flat first pass', () => {
    const search = createToolSearch({ tools: EXPANSION_TOOLS });
    const plain = search.search(FLAT_QUERY, { limit: 15, expansionDocs: 0 });
    for (const expansionWhen of ['no-feedback', 'cold-start', 'always'] as const)
      expect(search.search(FLAT_QUERY, { limit: 15, expansionWhen })).not.toEqual(plain);
  });

  it('names every policy when given another', () => {
    const search = createToolSearch({ tools: EXPANSION_TOOLS });
    let error: unknown;
    try {
      search.search(FLAT_QUERY, { expansionWhen: 'sometimes' as never });
    } catch (e) {
      error = e;
    }
    expect(isCodecallError(error) && error.code === 'INVALID_ARGUMENT').toBe(true);
    expect((error as Error).message).toMatch(/"selective", "no-feedback", "cold-start" or "always"/);
  });
});
