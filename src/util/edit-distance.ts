/**
 * @module
 * Edit distance and "did you mean" suggestions, shared by configuration errors, CLI usage
 * errors, input validation and the sandbox's unknown-tool messages.
 */

import { createRequire } from 'node:module';
import type * as FastestLevenshtein from 'fastest-levenshtein';

/**
 * Myers' bit-parallel Levenshtein distance from `fastest-levenshtein`, loaded on first use: the
 * CLI imports this module for its usage errors, and `--help` loads no package.
 */
let myers: ((a: string, b: string) => number) | undefined;
function distance(a: string, b: string): number {
  myers ??= (createRequire(import.meta.url)('fastest-levenshtein') as typeof FastestLevenshtein).distance;
  return myers(a, b);
}

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
  return distance(a, b);
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
    // The names sharing the most trigrams: whole groups of equal counts, best first, while they
    // fit in `maxCandidates`; of the first group that does not fit, its lowest ids (a histogram
    // and one scan of the counts: no sort, no array per group).
    let most = 0;
    for (const id of touched) if (shared[id]! > most) most = shared[id]!;
    const histogram = new Uint32Array(most + 1);
    for (const id of touched) histogram[shared[id]!]!++;
    let cut = most;
    let taken = 0;
    while (cut >= 1 && taken + histogram[cut]! <= this.#maxCandidates) taken += histogram[cut--]!;
    const candidates: number[] = [];
    for (const id of touched) if (shared[id]! > cut) candidates.push(id);
    for (let id = 0, room = this.#maxCandidates - taken; cut >= 1 && room > 0 && id < shared.length; id++) {
      if (shared[id] === cut) {
        candidates.push(id);
        room--;
      }
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
 * Levenshtein distance between `a` and `b` when it is at most `max`, else `max + 1` (names
 * whose lengths differ by more than `max` are not compared at all).
 */
export function boundedEditDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  return Math.min(distance(a, b), max + 1);
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
