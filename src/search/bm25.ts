/**
 * @module
 * An incremental BM25F index: documents have several weighted fields, can be added and removed
 * one at a time, and statistics (document frequency, average field lengths) are kept as running
 * sums. Terms are interned as integer ids (one map lookup per token, no object per term or
 * posting). Adding a document appends its distinct terms with their per-field frequencies, packed
 * into one integer, to a forward index in typed arrays; the postings (an `Int32Array` of ids and
 * one of packed frequencies per term, at offsets in one buffer) are built from it in two passes
 * (the counts are the document frequencies already kept; then one fill) when a batch ends
 * ({@link Bm25Index.seal}) or a query first needs them. Documents added after that go to a small
 * delta segment, merged by a rebuild of the postings once it holds
 * {@link DEFAULT_BM25_DELTA_SHARE} of them; removed documents are tombstoned and dropped by a
 * rebuild once they hold {@link DEFAULT_BM25_DEAD_SHARE} of the live postings. Pure.
 *
 * Queries read a frozen view of each posting they touch: its live ids in an `Int32Array` and each
 * one's field-weighted, length-normalised term frequency in a `Float64Array`, computed once per
 * state of the index (any add or remove changes the average field lengths, so views are rebuilt
 * lazily, posting by posting, by the next query that reads them). Scoring is then one pass of
 * `idf · tf / (k1 + tf)` over two typed arrays, as in a minimal BM25. The forward index gives RM3
 * the term distribution of a top hit without re-tokenising it.
 */
import {
  DEFAULT_BM25_DEAD_SHARE,
  DEFAULT_BM25_DELTA_MIN_POSTINGS,
  DEFAULT_BM25_DELTA_SHARE,
} from '../config/defaults.js';

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

/** Bits of the packed frequency integer, spread over the fields (small integers stay unboxed). */
const PACKED_BITS = 30;

/** `array`, or a copy at least `needed` long (doubling) when it is shorter. */
function grown<T extends Int32Array | Uint8Array>(array: T, needed: number): T {
  if (needed <= array.length) return array;
  const copy = new (array.constructor as new (length: number) => T)(Math.max(needed, array.length * 2, 64));
  copy.set(array);
  return copy;
}

/**
 * A posting as scoring reads it: the live ids, ascending, and per id its BM25F pseudo-frequency
 * `Σ_f w_f · tf_f / (1 − b + b · len_f / avg_f)` (the part of the score before idf and `k1`).
 */
interface PostingView {
  version: number;
  b: number;
  ids: Int32Array;
  tf: Float64Array;
}

/** Entry of `id` in the ascending `ids`, or -1. */
function searchIds(ids: Int32Array, id: number): number {
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
  /** Bits per field in a packed frequency, and the largest frequency it holds. */
  readonly #bits: number;
  readonly #maxFrequency: number;
  /** Term → term id and back (ids are dense; a rebuild after many removals renumbers them). */
  #termIds = new Map<string, number>();
  #terms: string[] = [];
  /** Live documents holding each term, by term id. */
  #df = new Int32Array(0);
  /** Scratch of {@link add}, by term id: 1 + the last document that had it, and its forward entry. */
  #mark = new Int32Array(0);
  #slot = new Int32Array(0);
  /** Scratch of {@link addToCandidates}, by term id: the term's 1-based slot while it runs, else 0. */
  #rerankSlot = new Int32Array(0);
  /** Field lengths, `fieldCount` per document id (0 for removed). */
  #lengths = new Int32Array(0);
  #alive = new Uint8Array(0);
  /** One more than the largest document id added. */
  #end = 0;
  #size = 0;
  readonly #lengthSums: number[];
  /**
   * Forward index: document `id`'s distinct terms (ids) in order of first occurrence and their
   * packed per-field frequencies are entries `#forwardStart[id]` to `#forwardEnd[id]` of
   * `#forwardTerms` / `#forwardPacked` (a removed document's entries stay until a rebuild).
   */
  #forwardStart = new Int32Array(0);
  #forwardEnd = new Int32Array(0);
  #forwardTerms = new Int32Array(0);
  #forwardPacked = new Int32Array(0);
  #forwardUsed = 0;
  /** Forward entries of live documents (one per posting), of removed ones, and of documents not in the postings yet. */
  #livePostings = 0;
  #deadPostings = 0;
  #unsealedPostings = 0;
  /**
   * The main segment: the postings of the documents as they were at its last build, term
   * `t`'s at entries `#mainStart[t]` to `#mainStart[t + 1]` of `#mainIds` / `#mainPacked`, ids
   * ascending (terms from `#mainTerms` on have none there).
   */
  #mainStart = new Int32Array(1);
  #mainIds = new Int32Array(0);
  #mainPacked = new Int32Array(0);
  #mainTerms = 0;
  #mainPostings = 0;
  /** The delta segment: postings `[id, packed, …]` of the documents added since, up to `#deltaEnd`, by term id. */
  #delta = new Map<number, number[]>();
  #deltaEnd = 0;
  #deltaPostings = 0;
  /** What queries read, by term id, valid while {@link PostingView.version} is the index's. */
  #views = new Map<number, PostingView>();
  /** Reused by {@link score}: the ids the last query matched. */
  readonly #matchedIds: number[] = [];
  #accumulator = new Float64Array(0);
  #stamp = new Uint32Array(0);
  #query = 0;
  /** Bumped by every add and remove: posting views of an older version are stale. */
  #version = 0;

  constructor(fieldWeights: readonly number[]) {
    this.#weights = [...fieldWeights];
    this.#fields = fieldWeights.length;
    this.#lengthSums = fieldWeights.map(() => 0);
    this.#bits = Math.min(8, Math.floor(PACKED_BITS / Math.max(1, this.#fields)));
    if (this.#bits < 2) throw new Error(`Bm25Index: at most ${PACKED_BITS / 2} fields`);
    this.#maxFrequency = (1 << this.#bits) - 1;
  }

  /** Documents in the index. */
  get size(): number {
    return this.#size;
  }

  /** Frequency of field `f` in a packed integer. */
  #frequency(packed: number, f: number): number {
    return (packed >>> (f * this.#bits)) & this.#maxFrequency;
  }

  /** The id of a new term. */
  #newTerm(term: string): number {
    const t = this.#terms.length;
    this.#terms.push(term);
    this.#termIds.set(term, t);
    if (t >= this.#df.length) {
      this.#df = grown(this.#df, t + 1);
      this.#mark = grown(this.#mark, t + 1);
      this.#slot = grown(this.#slot, t + 1);
    }
    return t;
  }

  /**
   * Adds document `id` with one token list per field. Ids are small non-negative integers, each
   * greater than the ids before it (a removed document's id is never reused).
   */
  add(id: number, fields: readonly (readonly string[])[]): void {
    if (!Number.isInteger(id) || id < this.#end) {
      throw new Error(`Bm25Index: document id ${id} is invalid or was used before (ids must increase)`);
    }
    const fieldCount = this.#fields;
    const bits = this.#bits;
    const max = this.#maxFrequency;
    if (id >= this.#alive.length) {
      this.#alive = grown(this.#alive, id + 1);
      this.#forwardStart = grown(this.#forwardStart, id + 1);
      this.#forwardEnd = grown(this.#forwardEnd, id + 1);
    }
    if ((id + 1) * fieldCount > this.#lengths.length)
      this.#lengths = grown(this.#lengths, (id + 1) * fieldCount);
    const termIds = this.#termIds;
    const stamp = id + 1;
    const first = this.#forwardUsed;
    let used = first;
    for (let f = 0; f < fieldCount; f++) {
      const tokens = fields[f] ?? [];
      this.#lengths[id * fieldCount + f] = tokens.length;
      this.#lengthSums[f]! += tokens.length;
      if (used + tokens.length > this.#forwardTerms.length) {
        this.#forwardTerms = grown(this.#forwardTerms, used + tokens.length);
        this.#forwardPacked = grown(this.#forwardPacked, used + tokens.length);
      }
      const forwardTerms = this.#forwardTerms;
      const forwardPacked = this.#forwardPacked;
      const shift = f * bits;
      const one = 1 << shift;
      for (let i = 0; i < tokens.length; i++) {
        const token = tokens[i]!;
        const t = termIds.get(token) ?? this.#newTerm(token);
        let at: number;
        if (this.#mark[t] !== stamp) {
          this.#mark[t] = stamp;
          this.#slot[t] = used;
          this.#df[t]!++;
          forwardTerms[used] = t;
          forwardPacked[used] = 0;
          at = used++;
        } else {
          at = this.#slot[t]!;
        }
        const packed = forwardPacked[at]!;
        if (((packed >>> shift) & max) < max) forwardPacked[at] = packed + one;
      }
    }
    this.#forwardUsed = used;
    this.#forwardStart[id] = first;
    this.#forwardEnd[id] = used;
    this.#livePostings += used - first;
    this.#unsealedPostings += used - first;
    this.#alive[id] = 1;
    this.#end = id + 1;
    this.#size++;
    this.#version++;
  }

  /** Removes document `id` (no-op when absent); its terms are read from the forward index. */
  remove(id: number): void {
    if (this.#alive[id] !== 1) return;
    for (let f = 0; f < this.#fields; f++) {
      this.#lengthSums[f]! -= this.#lengths[id * this.#fields + f]!;
      this.#lengths[id * this.#fields + f] = 0;
    }
    this.#alive[id] = 0;
    this.#size--;
    this.#version++;
    const start = this.#forwardStart[id]!;
    const end = this.#forwardEnd[id]!;
    for (let p = start; p < end; p++) this.#df[this.#forwardTerms[p]!]!--;
    this.#livePostings -= end - start;
    this.#deadPostings += end - start;
    if (id >= this.#deltaEnd) this.#unsealedPostings -= end - start;
    if (
      this.#deadPostings >
      Math.max(DEFAULT_BM25_DELTA_MIN_POSTINGS, this.#livePostings * DEFAULT_BM25_DEAD_SHARE)
    ) {
      this.#rebuild(true);
    }
  }

  /**
   * Makes the documents added so far part of the postings: appended to the delta segment, or,
   * when that would hold more than {@link DEFAULT_BM25_DELTA_SHARE} of the main segment's postings
   * (a catalog build, a large batch), by a rebuild of all postings. Queries call it when needed;
   * calling it at the end of a batch of adds keeps that cost out of the next query.
   */
  seal(): void {
    if (this.#deltaEnd === this.#end) return;
    const pending = this.#deltaPostings + this.#unsealedPostings;
    if (pending > Math.max(DEFAULT_BM25_DELTA_MIN_POSTINGS, this.#mainPostings * DEFAULT_BM25_DELTA_SHARE)) {
      this.#rebuild(false);
      return;
    }
    const delta = this.#delta;
    for (let id = this.#deltaEnd; id < this.#end; id++) {
      if (this.#alive[id] !== 1) continue;
      for (let p = this.#forwardStart[id]!; p < this.#forwardEnd[id]!; p++) {
        const t = this.#forwardTerms[p]!;
        let list = delta.get(t);
        if (list === undefined) delta.set(t, (list = []));
        list.push(id, this.#forwardPacked[p]!);
      }
    }
    this.#deltaPostings += this.#unsealedPostings;
    this.#unsealedPostings = 0;
    this.#deltaEnd = this.#end;
  }

  /**
   * Builds the main segment from the forward index: removed documents' entries dropped first
   * (and, when `renumber` and many terms are no document's any more, those terms forgotten),
   * then two passes: offsets from the document frequencies, and one fill in document order.
   */
  #rebuild(renumber: boolean): void {
    const end = this.#end;
    const alive = this.#alive;
    if (this.#deadPostings > 0) {
      const size = Math.max(64, this.#livePostings + (this.#livePostings >> 3));
      const terms = new Int32Array(size);
      const packed = new Int32Array(size);
      let used = 0;
      for (let id = 0; id < end; id++) {
        const start = this.#forwardStart[id]!;
        const stop = this.#forwardEnd[id]!;
        this.#forwardStart[id] = used;
        if (alive[id] === 1) {
          terms.set(this.#forwardTerms.subarray(start, stop), used);
          packed.set(this.#forwardPacked.subarray(start, stop), used);
          used += stop - start;
        }
        this.#forwardEnd[id] = used;
      }
      this.#forwardTerms = terms;
      this.#forwardPacked = packed;
      this.#forwardUsed = used;
      this.#deadPostings = 0;
    }
    if (renumber) this.#renumberTerms();
    const termCount = this.#terms.length;
    const df = this.#df;
    const start = new Int32Array(termCount + 1);
    for (let t = 0; t < termCount; t++) start[t + 1] = start[t]! + df[t]!;
    const total = start[termCount]!;
    const ids = new Int32Array(total);
    const packed = new Int32Array(total);
    const cursor = start.slice(0, termCount);
    const forwardTerms = this.#forwardTerms;
    const forwardPacked = this.#forwardPacked;
    for (let id = 0; id < end; id++) {
      if (alive[id] !== 1) continue;
      const stop = this.#forwardEnd[id]!;
      for (let p = this.#forwardStart[id]!; p < stop; p++) {
        const at = cursor[forwardTerms[p]!]!++;
        ids[at] = id;
        packed[at] = forwardPacked[p]!;
      }
    }
    this.#mainStart = start;
    this.#mainIds = ids;
    this.#mainPacked = packed;
    this.#mainTerms = termCount;
    this.#mainPostings = total;
    this.#delta.clear();
    this.#deltaEnd = end;
    this.#deltaPostings = 0;
    this.#unsealedPostings = 0;
    this.#views.clear();
  }

  /** Forgets the terms no live document holds, when they are {@link DEFAULT_BM25_DEAD_SHARE} of the rest. */
  #renumberTerms(): void {
    const termCount = this.#terms.length;
    const df = this.#df;
    let dead = 0;
    for (let t = 0; t < termCount; t++) if (df[t] === 0) dead++;
    if (dead <= Math.max(DEFAULT_BM25_DELTA_MIN_POSTINGS, (termCount - dead) * DEFAULT_BM25_DEAD_SHARE))
      return;
    const remap = new Int32Array(termCount);
    const terms: string[] = [];
    const termIds = new Map<string, number>();
    const kept = new Int32Array(termCount - dead);
    for (let t = 0; t < termCount; t++) {
      if (df[t] === 0) continue;
      remap[t] = terms.length;
      kept[terms.length] = df[t]!;
      termIds.set(this.#terms[t]!, terms.length);
      terms.push(this.#terms[t]!);
    }
    const forwardTerms = this.#forwardTerms;
    for (let p = 0; p < this.#forwardUsed; p++) forwardTerms[p] = remap[forwardTerms[p]!]!;
    this.#terms = terms;
    this.#termIds = termIds;
    this.#df = kept;
    this.#mark = new Int32Array(kept.length);
    this.#slot = new Int32Array(kept.length);
    this.#rerankSlot = new Int32Array(0);
  }

  /** True when document `id` matched the last {@link score} call. */
  matched(id: number): boolean {
    return this.#stamp[id] === this.#query;
  }

  /** Documents containing `term`. */
  documentFrequency(term: string): number {
    const t = this.#termIds.get(term);
    return t === undefined ? 0 : this.#df[t]!;
  }

  /** The fields (indexes) of document `id` that contain `term`. */
  fieldsContaining(id: number, term: string): number[] {
    const t = this.#termIds.get(term);
    const out: number[] = [];
    if (t === undefined || this.#alive[id] !== 1) return out;
    for (let p = this.#forwardStart[id]!; p < this.#forwardEnd[id]!; p++) {
      if (this.#forwardTerms[p] !== t) continue;
      const packed = this.#forwardPacked[p]!;
      for (let f = 0; f < this.#fields; f++) if (this.#frequency(packed, f) > 0) out.push(f);
    }
    return out;
  }

  /**
   * The terms' ids as {@link fieldMasks} reads them, looked up once per query (-1 for a term the
   * index never had); valid until the next add or remove.
   */
  lookup(terms: readonly string[]): readonly number[] {
    return terms.map((term) => this.#termIds.get(term) ?? -1);
  }

  /**
   * Sets `masks[j]` to the fields of document `id` that contain the `j`th looked-up term, as a
   * bit mask (bit `f` for field `f`; 0 when none), in one pass over the document's forward index.
   */
  fieldMasks(id: number, looked: readonly number[], masks: number[]): void {
    masks.length = looked.length;
    masks.fill(0);
    if (this.#alive[id] !== 1) return;
    const bits = this.#bits;
    const max = this.#maxFrequency;
    const stop = this.#forwardEnd[id]!;
    for (let p = this.#forwardStart[id]!; p < stop; p++) {
      const j = looked.indexOf(this.#forwardTerms[p]!);
      if (j < 0) continue;
      let packed = this.#forwardPacked[p]!;
      let mask = 0;
      for (let f = 0; packed !== 0; f++, packed >>>= bits) if ((packed & max) !== 0) mask |= 1 << f;
      masks[j] = mask;
    }
  }

  /**
   * BM25F scores of every document matching at least one of `terms` (repeats count once). The
   * returned arrays are reused by the next call: read them before scoring again.
   */
  score(terms: readonly string[], options: Bm25ScoreOptions): Bm25Scores {
    const n = this.#size;
    const capacity = this.#end;
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
    const { k1, b } = options;
    // Rare terms first. A common term (in more than `commonShare` of the documents, so its idf
    // is small) only adds to documents a rarer term already matched, unless it is all there is:
    // a document matching nothing but common words cannot rank among rarer matches, and the
    // long postings of words like "get" or "data" are what make a query slow.
    const dfs = this.#df;
    const postings: number[] = [];
    for (const term of terms) {
      const posting = this.#termIds.get(term);
      if (posting !== undefined && dfs[posting]! > 0 && !postings.includes(posting)) postings.push(posting);
    }
    if (postings.length > 1) postings.sort((x, y) => dfs[x]! - dfs[y]!);
    const commonAbove = Math.max(
      n * (options.commonShare ?? DEFAULT_COMMON_TERM_SHARE),
      DEFAULT_COMMON_TERM_MIN_DOCS,
    );
    for (const posting of postings) {
      const df = dfs[posting]!;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      const view = this.#view(posting, b);
      const viewIds = view.ids;
      const tfs = view.tf;
      const entries = viewIds.length;
      if (df > commonAbove && ids.length > 0) {
        if (ids.length * Math.log2(entries) < entries) {
          for (const id of ids) {
            const at = searchIds(viewIds, id);
            if (at >= 0) {
              const tf = tfs[at]!;
              scores[id]! += (idf * tf) / (k1 + tf);
            }
          }
        } else {
          for (let i = 0; i < entries; i++) {
            const id = viewIds[i]!;
            if (stamp[id] === query) {
              const tf = tfs[i]!;
              scores[id]! += (idf * tf) / (k1 + tf);
            }
          }
        }
        continue;
      }
      for (let i = 0; i < entries; i++) {
        const id = viewIds[i]!;
        const tf = tfs[i]!;
        const value = (idf * tf) / (k1 + tf);
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

  /**
   * The posting of term `t` as queries read it (live ids and pseudo-frequencies), rebuilt when the
   * index changed since it was built or `b` differs; one pass over the posting's main and delta
   * parts, the cost of scoring it once.
   */
  #view(t: number, b: number): PostingView {
    const cached = this.#views.get(t);
    if (cached !== undefined && cached.version === this.#version && cached.b === b) return cached;
    this.seal();
    const n = this.#size;
    const fields = this.#fields;
    const weights = this.#weights;
    const lengths = this.#lengths;
    const alive = this.#alive;
    const bits = this.#bits;
    const max = this.#maxFrequency;
    // Per field: the two parts of the length normalisation, 1 - b + b·len/avg.
    const base = 1 - b;
    const slope = this.#lengthSums.map((sum) => b / Math.max(sum / n, 1e-9));
    const live = this.#df[t]!;
    const ids = new Int32Array(live);
    const tfs = new Float64Array(live);
    let at = 0;
    const take = (id: number, packed: number): void => {
      let tf = 0;
      const lengthOffset = id * fields;
      for (let f = 0; packed !== 0; f++, packed >>>= bits) {
        const raw = packed & max;
        if (raw !== 0) tf += (weights[f]! * raw) / (base + slope[f]! * lengths[lengthOffset + f]!);
      }
      // Found only in fields weighted 0: the term does not count for this document (it is no match).
      if (tf === 0) return;
      ids[at] = id;
      tfs[at++] = tf;
    };
    if (t < this.#mainTerms) {
      const mainIds = this.#mainIds;
      const mainPacked = this.#mainPacked;
      const stop = this.#mainStart[t + 1]!;
      for (let i = this.#mainStart[t]!; i < stop && at < live; i++) {
        const id = mainIds[i]!;
        if (alive[id] === 1) take(id, mainPacked[i]!);
      }
    }
    const delta = this.#delta.get(t);
    if (delta !== undefined) {
      for (let i = 0; i < delta.length && at < live; i += 2) {
        const id = delta[i]!;
        if (alive[id] === 1) take(id, delta[i + 1]!);
      }
    }
    const view: PostingView =
      at === live
        ? { version: this.#version, b, ids, tf: tfs }
        : { version: this.#version, b, ids: ids.subarray(0, at), tf: tfs.subarray(0, at) };
    this.#views.set(t, view);
    return view;
  }

  /**
   * Adds the weighted BM25F contributions of `terms` to the scores of `candidates` only, in the
   * arrays the last {@link score} call returned (a rerank: each candidate's forward index is read
   * once, so long postings cost nothing). Candidates must be documents that call matched. Each
   * candidate's contributions are added in the order of `terms`.
   */
  addToCandidates(
    candidates: readonly number[],
    terms: ReadonlyMap<string, number>,
    options: Bm25ScoreOptions,
  ): void {
    const n = this.#size;
    if (n === 0 || candidates.length === 0) return;
    const scores = this.#accumulator;
    const { k1, b } = options;
    // The terms carry their (1-based) slot while this runs; 0 is "not a query term".
    if (this.#rerankSlot.length < this.#terms.length) this.#rerankSlot = new Int32Array(this.#terms.length);
    const slots = this.#rerankSlot;
    const postings: number[] = [];
    const idfs: number[] = [];
    for (const [term, weight] of terms) {
      const posting = this.#termIds.get(term);
      if (posting === undefined || this.#df[posting] === 0 || weight === 0) continue;
      const df = this.#df[posting]!;
      idfs.push(weight * Math.log(1 + (n - df + 0.5) / (df + 0.5)));
      postings.push(posting);
      slots[posting] = postings.length;
    }
    if (postings.length === 0) return;
    const fields = this.#fields;
    const weights = this.#weights;
    const lengths = this.#lengths;
    const bits = this.#bits;
    const max = this.#maxFrequency;
    const base = 1 - b;
    const slope = this.#lengthSums.map((sum) => b / Math.max(sum / n, 1e-9));
    const tfs = new Float64Array(postings.length);
    const found = new Uint8Array(postings.length);
    const forwardTerms = this.#forwardTerms;
    const forwardPacked = this.#forwardPacked;
    for (const id of candidates) {
      if (this.#alive[id] !== 1) continue;
      found.fill(0);
      const lengthOffset = id * fields;
      const stop = this.#forwardEnd[id]!;
      for (let i = this.#forwardStart[id]!; i < stop; i++) {
        const slot = slots[forwardTerms[i]!]!;
        if (slot === 0) continue;
        // The same pseudo-frequency a posting view holds (same operations, same order).
        let packed = forwardPacked[i]!;
        let tf = 0;
        for (let f = 0; packed !== 0; f++, packed >>>= bits) {
          const raw = packed & max;
          if (raw !== 0) tf += (weights[f]! * raw) / (base + slope[f]! * lengths[lengthOffset + f]!);
        }
        tfs[slot - 1] = tf;
        found[slot - 1] = 1;
      }
      for (let j = 0; j < postings.length; j++) {
        if (found[j] === 0) continue;
        const tf = tfs[j]!;
        scores[id]! += (idfs[j]! * tf) / (k1 + tf);
      }
    }
    for (const posting of postings) slots[posting] = 0;
  }

  /** The field-weighted length `Σ_f w_f · len_f` of document `id` (0 when removed: its lengths are). */
  weightedLength(id: number, fieldWeights: readonly number[]): number {
    const fields = this.#fields;
    let length = 0;
    for (let f = 0; f < fields; f++) length += fieldWeights[f]! * (this.#lengths[id * fields + f] ?? 0);
    return length;
  }

  /**
   * Calls `visit(term, count)` for each distinct term of document `id`, in order of first
   * occurrence, with its field-weighted count `Σ_f w_f · tf_f` (a field's count saturates at the
   * packed maximum, 63). Read from the forward index: nothing is tokenised again.
   */
  termCounts(
    id: number,
    fieldWeights: readonly number[],
    visit: (term: string, count: number) => void,
  ): void {
    if (this.#alive[id] !== 1) return;
    const bits = this.#bits;
    const max = this.#maxFrequency;
    const stop = this.#forwardEnd[id]!;
    for (let i = this.#forwardStart[id]!; i < stop; i++) {
      let packed = this.#forwardPacked[i]!;
      let count = 0;
      for (let f = 0; packed !== 0; f++, packed >>>= bits) {
        const raw = packed & max;
        if (raw !== 0) count += fieldWeights[f]! * raw;
      }
      visit(this.#terms[this.#forwardTerms[i]!]!, count);
    }
  }
}
