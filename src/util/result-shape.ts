/**
 * @module
 * Learned result shapes (docs/data.md): the type of a tool's results, learned from results the
 * host sees, for tools without an `outputSchema`. A shape records which JSON types each position
 * took, the keys of objects with how many of them had each key (a key every object had is
 * required, else optional), the items of arrays, and how often a position was seen. It holds no
 * value from a result, with one bounded exception: a string that looks like an enumeration
 * member (a short word, no spaces, at most two digits, under a key that does not name an id,
 * secret or free text) is counted, so a field that takes few values can be declared as a union
 * of string literals. A union is declared only when each member was seen at least
 * `literalMinCount` times, so a value seen once never reaches a declaration.
 *
 * Everything is bounded by {@link ShapeBounds}: inference visits at most `maxNodes` values and
 * samples `sampleItems` items of an array (a 100 MB result is never walked whole), objects keep
 * `maxKeys` keys, a union `maxLiterals` members, and one shape's JSON `maxBytes`. Shapes come
 * from servers (untrusted) and, in a fleet, from other processes: {@link sanitizeShape} rebuilds
 * a clean, bounded shape from any JSON.
 */

/** The JSON types a position may take. */
export type ShapeType = 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object';

/** The order types are kept and declared in (`number | null`, as people write it). */
const SHAPE_TYPES: readonly ShapeType[] = ['boolean', 'number', 'string', 'array', 'object', 'null'];

/** What results of one tool looked like (plain JSON: it is what stores keep). */
export interface ResultShape {
  /** Values seen at this position. */
  seen: number;
  /** JSON types seen here (sorted, no repeats). */
  types: ShapeType[];
  /**
   * Strings seen here, with how often, while every string was literal-like and they were few;
   * absent once a string was not (then the position is any `string`).
   */
  literals?: Record<string, number>;
  /** Objects seen here (a key is required when its `seen` equals this). */
  objects?: number;
  /** Keys of the objects seen here; each shape's `seen` is how many objects had the key. */
  properties?: Record<string, ResultShape>;
  /** Some keys were dropped (past `maxKeys`) or not looked at (past `maxDepth`). */
  more?: boolean;
  /** The items of the arrays seen here (absent: only empty arrays, or past `maxDepth`). */
  items?: ResultShape;
}

/** The bounds of inference, merging and storage (the `DEFAULT_RESULT_SHAPE_*` constants). */
export interface ShapeBounds {
  maxDepth: number;
  maxKeys: number;
  maxLiterals: number;
  maxLiteralChars: number;
  literalMinCount: number;
  maxBytes: number;
  maxNodes: number;
  sampleItems: number;
}

/** Keys whose strings are never kept as literals: ids, secrets, names and free text. */
const PRIVATE_KEY =
  /(^|[^a-z])(id|ids|uuid|guid|key|token|secret|password|passwd|pwd|auth|credential|email|mail|name|user|username|login|hash|digest|signature|sig|session|cookie|phone|address|ip|url|uri|href|path|file|note|notes|comment|description|title|text|message|body|content|query|code|otp|pin|ssn|iban|card|account)s?$/i;

/** True when `value` at `key` may be kept as a literal (see the module comment). */
function literalLike(key: string | undefined, value: string, bounds: ShapeBounds): boolean {
  if (value.length === 0 || value.length > bounds.maxLiteralChars) return false;
  if (!/^[A-Za-z][A-Za-z0-9_-]*$/.test(value)) return false;
  if ((value.match(/[0-9]/g)?.length ?? 0) > 2) return false;
  // A long word with capitals inside (not only a leading one) looks like a token.
  if (value.length > 12 && /[a-z]/.test(value) && /[A-Z]/.test(value.slice(1))) return false;
  if (key !== undefined && PRIVATE_KEY.test(key.replace(/([a-z])([A-Z])/g, '$1_$2'))) return false;
  return true;
}

function typeOf(value: unknown): ShapeType | undefined {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const type = typeof value;
  if (type === 'string' || type === 'number' || type === 'boolean' || type === 'object') return type;
  return undefined;
}

function addType(shape: ResultShape, type: ShapeType): void {
  if (!shape.types.includes(type)) {
    shape.types.push(type);
    shape.types.sort((a, b) => SHAPE_TYPES.indexOf(a) - SHAPE_TYPES.indexOf(b));
  }
}

/** Indices of at most `count` items of an array of `length`, spread evenly. */
function sampleIndices(length: number, count: number): number[] {
  if (length <= count) return Array.from({ length }, (_, i) => i);
  const step = length / count;
  return Array.from({ length: count }, (_, i) => Math.floor(i * step));
}

/**
 * The shape of one result, visiting at most `bounds.maxNodes` values. Returns undefined for a
 * value with no JSON type (a function, `undefined`).
 *
 * @example
 * ```ts
 * inferShape({ items: [{ amount: 3 }], total: 1 }, bounds);
 * // { seen: 1, types: ['object'], objects: 1, properties: { items: …, total: { seen: 1, types: ['number'] } } }
 * ```
 */
export function inferShape(value: unknown, bounds: ShapeBounds): ResultShape | undefined {
  let budget = bounds.maxNodes;
  const visit = (node: unknown, key: string | undefined, depth: number, into: ResultShape): void => {
    const type = typeOf(node);
    if (type === undefined || budget <= 0) return;
    budget--;
    into.seen++;
    addType(into, type);
    if (type === 'string') {
      if (into.literals === undefined) return;
      const text = node as string;
      if (!literalLike(key, text, bounds)) delete into.literals;
      else {
        into.literals[text] = (into.literals[text] ?? 0) + 1;
        if (Object.keys(into.literals).length > bounds.maxLiterals) delete into.literals;
      }
      return;
    }
    if (type === 'array') {
      const array = node as unknown[];
      if (depth >= bounds.maxDepth) {
        if (array.length > 0) into.more = true;
        return;
      }
      for (const index of sampleIndices(array.length, bounds.sampleItems)) {
        if (budget <= 0) break;
        into.items ??= emptyShape();
        visit(array[index], key, depth + 1, into.items);
      }
      return;
    }
    if (type === 'object') {
      into.objects = (into.objects ?? 0) + 1;
      into.properties ??= {};
      if (depth >= bounds.maxDepth) {
        into.more = true;
        return;
      }
      for (const name of Object.keys(node as object)) {
        if (budget <= 0) break;
        let property = Object.hasOwn(into.properties, name) ? into.properties[name] : undefined;
        if (property === undefined) {
          if (Object.keys(into.properties).length >= bounds.maxKeys) {
            into.more = true;
            continue;
          }
          property = emptyShape();
          Object.defineProperty(into.properties, name, {
            value: property,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
        visit((node as Record<string, unknown>)[name], name, depth + 1, property);
      }
    }
  };
  const root = emptyShape();
  visit(value, undefined, 0, root);
  return root.seen === 0 ? undefined : boundShape(root, bounds);
}

function emptyShape(): ResultShape {
  return { seen: 0, types: [], literals: {} };
}

/** Sets `object[key]` as an own data property (a key `__proto__` stays a key). */
function put<T>(object: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * The shape of the results of both `a` and `b`: types and keys are united (a key one side lacks
 * becomes optional), counts added, a union past `maxLiterals` widens to `string`. The result is
 * bounded by `bounds` (see {@link boundShape}).
 */
export function mergeShapes(a: ResultShape, b: ResultShape, bounds: ShapeBounds): ResultShape {
  return boundShape(mergeRaw(a, b, bounds), bounds);
}

function mergeRaw(a: ResultShape, b: ResultShape, bounds: ShapeBounds): ResultShape {
  const merged: ResultShape = { seen: a.seen + b.seen, types: [] };
  for (const type of [...a.types, ...b.types]) addType(merged, type);
  // Literals survive only while both sides' strings were all literal-like.
  const aStrings = a.types.includes('string');
  const bStrings = b.types.includes('string');
  const aLiterals = aStrings ? a.literals : {};
  const bLiterals = bStrings ? b.literals : {};
  if (aLiterals !== undefined && bLiterals !== undefined) {
    const literals: Record<string, number> = {};
    for (const source of [aLiterals, bLiterals])
      for (const [text, count] of Object.entries(source))
        put(literals, text, (Object.hasOwn(literals, text) ? literals[text]! : 0) + count);
    if (Object.keys(literals).length <= bounds.maxLiterals) merged.literals = literals;
  }
  if (a.objects !== undefined || b.objects !== undefined) {
    merged.objects = (a.objects ?? 0) + (b.objects ?? 0);
    const properties: Record<string, ResultShape> = {};
    for (const source of [a.properties ?? {}, b.properties ?? {}])
      for (const [name, shape] of Object.entries(source))
        put(
          properties,
          name,
          Object.hasOwn(properties, name) ? mergeRaw(properties[name]!, shape, bounds) : shape,
        );
    merged.properties = properties;
  }
  if (a.more === true || b.more === true) merged.more = true;
  if (a.items !== undefined && b.items !== undefined) merged.items = mergeRaw(a.items, b.items, bounds);
  else if (a.items !== undefined) merged.items = a.items;
  else if (b.items !== undefined) merged.items = b.items;
  return merged;
}

/**
 * `shape` within `bounds`: keys past `maxKeys` (the least seen first) and levels past `maxDepth`
 * are dropped (marked `more`); when its JSON is still over `maxBytes`, every literal is dropped,
 * then the deepest level, until it fits.
 */
export function boundShape(shape: ResultShape, bounds: ShapeBounds): ResultShape {
  let depth = bounds.maxDepth;
  let literals = true;
  let bounded = cut(shape, bounds, depth, literals);
  while (JSON.stringify(bounded).length > bounds.maxBytes && (literals || depth > 0)) {
    if (literals) literals = false;
    else depth--;
    bounded = cut(shape, bounds, depth, literals);
  }
  return bounded;
}

function cut(shape: ResultShape, bounds: ShapeBounds, depth: number, literals: boolean): ResultShape {
  const out: ResultShape = { seen: shape.seen, types: [...shape.types] };
  if (literals && shape.literals !== undefined && shape.types.includes('string'))
    out.literals = { ...shape.literals };
  if (shape.objects !== undefined) {
    out.objects = shape.objects;
    const properties: Record<string, ResultShape> = {};
    const entries = Object.entries(shape.properties ?? {});
    if (depth > 0) {
      entries.sort(([, x], [, y]) => y.seen - x.seen);
      for (const [name, property] of entries.slice(0, bounds.maxKeys))
        put(properties, name, cut(property, bounds, depth - 1, literals));
    }
    out.properties = properties;
    if (shape.more === true || entries.length > Object.keys(properties).length) out.more = true;
  }
  if (shape.items !== undefined) {
    if (depth > 0) out.items = cut(shape.items, bounds, depth - 1, literals);
    else out.more = true;
  }
  if (out.more === undefined && shape.more === true) out.more = true;
  return out;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/**
 * A clean, bounded shape rebuilt from untrusted JSON (a store's row, another process's write),
 * or undefined when it is not one.
 */
export function sanitizeShape(value: unknown, bounds: ShapeBounds): ResultShape | undefined {
  const clean = (node: unknown, depth: number): ResultShape | undefined => {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return undefined;
    const raw = node as Record<string, unknown>;
    const seen = count(raw.seen);
    if (seen === undefined || !Array.isArray(raw.types)) return undefined;
    const out: ResultShape = { seen, types: [] };
    for (const type of raw.types.slice(0, SHAPE_TYPES.length))
      if (SHAPE_TYPES.includes(type as ShapeType)) addType(out, type as ShapeType);
    if (typeof raw.literals === 'object' && raw.literals !== null && !Array.isArray(raw.literals)) {
      const literals: Record<string, number> = {};
      const entries = Object.entries(raw.literals as Record<string, unknown>);
      if (entries.length <= bounds.maxLiterals) {
        for (const [text, times] of entries) {
          const n = count(times);
          if (n !== undefined && literalLike(undefined, text, bounds)) put(literals, text, n);
        }
        out.literals = literals;
      }
    }
    const objects = count(raw.objects);
    if (objects !== undefined) {
      out.objects = objects;
      const properties: Record<string, ResultShape> = {};
      const source = raw.properties;
      if (depth < bounds.maxDepth && typeof source === 'object' && source !== null && !Array.isArray(source))
        for (const [name, property] of Object.entries(source as Record<string, unknown>).slice(
          0,
          bounds.maxKeys,
        )) {
          const shape = clean(property, depth + 1);
          if (shape !== undefined) put(properties, name, shape);
        }
      out.properties = properties;
    }
    if (raw.more === true) out.more = true;
    if (raw.items !== undefined && depth < bounds.maxDepth) {
      const items = clean(raw.items, depth + 1);
      if (items !== undefined) out.items = items;
    }
    return out;
  };
  const shape = clean(value, 0);
  return shape === undefined ? undefined : boundShape(shape, bounds);
}

/** A JSON Schema of a learned shape (what the declarations render). */
export type ShapeSchema = Record<string, unknown>;

/**
 * The JSON Schema the declarations render for `shape`: a key is required when every object seen
 * had it; strings are a union of literals only when each was seen `literalMinCount` times.
 */
export function shapeToSchema(shape: ResultShape, bounds: Pick<ShapeBounds, 'literalMinCount'>): ShapeSchema {
  const branches: ShapeSchema[] = [];
  for (const type of shape.types) {
    if (type === 'string') {
      const literals = shape.literals === undefined ? [] : Object.entries(shape.literals);
      const declared = literals.length > 0 && literals.every(([, times]) => times >= bounds.literalMinCount);
      branches.push(declared ? { type: 'string', enum: literals.map(([text]) => text).sort() } : { type });
    } else if (type === 'array') {
      branches.push(
        shape.items === undefined ? { type } : { type, items: shapeToSchema(shape.items, bounds) },
      );
    } else if (type === 'object') {
      const properties: Record<string, ShapeSchema> = {};
      const required: string[] = [];
      for (const [name, property] of Object.entries(shape.properties ?? {})) {
        put(properties, name, shapeToSchema(property, bounds));
        if (property.seen >= (shape.objects ?? 0)) required.push(name);
      }
      const branch: ShapeSchema = { type, properties };
      if (required.length > 0) branch.required = required;
      if (shape.more === true) branch.additionalProperties = true;
      branches.push(branch);
    } else branches.push({ type });
  }
  if (branches.length === 0) return {};
  return branches.length === 1 ? branches[0]! : { anyOf: branches };
}
