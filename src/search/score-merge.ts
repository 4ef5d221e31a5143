/**
 * @module
 * The merge of a query's evidence by tool id: lexical, feedback, graph and exact-name scores are
 * summed into one accumulator indexed by entry id (reused across queries, reset by a stamp), and
 * the best `k` are chosen by a bounded selection in the ranking's order: the higher score first,
 * ties by tool name.
 */

/** Scores of the tools one query touched, by entry id. */
export class ScoreMerge {
  /** Per id, its stamp then its score, side by side (one cache miss per id instead of two). */
  #slots = new Float64Array(0);
  #round = 0;
  /** Ids touched since {@link begin}, in the order they were first set. */
  readonly ids: number[] = [];

  /** Starts a new merge over ids below `capacity` (nothing is touched). */
  begin(capacity: number): void {
    if (this.#slots.length < 2 * capacity) {
      this.#slots = new Float64Array(2 * Math.max(64, capacity * 2));
      this.#round = 0;
    }
    this.#round = (this.#round + 1) >>> 0;
    if (this.#round === 0) {
      this.#slots.fill(0);
      this.#round = 1;
    }
    this.ids.length = 0;
  }

  /** Whether `id` was touched in this merge. */
  has(id: number): boolean {
    return this.#slots[id << 1] === this.#round;
  }

  /** The score of a touched id. */
  get(id: number): number {
    return this.#slots[(id << 1) + 1]!;
  }

  /** Sets the score of `id`, touching it. */
  set(id: number, value: number): void {
    const at = id << 1;
    if (this.#slots[at] !== this.#round) {
      this.#slots[at] = this.#round;
      this.ids.push(id);
    }
    this.#slots[at + 1] = value;
  }

  /**
   * The touched ids with the `k` highest scores, best first, ties by `nameOf` ascending (the
   * order a full sort by score, then name, gives).
   */
  top(k: number, nameOf: (id: number) => string): number[] {
    const slots = this.#slots;
    const top: number[] = [];
    if (k < 1) return top;
    for (const id of this.ids) {
      const score = slots[(id << 1) + 1]!;
      if (top.length === k) {
        const last = top[k - 1]!;
        const other = slots[(last << 1) + 1]!;
        if (!(score > other || (score === other && nameOf(id) < nameOf(last)))) continue;
      }
      let lo = 0;
      let hi = top.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        const at = top[mid]!;
        const other = slots[(at << 1) + 1]!;
        if (other > score || (other === score && nameOf(at) < nameOf(id))) lo = mid + 1;
        else hi = mid;
      }
      // Shift the worse ones down by one, in place (the last falls off a full top).
      let j = top.length;
      if (j < k) top.push(id);
      else j = k - 1;
      for (; j > lo; j--) top[j] = top[j - 1]!;
      top[lo] = id;
    }
    return top;
  }
}
