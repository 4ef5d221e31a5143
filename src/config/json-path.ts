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

export { closestName } from '../util/edit-distance.js';
