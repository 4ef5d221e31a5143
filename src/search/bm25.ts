/**
 * @module
 * An incremental BM25F index: documents have several weighted fields, can be added and removed
 * one at a time, and statistics (document frequency, average field lengths) are kept as running
 * sums, so a catalog change never rebuilds the index. Postings are flat arrays of small integers
 * (document id, then its per-field frequencies packed into one integer) scored into a dense
 * accumulator; removed documents are tombstoned and compacted lazily. Pure.
 *
 * Queries read a frozen view of each posting they touch: its live ids in an `Int32Array` and each
 * one's field-weighted, length-normalised term frequency in a `Float64Array`, computed once per
 * state of the index (any add or remove changes the average field lengths, so views are rebuilt
 * lazily, posting by posting, by the next query that reads them). Scoring is then one pass of
 * `idf · tf / (k1 + tf)` over two typed arrays, as in a minimal BM25. A forward index (each
 * document's terms with their packed per-field frequencies) gives RM3 the term distribution of a
 * top hit without re-tokenising it.
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

/** Bits of the packed frequency integer, spread over the fields (small integers stay unboxed). */
const PACKED_BITS = 30;

/** Entry (pair index) of document `id` in the ascending `[id, packed, id, packed, …]` array, or -1. */
function search(data: readonly number[], id: number): number {
  let lo = 0;
  let hi = (data.length >> 1) - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const value = data[mid << 1]!;
    if (value < id) lo = mid + 1;
    else if (value > id) hi = mid - 1;
    else return mid;
  }
  return -1;
}

/**
 * One term's postings in one flat array: per document, its id then its frequency in each field,
 * packed `bits` bits a field (saturating). One array of small integers per term is what keeps the
 * index lean: no object per posting, no slot per empty field.
 */
interface Posting {
  /** The term (the forward index refers to postings, and RM3 reads their terms). */
  term: string;
  data: number[];
  /** Live documents in `data` (the rest are tombstones). */
  live: number;
  /** What queries read, valid while {@link PostingView.version} is the index's (else rebuilt). */
  view: PostingView | undefined;
  /** Scratch of {@link Bm25Index.addToCandidates}: the term's 1-based slot while it runs, else 0. */
  slot: number;
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
  readonly #postings = new Map<string, Posting>();
  /** Bits per field in a packed frequency, and the largest frequency it holds. */
  readonly #bits: number;
  readonly #maxFrequency: number;
  /** Field lengths, `fieldCount` per document id (NaN-free; 0 for removed). */
  #lengths: number[] = [];
  #alive: boolean[] = [];
  #size = 0;
  /** Reused by {@link score}: the ids the last query matched. */
  readonly #matchedIds: number[] = [];
  readonly #lengthSums: number[];
  #accumulator = new Float64Array(0);
  #stamp = new Uint32Array(0);
  #query = 0;
  /** Bumped by every add and remove: posting views of an older version are stale. */
  #version = 0;
  /**
   * Forward index: per document id, its postings and their packed frequencies, interleaved
   * (`[posting, packed, posting, packed, …]`, in order of first occurrence); undefined once removed.
   */
  #forward: Array<Array<Posting | number> | undefined> = [];

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
    const bits = this.#bits;
    const max = this.#maxFrequency;
    const touched: Posting[] = [];
    for (let f = 0; f < fieldCount; f++) {
      const tokens = fields[f] ?? [];
      this.#lengths[id * fieldCount + f] = tokens.length;
      this.#lengthSums[f]! += tokens.length;
      for (const token of tokens) {
        let posting = this.#postings.get(token);
        if (!posting) {
          posting = { term: token, data: [], live: 0, view: undefined, slot: 0 };
          this.#postings.set(token, posting);
        }
        const data = posting.data;
        // This document's entry, if any, is the last one (ids increase).
        let at = data.length - 2;
        if (at < 0 || data[at] !== id) {
          data.push(id, 0);
          posting.live++;
          touched.push(posting);
          at = data.length - 2;
        }
        const packed = data[at + 1]!;
        if (((packed >>> (f * bits)) & max) < max) data[at + 1] = packed + (1 << (f * bits));
      }
    }
    const forward: Array<Posting | number> = new Array<Posting | number>(touched.length * 2);
    for (let i = 0; i < touched.length; i++) {
      const data = touched[i]!.data;
      forward[2 * i] = touched[i]!;
      forward[2 * i + 1] = data[data.length - 1]!;
    }
    this.#forward[id] = forward;
    this.#alive[id] = true;
    this.#size++;
    this.#version++;
  }

  /**
   * Removes document `id` (no-op when absent). `fields` must be the token lists it was added
   * with: the index keeps no per-document term list (that would double its size).
   */
  remove(id: number, fields: readonly (readonly string[])[]): void {
    if (!this.#alive[id]) return;
    for (let f = 0; f < this.#fields; f++) {
      this.#lengthSums[f]! -= this.#lengths[id * this.#fields + f] ?? 0;
      this.#lengths[id * this.#fields + f] = 0;
    }
    this.#alive[id] = false;
    this.#forward[id] = undefined;
    this.#size--;
    this.#version++;
    const seen = new Set<string>();
    for (const tokens of fields) {
      for (const term of tokens) {
        if (seen.has(term)) continue;
        seen.add(term);
        const posting = this.#postings.get(term);
        if (!posting || search(posting.data, id) < 0) continue;
        posting.live--;
        if (posting.live === 0) this.#postings.delete(term);
        else if (posting.live * 4 < posting.data.length) this.#compact(posting);
      }
    }
  }

  #compact(posting: Posting): void {
    const data: number[] = [];
    for (let i = 0; i < posting.data.length; i += 2) {
      if (this.#alive[posting.data[i]!]) data.push(posting.data[i]!, posting.data[i + 1]!);
    }
    posting.data = data;
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
    const at = search(posting.data, id);
    const out: number[] = [];
    if (at >= 0) {
      const packed = posting.data[(at << 1) + 1]!;
      for (let f = 0; f < this.#fields; f++) if (this.#frequency(packed, f) > 0) out.push(f);
    }
    return out;
  }

  /**
   * The terms' postings as {@link fieldMasks} reads them, looked up once per query (undefined for
   * a term no document has).
   */
  lookup(terms: readonly string[]): ReadonlyArray<object | undefined> {
    return terms.map((term) => this.#postings.get(term));
  }

  /**
   * Sets `masks[j]` to the fields of document `id` that contain the `j`th looked-up term, as a
   * bit mask (bit `f` for field `f`; 0 when none), in one pass over the document's forward index.
   */
  fieldMasks(id: number, looked: ReadonlyArray<object | undefined>, masks: number[]): void {
    masks.length = looked.length;
    masks.fill(0);
    const forward = this.#forward[id];
    if (forward === undefined) return;
    const bits = this.#bits;
    const max = this.#maxFrequency;
    for (let i = 0; i < forward.length; i += 2) {
      const posting = forward[i];
      const j = looked.indexOf(posting as Posting);
      if (j < 0) continue;
      let packed = forward[i + 1] as number;
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
    const { k1, b } = options;
    // Rare terms first. A common term (in more than `commonShare` of the documents, so its idf
    // is small) only adds to documents a rarer term already matched, unless it is all there is:
    // a document matching nothing but common words cannot rank among rarer matches, and the
    // long postings of words like "get" or "data" are what make a query slow.
    const postings: Posting[] = [];
    for (const term of terms) {
      const posting = this.#postings.get(term);
      if (posting && !postings.includes(posting)) postings.push(posting);
    }
    if (postings.length > 1) postings.sort((x, y) => x.live - y.live);
    const commonAbove = Math.max(
      n * (options.commonShare ?? DEFAULT_COMMON_TERM_SHARE),
      DEFAULT_COMMON_TERM_MIN_DOCS,
    );
    for (const posting of postings) {
      const df = posting.live;
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
   * The posting as queries read it (live ids and pseudo-frequencies), rebuilt when the index
   * changed since it was built or `b` differs; one pass over the posting, the cost of scoring it once.
   */
  #view(posting: Posting, b: number): PostingView {
    const cached = posting.view;
    if (cached !== undefined && cached.version === this.#version && cached.b === b) return cached;
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
    const data = posting.data;
    const ids = new Int32Array(posting.live);
    const tfs = new Float64Array(posting.live);
    let at = 0;
    for (let i = 0; i < data.length && at < ids.length; i += 2) {
      const id = data[i]!;
      if (!alive[id]) continue;
      let packed = data[i + 1]!;
      let tf = 0;
      const lengthOffset = id * fields;
      for (let f = 0; packed !== 0; f++, packed >>>= bits) {
        const raw = packed & max;
        if (raw !== 0) tf += (weights[f]! * raw) / (base + slope[f]! * lengths[lengthOffset + f]!);
      }
      ids[at] = id;
      tfs[at++] = tf;
    }
    const view: PostingView = { version: this.#version, b, ids, tf: tfs };
    posting.view = view;
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
    // The terms' postings carry their (1-based) slot while this runs; 0 is "not a query term".
    const postings: Posting[] = [];
    const idfs: number[] = [];
    for (const [term, weight] of terms) {
      const posting = this.#postings.get(term);
      if (!posting || weight === 0) continue;
      const df = posting.live;
      idfs.push(weight * Math.log(1 + (n - df + 0.5) / (df + 0.5)));
      postings.push(posting);
      posting.slot = postings.length;
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
    for (const id of candidates) {
      const forward = this.#forward[id];
      if (forward === undefined) continue;
      found.fill(0);
      const lengthOffset = id * fields;
      for (let i = 0; i < forward.length; i += 2) {
        const slot = (forward[i] as Posting).slot;
        if (slot === 0) continue;
        // The same pseudo-frequency a posting view holds (same operations, same order).
        let packed = forward[i + 1] as number;
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
    for (const posting of postings) posting.slot = 0;
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
    const forward = this.#forward[id];
    if (forward === undefined) return;
    const bits = this.#bits;
    const max = this.#maxFrequency;
    for (let i = 0; i < forward.length; i += 2) {
      let packed = forward[i + 1] as number;
      let count = 0;
      for (let f = 0; packed !== 0; f++, packed >>>= bits) {
        const raw = packed & max;
        if (raw !== 0) count += fieldWeights[f]! * raw;
      }
      visit((forward[i] as Posting).term, count);
    }
  }
}
