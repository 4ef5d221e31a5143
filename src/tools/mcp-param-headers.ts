/**
 * @module
 * SEP-2243 custom headers on the upstream side (MCP 2026-07-28, Streamable HTTP,
 * `docs/specification/2026-07-28/basic/transports/streamable-http.mdx` § Custom Headers from Tool
 * Parameters): a tool's `x-mcp-header` annotations are checked when it is listed (an invalid one
 * excludes the tool) and its annotated arguments are mirrored into `Mcp-Param-{Name}` headers on
 * each `tools/call`, with the spec's value encoding.
 *
 * The SDK v2 client does both inside `Client.callTool()` and `Client.listTools()`, from helpers it
 * does not export; codecall reads `tools/list` page by page and sends `tools/call` through
 * `request()` (its own bounds, its own `input_required` rounds), so it applies the same rules here.
 */
import {
  DEFAULT_UPSTREAM_PARAM_HEADER_SCAN_MAX_NODES,
  DEFAULT_UPSTREAM_PARAM_HEADERS_MAX,
} from '../config/defaults.js';

/** One annotated property: where its value sits in `arguments`, and the header's name part. */
export interface ParamHeaderDeclaration {
  path: string[];
  headerName: string;
}

/** The scan of one tool's `inputSchema`: its declarations, or why the tool must be excluded. */
export type ParamHeaderScan =
  { valid: true; declarations: ParamHeaderDeclaration[] } | { valid: false; reason: string };

const ANNOTATION = 'x-mcp-header';
/** RFC 9110 § 5.1 `token` (`1*tchar`): no space, control character or delimiter. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const PRIMITIVE_TYPES = new Set(['string', 'integer', 'boolean']);
/** Keywords whose subschemas are not reached by a chain of `properties` keys. */
const UNREACHABLE_KEYWORDS = [
  'items',
  'prefixItems',
  'contains',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'patternProperties',
  'dependentSchemas',
  'oneOf',
  'anyOf',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  '$defs',
  'definitions',
] as const;
const MAP_KEYWORDS = new Set(['patternProperties', 'dependentSchemas', '$defs', 'definitions']);
const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One step of a schema path, linked to its parent. */
interface PathLink {
  key: string;
  parent: PathLink | undefined;
}

function pathOf(link: PathLink | undefined): string[] {
  const path: string[] = [];
  for (let step = link; step; step = step.parent) path.unshift(step.key);
  return path;
}

function where(path: string[]): string {
  return path.length === 0 ? 'the schema root' : `property ${JSON.stringify(path.join('.'))}`;
}

/**
 * Checks every `x-mcp-header` annotation of `inputSchema` against the spec's constraints (non-empty
 * token, primitive `string`/`integer`/`boolean` type, case-insensitively unique, on a property
 * reached by `properties` keys only) and collects the valid ones. The walk is iterative and visits
 * at most {@link DEFAULT_UPSTREAM_PARAM_HEADER_SCAN_MAX_NODES} schema nodes.
 */
export function scanParamHeaders(inputSchema: unknown): ParamHeaderScan {
  const declarations: ParamHeaderDeclaration[] = [];
  const seen = new Map<string, string>();
  // Paths are parent links (not copied arrays), so a deep schema costs one step per node.
  const stack: { node: unknown; at: PathLink | undefined; reachable: boolean }[] = [
    { node: inputSchema, at: undefined, reachable: true },
  ];
  for (let visited = 0; stack.length > 0; visited++) {
    if (visited >= DEFAULT_UPSTREAM_PARAM_HEADER_SCAN_MAX_NODES)
      return {
        valid: false,
        reason: `its inputSchema has more than ${DEFAULT_UPSTREAM_PARAM_HEADER_SCAN_MAX_NODES} subschemas to check for x-mcp-header (DEFAULT_UPSTREAM_PARAM_HEADER_SCAN_MAX_NODES)`,
      };
    const { node, at, reachable } = stack.pop()!;
    if (!isObject(node)) continue;
    if (ANNOTATION in node) {
      const path = pathOf(at);
      const name = node[ANNOTATION];
      if (!reachable || path.length === 0)
        return {
          valid: false,
          reason: `x-mcp-header on ${where(path)} is not reached by a chain of "properties" keys (not under items, additionalProperties, oneOf/anyOf/allOf/not, if/then/else or $defs)`,
        };
      if (typeof name !== 'string' || name === '')
        return { valid: false, reason: `x-mcp-header on ${where(path)} is not a non-empty string` };
      if (!TOKEN.test(name))
        return {
          valid: false,
          reason: `x-mcp-header ${JSON.stringify(name.slice(0, 80))} on ${where(path)} is not an RFC 9110 token (no spaces, control characters, non-ASCII or delimiters)`,
        };
      const type = node.type;
      if (typeof type !== 'string' || !PRIMITIVE_TYPES.has(type))
        return {
          valid: false,
          reason: `x-mcp-header on ${where(path)} needs type string, integer or boolean, not ${JSON.stringify(type) ?? 'none'}`,
        };
      const prior = seen.get(name.toLowerCase());
      if (prior !== undefined)
        return {
          valid: false,
          reason: `x-mcp-header ${JSON.stringify(name)} is declared twice (case-insensitively, also as ${JSON.stringify(prior)})`,
        };
      if (declarations.length >= DEFAULT_UPSTREAM_PARAM_HEADERS_MAX)
        return {
          valid: false,
          reason: `it declares more than ${DEFAULT_UPSTREAM_PARAM_HEADERS_MAX} x-mcp-header parameters (DEFAULT_UPSTREAM_PARAM_HEADERS_MAX)`,
        };
      seen.set(name.toLowerCase(), name);
      declarations.push({ path, headerName: name });
    }
    if (isObject(node.properties))
      for (const [key, child] of Object.entries(node.properties))
        stack.push({ node: child, at: { key, parent: at }, reachable });
    for (const keyword of UNREACHABLE_KEYWORDS) {
      const sub = node[keyword];
      if (sub === undefined) continue;
      const branches = Array.isArray(sub)
        ? sub
        : MAP_KEYWORDS.has(keyword) && isObject(sub)
          ? Object.values(sub)
          : [sub];
      for (const branch of branches)
        stack.push({ node: branch, at: { key: keyword, parent: at }, reachable: false });
    }
  }
  return { valid: true, declarations };
}

/** `true` when `value` cannot travel as a plain header value (spec § Value Encoding). */
function needsBase64(value: string): boolean {
  if (value === '' || value !== value.trim()) return true;
  if (value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX)) return true;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code !== 0x09 && (code < 0x20 || code > 0x7e)) return true;
  }
  return false;
}

/** A string as an HTTP field value: as is when safe, else `=?base64?{UTF-8 in Base64}?=`. */
export function encodeParamHeaderValue(value: string): string {
  return needsBase64(value)
    ? `${SENTINEL_PREFIX}${Buffer.from(value, 'utf8').toString('base64')}${SENTINEL_SUFFIX}`
    : value;
}

/** The string form of a primitive argument (spec § Type conversion); undefined: no header. */
export function primitiveToString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return undefined;
}

/** The argument at `path` of `args` (own properties only), or undefined. */
export function valueAtPath(args: unknown, path: readonly string[]): unknown {
  let value: unknown = args;
  for (const key of path) value = isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined;
  return value;
}

/**
 * The `Mcp-Param-{Name}` headers of one call. A value absent or `null` at the declared path is
 * omitted (the spec's rule), as is one that is not a primitive of an allowed kind (the server
 * rejects such arguments anyway, and a malformed header would only mask that).
 */
export function buildParamHeaders(
  declarations: readonly ParamHeaderDeclaration[],
  args: unknown,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const { path, headerName } of declarations) {
    const text = primitiveToString(valueAtPath(args, path));
    if (text !== undefined) headers[`Mcp-Param-${headerName}`] = encodeParamHeaderValue(text);
  }
  return headers;
}
