/**
 * @module
 * Edit distance and "did you mean" suggestions, shared by configuration errors, CLI usage
 * errors, input validation and the sandbox's unknown-tool messages.
 */

/** Longest string compared character by character; longer ones count as entirely different. */
export const MAX_EDIT_DISTANCE_CHARS = 200;

/** Options of {@link editDistance}. */
export interface EditDistanceOptions {
  /** Compare case-insensitively. @defaultValue false */
  ignoreCase?: boolean;
}

/**
 * Levenshtein distance between `a` and `b` (bounded: strings over
 * {@link MAX_EDIT_DISTANCE_CHARS} characters return the longer length).
 */
export function editDistance(a: string, b: string, options: EditDistanceOptions = {}): number {
  if (a.length > MAX_EDIT_DISTANCE_CHARS || b.length > MAX_EDIT_DISTANCE_CHARS) {
    return Math.max(a.length, b.length);
  }
  if (options.ignoreCase) {
    a = a.toLowerCase();
    b = b.toLowerCase();
  }
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length]!;
}

/**
 * The candidate closest to `name` (case-insensitive edit distance at most a third of its
 * length, and at least 2), if any.
 *
 * @example
 * ```ts
 * closestName('tols', ['tools', 'args']); // 'tools'
 * ```
 */
export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const d = editDistance(name, candidate, { ignoreCase: true });
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}

/** Options of {@link NameIndex.closest}. */
export interface ClosestNamesOptions {
  /** Names returned at most. @defaultValue 3 */
  limit?: number;
  /** Largest edit distance accepted. @defaultValue a quarter of the name's length, at least 2 */
  maxDistance?: number;
}

/**
 * Names whose "did you mean" is looked up often against a large, fixed list (a catalog of
 * thousands of tools), cheaply and within bounds: candidates come from a trigram index (rarest
 * trigrams first, at most `maxPostings` postings read), and only the best `maxCandidates` of
 * them are compared by edit distance. Names over `maxNameChars` get no suggestion.
 *
 * @example
 * ```ts
 * new NameIndex(['expenses.get_expenses', 'expenses.get_budget']).closest('expenses.get_expense'); // ['expenses.get_expenses']
 * ```
 */
export class NameIndex {
  readonly #names: string[];
  readonly #lower: string[];
  readonly #postings = new Map<string, number[]>();
  readonly #maxNameChars: number;
  readonly #maxCandidates: number;
  readonly #maxPostings: number;

  constructor(
    names: Iterable<string>,
    options: { maxNameChars?: number; maxCandidates?: number; maxPostings?: number } = {},
  ) {
    this.#maxNameChars = options.maxNameChars ?? MAX_SUGGESTION_NAME_CHARS;
    this.#maxCandidates = options.maxCandidates ?? MAX_SUGGESTION_CANDIDATES;
    this.#maxPostings = options.maxPostings ?? MAX_SUGGESTION_POSTINGS;
    this.#names = [...new Set(names)];
    this.#lower = this.#names.map((name) => name.toLowerCase());
    this.#lower.forEach((name, id) => {
      if (name.length > this.#maxNameChars) return;
      for (const gram of new Set(trigrams(name))) {
        let list = this.#postings.get(gram);
        if (!list) this.#postings.set(gram, (list = []));
        list.push(id);
      }
    });
  }

  /** Up to `limit` names closest to `name` (exact or containing matches first), best first. */
  closest(name: string, options: ClosestNamesOptions = {}): string[] {
    const limit = options.limit ?? 3;
    const wanted = name.toLowerCase();
    if (wanted.length === 0 || wanted.length > this.#maxNameChars) return [];
    const maxDistance = options.maxDistance ?? Math.max(2, Math.floor(wanted.length / 4));
    const grams = [...new Set(trigrams(wanted))]
      .map((gram) => this.#postings.get(gram))
      .filter((list): list is number[] => list !== undefined)
      .sort((a, b) => a.length - b.length);
    // Trigrams shared with each name, counted in a typed array (no map, no sort of the postings).
    const shared = new Uint16Array(this.#names.length);
    const touched: number[] = [];
    let read = 0;
    for (const list of grams) {
      const end = Math.min(list.length, this.#maxPostings - read);
      for (let i = 0; i < end; i++) {
        const id = list[i]!;
        if (shared[id]! === 0) touched.push(id);
        shared[id]!++;
      }
      read += end;
      if (read >= this.#maxPostings) break;
    }
    // The names sharing the most trigrams, by counting sort (linear in the postings read).
    const byCount: number[][] = [];
    for (const id of touched) (byCount[shared[id]!] ??= []).push(id);
    const candidates: number[] = [];
    for (let count = byCount.length - 1; count > 0 && candidates.length < this.#maxCandidates; count--) {
      const ids = byCount[count];
      if (!ids) continue;
      ids.sort((a, b) => a - b);
      for (const id of ids.slice(0, this.#maxCandidates - candidates.length)) candidates.push(id);
    }
    const scored: Array<{ id: number; score: number }> = [];
    for (const id of candidates) {
      const candidate = this.#lower[id]!;
      const contains = candidate.includes(wanted) || wanted.includes(candidate);
      const score = contains ? 1 : boundedEditDistance(wanted, candidate, maxDistance);
      if (score <= maxDistance) scored.push({ id, score });
    }
    return scored
      .sort((a, b) => a.score - b.score || a.id - b.id)
      .slice(0, limit)
      .map(({ id }) => this.#names[id]!);
  }
}

/**
 * Levenshtein distance between `a` and `b` when it is at most `max`, else `max + 1`: only the
 * diagonal band of width `2 * max + 1` is computed, and the scan stops once a row exceeds `max`.
 */
export function boundedEditDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const over = max + 1;
  let previous = new Int32Array(b.length + 1);
  let current = new Int32Array(b.length + 1);
  for (let j = 0; j <= b.length; j++) previous[j] = j <= max ? j : over;
  for (let i = 1; i <= a.length; i++) {
    const from = Math.max(1, i - max);
    const to = Math.min(b.length, i + max);
    current[0] = i <= max ? i : over;
    // Cells left of the band are out of reach.
    if (from > 1) current[from - 1] = over;
    let rowMin = current[0];
    const ai = a.charCodeAt(i - 1);
    for (let j = from; j <= to; j++) {
      const substitution = previous[j - 1]! + (ai === b.charCodeAt(j - 1) ? 0 : 1);
      const value = Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution, over);
      current[j] = value;
      if (value < rowMin) rowMin = value;
    }
    // The cell right of the band is out of reach for the next row.
    if (to < b.length) current[to + 1] = over;
    if (rowMin > max) return over;
    const swap = previous;
    previous = current;
    current = swap;
  }
  return Math.min(previous[b.length]!, over);
}

/** Longest name {@link NameIndex} suggests for; longer ones are not compared. */
export const MAX_SUGGESTION_NAME_CHARS = 128;
/** Names compared by edit distance per lookup in a {@link NameIndex}. */
export const MAX_SUGGESTION_CANDIDATES = 64;
/** Trigram postings read per lookup in a {@link NameIndex}. */
export const MAX_SUGGESTION_POSTINGS = 4_000;

/** Trigrams of `text` with boundary markers (`"ab"` → `"^ab"`, `"ab$"`). */
function trigrams(text: string): string[] {
  const padded = `^${text}$`;
  const out: string[] = [];
  for (let i = 0; i + 3 <= padded.length; i++) out.push(padded.slice(i, i + 3));
  return out;
}
