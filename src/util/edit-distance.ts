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
    const shared = new Map<number, number>();
    const grams = [...new Set(trigrams(wanted))]
      .map((gram) => this.#postings.get(gram))
      .filter((list): list is number[] => list !== undefined)
      .sort((a, b) => a.length - b.length);
    let read = 0;
    for (const list of grams) {
      if (read >= this.#maxPostings) break;
      for (const id of list.slice(0, this.#maxPostings - read)) shared.set(id, (shared.get(id) ?? 0) + 1);
      read += list.length;
    }
    const candidates = [...shared]
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .slice(0, this.#maxCandidates)
      .map(([id]) => id);
    const scored: Array<{ id: number; score: number }> = [];
    for (const id of candidates) {
      const candidate = this.#lower[id]!;
      const contains = candidate.includes(wanted) || wanted.includes(candidate);
      const distance = editDistance(wanted, candidate);
      const score = contains ? Math.min(distance, 1) : distance;
      if (score <= maxDistance) scored.push({ id, score });
    }
    return scored
      .sort((a, b) => a.score - b.score || a.id - b.id)
      .slice(0, limit)
      .map(({ id }) => this.#names[id]!);
  }
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
