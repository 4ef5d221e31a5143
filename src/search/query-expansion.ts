/**
 * @module
 * Pseudo-relevance feedback for the lexical ranking (RM3), the per-query test of whether it pays
 * (a flat first pass), and the bounded top-k selection of scored ids they and the ranking share.
 */
import type { Bm25Index } from './bm25.js';
import type { ResolvedRankingOptions } from './options.js';

/**
 * RM3 (Lavrenko & Croft's relevance model, interpolated with the query): the term distribution
 * of the `top` lexical hits, each weighted by its score, `P(t|R) = Σ_d s(d) · P(t|d)` with
 * `P(t|d)` the field-weighted term frequency of `d`; its `expansionTerms` most probable terms
 * are mixed with the query's own as `(1 − w) · P(t|Q) + w · P(t|R)` and the query is scored
 * again with those weights. `index` gives a hit's field-weighted term counts (its forward index).
 */
export function expandQuery(
  terms: readonly string[],
  top: readonly number[],
  scores: Float64Array,
  ranking: ResolvedRankingOptions,
  fieldWeights: readonly number[],
  index: Pick<Bm25Index, 'termCounts' | 'weightedLength'>,
): Map<string, number> {
  let total = 0;
  for (const id of top) total += scores[id]!;
  const relevance = new Map<string, number>();
  for (const id of top) {
    // P(t|d) from the forward index's field-weighted counts, weighted by the hit's share s(d).
    const length = total > 0 ? index.weightedLength(id, fieldWeights) : 0;
    if (length <= 0) continue;
    const share = scores[id]! / total;
    index.termCounts(id, fieldWeights, (term, count) =>
      relevance.set(term, (relevance.get(term) ?? 0) + (share * count) / length),
    );
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

/**
 * True when the first pass is flat: at least `rank` hits score `share` of the best or more, so
 * the top hits RM3 would read stand for no more than any other hit of the page, and their terms
 * would pull the query toward an arbitrary few. A first pass with a head (fewer such hits, as
 * when one or a few tools match clearly more of the query than the rest) is worth expanding.
 * Reads the first pass's scores only: two linear passes over the matched ids.
 */
export function isFlatFirstPass(
  ids: readonly number[],
  scores: Float64Array,
  rank: number,
  share: number,
): boolean {
  if (ids.length < rank) return false;
  let best = 0;
  for (const id of ids) if (scores[id]! > best) best = scores[id]!;
  const floor = share * best;
  let level = 0;
  for (const id of ids) if (scores[id]! >= floor && ++level >= rank) return true;
  return false;
}

/**
 * The ids of the `k` best scores (ties by id, i.e. insertion order), best first, without sorting
 * every match: a bounded sorted buffer, O(n log k).
 */
export function selectTop(ids: readonly number[], scores: Float64Array, k: number): number[] {
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
