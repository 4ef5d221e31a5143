/**
 * @module
 * The lexical hits of one query in rank order (the higher score first, ties by the lower id), taken
 * as far as they are asked for. A request for the best `k` keeps a bounded sorted buffer of the
 * ids not yet taken (one pass over the matches, most rejected by one comparison with the buffer's
 * last), and a longer request continues from where the longest earlier one stopped: a hybrid query
 * asks twice (the walk's seeds, then the merge's candidates), and the second pass keeps only the
 * ids past the first one's end instead of selecting every one of them again.
 *
 * A merge that adds other evidence (feedback, graph credits, exact names: never negative) to some
 * ids reads only as much of the order as its top can depend on ({@link RankedIds.covering}): past
 * the `k`th lexical hit and the hits tied with it, none can enter the merge's top `k`.
 */

/** The best-first order of the ids of one scored query, extended as requests grow. */
export class RankedIds {
  #ids: readonly number[] = [];
  #scores: Float64Array = new Float64Array(0);
  /** The ids taken so far, best first: every request is a prefix of it. */
  readonly #taken: number[] = [];
  /** Scratch of one extension: ids and their scores, best first. */
  #buffer = new Int32Array(0);
  #bufferScores = new Float64Array(0);
  /** Ids the first extension takes at least (see {@link reset}). */
  #depth = 0;

  /**
   * Starts over `ids` (distinct), ranked by `scores`. Both are read by later requests, never
   * written: neither may change until the next reset. The first request takes at least `depth`
   * ids in its one pass over the matches, so later requests up to that depth (a merge's
   * {@link coveringDepth}) need no pass of their own.
   */
  reset(ids: readonly number[], scores: Float64Array, depth = 0): void {
    this.#ids = ids;
    this.#scores = scores;
    this.#taken.length = 0;
    this.#depth = depth;
  }

  /** The best id (the highest score, ties by the lower id), or −1 when there is none. */
  first(): number {
    if (this.#taken.length === 0 && this.#ids.length > 0) this.#extend(1);
    return this.#taken.length > 0 ? this.#taken[0]! : -1;
  }

  /**
   * The best `k` ids (all of them when fewer), best first: the higher score, ties by the lower id,
   * the order `selectTop` gives. A fresh array.
   */
  top(k: number): number[] {
    const taken = this.#taken;
    if (k > taken.length && taken.length < this.#ids.length) this.#extend(k - taken.length);
    return taken.slice(0, k);
  }

  /**
   * The prefix of the best `bound` ids that a merge's top `k` can depend on, when the merge scores
   * every id by `scores[id] / scale` plus other evidence that is never negative (and adds ids of
   * its own): the best `k` and the ids after them whose scaled score equals the `k`th one's, at
   * most `bound`. Any id further down scores strictly less than each of the first `k`, whatever
   * they gain, so none can enter a top `k`. A fresh array.
   */
  covering(k: number, bound: number, scale: number): number[] {
    const limit = Math.min(bound, this.#ids.length);
    if (k <= 0 || k >= limit) return this.top(bound);
    const scores = this.#scores;
    const taken = this.#taken;
    let want = Math.min(limit, coveringDepth(k));
    for (;;) {
      if (want > taken.length) this.#extend(want - taken.length);
      const cut = scores[taken[k - 1]!]! / scale;
      for (let i = k; i < want; i++) if (scores[taken[i]!]! / scale < cut) return taken.slice(0, i);
      if (want >= limit) return taken.slice(0, limit);
      want = Math.min(limit, want * 2);
    }
  }

  /** Takes the next `wanted` ids in rank order: the best of those ranked after the last taken. */
  #extend(wanted: number): void {
    const ids = this.#ids;
    const scores = this.#scores;
    const taken = this.#taken;
    if (taken.length === 0) wanted = Math.min(ids.length, Math.max(wanted, this.#depth));
    if (this.#buffer.length < wanted) {
      this.#buffer = new Int32Array(Math.max(64, wanted * 2));
      this.#bufferScores = new Float64Array(this.#buffer.length);
    }
    const buffer = this.#buffer;
    const bufferScores = this.#bufferScores;
    // Ids ranked at or before the last taken one are taken already.
    const after = taken.length > 0;
    const lastId = after ? taken[taken.length - 1]! : -1;
    const lastScore = after ? scores[lastId]! : 0;
    let size = 0;
    let worstId = -1;
    let worstScore = 0;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      const score = scores[id]!;
      if (after && (score > lastScore || (score === lastScore && id <= lastId))) continue;
      if (size === wanted && (score < worstScore || (score === worstScore && id > worstId))) continue;
      let lo = 0;
      let hi = size;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        const other = bufferScores[mid]!;
        if (other > score || (other === score && buffer[mid]! < id)) lo = mid + 1;
        else hi = mid;
      }
      // Shift the worse ones down by one (the last falls off a full buffer).
      for (let j = size < wanted ? size : wanted - 1; j > lo; j--) {
        buffer[j] = buffer[j - 1]!;
        bufferScores[j] = bufferScores[j - 1]!;
      }
      buffer[lo] = id;
      bufferScores[lo] = score;
      if (size < wanted) size++;
      if (size === wanted) {
        worstId = buffer[wanted - 1]!;
        worstScore = bufferScores[wanted - 1]!;
      }
    }
    for (let j = 0; j < size; j++) taken.push(buffer[j]!);
  }
}

/**
 * How far {@link RankedIds.covering} reads first for a top `k`: `k` and a margin for the ties at
 * the `k`th (read further, doubling, only when they reach it).
 */
export function coveringDepth(k: number): number {
  return k + Math.max(8, k >> 1);
}
