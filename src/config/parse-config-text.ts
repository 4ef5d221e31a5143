/**
 * @module
 * The text of a configuration file to a value: JSON, or JSON with comments and trailing commas
 * as VS Code and Cursor allow in their `mcp.json` (parsed by Microsoft's `jsonc-parser`, the
 * parser VS Code itself uses); TOML (OpenAI Codex's `config.toml`, parsed by `smol-toml`) and
 * YAML (Goose's and Continue's `config.yaml`, parsed by `yaml`), both loaded only when a file
 * needs them. Keys become own properties, `__proto__` included, as with `JSON.parse`, so later
 * checks can name them.
 */
import { extname } from 'node:path';
import { parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';

/** The syntaxes a configuration file may be written in. */
export type ConfigFormat = 'JSON' | 'TOML' | 'YAML';

/**
 * The parsed value, or what is wrong and where (`line 3, column 5: ValueExpected`); `format` is
 * the syntax the text was read as.
 */
export type ConfigTextResult =
  { ok: true; value: unknown; format: ConfigFormat } | { ok: false; message: string; format: ConfigFormat };

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

/** Parses a configuration file's text as JSON: plain JSON first, then JSON with comments. */
export function parseConfigText(text: string): ConfigTextResult {
  try {
    return { ok: true, value: JSON.parse(text) as unknown, format: 'JSON' };
  } catch {
    // Perhaps comments or trailing commas: below.
  }
  const errors: ParseError[] = [];
  let tree: Node | undefined;
  try {
    tree = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  } catch (error) {
    return { ok: false, message: (error as Error).message, format: 'JSON' };
  }
  const first = errors[0];
  if (first !== undefined)
    return {
      ok: false,
      message: `${position(text, first.offset)}: ${printParseErrorCode(first.error)}`,
      format: 'JSON',
    };
  if (tree === undefined) return { ok: false, message: 'the file is empty', format: 'JSON' };
  try {
    return { ok: true, value: toValue(tree), format: 'JSON' };
  } catch (error) {
    return { ok: false, message: (error as Error).message, format: 'JSON' };
  }
}

/** The format a file's extension names (`.toml`, `.yaml`, `.yml`, `.json`…), if any. */
export function configFormatOf(file: string): ConfigFormat | undefined {
  const extension = extname(file).toLowerCase();
  if (extension === '.toml') return 'TOML';
  if (extension === '.yaml' || extension === '.yml') return 'YAML';
  if (extension === '.json' || extension === '.jsonc') return 'JSON';
  return undefined;
}

/** Lines looked at to guess a file's format. */
const SNIFF_MAX_LINES = 50;

/**
 * What text that is not JSON looks like: TOML when its first meaningful line is a `[table]`
 * header or `key = value`, YAML when it is `key:` or a list item; else undefined.
 */
export function sniffConfigFormat(text: string): 'TOML' | 'YAML' | undefined {
  for (const raw of text.split('\n', SNIFF_MAX_LINES)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (/^\[\[?\s*[\w"'.-][\w"'. -]*\]\]?\s*(#.*)?$/.test(line)) return 'TOML';
    if (/^[\w"'.-]+\s*=/.test(line)) return 'TOML';
    if (line === '---' || /^-\s/.test(line) || /^[\w"'.$-][\w"' .$-]*:(\s|$)/.test(line)) return 'YAML';
    return undefined;
  }
  return undefined;
}

/** The first line of a parser's message (the rest is a drawing of the line). */
function firstLine(message: string): string {
  return message.split('\n', 1)[0]!.replace(/:$/, '');
}

async function parseToml(text: string): Promise<ConfigTextResult> {
  const { parse } = await import('smol-toml');
  try {
    return { ok: true, value: parse(text) as unknown, format: 'TOML' };
  } catch (error) {
    const { line, column, message } = error as { line?: number; column?: number; message: string };
    const where = line !== undefined ? `line ${line}, column ${column ?? 1}: ` : '';
    return {
      ok: false,
      message: `${where}${firstLine(message).replace(/^Invalid TOML document: /, '')}`,
      format: 'TOML',
    };
  }
}

/** YAML aliases one document may expand: a "billion laughs" file stops here. */
const YAML_MAX_ALIASES = 100;

async function parseYaml(text: string): Promise<ConfigTextResult> {
  const { parse } = await import('yaml');
  try {
    return {
      ok: true,
      value: parse(text, { maxAliasCount: YAML_MAX_ALIASES, uniqueKeys: true }) as unknown,
      format: 'YAML',
    };
  } catch (error) {
    const { linePos, message } = error as { linePos?: [{ line: number; col: number }]; message: string };
    const at = linePos?.[0];
    const where = at !== undefined ? `line ${at.line}, column ${at.col}: ` : '';
    return {
      ok: false,
      message: `${where}${firstLine(message).replace(/ at line \d+, column \d+$/, '')}`,
      format: 'YAML',
    };
  }
}

/**
 * Parses the text of the configuration file `file`: as TOML or YAML when its extension says so,
 * else as JSON (with comments); text that is not JSON but looks like TOML or YAML
 * ({@link sniffConfigFormat}: a JSON file's first line is `{`, `[` or a comment, never these)
 * is read as that. A failure names the format it was read as.
 */
export async function parseConfigFile(text: string, file: string): Promise<ConfigTextResult> {
  const named = configFormatOf(file);
  if (named === 'TOML') return parseToml(text);
  if (named === 'YAML') return parseYaml(text);
  const json = parseConfigText(text);
  if (json.ok) return json;
  const sniffed = sniffConfigFormat(text);
  if (sniffed === undefined) return json;
  return sniffed === 'TOML' ? parseToml(text) : parseYaml(text);
}
