/**
 * @module
 * The floor of ranked retrieval that the search bench holds codecall to: a minimal BM25 over
 * typed arrays. Each term's postings are an `Int32Array` of document ids and a `Float32Array` of
 * precomputed impacts (idf · saturated, length-normalised term frequency), so a query is one pass
 * of score accumulation into a dense `Float32Array` and a bounded top-k min-heap. One field, no
 * removal, no reasons, no expansion: what any BM25 ranker must at least do. Bench code, not product.
 */

/** A frozen BM25 index: postings per term, scored by {@link FloorBm25.search}. */
export class FloorBm25 {
  readonly #terms = new Map<string, number>();
  readonly #ids: Int32Array[] = [];
  readonly #impacts: Float32Array[] = [];
  readonly #scores: Float32Array;
  readonly #touched: Int32Array;
  readonly #heapIds: Int32Array;
  readonly #heapScores: Float32Array;

  /** Indexes `documents` (one token list each; ids are their positions) with BM25's `k1` and `b`. */
  constructor(documents: readonly (readonly string[])[], k1 = 1.2, b = 0.75, maxK = 100) {
    const n = documents.length;
    let total = 0;
    for (const doc of documents) total += doc.length;
    const average = Math.max(total / Math.max(n, 1), 1e-9);
    // Two passes: count each term's documents, then fill preallocated typed arrays.
    const frequencies: Array<Map<number, number>> = [];
    documents.forEach((doc, id) => {
      const counts = new Map<number, number>();
      for (const token of doc) {
        let term = this.#terms.get(token);
        if (term === undefined) {
          term = this.#terms.size;
          this.#terms.set(token, term);
          frequencies.push(new Map());
        }
        counts.set(term, (counts.get(term) ?? 0) + 1);
      }
      for (const [term, tf] of counts) frequencies[term]!.set(id, tf);
    });
    for (const postings of frequencies) {
      const df = postings.size;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      const ids = new Int32Array(df);
      const impacts = new Float32Array(df);
      let i = 0;
      for (const [id, tf] of postings) {
        const norm = k1 * (1 - b + (b * documents[id]!.length) / average);
        ids[i] = id;
        impacts[i++] = (idf * tf * (k1 + 1)) / (tf + norm);
      }
      this.#ids.push(ids);
      this.#impacts.push(impacts);
    }
    this.#scores = new Float32Array(n);
    this.#touched = new Int32Array(n);
    this.#heapIds = new Int32Array(maxK);
    this.#heapScores = new Float32Array(maxK);
  }

  /** Ids of the `k` best documents for the query `terms`, best first. */
  search(terms: readonly string[], k: number): number[] {
    const scores = this.#scores;
    const touched = this.#touched;
    let count = 0;
    for (const token of new Set(terms)) {
      const term = this.#terms.get(token);
      if (term === undefined) continue;
      const ids = this.#ids[term]!;
      const impacts = this.#impacts[term]!;
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i]!;
        if (scores[id] === 0) touched[count++] = id;
        scores[id]! += impacts[i]!;
      }
    }
    // Bounded min-heap of the best k (the root is the weakest kept).
    const heapIds = this.#heapIds;
    const heapScores = this.#heapScores;
    const limit = Math.min(k, heapIds.length);
    let size = 0;
    for (let t = 0; t < count; t++) {
      const id = touched[t]!;
      const score = scores[id]!;
      scores[id] = 0;
      if (size < limit) {
        let at = size++;
        while (at > 0) {
          const parent = (at - 1) >> 1;
          if (heapScores[parent]! <= score) break;
          heapIds[at] = heapIds[parent]!;
          heapScores[at] = heapScores[parent]!;
          at = parent;
        }
        heapIds[at] = id;
        heapScores[at] = score;
      } else if (score > heapScores[0]!) {
        let at = 0;
        for (;;) {
          const left = 2 * at + 1;
          if (left >= size) break;
          const right = left + 1;
          const child = right < size && heapScores[right]! < heapScores[left]! ? right : left;
          if (heapScores[child]! >= score) break;
          heapIds[at] = heapIds[child]!;
          heapScores[at] = heapScores[child]!;
          at = child;
        }
        heapIds[at] = id;
        heapScores[at] = score;
      }
    }
    const out = Array.from(heapIds.subarray(0, size)).map((id, i) => [id, heapScores[i]!] as const);
    return out.sort((x, y) => y[1] - x[1]).map(([id]) => id);
  }
}
