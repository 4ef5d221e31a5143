/**
 * @module
 * The transitions of one run's calls: what the tool graph learns from, and what every usage
 * history store counts. A leaf shared by search (which ranks with the counts) and store (which
 * keeps them), so both count a run the same way.
 */

/** Calls of one run that are recorded; a longer run is cut (a script looping over a tool). */
export const DEFAULT_MAX_RECORDED_CALLS = 1_000;
/** Characters of one tool name accepted into the graph. */
export const DEFAULT_MAX_TOOL_NAME_CHARS = 512;

/**
 * The distinct transitions of one run, in first-seen order. Consecutive calls of the same tool
 * collapse into one (a loop over `get_user` says nothing about what follows what), and a
 * transition repeated within a run counts once (`A B A B` is one run in which B followed A).
 */
export function transitionsOf(
  sequence: readonly string[],
  maxCalls = DEFAULT_MAX_RECORDED_CALLS,
): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const seen = new Set<string>();
  let previous: string | undefined;
  const length = Math.min(sequence.length, maxCalls);
  for (let i = 0; i < length; i++) {
    const name = sequence[i];
    if (typeof name !== 'string' || name === '' || name.length > DEFAULT_MAX_TOOL_NAME_CHARS) {
      previous = undefined;
      continue;
    }
    if (previous !== undefined && previous !== name) {
      const key = `${previous}\u0000${name}`;
      if (!seen.has(key)) {
        seen.add(key);
        out.push([previous, name]);
      }
    }
    previous = name;
  }
  return out;
}
