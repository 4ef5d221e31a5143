/**
 * @module
 * An incremental BM25F index: documents have several weighted fields, can be added and removed
 * one at a time, and statistics (document frequency, average field lengths) are kept as running
 * sums, so a catalog change never rebuilds the index. Postings are flat arrays scored into a
 * dense accumulator; removed documents are tombstoned and compacted lazily. Pure.
 */

/**
 * Share of the documents above which a query term counts as common: it then only adds to
 * documents a rarer term of the same query matched (see {@link Bm25Index.score}).
 */
export const DEFAULT_COMMON_TERM_SHARE = 0.05;
/** Documents a term must be in, at least, to count as common (small catalogs never prune). */
export const DEFAULT_COMMON_TERM_MIN_DOCS = 1_000;

/** Options of one {@link Bm25Index.score} call. */
export interface Bm25ScoreOptions {
  k1: number;
  b: number;
  /** @defaultValue {@link DEFAULT_COMMON_TERM_SHARE} */
  commonShare?: number;
}

/** Index of `id` in the ascending array `ids`, or -1. */
function search(ids: readonly number[], id: number): number {
  let lo = 0;
  let hi = ids.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const value = ids[mid]!;
    if (value < id) lo = mid + 1;
    else if (value > id) hi = mid - 1;
    else return mid;
  }
  return -1;
}

/** One term's postings: document ids and, per id, one frequency per field (flattened). */
interface Posting {
  ids: number[];
  frequencies: number[];
  /** Live documents in `ids` (the rest are tombstones). */
  live: number;
}

/** Scores of one query: a dense array indexed by document id and the ids it touched. */
export interface Bm25Scores {
  /** Score by document id (only entries in `ids` are meaningful). */
  scores: Float64Array;
  /** Ids of the documents that matched, each once. */
  ids: number[];
}

/**
 * BM25F over `fieldCount` fields: per field, the term frequency is length-normalised with `b`,
 * weighted, and summed before the `k1` saturation (Robertson, Zaragoza & Taylor, 2004).
 */
export class Bm25Index {
  readonly #weights: readonly number[];
  readonly #fields: number;
  readonly #postings = new Map<string, Posting>();
  /** Field lengths, `fieldCount` per document id (NaN-free; 0 for removed). */
  #lengths: number[] = [];
  #alive: boolean[] = [];
  /** Document id → its distinct terms (to remove it). */
  readonly #terms = new Map<number, string[]>();
  /** Reused by {@link score}: the ids the last query matched. */
  readonly #matchedIds: number[] = [];
  readonly #lengthSums: number[];
  #accumulator = new Float64Array(0);
  #stamp = new Uint32Array(0);
  #query = 0;

  constructor(fieldWeights: readonly number[]) {
    this.#weights = [...fieldWeights];
    this.#fields = fieldWeights.length;
    this.#lengthSums = fieldWeights.map(() => 0);
  }

  /** Documents in the index. */
  get size(): number {
    return this.#terms.size;
  }

  /**
   * Adds document `id` with one token list per field. Ids are small non-negative integers, each
   * greater than the ids before it: removed documents stay as tombstones in the postings (so an
   * id is never reused) and postings stay sorted.
   */
  add(id: number, fields: readonly (readonly string[])[]): void {
    if (!Number.isInteger(id) || id < this.#alive.length) {
      throw new Error(`Bm25Index: document id ${id} is invalid or was used before (ids must increase)`);
    }
    const fieldCount = this.#fields;
    const terms: string[] = [];
    for (let f = 0; f < fieldCount; f++) {
      const tokens = fields[f] ?? [];
      this.#lengths[id * fieldCount + f] = tokens.length;
      this.#lengthSums[f]! += tokens.length;
      for (const token of tokens) {
        let posting = this.#postings.get(token);
        if (!posting) {
          posting = { ids: [], frequencies: [], live: 0 };
          this.#postings.set(token, posting);
        }
        // This document's entry, if any, is the last one (ids increase).
        let at = posting.ids.length - 1;
        if (at < 0 || posting.ids[at] !== id) {
          posting.ids.push(id);
          for (let g = 0; g < fieldCount; g++) posting.frequencies.push(0);
          posting.live++;
          terms.push(token);
          at++;
        }
        posting.frequencies[at * fieldCount + f]!++;
      }
    }
    this.#alive[id] = true;
    this.#terms.set(id, terms);
  }

  /** Removes document `id` (no-op when absent). */
  remove(id: number): void {
    const terms = this.#terms.get(id);
    if (!terms) return;
    for (let f = 0; f < this.#fields; f++) {
      this.#lengthSums[f]! -= this.#lengths[id * this.#fields + f] ?? 0;
      this.#lengths[id * this.#fields + f] = 0;
    }
    this.#alive[id] = false;
    this.#terms.delete(id);
    for (const term of terms) {
      const posting = this.#postings.get(term);
      if (!posting) continue;
      posting.live--;
      if (posting.live === 0) this.#postings.delete(term);
      else if (posting.live * 2 < posting.ids.length) this.#compact(posting);
    }
  }

  #compact(posting: Posting): void {
    const ids: number[] = [];
    const frequencies: number[] = [];
    posting.ids.forEach((id, i) => {
      if (!this.#alive[id]) return;
      ids.push(id);
      for (let f = 0; f < this.#fields; f++) frequencies.push(posting.frequencies[i * this.#fields + f]!);
    });
    posting.ids = ids;
    posting.frequencies = frequencies;
  }

  /** True when document `id` matched the last {@link score} call. */
  matched(id: number): boolean {
    return this.#stamp[id] === this.#query;
  }

  /** Documents containing `term`. */
  documentFrequency(term: string): number {
    return this.#postings.get(term)?.live ?? 0;
  }

  /** The fields (indexes) of document `id` that contain `term`. */
  fieldsContaining(id: number, term: string): number[] {
    const posting = this.#postings.get(term);
    if (!posting || !this.#alive[id]) return [];
    const at = search(posting.ids, id);
    const out: number[] = [];
    if (at >= 0)
      for (let f = 0; f < this.#fields; f++) if (posting.frequencies[at * this.#fields + f]! > 0) out.push(f);
    return out;
  }

  /**
   * BM25F scores of every document matching at least one of `terms` (repeats count once). The
   * returned arrays are reused by the next call: read them before scoring again.
   */
  score(terms: readonly string[], options: Bm25ScoreOptions): Bm25Scores {
    const n = this.#terms.size;
    const capacity = this.#alive.length;
    if (this.#accumulator.length < capacity) {
      this.#accumulator = new Float64Array(Math.max(capacity, this.#accumulator.length * 2));
      this.#stamp = new Uint32Array(this.#accumulator.length);
      this.#query = 0;
    }
    const scores = this.#accumulator;
    const stamp = this.#stamp;
    this.#query = (this.#query + 1) >>> 0;
    if (this.#query === 0) {
      stamp.fill(0);
      this.#query = 1;
    }
    const query = this.#query;
    const ids = this.#matchedIds;
    ids.length = 0;
    if (n === 0) return { scores, ids };
    const fields = this.#fields;
    const weights = this.#weights;
    const lengths = this.#lengths;
    const alive = this.#alive;
    const { k1, b } = options;
    // Per field: weight and the two parts of the length normalisation, 1 - b + b·len/avg.
    const base = 1 - b;
    const slope = this.#lengthSums.map((sum) => b / Math.max(sum / n, 1e-9));
    // Rare terms first. A common term (in more than `commonShare` of the documents, so its idf
    // is small) only adds to documents a rarer term already matched, unless it is all there is:
    // a document matching nothing but common words cannot rank among rarer matches, and the
    // long postings of words like "get" or "data" are what make a query slow.
    const postings: Posting[] = [];
    for (const term of new Set(terms)) {
      const posting = this.#postings.get(term);
      if (posting) postings.push(posting);
    }
    postings.sort((x, y) => x.live - y.live);
    const commonAbove = Math.max(
      n * (options.commonShare ?? DEFAULT_COMMON_TERM_SHARE),
      DEFAULT_COMMON_TERM_MIN_DOCS,
    );
    for (const posting of postings) {
      const df = posting.live;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      const postingIds = posting.ids;
      const frequencies = posting.frequencies;
      const contribution = (i: number, id: number): number => {
        let tf = 0;
        const offset = i * fields;
        const lengthOffset = id * fields;
        for (let f = 0; f < fields; f++) {
          const raw = frequencies[offset + f]!;
          if (raw !== 0) tf += (weights[f]! * raw) / (base + slope[f]! * lengths[lengthOffset + f]!);
        }
        return (idf * tf) / (k1 + tf);
      };
      if (df > commonAbove && ids.length > 0) {
        if (ids.length * Math.log2(postingIds.length) < postingIds.length) {
          for (const id of ids) {
            const at = search(postingIds, id);
            if (at >= 0) scores[id]! += contribution(at, id);
          }
        } else {
          for (let i = 0; i < postingIds.length; i++) {
            const id = postingIds[i]!;
            if (stamp[id] === query && alive[id]) scores[id]! += contribution(i, id);
          }
        }
        continue;
      }
      for (let i = 0; i < postingIds.length; i++) {
        const id = postingIds[i]!;
        if (!alive[id]) continue;
        const value = contribution(i, id);
        if (stamp[id] !== query) {
          stamp[id] = query;
          scores[id] = value;
          ids.push(id);
        } else {
          scores[id]! += value;
        }
      }
    }
    return { scores, ids };
  }
}
