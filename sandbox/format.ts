/**
 * @module
 * Readable formatting of console arguments inside the isolate, in the spirit of Node's
 * `util.inspect`: strings print raw at top level, objects as `{ a: 1, b: [ 1, 2 ] }`, with
 * bounded depth, items and string length, circular references marked, getters not invoked and
 * values that throw while being read shown as `[unreadable]`. No Node APIs.
 *
 * The work of one call is bounded too, whatever the value's shape: at most `maxValues` values
 * are visited and about `maxChars` characters produced (a DAG of shared objects would otherwise
 * expand every path), and a huge array, typed array, Map or Set is read only up to the items
 * shown. When a bound cuts the output, it ends with a marker saying so.
 */

/** Nesting depth shown before objects print as `[Object]`. */
const MAX_DEPTH = 6;
/** Array items / object keys shown per level before `… N more`. */
const MAX_ITEMS = 100;
/** Characters of a nested string shown before it is cut. */
const MAX_NESTED_STRING_CHARS = 10_000;
/** Width under which a composite prints on one line. */
const LINE_WIDTH = 80;

const toStr = Object.prototype.toString;
const getProto = Object.getPrototypeOf;
const ownKeys = Reflect.ownKeys;
const getDescriptor = Object.getOwnPropertyDescriptor;
const isArray = Array.isArray;
const isView = ArrayBuffer.isView;
const stringify = JSON.stringify;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const INDEX = /^\d+$/;
const mapEntries = Map.prototype.entries;
const setValues = Set.prototype.values;
const mapSize = getDescriptor(Map.prototype, 'size')!.get!;
const setSize = getDescriptor(Set.prototype, 'size')!.get!;
const iteratorNext = {
  map: getProto(new Map().entries()).next as (this: unknown) => IteratorResult<[unknown, unknown]>,
  set: getProto(new Set().values()).next as (this: unknown) => IteratorResult<unknown>,
};
const typedArrayLength = getDescriptor(getProto(Uint8Array.prototype) as object, 'length')!.get!;
const stringValueOf = String.prototype.valueOf;

/** Bounds of one console call. */
export interface FormatBounds {
  /** Values visited before the output is cut. */
  maxValues: number;
  /** Characters produced (roughly) before the output is cut. */
  maxChars: number;
}

interface FormatState {
  readonly maxValues: number;
  readonly maxChars: number;
  values: number;
  chars: number;
  cut: boolean;
}

/** The cut-off marker put where the formatter stopped. */
const CUT = '…';

function quote(text: string): string {
  const shown = text.length > MAX_NESTED_STRING_CHARS ? text.slice(0, MAX_NESTED_STRING_CHARS) : text;
  const more = text.length - shown.length;
  return `'${shown.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'${more > 0 ? `… ${more} more characters` : ''}`;
}

function formatKey(key: string | symbol): string {
  if (typeof key === 'symbol') return `[${String(key)}]`;
  return IDENTIFIER.test(key) ? key : quote(key);
}

function join(open: string, parts: string[], close: string, indent: string): string {
  if (parts.length === 0) return `${open}${close}`;
  const flat = `${open} ${parts.join(', ')} ${close}`;
  if (flat.length <= LINE_WIDTH && !flat.includes('\n')) return flat;
  const inner = `${indent}  `;
  return `${open}\n${inner}${parts.join(`,\n${inner}`)}\n${indent}${close}`;
}

function constructorName(value: object): string {
  try {
    const proto = getProto(value) as { constructor?: { name?: unknown } } | null;
    if (proto === null) return '[Object: null prototype]';
    const descriptor = getDescriptor(proto, 'constructor');
    const ctor = descriptor && 'value' in descriptor ? (descriptor.value as { name?: unknown }) : undefined;
    const name = ctor && typeof ctor === 'function' ? getDescriptor(ctor, 'name')?.value : undefined;
    return typeof name === 'string' ? name : '';
  } catch {
    return '';
  }
}

/** Counts `text` against the character budget and returns it. */
function spend(state: FormatState, text: string): string {
  state.chars += text.length;
  return text;
}

/** False (and the state marked cut) once a budget is spent: stop visiting. */
function mayVisit(state: FormatState): boolean {
  if (state.cut) return false;
  if (state.values >= state.maxValues || state.chars >= state.maxChars) {
    state.cut = true;
    return false;
  }
  state.values++;
  return true;
}

function formatValue(
  value: unknown,
  depth: number,
  seen: unknown[],
  indent: string,
  state: FormatState,
): string {
  if (!mayVisit(state)) return CUT;
  switch (typeof value) {
    case 'string':
      return spend(state, quote(value));
    case 'number':
      return spend(state, Object.is(value, -0) ? '-0' : String(value));
    case 'bigint':
      return spend(state, `${String(value)}n`);
    case 'boolean':
    case 'undefined':
      return spend(state, String(value));
    case 'symbol':
      return spend(state, value.toString());
    case 'function': {
      const name = getDescriptor(value, 'name')?.value;
      return spend(state, `[Function${typeof name === 'string' && name ? `: ${name}` : ' (anonymous)'}]`);
    }
  }
  if (value === null) return spend(state, 'null');
  const object = value as object;
  if (seen.includes(object)) return spend(state, '[Circular]');
  const tag = toStr.call(object);
  if (tag === '[object Date]') {
    const time = Date.prototype.getTime.call(object);
    return spend(state, Number.isNaN(time) ? 'Invalid Date' : new Date(time).toISOString());
  }
  if (tag === '[object Error]') {
    const stack = getDescriptor(object, 'stack')?.value;
    if (typeof stack === 'string') return spend(state, clip(stack));
    const message = getDescriptor(object, 'message')?.value;
    return spend(state, `Error: ${clip(String(message))}`);
  }
  if (tag === '[object RegExp]') return spend(state, clip(RegExp.prototype.toString.call(object)));
  // A promise printed is nearly always a tool call that was not awaited.
  if (tag === '[object Promise]') return spend(state, 'Promise { … } (did you forget `await`?)');
  if (tag === '[object String]') {
    try {
      return spend(state, `[String: ${quote(stringValueOf.call(object))}]`);
    } catch {
      // a String.prototype object or a forgery: format it as an object
    }
  }
  const array = isArray(object);
  const name = constructorName(object);
  if (depth > MAX_DEPTH) return spend(state, array ? '[Array]' : `[${name || 'Object'}]`);
  seen.push(object);
  state.chars += indent.length + 4; // brackets and the closing line
  const parts: string[] = [];
  const inner = `${indent}  `;
  const item = (entry: unknown): string => {
    state.chars += inner.length + 2; // the item's line: indentation and separator
    return formatValue(entry, depth + 1, seen, inner, state);
  };
  try {
    if (tag === '[object Map]') {
      const count = mapSize.call(object) as number;
      const iterator = mapEntries.call(object as Map<unknown, unknown>);
      for (let index = 0; index < MAX_ITEMS && !state.cut; index++) {
        const step = iteratorNext.map.call(iterator);
        if (step.done) break;
        parts.push(`${item(step.value[0])} => ${item(step.value[1])}`);
      }
      if (count > parts.length) parts.push(`… ${count - parts.length} more items`);
      return join(`Map(${count}) {`, parts, '}', indent);
    }
    if (tag === '[object Set]') {
      const count = setSize.call(object) as number;
      const iterator = setValues.call(object as Set<unknown>);
      for (let index = 0; index < MAX_ITEMS && !state.cut; index++) {
        const step = iteratorNext.set.call(iterator);
        if (step.done) break;
        parts.push(item(step.value));
      }
      if (count > parts.length) parts.push(`… ${count - parts.length} more items`);
      return join(`Set(${count}) {`, parts, '}', indent);
    }
    const typed = isView(object) && tag !== '[object DataView]';
    if (array || typed) {
      // By index, never through the list of every key (10 million keys for 10 million items).
      const counted: unknown = typed ? typedArrayLength.call(object) : getDescriptor(object, 'length')?.value;
      const length = typeof counted === 'number' && counted > 0 ? counted : 0;
      let shown = 0;
      let index = 0;
      for (; index < length && shown < MAX_ITEMS && !state.cut; index++) {
        if (typed) {
          parts.push(item((object as unknown as Record<number, unknown>)[index]));
          shown++;
          continue;
        }
        const descriptor = getDescriptor(object, String(index));
        if (!descriptor) continue; // a hole
        parts.push(describeSlot(descriptor, item));
        shown++;
      }
      if (index < length) parts.push(`… ${length - index} more items`);
      // Named properties of small arrays only (listing a huge array's keys is the cost avoided).
      if (array && length <= MAX_ITEMS) {
        for (const key of ownKeys(object)) {
          if (state.cut) break;
          if (key === 'length' || (typeof key === 'string' && INDEX.test(key))) continue;
          const descriptor = getDescriptor(object, key);
          if (!descriptor || !descriptor.enumerable) continue;
          parts.push(`${spend(state, formatKey(key))}: ${describeSlot(descriptor, item)}`);
        }
      }
      return typed
        ? join(`${name || 'TypedArray'}(${length}) [`, parts, ']', indent)
        : join('[', parts, ']', indent);
    }
    const keys = ownKeys(object);
    let shown = 0;
    let index = 0;
    for (; index < keys.length && shown < MAX_ITEMS && !state.cut; index++) {
      const key = keys[index]!;
      const descriptor = getDescriptor(object, key);
      if (!descriptor || !descriptor.enumerable) continue;
      shown++;
      parts.push(`${spend(state, formatKey(key))}: ${describeSlot(descriptor, item)}`);
    }
    // The rest are counted, not read (some may be non-enumerable).
    if (index < keys.length) parts.push(`… ${keys.length - index} more keys`);
    const prefix = name && name !== 'Object' ? `${name} ` : '';
    return join(`${prefix}{`, parts, '}', indent);
  } catch {
    return '[unreadable]';
  } finally {
    seen.pop();
  }
}

function describeSlot(descriptor: PropertyDescriptor, item: (entry: unknown) => string): string {
  if ('value' in descriptor) return item(descriptor.value);
  return descriptor.get && descriptor.set ? '[Getter/Setter]' : descriptor.get ? '[Getter]' : '[Setter]';
}

function clip(text: string): string {
  return text.length > MAX_NESTED_STRING_CHARS
    ? `${text.slice(0, MAX_NESTED_STRING_CHARS)}… ${text.length - MAX_NESTED_STRING_CHARS} more characters`
    : text;
}

/**
 * Formats console arguments like Node: `%s %d %i %f %j %o %O %%` in a leading string, then
 * space-joined. Visits at most `bounds.maxValues` values and stops adding arguments or values
 * past about `bounds.maxChars` characters, ending the text with a marker when it cut.
 */
export function formatArgs(args: unknown[], bounds: FormatBounds): string {
  const state: FormatState = {
    maxValues: bounds.maxValues,
    maxChars: bounds.maxChars,
    values: 0,
    chars: 0,
    cut: false,
  };
  const parts: string[] = [];
  let index = 0;
  const first = args[0];
  if (typeof first === 'string' && first.includes('%') && args.length > 1) {
    index = 1;
    parts.push(
      first.replace(/%([sdifjoO%])/g, (match, kind: string) => {
        if (kind === '%') return '%';
        if (index >= args.length) return match;
        const arg = args[index++];
        switch (kind) {
          case 's':
            return typeof arg === 'string' ? spend(state, arg) : formatValue(arg, 1, [], '', state);
          case 'd':
          case 'i': {
            const number = Number(arg);
            return String(kind === 'i' ? Math.trunc(number) : number);
          }
          case 'f':
            return String(Number(arg));
          case 'j':
            try {
              return spend(state, String(stringify(arg)));
            } catch {
              return '[Circular]';
            }
          default:
            return formatValue(arg, 0, [], '', state);
        }
      }),
    );
  }
  for (; index < args.length && !state.cut; index++) {
    const arg = args[index];
    if (typeof arg === 'string') {
      parts.push(spend(state, arg));
      if (state.chars >= state.maxChars && index + 1 < args.length) state.cut = true;
    } else parts.push(formatValue(arg, 0, [], '', state));
  }
  const text = parts.join(' ');
  if (!state.cut) return text;
  return `${text} … output truncated: formatter visited ${state.values} values (${state.maxValues} at most, about ${state.maxChars} characters) — print a smaller part of the value`;
}
