/**
 * @module
 * Renders tools as TypeScript declarations: `declare const tools: { <namespace>: { <member>(args):
 * Promise<…> } }` with JSDoc from descriptions, parameter docs and `inputExamples`, return types
 * from `outputSchema`, and `declare function callTool(name, args)` keyed by qualified name. The
 * same text serves the model's prompt and `tsc` checking of scripts.
 *
 * JSON Schema coverage: `type` (and type arrays), `enum`, `const`, `anyOf`/`oneOf` (unions),
 * `allOf` (intersections), objects with `required` and `additionalProperties`, arrays and
 * tuples (`items` arrays, `prefixItems`), `nullable`, local `$ref` into `$defs`/`definitions`
 * or `#` (recursive types become named aliases in `declare namespace ToolTypes`). Anything
 * else, a missing schema, or nesting deeper than the limit renders as `unknown`.
 *
 * Schemas are untrusted, so rendering is bounded: a pointer that several `$ref`s name is
 * rendered once, as a named alias (a DAG of references would otherwise expand exponentially),
 * and the whole text is bounded by `maxBytes` ({@link DEFAULT_DECLARATION_MAX_BYTES}): past it,
 * types render as `unknown` and the text starts with a comment saying it was cut.
 */
import {
  DEFAULT_DECLARATION_DESCRIPTION_MAX_CHARS,
  DEFAULT_DECLARATION_MAX_BYTES,
  DEFAULT_DECLARATION_MAX_DEPTH,
  DEFAULT_RESULT_HANDLE_MIN_BYTES,
} from '../config/defaults.js';
import type { JsonSchema } from '../types.js';

/** What {@link renderDeclarations} needs of a tool (a `CatalogTool` fits). */
export interface DeclarableTool {
  /** Qualified name, `server.tool` (the `callTool` key). */
  name: string;
  /** Identifier-safe server name: `tools.<namespace>`. */
  namespace: string;
  /** Identifier-safe tool name: `tools.<namespace>.<member>`. */
  member: string;
  title?: string;
  description?: string;
  inputSchema?: JsonSchema;
  outputSchema?: JsonSchema;
  /** A line for the doc comment about the output type (e.g. that it was learned, not declared). */
  outputNote?: string;
  inputExamples?: readonly Record<string, unknown>[];
}

/** Options of {@link renderDeclarations}. */
export interface RenderDeclarationsOptions {
  /**
   * Also declare `callTool(name, args)` typed by qualified name.
   * @defaultValue true
   */
  callTool?: boolean;
  /**
   * Characters of each tool description kept (cut with "…").
   * @defaultValue {@link DEFAULT_DECLARATION_DESCRIPTION_MAX_CHARS}
   */
  maxDescriptionChars?: number;
  /**
   * Schema nesting rendered before falling back to `unknown`.
   * @defaultValue {@link DEFAULT_DECLARATION_MAX_DEPTH}
   */
  maxDepth?: number;
  /**
   * Characters of type text rendered in all; past it types render as `unknown`, with a marker.
   * @defaultValue {@link DEFAULT_DECLARATION_MAX_BYTES}
   */
  maxBytes?: number;
  /**
   * Bytes from which a tool result arrives as a `ResultHandle` (the declarations say so and
   * declare the handle's API; smaller results are plain values, declared as before).
   * @defaultValue {@link DEFAULT_RESULT_HANDLE_MIN_BYTES}
   */
  resultHandleMinBytes?: number;
}

/** A byte count as the declarations spell it: `16 MiB`, `512 KiB`, `900 bytes`. */
function bytesText(bytes: number): string {
  if (bytes >= 1_048_576 && bytes % 1_048_576 === 0) return `${bytes / 1_048_576} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/**
 * The `ResultHandle` a large result arrives as (the prelude's API, docs/data.md), declared once
 * after the tools: what a model must know to use one from the declarations alone.
 */
function handleDeclarations(minBytes: number): string {
  return [
    `/** A result of ${bytesText(minBytes)} or more arrives as a ResultHandle, not its value (test \`r.isHandle\`): reduce it on the host. Rows: an array's items, an object's largest array (at rowsAt), a text's lines. field: a key or JSON pointer. */`,
    "interface ResultHandle { isHandle: true; tool: string; bytes: number; kind: 'array' | 'object' | 'lines'; rowsAt: string; length: number; keys: string[];",
    '  value(pointer?: string): Promise<unknown>; [Symbol.asyncIterator](): AsyncIterator<any>; slice(start?: number, end?: number): Promise<any[]>;',
    '  rows(o?: { start?: number; end?: number; where?: Where }): AsyncIterable<any>; count(where?: Where): Promise<number>;',
    '  sum(field: string, where?: Where): Promise<number | null>; min(field: string, where?: Where): Promise<number | null>; max(field: string, where?: Where): Promise<number | null>;',
    '  groupBy(field: string, o?: { sum?: string; where?: Where }): Promise<Record<string, { count: number; sum?: number }>>;',
    '  pick(fields: string[], o?: { where?: Where; limit?: number }): Promise<any[]>; filter(where: Where, o?: { limit?: number }): Promise<any[] | ResultHandle>; at(pointer: string): ResultHandle }',
    '/** field === value for each entry. A handle passed as a tool argument stays on the host. */',
    'type Where = Record<string, string | number | boolean | null>;',
    '',
  ].join('\n');
}

/** What one {@link renderDeclarations} call may still write. */
interface Budget {
  max: number;
  used: number;
  truncated: boolean;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const RESERVED = new Set(
  (
    'break case catch class const continue debugger default delete do else enum export extends false finally ' +
    'for function if import in instanceof new null return super switch this throw true try typeof var void ' +
    'while with yield let static implements interface package private protected public await arguments eval ' +
    'undefined any unknown never string number boolean object symbol bigint type namespace declare module'
  ).split(' '),
);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A type-safe identifier for namespace and alias names. */
function safeIdentifier(name: string): string {
  let out = name.replace(/[^A-Za-z0-9_$]/g, '_');
  if (out === '' || /^[0-9]/.test(out)) out = `_${out}`;
  if (RESERVED.has(out)) out = `${out}_`;
  return out;
}

/** A property key: bare when it is an identifier, quoted otherwise. */
function propertyKey(name: string): string {
  return IDENTIFIER.test(name) && name !== '__proto__' ? name : JSON.stringify(name);
}

/** Text safe inside a JSDoc comment. */
function docText(text: string): string {
  return text.replace(/\*\//g, '*\\/').replace(/\r\n?/g, '\n');
}

function docBlock(lines: string[], indent: string): string {
  const body = lines.flatMap((line) => docText(line).split('\n'));
  while (body.length > 0 && body[body.length - 1]!.trim() === '') body.pop();
  if (body.length === 0) return '';
  if (body.length === 1) return `${indent}/** ${body[0]} */\n`;
  return `${indent}/**\n${body.map((l) => `${indent} *${l === '' ? '' : ` ${l}`}`).join('\n')}\n${indent} */\n`;
}

function literal(value: unknown): string | undefined {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'number';
  if (typeof value === 'boolean') return String(value);
  return undefined;
}

/** Wraps union / intersection / function types so they can take `[]` or join an intersection. */
function wrap(type: string): string {
  return /^[\w$."[\]<>]+$/.test(type) || /^\{[\s\S]*\}$/.test(type) || /^"(?:[^"\\]|\\.)*"$/.test(type)
    ? type
    : `(${type})`;
}

function union(types: string[]): string {
  const unique = [...new Set(types)];
  if (unique.includes('unknown')) return 'unknown';
  const withoutNever = unique.filter((t) => t !== 'never');
  if (withoutNever.length === 0) return 'never';
  return withoutNever.join(' | ');
}

/** Resolution context of one root schema (an input or output schema). */
interface Context {
  root: Record<string, unknown>;
  /** Qualified prefix of named aliases, e.g. `ToolTypes.expenses.get_expenses.input`. */
  prefix: string;
  /** JSON pointer → alias name. */
  aliases: Map<string, string>;
  /** Pointers referenced so far (to emit their aliases). */
  used: Set<string>;
  maxDepth: number;
  /** Pointers being inlined (non-alias refs), against cycles. */
  inlining: Set<string>;
  budget: Budget;
  /** Characters of the types rendered by the children of each `toType` frame in progress. */
  childChars: number[];
}

function resolvePointer(root: unknown, pointer: string): unknown {
  if (pointer === '#') return root;
  if (!pointer.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of pointer.slice(2).split('/')) {
    const part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) node = node[Number(part)];
    else if (isObject(node)) node = node[part];
    else return undefined;
  }
  return node;
}

/** Keys that carry type information (a schema with none of them constrains nothing). */
const TYPE_KEYS = [
  'type',
  'properties',
  'additionalProperties',
  'patternProperties',
  'items',
  'prefixItems',
  'enum',
  'const',
  '$ref',
  'anyOf',
  'oneOf',
  'allOf',
];

function informative(schema: unknown): boolean {
  return schema === false || (isObject(schema) && TYPE_KEYS.some((k) => k in schema));
}

function toType(schema: unknown, ctx: Context, depth: number, indent: string): string {
  if (schema === false) return 'never';
  if (!isObject(schema) || depth > ctx.maxDepth) return 'unknown';
  const budget = ctx.budget;
  if (budget.used >= budget.max) {
    budget.truncated = true;
    return 'unknown';
  }
  // Charge this frame's own text (its result less what its children already charged).
  ctx.childChars.push(0);
  let out: string;
  try {
    const nullable = schema.nullable === true;
    const base = toTypeInner(schema, ctx, depth, indent);
    out = nullable && base !== 'unknown' && base !== 'null' ? `${base} | null` : base;
  } finally {
    budget.used -= ctx.childChars.pop()!;
  }
  budget.used += out.length;
  if (ctx.childChars.length > 0) ctx.childChars[ctx.childChars.length - 1]! += out.length;
  return out;
}

function toTypeInner(schema: Record<string, unknown>, ctx: Context, depth: number, indent: string): string {
  if (typeof schema.$ref === 'string') return refType(schema.$ref, ctx, depth, indent);
  if ('const' in schema) return literal(schema.const) ?? 'unknown';
  if (Array.isArray(schema.enum)) {
    const members = schema.enum.map(literal);
    if (members.some((m) => m === undefined)) return 'unknown';
    return members.length === 0 ? 'never' : union(members as string[]);
  }
  const { anyOf, oneOf, allOf, ...rest } = schema;
  const alternatives = [anyOf, oneOf].find((a) => Array.isArray(a) && a.length > 0) as unknown[] | undefined;
  if (alternatives && alternatives.some(informative)) {
    const restInformative = informative(rest);
    return union(
      alternatives.map((alt) =>
        restInformative && isObject(alt)
          ? toType(mergeSchemas(rest, alt), ctx, depth + 1, indent)
          : toType(alt, ctx, depth + 1, indent),
      ),
    );
  }
  if (Array.isArray(allOf) && allOf.some(informative)) {
    const parts = [...(informative(rest) ? [toType(rest, ctx, depth + 1, indent)] : [])];
    for (const part of allOf) if (informative(part)) parts.push(toType(part, ctx, depth + 1, indent));
    const kept = [...new Set(parts.filter((p) => p !== 'unknown'))];
    if (kept.includes('never')) return 'never';
    return kept.length === 0 ? 'unknown' : kept.map(wrap).join(' & ');
  }
  const type = schema.type;
  if (Array.isArray(type)) {
    return union(
      type.map((t) =>
        typeof t === 'string' ? toTypeInner({ ...rest, type: t }, ctx, depth, indent) : 'unknown',
      ),
    );
  }
  switch (type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return arrayType(schema, ctx, depth, indent);
    case 'object':
      return objectType(schema, ctx, depth, indent);
    default:
      if (type !== undefined) return 'unknown';
      if ('properties' in schema || 'additionalProperties' in schema || 'patternProperties' in schema)
        return objectType(schema, ctx, depth, indent);
      if ('items' in schema || 'prefixItems' in schema) return arrayType(schema, ctx, depth, indent);
      return 'unknown';
  }
}

function mergeSchemas(
  base: Record<string, unknown>,
  extra: Record<string, unknown>,
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...base, ...extra };
  if (isObject(base.properties) && isObject(extra.properties))
    merged.properties = { ...base.properties, ...extra.properties };
  if (Array.isArray(base.required) && Array.isArray(extra.required))
    merged.required = [...base.required, ...extra.required];
  return merged;
}

function arrayType(schema: Record<string, unknown>, ctx: Context, depth: number, indent: string): string {
  const tuple = Array.isArray(schema.prefixItems)
    ? schema.prefixItems
    : Array.isArray(schema.items)
      ? schema.items
      : undefined;
  if (tuple) {
    const members = tuple.map((item) => toType(item, ctx, depth + 1, indent));
    const restSchema = Array.isArray(schema.prefixItems) ? schema.items : schema.additionalItems;
    const rest =
      restSchema === false ? [] : [`...${wrap(toType(restSchema ?? {}, ctx, depth + 1, indent))}[]`];
    return `[${[...members, ...rest].join(', ')}]`;
  }
  return `${wrap(toType(schema.items ?? {}, ctx, depth + 1, indent))}[]`;
}

function objectType(schema: Record<string, unknown>, ctx: Context, depth: number, indent: string): string {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = new Set(
    Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === 'string') : [],
  );
  const inner = `${indent}  `;
  const lines: string[] = [];
  for (const [name, propertySchema] of Object.entries(properties)) {
    lines.push(
      propertyDoc(propertySchema, inner) +
        `${inner}${propertyKey(name)}${required.has(name) ? '' : '?'}: ${toType(propertySchema, ctx, depth + 1, inner)};`,
    );
  }
  const additional = schema.additionalProperties;
  const hasPatterns = isObject(schema.patternProperties) && Object.keys(schema.patternProperties).length > 0;
  if (lines.length === 0) {
    if (additional === false && !hasPatterns) return '{}';
    const valueType =
      isObject(additional) && !hasPatterns ? toType(additional, ctx, depth + 1, inner) : 'unknown';
    return `{ [key: string]: ${valueType} }`;
  }
  if ((additional !== undefined && additional !== false) || hasPatterns)
    lines.push(`${inner}[key: string]: unknown;`);
  return `{\n${lines.join('\n')}\n${indent}}`;
}

function propertyDoc(schema: unknown, indent: string): string {
  if (!isObject(schema)) return '';
  const lines: string[] = [];
  if (typeof schema.description === 'string' && schema.description.trim() !== '')
    lines.push(schema.description.trim());
  if (typeof schema.format === 'string') lines.push(`Format: ${schema.format}.`);
  if ('default' in schema) {
    const text = JSON.stringify(schema.default);
    if (text !== undefined && text.length <= 200) lines.push(`@defaultValue ${text}`);
  }
  if (schema.deprecated === true) lines.push('@deprecated');
  return docBlock(lines, indent);
}

function refType(ref: string, ctx: Context, depth: number, indent: string): string {
  const alias = ctx.aliases.get(ref);
  if (alias !== undefined) {
    ctx.used.add(ref);
    return `${ctx.prefix}.${alias}`;
  }
  if (!ref.startsWith('#') || ctx.inlining.has(ref)) return 'unknown';
  const target = resolvePointer(ctx.root, ref);
  if (target === undefined) return 'unknown';
  ctx.inlining.add(ref);
  try {
    return toType(target, ctx, depth + 1, indent);
  } finally {
    ctx.inlining.delete(ref);
  }
}

function hasRef(schema: unknown, depth = 0): boolean {
  if (depth > 64) return false;
  if (Array.isArray(schema)) return schema.some((s) => hasRef(s, depth + 1));
  if (!isObject(schema)) return false;
  if (typeof schema.$ref === 'string') return true;
  return Object.values(schema).some((s) => hasRef(s, depth + 1));
}

/** Schema nodes scanned when counting `$ref`s of one root schema. */
const MAX_REF_COUNT_NODES = 100_000;

/** How many `$ref`s name each local pointer (bounded scan). */
function countRefs(schema: unknown): Map<string, number> {
  const counts = new Map<string, number>();
  const stack: unknown[] = [schema];
  for (let visited = 0; stack.length > 0 && visited < MAX_REF_COUNT_NODES; visited++) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      for (const item of node) if (typeof item === 'object' && item !== null) stack.push(item);
    } else if (isObject(node)) {
      if (typeof node.$ref === 'string' && node.$ref.startsWith('#'))
        counts.set(node.$ref, (counts.get(node.$ref) ?? 0) + 1);
      for (const value of Object.values(node))
        if (typeof value === 'object' && value !== null) stack.push(value);
    }
  }
  return counts;
}

/** A readable alias name for a pointer: its last segment (`#/properties/a/items` → `items`). */
function pointerName(pointer: string): string {
  const parts = pointer.split('/').filter((part) => part !== '' && part !== '#');
  const last = parts.length > 0 ? parts[parts.length - 1]! : 'Root';
  try {
    return decodeURIComponent(last).replace(/~1/g, '/').replace(/~0/g, '~');
  } catch {
    return last;
  }
}

/** A root schema rendered to a type, plus the alias declarations it needs. */
interface RenderedSchema {
  type: string;
  aliases: string;
}

/** Follows a chain of pure `$ref`s; true when it loops back (an alias that is only itself). */
function isPureRefCycle(root: Record<string, unknown>, pointer: string): boolean {
  const seen = new Set<string>();
  let current: unknown = resolvePointer(root, pointer);
  seen.add(pointer);
  while (
    isObject(current) &&
    typeof current.$ref === 'string' &&
    Object.keys(current).every((k) => k === '$ref' || !TYPE_KEYS.includes(k))
  ) {
    if (seen.has(current.$ref)) return true;
    seen.add(current.$ref);
    current = resolvePointer(root, current.$ref);
  }
  return false;
}

function renderSchema(
  schema: JsonSchema | undefined,
  prefix: string,
  maxDepth: number,
  indent: string,
  budget: Budget,
): RenderedSchema {
  if (!isObject(schema)) return { type: 'unknown', aliases: '' };
  const ctx: Context = {
    root: schema,
    prefix,
    aliases: new Map(),
    used: new Set(),
    maxDepth,
    inlining: new Set(),
    budget,
    childChars: [],
  };
  if (!hasRef(schema)) return { type: toType(schema, ctx, 0, indent), aliases: '' };
  // Named aliases for the root and every definition, so recursive references terminate.
  const taken = new Set<string>(['Root']);
  ctx.aliases.set('#', 'Root');
  for (const container of ['$defs', 'definitions'] as const) {
    const defs = schema[container];
    if (!isObject(defs)) continue;
    for (const name of Object.keys(defs)) {
      let alias = safeIdentifier(name);
      for (let n = 2; taken.has(alias); n++) alias = `${safeIdentifier(name)}_${n}`;
      taken.add(alias);
      ctx.aliases.set(`#/${container}/${name}`, alias);
      ctx.aliases.set(`#/${container}/${encodeURIComponent(name)}`, alias);
    }
  }
  // Any other pointer named by more than one $ref is rendered once, by name.
  for (const [pointer, count] of countRefs(schema)) {
    if (count < 2 || ctx.aliases.has(pointer) || resolvePointer(schema, pointer) === undefined) continue;
    const base = safeIdentifier(pointerName(pointer));
    let alias = base;
    for (let n = 2; taken.has(alias); n++) alias = `${base}_${n}`;
    taken.add(alias);
    ctx.aliases.set(pointer, alias);
  }
  for (const pointer of ctx.aliases.keys()) if (isPureRefCycle(schema, pointer)) ctx.aliases.delete(pointer);
  const rootType = toType(schema, ctx, 0, indent);
  // Emit aliases until no new ones are referenced (definitions may reference each other).
  const emitted = new Map<string, string>();
  for (let changed = true; changed;) {
    changed = false;
    for (const pointer of [...ctx.used]) {
      const alias = ctx.aliases.get(pointer)!;
      if (emitted.has(alias)) continue;
      const target = pointer === '#' ? schema : resolvePointer(schema, pointer);
      emitted.set(alias, toType(target, ctx, 1, '    '));
      changed = true;
    }
  }
  const aliases = [...emitted].map(([alias, type]) => `    type ${alias} = ${type};\n`).join('');
  return { type: rootType, aliases };
}

/** A schema rendered without reaching the budget, and what it costs the budget. */
interface CachedSchema extends RenderedSchema {
  /** Characters of budget the rendering took (its net addition to `budget.used`). */
  used: number;
  /** Budget left when it was rendered: any rendering with at least this much left is the same. */
  room: number;
}

/**
 * Renderings by schema object: a tool's schema (the same object while its server does not
 * change it) is rendered once, not at every search that returns the tool. Renderings cut by the
 * budget are not kept.
 */
const renderedSchemas = new WeakMap<object, Map<string, CachedSchema>>();

/** {@link renderSchema}, from {@link renderedSchemas} when the budget left allows the same result. */
function renderSchemaOnce(
  schema: JsonSchema | undefined,
  prefix: string,
  maxDepth: number,
  indent: string,
  budget: Budget,
): RenderedSchema {
  if (!isObject(schema) || budget.truncated) return renderSchema(schema, prefix, maxDepth, indent, budget);
  const key = `${prefix}\0${maxDepth}\0${indent}`;
  const room = budget.max - budget.used;
  const cached = renderedSchemas.get(schema)?.get(key);
  if (cached !== undefined && room >= cached.room) {
    budget.used += cached.used;
    return cached;
  }
  const before = budget.used;
  const rendered = renderSchema(schema, prefix, maxDepth, indent, budget);
  if (!budget.truncated) {
    let byKey = renderedSchemas.get(schema);
    if (byKey === undefined) renderedSchemas.set(schema, (byKey = new Map()));
    byKey.set(key, { ...rendered, used: budget.used - before, room });
  }
  return rendered;
}

function truncate(text: string, max: number): string {
  const trimmed = text.trim();
  return trimmed.length > max ? `${trimmed.slice(0, max).trimEnd()}…` : trimmed;
}

function requiresArgs(schema: JsonSchema | undefined): boolean {
  return isObject(schema) && Array.isArray(schema.required) && schema.required.length > 0;
}

/** Input parameters that mark a paginated tool (the prelude's `pages()` follows them; docs/data.md). */
const PAGE_PARAMS: ReadonlySet<string> = new Set(['cursor', 'offset', 'page', 'pageToken', 'page_token']);

/** Whether each input schema seen is paginated, so a kept rendering's schema is not read again. */
const paginated = new WeakMap<object, boolean>();

/** True when the tool's input schema has a cursor, offset or page parameter. */
function isPaginated(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  const known = paginated.get(schema);
  if (known !== undefined) return known;
  const properties = (schema as { properties?: unknown }).properties;
  const found =
    typeof properties === 'object' &&
    properties !== null &&
    Object.keys(properties).some((key) => PAGE_PARAMS.has(key));
  paginated.set(schema, found);
  return found;
}

/**
 * Renders `tools` as TypeScript declarations for the model's prompt and for `tsc`.
 *
 * @example
 * ```ts
 * const text = renderDeclarations([
 *   { name: 'expenses.get_budget_by_level', namespace: 'expenses', member: 'get_budget_by_level',
 *     description: 'Quarterly budget of a level.',
 *     inputSchema: { type: 'object', properties: { level: { enum: ['L1', 'L2'] } }, required: ['level'] } },
 * ]);
 * // declare const tools: { expenses: { get_budget_by_level(args: { level: "L1" | "L2"; }): Promise<unknown>; }; };
 * ```
 */
export function renderDeclarations(
  tools: readonly DeclarableTool[],
  options: RenderDeclarationsOptions = {},
): string {
  const maxDescription = options.maxDescriptionChars ?? DEFAULT_DECLARATION_DESCRIPTION_MAX_CHARS;
  const maxDepth = options.maxDepth ?? DEFAULT_DECLARATION_MAX_DEPTH;
  const budget: Budget = {
    max: options.maxBytes ?? DEFAULT_DECLARATION_MAX_BYTES,
    used: 0,
    truncated: false,
  };
  const byNamespace = new Map<string, DeclarableTool[]>();
  for (const tool of tools) {
    const list = byNamespace.get(tool.namespace) ?? [];
    list.push(tool);
    byNamespace.set(tool.namespace, list);
  }
  const typeNamespaces: string[] = [];
  const members: string[] = [];
  const callable: DeclarableTool[] = [];
  for (const [namespace, list] of byNamespace) {
    const lines: string[] = [];
    const seen = new Set<string>();
    for (const tool of list) {
      if (seen.has(tool.member)) continue;
      seen.add(tool.member);
      callable.push(tool);
      const typesPrefix = `ToolTypes.${safeIdentifier(namespace)}.${safeIdentifier(tool.member)}`;
      const input = renderSchemaOnce(tool.inputSchema, `${typesPrefix}.input`, maxDepth, '    ', budget);
      const output = tool.outputSchema
        ? renderSchemaOnce(tool.outputSchema, `${typesPrefix}.output`, maxDepth, '    ', budget)
        : { type: 'unknown', aliases: '' };
      if (input.aliases || output.aliases) {
        typeNamespaces.push(
          `  namespace ${safeIdentifier(namespace)}.${safeIdentifier(tool.member)} {\n` +
            (input.aliases ? `    namespace input {\n${indentText(input.aliases, '  ')}    }\n` : '') +
            (output.aliases ? `    namespace output {\n${indentText(output.aliases, '  ')}    }\n` : '') +
            '  }\n',
        );
      }
      const doc: string[] = [];
      if (tool.title && !(tool.description ?? '').startsWith(tool.title)) doc.push(`${tool.title}.`);
      if (tool.description) doc.push(truncate(tool.description, maxDescription));
      const sandboxName = `${tool.namespace}.${tool.member}`;
      if (sandboxName !== tool.name) doc.push(`MCP tool: ${tool.name}`);
      if (tool.outputNote) doc.push(truncate(tool.outputNote, maxDescription));
      if (isPaginated(tool.inputSchema))
        doc.push(
          `Paged: \`for await (const page of tools.${sandboxName}.pages(args))\` fetches every page (follows nextCursor/nextOffset/nextPage; one call each).`,
        );
      for (const example of tool.inputExamples ?? []) {
        doc.push('@example', `await tools.${sandboxName}(${JSON.stringify(example)});`);
      }
      const optional = !requiresArgs(tool.inputSchema);
      const argsType = input.type === 'unknown' ? 'Record<string, unknown>' : input.type;
      lines.push(
        docBlock(doc, '    ') +
          `    ${propertyKey(tool.member)}(args${optional ? '?' : ''}: ${argsType}): Promise<${output.type}>;`,
      );
    }
    members.push(`  ${propertyKey(namespace)}: {\n${lines.join('\n')}\n  };`);
  }
  let out = '';
  if (budget.truncated) {
    out += `/* Declarations cut at about ${budget.max} characters of types: the rest are shown as \`unknown\`. Search for fewer tools to see their full types. */\n`;
  }
  if (typeNamespaces.length > 0) out += `declare namespace ToolTypes {\n${typeNamespaces.join('')}}\n`;
  out += `/** MCP tools, as async functions: \`await tools.<server>.<tool>(args)\`. */\n`;
  out += `declare const tools: {\n${members.join('\n')}\n};\n`;
  if (callable.length > 0)
    out += handleDeclarations(options.resultHandleMinBytes ?? DEFAULT_RESULT_HANDLE_MIN_BYTES);
  if (options.callTool !== false) {
    out += '/** Every tool by its qualified MCP name ("server.tool"). */\n';
    out += 'interface ToolsByName {\n';
    const names = new Set<string>();
    for (const tool of callable) {
      if (names.has(tool.name)) continue;
      names.add(tool.name);
      out += `  ${JSON.stringify(tool.name)}: typeof tools${accessor(tool.namespace)}${accessor(tool.member)};\n`;
    }
    out += '}\n';
    out += '/** Calls a tool by its qualified MCP name, e.g. `await callTool("server.tool", { … })`. */\n';
    out +=
      'declare function callTool<N extends keyof ToolsByName>(name: N, ...args: Parameters<ToolsByName[N]>): ReturnType<ToolsByName[N]>;\n';
  }
  return out;
}

function accessor(name: string): string {
  return IDENTIFIER.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
}

function indentText(text: string, indent: string): string {
  return text
    .split('\n')
    .map((line) => (line === '' ? line : indent + line))
    .join('\n');
}
