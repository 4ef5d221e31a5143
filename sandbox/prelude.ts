/**
 * @module
 * The prelude: code that runs INSIDE each isolate before the model's script. It installs
 * `console`, `tools.<namespace>.<member>(args)` and `callTool(name, args)`, and removes every
 * global that is not plain JavaScript. It talks to the host only through four functions the
 * host installs as globals before this runs (`__codecall_out`, `__codecall_call`,
 * `__codecall_done`, `__codecall_list`); they are captured in this closure and deleted from the
 * global object, so the model's code cannot reach them. Only strings and numbers cross:
 * arguments leave as JSON text, results arrive as JSON text.
 *
 * No Node APIs here: esbuild bundles this file into one strict-mode script
 * (`dist/sandbox/prelude.js`, see scripts/build.mjs).
 */
import { CALL_OVERHEAD_BYTES, LIMIT_MESSAGES, MAX_ECHOED_NAME_CHARS } from '../src/isolate/limit-table.js';
import { formatArgs } from './format.js';

/**
 * Set to `false` only by a test build of the prelude (esbuild `define`, see
 * test/fixtures/prelude-without-checks.ts) so that a test can prove the host's refusal of each
 * limit by itself. The shipped bundle never defines it, and no global a script or the host's
 * configuration can set is read: undefined means the checks are on.
 */
declare const __CODECALL_PRELUDE_CHECKS__: boolean | undefined;
/** Whether this prelude checks the limits of {@link LIMIT_MESSAGES} itself before a call crosses. */
const CHECKS: boolean =
  typeof __CODECALL_PRELUDE_CHECKS__ === 'undefined' ? true : __CODECALL_PRELUDE_CHECKS__ !== false;

type OutFn = (stream: number, text: string, droppedBytes: number) => void;
type CallFn = (id: number, name: string, argsJson: string, site?: string) => void;
type DoneFn = (ok: boolean, payload: string | undefined) => void;
/** JSON `[[namespace, member], …]` of the tools of the run's catalog. */
type ListFn = () => string;

interface StartConfig {
  /**
   * Names (qualified and as written) of the tools whose calls report their script line. The
   * catalog itself never crosses per run: `tools` binds members on first use, and lists the
   * catalog (read through `__codecall_list`) only when the script enumerates it.
   */
  lineTools: string[];
  /** `1` when the run has `store`. */
  store: 0 | 1;
  maxStdoutBytes: number;
  maxStderrBytes: number;
  maxToolArgsBytes: number;
  maxToolCalls: number;
  maxPendingToolArgsBytes: number;
  /** Longest tool name a call may have (the limit, or the catalog's longest name when longer). */
  maxToolNameChars: number;
  maxFormattedValues: number;
}

interface Pending {
  /** The call's id (its slot is `id & slotMask`, see {@link track}). */
  id: number;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** Made at the call (the first {@link SITE_CAPTURED_CALLS} calls): its stack has the call site. */
  site: Error | undefined;
  /** What the call counts against the run's pending-arguments budget until it is answered. */
  cost: number;
  /** The tool's name as the script called it (for the hints of {@link unfinishedNote} and {@link typeErrorHint}). */
  name: string;
}

const scope = globalThis as unknown as Record<string, unknown>;
const out = scope.__codecall_out as OutFn;
const call = scope.__codecall_call as CallFn;
const done = scope.__codecall_done as DoneFn;
const list = scope.__codecall_list as ListFn;
for (const name of [
  '__codecall_out',
  '__codecall_call',
  '__codecall_done',
  '__codecall_list',
  'WebAssembly',
  'SharedArrayBuffer',
  'Atomics',
  // present only when the process runs with --expose-gc (a host started that way, in-process)
  'gc',
]) {
  // `gc` (from --expose-gc) cannot be deleted, only overwritten
  if (!Reflect.deleteProperty(scope, name)) scope[name] = undefined;
}

const stringify = JSON.stringify;
const parse = JSON.parse;
const PromiseCtor = Promise;
const ErrorCtor = Error;
const TypeErrorCtor = TypeError;
const StringCtor = String;
const defineProperty = Object.defineProperty;
const freeze = Object.freeze;
const createObject = Object.create;
/** `Object.hasOwn`, read once: no argument list allocated per check (`tools.<ns>.<member>` traps run at every call). */
const hasOwn = Object.hasOwn;
const promiseThen = Promise.prototype.then;
const apply = Reflect.apply;
const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
const deleteProperty = Reflect.deleteProperty;
const ownKeys = Reflect.ownKeys;
const tryDefine = Reflect.defineProperty;
const SetCtor = Set;
const isArray = Array.isArray;
const ProxyCtor = Proxy;
const MAX_MESSAGE_CHARS = 4_000;
const MAX_STACK_CHARS = 8_000;
/** Room kept in a stream for the formatter's cut-off marker. */
const MARKER_ROOM_CHARS = 256;

/** Slots of the calls table at the start of a run (a power of two). */
const INITIAL_SLOTS = 16;

/** Calls in flight by slot: a prototype-less object, so no setter a script defines can intercept a slot. */
type Slots = Record<number, Pending | undefined>;

/**
 * `size` empty slots, each an own property (written in order from 0: a small dense object keeps
 * its slots in a plain array, not a dictionary).
 */
function emptySlots(size: number): Slots {
  const made = createObject(null) as Slots;
  for (let index = 0; index < size; index++) made[index] = undefined;
  return made;
}

/**
 * Calls waiting for their answer, each in slot `id & slotMask`: ids are given out in order, so a
 * table no larger than the calls in flight holds them without hashing (an object keyed by ever
 * larger ids turns into a dictionary whose every store and delete hashes the key). A new call
 * whose slot is still taken (an old call still in flight) doubles the table; the calls of one
 * run bound its size (every call that crosses is counted against `maxToolCalls`).
 */
let slots = emptySlots(INITIAL_SLOTS);
let slotMask = INITIAL_SLOTS - 1;
let nextId = 1;
/** Calls per run whose Error is made at the call, so an uncaught failure names its line. */
const SITE_CAPTURED_CALLS = 100;
let sitesLeft = 0;
let maxArgs = 0;
let maxCalls = 0;
let maxPending = 0;
let maxName = 0;
/** Calls of this run that crossed to the host. */
let crossed = 0;
/** Characters of arguments and names of calls that crossed and are not answered yet. */
let pendingChars = 0;
const left = [0, 0];
const limit = [0, 0];
let maxValues = 0;

/**
 * The calls of `store.get` / `store.set`, answered by the host (`STORE_GET_CALL` and
 * `STORE_SET_CALL` in src/execute/script-store.ts): bound like tools, installed as `store`.
 */
const STORE_GET = 'codecall:store.get';
const STORE_SET = 'codecall:store.set';

/** Names (qualified and as written) of the tools whose calls report their script line. */
let lineTools = new SetCtor<string>();
/** Filename of the model's script in stack traces (`SCRIPT_FILENAME` on the host). */
const SCRIPT_FILE = 'script.js';
/** Frames captured to find a call's script line (the prelude's own frames come first). */
const SITE_FRAMES = 16;
const returnSites = (_error: unknown, sites: unknown) => sites;
type SiteMethod = (this: unknown) => unknown;
/** V8's CallSite accessors (non-writable in V8; read once, before any script runs, all the same). */
const siteMethods = ((): { file: SiteMethod; line: SiteMethod; column: SiteMethod } | undefined => {
  const ctor = ErrorCtor as unknown as { prepareStackTrace?: unknown };
  try {
    ctor.prepareStackTrace = returnSites;
    const sites = new ErrorCtor().stack as unknown as Record<string, SiteMethod>[];
    const proto = Object.getPrototypeOf(sites[0]) as Record<string, SiteMethod>;
    return { file: proto.getFileName!, line: proto.getLineNumber!, column: proto.getColumnNumber! };
  } catch {
    return undefined;
  } finally {
    delete ctor.prepareStackTrace;
  }
})();

/**
 * The generated `line:column` of the innermost script frame calling now, read from V8's
 * structured stack with the prelude's own `prepareStackTrace` and `stackTraceLimit` (the
 * script's are set aside for the capture and put back). Undefined when the script made those
 * properties unchangeable, or no frame of the script is on the stack.
 */
function callSite(): string | undefined {
  if (siteMethods === undefined) return undefined;
  const prepare = getOwnPropertyDescriptor(ErrorCtor, 'prepareStackTrace');
  const depth = getOwnPropertyDescriptor(ErrorCtor, 'stackTraceLimit');
  if (prepare?.configurable === false || depth?.configurable === false) return undefined;
  try {
    defineProperty(ErrorCtor, 'prepareStackTrace', {
      value: returnSites,
      configurable: true,
      writable: true,
    });
    defineProperty(ErrorCtor, 'stackTraceLimit', { value: SITE_FRAMES, configurable: true, writable: true });
    const sites = new ErrorCtor().stack as unknown;
    if (!isArray(sites)) return undefined;
    for (let index = 0; index < sites.length; index++) {
      const site = sites[index] as unknown;
      if (apply(siteMethods.file, site, []) !== SCRIPT_FILE) continue;
      return `${StringCtor(apply(siteMethods.line, site, []))}:${StringCtor(apply(siteMethods.column, site, []))}`;
    }
    return undefined;
  } catch {
    return undefined;
  } finally {
    try {
      if (prepare) defineProperty(ErrorCtor, 'prepareStackTrace', prepare);
      else deleteProperty(ErrorCtor, 'prepareStackTrace');
      if (depth) defineProperty(ErrorCtor, 'stackTraceLimit', depth);
      else deleteProperty(ErrorCtor, 'stackTraceLimit');
    } catch {
      // the script cannot make these unchangeable between the check and here
    }
  }
}

/** Files `entry` in its slot, doubling the table while that slot is taken. */
function track(entry: Pending): void {
  while (slots[entry.id & slotMask] !== undefined) grow();
  slots[entry.id & slotMask] = entry;
}

/** Doubles the calls table. */
function grow(): void {
  const old = slots;
  const oldSize = slotMask + 1;
  const size = oldSize * 2;
  const grown = emptySlots(size);
  // Distinct slots under the old mask stay distinct under the new one.
  for (let index = 0; index < oldSize; index++) {
    const kept = old[index];
    if (kept !== undefined) grown[kept.id & (size - 1)] = kept;
  }
  slots = grown;
  slotMask = size - 1;
}

/** Takes the call `id` out of the table; undefined when it is not in flight. */
function untrack(id: number): Pending | undefined {
  const slot = id & slotMask;
  const entry = slots[slot];
  if (entry === undefined || entry.id !== id) return undefined;
  slots[slot] = undefined;
  return entry;
}

/**
 * A note for stderr when calls were still in flight as the script ended: their promises were
 * never awaited (the classic missing `await`), and their results are dropped.
 */
function unfinishedNote(): string | undefined {
  let count = 0;
  const names: string[] = [];
  for (let index = 0; index <= slotMask; index++) {
    const entry = slots[index];
    if (entry === undefined) continue;
    count++;
    if (names.length < 3 && names.indexOf(entry.name) < 0) names[names.length] = entry.name;
  }
  if (count === 0) return undefined;
  return `note: ${count} tool call${count === 1 ? '' : 's'} (${names.join(', ')}${count > names.length ? ', …' : ''}) had not finished when the script ended: did you forget \`await\`? Their results were dropped.`;
}

/** Forgets every call in flight (the run ended, or warming did). */
function untrackAll(): void {
  slots = emptySlots(INITIAL_SLOTS);
  slotMask = INITIAL_SLOTS - 1;
}

/** UTF-8 length of a string, without TextEncoder (absent in bare isolates). */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code < 0xdc00 && index + 1 < text.length) {
      bytes += 4;
      index++;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * Characters one console call formats: the stream's whole budget, less room for the formatter's
 * cut-off marker (and for its count being approximate) so that the marker shows when one call
 * overflows the stream.
 */
function formatChars(stream: number): number {
  const budget = limit[stream]!;
  const room = Math.max(MARKER_ROOM_CHARS, Math.floor(budget / 8));
  return budget > 2 * room ? budget - room : budget;
}

/** Sends console text to the host, never more characters than the stream's byte budget. */
function write(stream: number, args: unknown[]): void {
  let text: string;
  try {
    text = formatArgs(args, { maxValues, maxChars: formatChars(stream) }) + '\n';
  } catch {
    text = '[value could not be formatted]\n';
  }
  const budget = left[stream]!;
  if (!CHECKS || text.length <= budget) {
    left[stream] = budget - text.length;
    out(stream, text, 0);
    return;
  }
  left[stream] = 0;
  out(stream, text.slice(0, budget), utf8Length(text.slice(budget)));
}

/**
 * Makes `error` (new, or the call-site error of a pending call, created without a message) a
 * ToolError or ToolLimitError, with its stack's first line rewritten to carry name and message.
 */
function toolError(message: string, code: string | undefined, error: Error = new ErrorCtor()): Error {
  const name = code !== undefined && code.endsWith('_LIMIT') ? 'ToolLimitError' : 'ToolError';
  defineProperty(error, 'message', { value: message, configurable: true, writable: true });
  defineProperty(error, 'name', { value: name, configurable: true, writable: true });
  let stack: unknown;
  try {
    stack = error.stack; // a string unless the script replaced Error.prepareStackTrace
  } catch {
    stack = undefined;
  }
  if (typeof stack === 'string') {
    const frames = stack.indexOf('\n');
    defineProperty(error, 'stack', {
      value: `${name}: ${message}${frames === -1 ? '' : stack.slice(frames)}`,
      configurable: true,
      writable: true,
    });
  }
  if (code !== undefined) defineProperty(error, 'code', { value: code, enumerable: true });
  return error;
}

/**
 * Settles a pending call as failed. For the first {@link SITE_CAPTURED_CALLS} calls of a run the
 * error is the one made at the call, whose stack holds the script's call site (about 3 µs per
 * call to capture, so later calls skip it). Later calls get an error made in a promise job
 * chained to the call's own promise (the call's promise is resolved with that job's promise
 * before the job runs): V8's async stack trace then names the script functions awaiting the
 * call (`at async main (script.js:7:1)`), which the host maps to the model's lines. That chain
 * is lost where a script function returns the call's promise without awaiting it. Only failures
 * pay for this: a call that succeeds resolves the script's promise directly.
 */
function fail(entry: Pending, message: string, code: string | undefined): void {
  if (entry.site !== undefined) {
    entry.reject(toolError(message, code, entry.site));
    return;
  }
  let open!: () => void;
  const gate = new PromiseCtor<void>((resolve) => (open = resolve));
  const failed = apply(promiseThen, gate, [
    () => {
      throw toolError(message, code);
    },
  ]) as Promise<unknown>;
  entry.resolve(failed);
  open();
}

/** The resolving functions of the promise {@link callTool} made last (see {@link capture}). */
let madeResolve: (value: unknown) => void = () => {};
let madeReject: (error: unknown) => void = () => {};

/** A promise executor that hands its resolving functions out: no closure made per call. */
function capture(resolve: (value: unknown) => void, reject: (error: unknown) => void): void {
  madeResolve = resolve;
  madeReject = reject;
}

/**
 * Calls a tool for the script: the promise the script awaits is the call's own (see
 * {@link fail} for how a failure names the script's line).
 */
function callTool(name: string, args: unknown): Promise<unknown> {
  const promise = new PromiseCtor<unknown>(capture);
  const resolve = madeResolve;
  const reject = madeReject;
  try {
    request(name, args, resolve, reject);
  } catch (error) {
    // as a throw in a promise executor: the call's promise rejects
    reject(error);
  }
  return promise;
}

/**
 * Checks a call and sends it to the host, or rejects it (see {@link callTool}). The refusals are
 * made in functions of their own: V8 optimises a function once it has run about as many
 * bytecodes as some hundreds of calls through all of it would, and each run's isolate starts
 * unoptimised, so a long function whose calls take its short path stays slow for most of a run.
 */
function request(
  name: string,
  args: unknown,
  resolve: (value: unknown) => void,
  reject: (error: unknown) => void,
): void {
  if (CHECKS && name.length > maxName) return reject(longNameError(name));
  let json: unknown;
  try {
    json = args === undefined ? '{}' : stringify(args);
  } catch (error) {
    return reject(notJsonError(name, error));
  }
  if (typeof json !== 'string' || json.charCodeAt(0) !== 123 /* { */) return reject(notObjectError(name));
  if (CHECKS && json.length > maxArgs) return reject(argsTooLargeError(name, json));
  // Every call that crosses costs host memory until it is answered (while the script runs
  // without awaiting, calls pile up in the IPC channel): bound their number and their bytes.
  if (CHECKS && crossed >= maxCalls) return reject(callLimitError());
  const cost = json.length + name.length + CALL_OVERHEAD_BYTES;
  if (CHECKS && pendingChars + cost > maxPending) return reject(pendingError(cost));
  crossed++;
  pendingChars += cost;
  const id = nextId++;
  track({ id, resolve, reject, site: sitesLeft-- > 0 ? new ErrorCtor() : undefined, cost, name });
  // Only tools that may need approval pay for the capture (the request names the line).
  const site = lineTools.size > 0 && lineTools.has(name) ? callSite() : undefined;
  if (site === undefined) call(id, name, json);
  else call(id, name, json, site);
}

function longNameError(name: string): Error {
  return toolError(LIMIT_MESSAGES.toolName(name, maxName), 'UNKNOWN_TOOL');
}

function notJsonError(name: string, error: unknown): Error {
  let reason = 'it could not be serialized';
  try {
    reason = StringCtor((error as Error).message);
  } catch {
    // keep the generic reason
  }
  return new TypeErrorCtor(
    `Arguments of ${name} must be JSON data (${clip(reason, MAX_ECHOED_NAME_CHARS * 4)}).`,
  );
}

function notObjectError(name: string): Error {
  return new TypeErrorCtor(`${name} takes one object argument, for example ${name}({ … }).`);
}

function argsTooLargeError(name: string, json: string): Error {
  return toolError(LIMIT_MESSAGES.toolArgs(name, utf8Length(json), maxArgs), 'TOOL_ARGS_LIMIT');
}

function callLimitError(): Error {
  return toolError(LIMIT_MESSAGES.toolCalls(maxCalls), 'TOOL_CALL_LIMIT');
}

function pendingError(cost: number): Error {
  return toolError(LIMIT_MESSAGES.pendingToolArgs(pendingChars, cost, maxPending), 'TOOL_ARGS_LIMIT');
}

const NOT_A_TOOL = new Set(['then', 'toJSON', 'constructor', 'valueOf', 'toString', 'inspect']);

type Members = Record<string, unknown>;

/**
 * The run's catalog as `namespace → members`, read from the host the first time the script
 * enumerates `tools` or a namespace (`Object.keys`, `in`, `for…in`); undefined until then.
 */
let listed: Record<string, Record<string, true>> | undefined;

function catalogListed(): Record<string, Record<string, true>> {
  if (listed !== undefined) return listed;
  const byNamespace = Object.create(null) as Record<string, Record<string, true>>;
  let pairs: unknown;
  try {
    pairs = parse(list());
  } catch {
    pairs = [];
  }
  if (isArray(pairs)) {
    for (let index = 0; index < pairs.length; index++) {
      const pair = pairs[index] as unknown;
      if (!isArray(pair) || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') continue;
      (byNamespace[pair[0]] ??= Object.create(null) as Record<string, true>)[pair[1]] = true;
    }
  }
  return (listed = byNamespace);
}

/** The function `tools.<namespace>.<member>`: made on first use, then the same for the run. */
function stubOf(stubs: Members, namespace: string, member: string): unknown {
  if (hasOwn(stubs, member)) return stubs[member];
  const name = `${namespace}.${member}`;
  const stub = (args?: unknown) => callTool(name, args);
  defineProperty(stub, 'name', { value: member });
  defineProperty(stub, 'pages', { value: (args?: unknown) => pagesOf(name, args) });
  // Kept for the run (a frozen namespace, the script's doing, only loses the caching).
  tryDefine(stubs, member, { value: stub, enumerable: true, configurable: true, writable: true });
  return stub;
}

/**
 * Where a page says there is a next one, and the argument that asks for it: `nextCursor` →
 * `cursor`, `nextOffset` → `offset`, `nextPage` → `page`, `nextPageToken` → `pageToken` (and
 * their snake_case spellings). See docs/data.md.
 */
const PAGE_FIELDS: readonly (readonly [string, string])[] = [
  ['nextCursor', 'cursor'],
  ['next_cursor', 'cursor'],
  ['nextOffset', 'offset'],
  ['next_offset', 'offset'],
  ['nextPage', 'page'],
  ['next_page', 'page'],
  ['nextPageToken', 'pageToken'],
  ['next_page_token', 'page_token'],
];

/**
 * `tools.<ns>.<tool>.pages(args)`: every page of a paginated tool, one call each, following the
 * page's next cursor/offset/page into the next call's arguments until it is absent or null.
 * Bounded by the run's `maxToolCalls`; a next value equal to the last one stops it with an error.
 */
async function* pagesOf(name: string, args: unknown): AsyncGenerator<unknown> {
  let current = (args === undefined ? {} : args) as Record<string, unknown>;
  if (typeof current !== 'object' || current === null || isArray(current))
    throw new TypeErrorCtor(`${name}.pages takes the tool's arguments object, e.g. ${name}.pages({ … }).`);
  let previous: unknown;
  for (;;) {
    const page = await callTool(name, current);
    yield page;
    if (typeof page !== 'object' || page === null) return;
    let param: string | undefined;
    let next: unknown;
    for (let index = 0; index < PAGE_FIELDS.length; index++) {
      const [field, argument] = PAGE_FIELDS[index]!;
      if (hasOwn(page, field)) {
        param = argument;
        next = (page as Record<string, unknown>)[field];
        break;
      }
    }
    if (param === undefined || next === undefined || next === null || next === '' || next === false) return;
    if (next === previous)
      throw toolError(
        `${name} returned the same next ${param} twice (${clip(StringCtor(next), 80)}): pages() stopped to avoid a loop.`,
        'TOOL_ERROR',
      );
    previous = next;
    current = { ...current, [param]: next };
  }
}

/**
 * Traps that list the catalog's entries on a proxy: on the first enumeration (`Object.keys`,
 * `in`, `for…in`) they are copied into its target, so the script sees the tools the run may
 * call. Only names cross, and only when asked; the host checks every call whatever its name.
 */
function listingTraps(
  names: () => Record<string, unknown> | undefined,
  make: (key: string) => unknown,
): Pick<ProxyHandler<Members>, 'has' | 'ownKeys' | 'getOwnPropertyDescriptor'> {
  let filled = false;
  const fill = (target: Members): void => {
    if (filled) return;
    filled = true;
    const listedNames = names();
    for (const key in listedNames) if (!hasOwn(target, key)) make(key);
  };
  return {
    has(target, key) {
      fill(target);
      return key in target;
    },
    ownKeys(target) {
      fill(target);
      return ownKeys(target);
    },
    getOwnPropertyDescriptor(target, key) {
      fill(target);
      return getOwnPropertyDescriptor(target, key);
    },
  };
}

function namespaceProxy(namespace: string): unknown {
  const stubs: Members = {};
  const make = (key: string) => stubOf(stubs, namespace, key);
  return new ProxyCtor(stubs, {
    get(target, key) {
      if (typeof key !== 'string' || hasOwn(target, key) || NOT_A_TOOL.has(key)) {
        return (target as Record<PropertyKey, unknown>)[key];
      }
      return make(key);
    },
    ...listingTraps(() => catalogListed()[namespace], make),
  });
}

function installTools(config: StartConfig): void {
  lineTools = new SetCtor<string>();
  for (let index = 0; index < config.lineTools.length; index++) lineTools.add(config.lineTools[index]!);
  listed = undefined;
  const namespaces: Members = {};
  const make = (key: string): unknown => {
    const proxy = namespaceProxy(key);
    tryDefine(namespaces, key, { value: proxy, enumerable: true, configurable: true, writable: true });
    return proxy;
  };
  const toolsProxy = new ProxyCtor(namespaces, {
    get(target, key) {
      if (typeof key !== 'string' || hasOwn(target, key) || NOT_A_TOOL.has(key)) {
        return (target as Record<PropertyKey, unknown>)[key];
      }
      return make(key);
    },
    ...listingTraps(catalogListed, make),
  });
  defineProperty(scope, 'tools', { value: toolsProxy, writable: true, configurable: true });
  if (config.store === 1) {
    const store = freeze({
      get: (key: unknown) => callTool(STORE_GET, { key }),
      set: (key: unknown, value?: unknown) =>
        callTool(STORE_SET, value === undefined ? { key } : { key, value }),
    });
    defineProperty(scope, 'store', { value: store, writable: true, configurable: true });
  }
  defineProperty(scope, 'callTool', {
    value: (name: unknown, args?: unknown) => callTool(StringCtor(name), args),
    writable: true,
    configurable: true,
  });
}

function installConsole(): void {
  const log = (...args: unknown[]) => write(0, args);
  const error = (...args: unknown[]) => write(1, args);
  const console = { log, info: log, debug: log, trace: log, dir: log, table: log, warn: error, error };
  defineProperty(scope, 'console', { value: freeze(console), writable: true, configurable: true });
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** Reads a thrown value into plain strings, surviving hostile getters and proxies. */
/** Tool results kept (weakly) for {@link typeErrorHint}: the last few that were objects. */
const RECENT_RESULTS = 4;
const WeakRefCtor = typeof WeakRef === 'function' ? WeakRef : undefined;
let recent: ({ name: string; ref: WeakRef<object> } | undefined)[] = [];
let recentNext = 0;
const keysOf = Object.keys;

/** Keeps a weak reference to a tool's object result (it stays collectable). */
function remember(name: string, value: object): void {
  if (WeakRefCtor === undefined) return;
  recent[recentNext++ % RECENT_RESULTS] = { name, ref: new WeakRefCtor(value) };
}

/** `an array of 20 objects`, `an object with keys items, total`, … (bounded; never a value). */
function shapeOf(value: unknown, depth: number): string {
  if (value === null) return 'null';
  if (isArray(value)) {
    const first: unknown = value.length > 0 ? value[0] : undefined;
    const of =
      first === undefined ? '' : ` ${first === null ? 'null' : isArray(first) ? 'array' : typeof first}s`;
    return `an array of ${value.length}${of}`;
  }
  if (typeof value !== 'object') return typeof value;
  const record = value as Record<string, unknown>;
  if (record.isHandle === true)
    return `a result handle (${StringCtor(record.length)} rows at "${StringCtor(record.rowsAt)}": use count/sum/groupBy/filter or for await)`;
  const keys = keysOf(record);
  const shown = keys.slice(0, 8);
  const parts: string[] = [];
  for (let index = 0; index < shown.length; index++) {
    const key = shown[index]!;
    parts[parts.length] = depth > 0 ? key : `${key}: ${shapeOf(record[key], depth + 1)}`;
  }
  return `an object { ${parts.join(', ')}${keys.length > shown.length ? ', …' : ''} }`;
}

/**
 * For a TypeError (`x.filter is not a function`, `Cannot read properties of undefined`): what the
 * run's latest tool results are, by type and keys, so the model sees the real shape.
 */
function typeErrorHint(): string | undefined {
  const lines: string[] = [];
  const named: string[] = [];
  for (let step = 1; step <= RECENT_RESULTS && lines.length < 2; step++) {
    const kept = recent[(recentNext - step + RECENT_RESULTS * 2) % RECENT_RESULTS];
    if (kept === undefined || named.indexOf(kept.name) >= 0) continue;
    const value = kept.ref.deref();
    if (value === undefined) continue;
    named[named.length] = kept.name;
    try {
      lines[lines.length] = `${kept.name}(…) returned ${shapeOf(value, 0)}`;
    } catch {
      // a getter the script defined: leave it out
    }
  }
  if (lines.length === 0) return undefined;
  return `Tool results in this run (check the value you used against their shape): ${lines.join('; ')}.`;
}

function describeThrown(thrown: unknown): string {
  const report: Record<string, string> = {};
  try {
    if ((typeof thrown === 'object' && thrown !== null) || typeof thrown === 'function') {
      const value = thrown as Record<string, unknown>;
      for (const key of ['name', 'message', 'stack', 'code']) {
        try {
          const field = value[key];
          if (field !== undefined && field !== null) {
            report[key] = clip(StringCtor(field), key === 'stack' ? MAX_STACK_CHARS : MAX_MESSAGE_CHARS);
          }
        } catch {
          // a getter that throws: leave the field out
        }
      }
      if (report.name === 'TypeError' && report.message !== undefined) {
        const hint = typeErrorHint();
        if (hint !== undefined) report.message = clip(`${report.message}\n${hint}`, MAX_MESSAGE_CHARS);
      }
      if (report.message === undefined && report.name === undefined) {
        try {
          report.value = clip(
            formatArgs([thrown], { maxValues, maxChars: MAX_MESSAGE_CHARS }),
            MAX_MESSAGE_CHARS,
          );
        } catch {
          report.value = '[object]';
        }
      }
    } else {
      report.value = clip(
        typeof thrown === 'string' ? stringify(thrown) : StringCtor(thrown),
        MAX_MESSAGE_CHARS,
      );
    }
  } catch {
    report.value = '[a value that could not be read]';
  }
  return stringify(report);
}

function finish(ok: boolean, value: unknown): void {
  const note = unfinishedNote();
  if (note !== undefined) write(1, [note]);
  untrackAll();
  if (!ok) {
    done(false, describeThrown(value));
    return;
  }
  let json: string | undefined;
  try {
    json = value === undefined ? undefined : (stringify(value) as string | undefined);
  } catch {
    json = undefined;
  }
  if (CHECKS && typeof json === 'string' && json.length > limit[0]!) {
    // Too large for the model anyway (the host would drop it): never copy it out.
    out(1, LIMIT_MESSAGES.returnValue(limit[0]!), 0);
    json = undefined;
  }
  done(true, typeof json === 'string' ? json : undefined);
}

/** Called by the host once per run, with the run's configuration and the compiled script. */
function start(configJson: string, main: unknown): void {
  const config = parse(configJson) as StartConfig;
  maxArgs = config.maxToolArgsBytes;
  maxCalls = config.maxToolCalls;
  maxPending = config.maxPendingToolArgsBytes;
  maxName = config.maxToolNameChars;
  maxValues = config.maxFormattedValues;
  crossed = 0;
  pendingChars = 0;
  sitesLeft = SITE_CAPTURED_CALLS;
  left[0] = limit[0] = config.maxStdoutBytes;
  left[1] = limit[1] = config.maxStderrBytes;
  recent = [];
  recentNext = 0;
  installConsole();
  installTools(config);
  if (typeof main !== 'function') {
    done(false, stringify({ name: 'SyntaxError', message: 'The script did not compile to a function.' }));
    return;
  }
  const runner = async () => {
    let value: unknown;
    try {
      value = await (main as () => unknown)();
    } catch (error) {
      finish(false, error);
      return;
    }
    finish(true, value);
  };
  void runner();
}

/**
 * Called by the host when a tool call ends: `payload` is JSON (ok) or the error message. An ok
 * payload with `code` `json-text` is a server's text, parsed here once; not JSON, it is the value.
 */
function settle(id: number, ok: boolean, payload: string | undefined, code: string | undefined): void {
  const entry = untrack(id);
  if (entry === undefined) return;
  pendingChars -= entry.cost;
  if (!ok) return fail(entry, StringCtor(payload), code);
  if (payload === undefined) return entry.resolve(undefined);
  let value: unknown;
  try {
    value = parse(payload);
  } catch {
    return notJson(entry, payload, code);
  }
  // Only the host sets this code: a server's result can never become a handle.
  if (code === HANDLE_PAYLOAD) value = makeHandle(value as HandleDescriptor, undefined);
  if (typeof value === 'object' && value !== null) remember(entry.name, value);
  entry.resolve(value);
}

/**
 * A held result's descriptor (`HandleDescriptor` in src/util/held-result.ts): what the script
 * reads of a result the host kept (docs/data.md).
 */
interface HandleDescriptor {
  id: string;
  tool: string;
  bytes: number;
  kind: string;
  rowsAt: string;
  length: number;
  keys: string[];
  spilled: boolean;
}

/** The call a handle's methods make, and the code of a handle's settle (src/util/held-result.ts). */
const HANDLE_CALL = 'codecall:handle';
const HANDLE_PAYLOAD = 'handle';
const HANDLE_MARKER_KEY = '$codecall_handle';

type HandleObject = HandleDescriptor & { readonly path: string; readonly base: string };

function handleCall(handle: HandleObject, op: string, args: Record<string, unknown>): Promise<unknown> {
  args.handle = handle.id;
  args.op = op;
  if (args.path === undefined) args.path = handle.path;
  return callTool(HANDLE_CALL, args);
}

function whereOf(options: unknown): unknown {
  return typeof options === 'object' && options !== null ? (options as { where?: unknown }).where : undefined;
}

/** Rows of a handle from `start`, a chunk (at most the host's chunk bytes) per call. */
async function* rowsOf(handle: HandleObject, options: unknown): AsyncGenerator<unknown> {
  const given = (typeof options === 'object' && options !== null ? options : {}) as {
    start?: unknown;
    end?: unknown;
    where?: unknown;
  };
  let start: unknown = given.start ?? 0;
  for (;;) {
    const page = (await handleCall(handle, 'slice', { start, end: given.end, where: given.where })) as {
      rows: unknown[];
      next: number | null;
    };
    for (let index = 0; index < page.rows.length; index++) yield page.rows[index];
    if (page.next === null || (typeof start === 'number' && page.next <= start)) return;
    start = page.next;
  }
}

/** The methods of every handle (the prototype of each; documented in docs/data.md). */
const handleMethods = freeze(
  createObject(null, {
    value: {
      value(this: HandleObject, pointer?: unknown) {
        return handleCall(this, 'value', {
          pointer: pointer === undefined ? this.base : StringCtor(pointer),
        });
      },
    },
    at: {
      value(this: HandleObject, pointer: unknown) {
        return makeHandle(this, StringCtor(pointer));
      },
    },
    rows: {
      value(this: HandleObject, options?: unknown) {
        return rowsOf(this, options);
      },
    },
    [Symbol.asyncIterator]: {
      value(this: HandleObject) {
        return rowsOf(this, undefined);
      },
    },
    slice: {
      async value(this: HandleObject, start?: unknown, end?: unknown) {
        const out: unknown[] = [];
        for await (const row of rowsOf(this, { start, end })) out[out.length] = row;
        return out;
      },
    },
    count: {
      value(this: HandleObject, where?: unknown) {
        return handleCall(this, 'count', { where });
      },
    },
    pick: {
      value(this: HandleObject, fields: unknown, options?: unknown) {
        const limit =
          typeof options === 'object' && options !== null
            ? (options as { limit?: unknown }).limit
            : undefined;
        return handleCall(this, 'pick', { fields, where: whereOf(options), limit });
      },
    },
    filter: {
      value(this: HandleObject, where: unknown, options?: unknown) {
        const limit =
          typeof options === 'object' && options !== null
            ? (options as { limit?: unknown }).limit
            : undefined;
        return handleCall(this, 'filter', { where, limit });
      },
    },
    sum: {
      value(this: HandleObject, field: unknown, where?: unknown) {
        return handleCall(this, 'sum', { field, where });
      },
    },
    min: {
      value(this: HandleObject, field: unknown, where?: unknown) {
        return handleCall(this, 'min', { field, where });
      },
    },
    max: {
      value(this: HandleObject, field: unknown, where?: unknown) {
        return handleCall(this, 'max', { field, where });
      },
    },
    groupBy: {
      value(this: HandleObject, field: unknown, options?: unknown) {
        const sum =
          typeof options === 'object' && options !== null ? (options as { sum?: unknown }).sum : undefined;
        return handleCall(this, 'groupBy', { field, sum, where: whereOf(options) });
      },
    },
    toJSON: {
      value(this: HandleObject) {
        return { [HANDLE_MARKER_KEY]: this.id };
      },
    },
  }),
);

/**
 * The script's handle of a held result; `view` (a JSON pointer, from `at()`) makes a handle of a
 * part of it whose rows and `value()` are that part.
 */
function makeHandle(descriptor: HandleDescriptor, view: string | undefined): HandleObject {
  const handle = createObject(handleMethods) as Record<string, unknown>;
  handle.isHandle = true;
  handle.tool = descriptor.tool;
  handle.kind = descriptor.kind;
  handle.bytes = descriptor.bytes;
  // A view's row count is the host's to tell: count() it.
  handle.length = view === undefined ? descriptor.length : null;
  handle.keys = view === undefined ? descriptor.keys : [];
  handle.rowsAt = view ?? descriptor.rowsAt;
  handle.spilled = descriptor.spilled;
  defineProperty(handle, 'id', { value: descriptor.id });
  defineProperty(handle, 'path', { value: view ?? descriptor.rowsAt });
  defineProperty(handle, 'base', { value: view ?? '' });
  return freeze(handle) as unknown as HandleObject;
}

/**
 * Settles a call whose ok payload is not JSON: a server's text (code `json-text`,
 * JSON_TEXT_PAYLOAD on the host) is the script's string, as any non-JSON text result is; a
 * payload the host wrote must be JSON.
 */
function notJson(entry: Pending, payload: string, code: string | undefined): void {
  if (code === 'json-text') entry.resolve(payload);
  else fail(entry, 'The tool result was not valid JSON.', 'TOOL_ERROR');
}

/**
 * Called by the host with the answers of one or more calls, in the order they ended, one after
 * another in its argument list: `id, payload` for a success whose payload is JSON the host wrote
 * (the common case: two arguments to copy into the isolate, not four), or `-id, ok, payload,
 * code` for any other answer. Each is settled as {@link settle} does, and the script runs on
 * when the host's entry ends (after all of them). `arguments` is only indexed (no rest array
 * per entry).
 */
function settleAll(): void {
  // eslint-disable-next-line prefer-rest-params
  const answers = arguments as unknown as unknown[];
  const count = answers.length;
  let index = 0;
  while (index < count) {
    const id = answers[index] as number;
    if (id > 0) {
      settle(id, true, answers[index + 1] as string, undefined);
      index += 2;
    } else {
      settle(
        -id,
        answers[index + 1] as boolean,
        answers[index + 2] as string | undefined,
        answers[index + 3] as string | undefined,
      );
      index += 4;
    }
  }
}

/**
 * Runs every path of a run once, against the bridge while no run is attached (the host ignores
 * it), so V8 compiles the prelude's functions while the sandbox is a warm spare rather than
 * when a script starts. `start` reinstalls everything for the real run.
 */
function warm(): void {
  try {
    start(
      stringify({
        lineTools: ['w.w'],
        // the spare keeps what warming installs: a run without a store must not find one
        store: 0,
        maxStdoutBytes: 8,
        maxStderrBytes: 0,
        maxToolArgsBytes: 1_000,
        maxToolCalls: 10,
        maxPendingToolArgsBytes: 10_000,
        maxToolNameChars: 10,
        maxFormattedValues: 100,
      }),
      async () => {
        const tools = scope.tools as Record<string, Record<string, (args: unknown) => Promise<unknown>>>;
        await tools.w!.w!({ list: [1, { b: 'c' }] });
      },
    );
    write(0, [{ a: 1, list: [1, 'two'], when: new Date(0) }, 'text', 3]);
    write(1, ['%s %d', 'x', 1]);
    (settleAll as (...answers: unknown[]) => void)(nextId - 1, '{"a":[1,2]}');
  } catch {
    // warming is best effort
  }
  untrackAll();
}

scope.__codecall_start = start;
scope.__codecall_settle = settleAll;
scope.__codecall_warm = warm;
