/**
 * @module
 * Names of tools: the qualified `server.tool` name the host dispatches on, and the
 * identifier-safe `namespace.member` a script writes (`tools.my_server.get_data(…)`).
 */

/** Words that cannot be a binding or a namespace in JavaScript/TypeScript, plus risky keys. */
const RESERVED = new Set(
  (
    'break case catch class const continue debugger default delete do else enum export extends false finally ' +
    'for function if import in instanceof new null return super switch this throw true try typeof var void ' +
    'while with yield let static implements interface package private protected public await arguments eval ' +
    'undefined NaN Infinity __proto__ constructor prototype then'
  ).split(' '),
);

/**
 * Turns any server or tool name into a JavaScript identifier: characters outside
 * `[A-Za-z0-9_$]` become `_`, a leading digit gets a `_` prefix, and reserved words (plus
 * `then`, `constructor`, `__proto__`) get a `_` suffix.
 *
 * @example
 * ```ts
 * toIdentifier('get-expenses'); // 'get_expenses'
 * toIdentifier('2fa');          // '_2fa'
 * toIdentifier('delete');       // 'delete_'
 * ```
 */
export function toIdentifier(name: string): string {
  let out = name.replace(/[^A-Za-z0-9_$]/g, '_');
  if (out === '') out = '_';
  if (/^[0-9]/.test(out)) out = `_${out}`;
  if (RESERVED.has(out)) out = `${out}_`;
  return out;
}

/**
 * Assigns identifier-safe names to `names`, unique within the list: when two names map to the
 * same identifier, the later one (in sorted order of the original names) gets `_2`, `_3`…
 * Deterministic: the same set of names always gets the same identifiers.
 */
export function assignIdentifiers(names: Iterable<string>): Map<string, string> {
  const sorted = [...new Set(names)].sort();
  const taken = new Set<string>();
  const out = new Map<string, string>();
  for (const name of sorted) {
    const base = toIdentifier(name);
    let candidate = base;
    for (let n = 2; taken.has(candidate); n++) candidate = `${base}_${n}`;
    taken.add(candidate);
    out.set(name, candidate);
  }
  return out;
}

/** `server.tool`. */
export function qualifiedName(server: string, tool: string): string {
  return `${server}.${tool}`;
}
