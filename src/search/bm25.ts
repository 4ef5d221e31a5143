/**
 * @module
 * An incremental BM25F index: documents have several weighted fields, can be added and removed
 * one at a time, and statistics (document frequency, average field lengths) are kept as running
 * sums, so a catalog change never rebuilds the index. Pure.
 */

/** Term frequencies of one term in one document, one entry per field. */
type FieldFrequencies = number[];

/** Options of one {@link Bm25Index.score} call. */
export interface Bm25ScoreOptions {
  k1: number;
  b: number;
}

/**
 * BM25F over `fieldCount` fields: per field, the term frequency is length-normalised with `b`,
 * weighted, and summed before the `k1` saturation (Robertson, Zaragoza & Taylor, 2004).
 */
export class Bm25Index {
  readonly #fieldWeights: readonly number[];
  /** term → document id → frequency per field. */
  readonly #postings = new Map<string, Map<number, FieldFrequencies>>();
  /** document id → length per field. */
  readonly #lengths = new Map<number, number[]>();
  /** document id → its distinct terms (to remove it). */
  readonly #terms = new Map<number, string[]>();
  readonly #lengthSums: number[];

  constructor(fieldWeights: readonly number[]) {
    this.#fieldWeights = [...fieldWeights];
    this.#lengthSums = fieldWeights.map(() => 0);
  }

  /** Documents in the index. */
  get size(): number {
    return this.#lengths.size;
  }

  /** Adds document `id` with one token list per field (replacing it if present). */
  add(id: number, fields: readonly (readonly string[])[]): void {
    if (this.#lengths.has(id)) this.remove(id);
    const fieldCount = this.#fieldWeights.length;
    const lengths = new Array<number>(fieldCount).fill(0);
    const local = new Map<string, FieldFrequencies>();
    for (let f = 0; f < fieldCount; f++) {
      const tokens = fields[f] ?? [];
      lengths[f] = tokens.length;
      this.#lengthSums[f]! += tokens.length;
      for (const token of tokens) {
        let frequencies = local.get(token);
        if (!frequencies) {
          frequencies = new Array<number>(fieldCount).fill(0);
          local.set(token, frequencies);
        }
        frequencies[f]!++;
      }
    }
    for (const [term, frequencies] of local) {
      let posting = this.#postings.get(term);
      if (!posting) {
        posting = new Map();
        this.#postings.set(term, posting);
      }
      posting.set(id, frequencies);
    }
    this.#lengths.set(id, lengths);
    this.#terms.set(id, [...local.keys()]);
  }

  /** Removes document `id` (no-op when absent). */
  remove(id: number): void {
    const lengths = this.#lengths.get(id);
    if (!lengths) return;
    lengths.forEach((length, f) => (this.#lengthSums[f]! -= length));
    for (const term of this.#terms.get(id) ?? []) {
      const posting = this.#postings.get(term);
      posting?.delete(id);
      if (posting?.size === 0) this.#postings.delete(term);
    }
    this.#lengths.delete(id);
    this.#terms.delete(id);
  }

  /** Documents containing `term`. */
  documentFrequency(term: string): number {
    return this.#postings.get(term)?.size ?? 0;
  }

  /** The fields (indexes) of document `id` that contain `term`. */
  fieldsContaining(id: number, term: string): number[] {
    const frequencies = this.#postings.get(term)?.get(id);
    if (!frequencies) return [];
    const out: number[] = [];
    frequencies.forEach((tf, f) => {
      if (tf > 0) out.push(f);
    });
    return out;
  }

  /** BM25F score of every document matching at least one of `terms` (distinct terms). */
  score(terms: readonly string[], options: Bm25ScoreOptions): Map<number, number> {
    const scores = new Map<number, number>();
    const n = this.#lengths.size;
    if (n === 0) return scores;
    const fieldCount = this.#fieldWeights.length;
    const averages = this.#lengthSums.map((sum) => Math.max(sum / n, 1e-9));
    const { k1, b } = options;
    for (const term of new Set(terms)) {
      const posting = this.#postings.get(term);
      if (!posting) continue;
      const df = posting.size;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      for (const [id, frequencies] of posting) {
        const lengths = this.#lengths.get(id)!;
        let tf = 0;
        for (let f = 0; f < fieldCount; f++) {
          const raw = frequencies[f]!;
          if (raw === 0) continue;
          tf += (this.#fieldWeights[f]! * raw) / (1 - b + (b * lengths[f]!) / averages[f]!);
        }
        scores.set(id, (scores.get(id) ?? 0) + (idf * tf) / (k1 + tf));
      }
    }
    return scores;
  }
}
