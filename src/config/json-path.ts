/**
 * @module
 * JSON paths for error messages (`mcpServers.expenses.args[0]`) and a "did you mean" helper.
 */

/** Keys and indexes from the document root. */
export type JsonPath = readonly (string | number | symbol)[];

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `["mcpServers", "my server", "args", 0]` → `mcpServers["my server"].args[0]`; root → `(root)`. */
export function formatJsonPath(path: JsonPath): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (typeof part === 'symbol') out += `[${String(part)}]`;
    else if (IDENTIFIER.test(part)) out += out === '' ? part : `.${part}`;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out === '' ? '(root)' : out;
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!;
      const same = a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase();
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (same ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length]!;
}

/** The candidate closest to `name` (edit distance ≤ a third of its length, at least 2), if any. */
export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const d = distance(name, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}
