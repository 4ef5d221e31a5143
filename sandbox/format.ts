/**
 * @module
 * Readable formatting of console arguments inside the isolate, in the spirit of Node's
 * `util.inspect`: strings print raw at top level, objects as `{ a: 1, b: [ 1, 2 ] }`, with
 * bounded depth, items and string length, circular references marked, getters not invoked and
 * values that throw while being read shown as `[unreadable]`. No Node APIs.
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
const stringify = JSON.stringify;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

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

function formatValue(value: unknown, depth: number, seen: unknown[], indent: string): string {
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'number':
      return Object.is(value, -0) ? '-0' : String(value);
    case 'bigint':
      return `${String(value)}n`;
    case 'boolean':
    case 'undefined':
      return String(value);
    case 'symbol':
      return value.toString();
    case 'function': {
      const name = getDescriptor(value, 'name')?.value;
      return `[Function${typeof name === 'string' && name ? `: ${name}` : ' (anonymous)'}]`;
    }
  }
  if (value === null) return 'null';
  const object = value as object;
  if (seen.includes(object)) return '[Circular]';
  const tag = toStr.call(object);
  if (tag === '[object Date]') {
    const time = Date.prototype.getTime.call(object);
    return Number.isNaN(time) ? 'Invalid Date' : new Date(time).toISOString();
  }
  if (tag === '[object Error]') {
    const stack = getDescriptor(object, 'stack')?.value;
    if (typeof stack === 'string') return stack;
    const message = getDescriptor(object, 'message')?.value;
    return `Error: ${String(message)}`;
  }
  if (tag === '[object RegExp]') return RegExp.prototype.toString.call(object);
  if (tag === '[object Promise]') return 'Promise { … }';
  const array = isArray(object);
  const name = constructorName(object);
  if (depth > MAX_DEPTH) return array ? '[Array]' : `[${name || 'Object'}]`;
  seen.push(object);
  const parts: string[] = [];
  const inner = `${indent}  `;
  try {
    if (tag === '[object Map]') {
      let count = 0;
      Map.prototype.forEach.call(object, (entry: unknown, key: unknown) => {
        if (count++ < MAX_ITEMS) {
          parts.push(
            `${formatValue(key, depth + 1, seen, inner)} => ${formatValue(entry, depth + 1, seen, inner)}`,
          );
        }
      });
      if (count > MAX_ITEMS) parts.push(`… ${count - MAX_ITEMS} more items`);
      return join(`Map(${count}) {`, parts, '}', indent);
    }
    if (tag === '[object Set]') {
      let count = 0;
      Set.prototype.forEach.call(object, (entry: unknown) => {
        if (count++ < MAX_ITEMS) parts.push(formatValue(entry, depth + 1, seen, inner));
      });
      if (count > MAX_ITEMS) parts.push(`… ${count - MAX_ITEMS} more items`);
      return join(`Set(${count}) {`, parts, '}', indent);
    }
    const keys = ownKeys(object);
    let shown = 0;
    let hidden = 0;
    for (const key of keys) {
      if (array && key === 'length') continue;
      const descriptor = getDescriptor(object, key);
      if (!descriptor || !descriptor.enumerable) continue;
      if (shown >= MAX_ITEMS) {
        hidden++;
        continue;
      }
      shown++;
      const isIndex = array && typeof key === 'string' && /^\d+$/.test(key);
      const shownValue =
        'value' in descriptor
          ? formatValue(descriptor.value, depth + 1, seen, inner)
          : descriptor.get && descriptor.set
            ? '[Getter/Setter]'
            : descriptor.get
              ? '[Getter]'
              : '[Setter]';
      parts.push(isIndex ? shownValue : `${formatKey(key)}: ${shownValue}`);
    }
    if (hidden > 0) parts.push(`… ${hidden} more ${array ? 'items' : 'keys'}`);
    if (array) return join('[', parts, ']', indent);
    const prefix = name && name !== 'Object' ? `${name} ` : '';
    return join(`${prefix}{`, parts, '}', indent);
  } catch {
    return '[unreadable]';
  } finally {
    seen.pop();
  }
}

/** Formats console arguments like Node: `%s %d %i %f %j %o %O %%` in a leading string, then space-joined. */
export function formatArgs(args: unknown[]): string {
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
            return typeof arg === 'string' ? arg : formatValue(arg, 1, [], '');
          case 'd':
          case 'i': {
            const number = Number(arg);
            return String(kind === 'i' ? Math.trunc(number) : number);
          }
          case 'f':
            return String(Number(arg));
          case 'j':
            try {
              return String(stringify(arg));
            } catch {
              return '[Circular]';
            }
          default:
            return formatValue(arg, 0, [], '');
        }
      }),
    );
  }
  for (; index < args.length; index++) {
    const arg = args[index];
    parts.push(typeof arg === 'string' ? arg : formatValue(arg, 0, [], ''));
  }
  return parts.join(' ');
}
