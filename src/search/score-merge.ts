/**
 * @module
 * The merge of a query's evidence by tool id: lexical, feedback, graph and exact-name scores are
 * summed into one accumulator indexed by entry id (reused across queries, reset by a stamp), and
 * the best `k` are chosen by a bounded selection in the ranking's order: the higher score first,
 * ties by tool name.
 */

/** Scores of the tools one query touched, by entry id. */
export class ScoreMerge {
  #values = new Float64Array(0);
  #stamp = new Uint32Array(0);
  #round = 0;
  /** Ids touched since {@link begin}, in the order they were first set. */
  readonly ids: number[] = [];

  /** Starts a new merge over ids below `capacity` (nothing is touched). */
  begin(capacity: number): void {
    if (this.#values.length < capacity) {
      const size = Math.max(64, capacity * 2);
      this.#values = new Float64Array(size);
      this.#stamp = new Uint32Array(size);
      this.#round = 0;
    }
    this.#round = (this.#round + 1) >>> 0;
    if (this.#round === 0) {
      this.#stamp.fill(0);
      this.#round = 1;
    }
    this.ids.length = 0;
  }

  /** Whether `id` was touched in this merge. */
  has(id: number): boolean {
    return this.#stamp[id] === this.#round;
  }

  /** The score of a touched id. */
  get(id: number): number {
    return this.#values[id]!;
  }

  /** Sets the score of `id`, touching it. */
  set(id: number, value: number): void {
    if (this.#stamp[id] !== this.#round) {
      this.#stamp[id] = this.#round;
      this.ids.push(id);
    }
    this.#values[id] = value;
  }

  /**
   * The touched ids with the `k` highest scores, best first, ties by `nameOf` ascending (the
   * order a full sort by score, then name, gives).
   */
  top(k: number, nameOf: (id: number) => string): number[] {
    const values = this.#values;
    const before = (a: number, b: number): boolean =>
      values[a]! > values[b]! || (values[a] === values[b] && nameOf(a) < nameOf(b));
    const top: number[] = [];
    if (k < 1) return top;
    for (const id of this.ids) {
      if (top.length === k && !before(id, top[k - 1]!)) continue;
      let lo = 0;
      let hi = top.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (before(top[mid]!, id)) lo = mid + 1;
        else hi = mid;
      }
      top.splice(lo, 0, id);
      if (top.length > k) top.pop();
    }
    return top;
  }
}
