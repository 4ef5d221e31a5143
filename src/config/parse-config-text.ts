/**
 * @module
 * The text of a configuration file to a value: JSON, or JSON with comments and trailing commas
 * as VS Code and Cursor allow in their `mcp.json` (parsed by Microsoft's `jsonc-parser`, the
 * parser VS Code itself uses). Keys become own properties, `__proto__` included, as with
 * `JSON.parse`, so later checks can name them.
 */
import { parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';

/** The parsed value, or what is wrong and where (`line 3, column 5: ValueExpected`). */
export type ConfigTextResult = { ok: true; value: unknown } | { ok: false; message: string };

function toValue(node: Node): unknown {
  if (node.type === 'array') return (node.children ?? []).map(toValue);
  if (node.type !== 'object') return node.value as unknown;
  const out: Record<string, unknown> = {};
  for (const property of node.children ?? []) {
    const [key, value] = property.children ?? [];
    if (key === undefined || value === undefined) continue;
    Object.defineProperty(out, String(key.value), {
      value: toValue(value),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

function position(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`;
}

/** Parses a configuration file's text: plain JSON first, then JSON with comments. */
export function parseConfigText(text: string): ConfigTextResult {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    // Perhaps comments or trailing commas: below.
  }
  const errors: ParseError[] = [];
  let tree: Node | undefined;
  try {
    tree = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
  const first = errors[0];
  if (first !== undefined)
    return { ok: false, message: `${position(text, first.offset)}: ${printParseErrorCode(first.error)}` };
  if (tree === undefined) return { ok: false, message: 'the file is empty' };
  try {
    return { ok: true, value: toValue(tree) };
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
}
