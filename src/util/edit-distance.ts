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
