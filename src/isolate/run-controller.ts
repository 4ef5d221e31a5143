/**
 * @module
 * The host side of one run, in the trusted process in both modes: it owns the tool invoker,
 * the wall timer, every tool-call limit (count, concurrency, argument and result bytes), the
 * ordered call records and the captured output, and it assembles the {@link ExecutionResult}.
 * The place where the script runs (an {@link EngineRun} in-process, or a worker process) is a
 * {@link RunBackend}; this module never touches isolated-vm.
 */
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';

import { isCodecallError } from '../errors.js';
import { HANDLE_PAYLOAD, HeldResult } from '../util/held-result.js';
import { JsonText } from '../util/json-text.js';
import type {
  ExecutionErrorCode,
  ExecutionResult,
  JsonValue,
  SandboxToolBinding,
  ToolCallRecord,
  ToolInvoker,
} from '../types.js';
import type { EngineFaultCode, EngineOutcome, EngineSink } from './engine.js';
import type { SandboxLimits } from './limits.js';
import { describeThrown, mapCallSite, readCodeMap } from './describe-error.js';
import { SandboxToolCatalog } from './tool-catalog.js';
import { CALL_OVERHEAD_BYTES, LIMIT_MESSAGES } from './limit-table.js';
import { SUGGEST_IN_WORKER, ToolNameIndex, UnknownNameAnswerer } from './unknown-names.js';

/** Characters of a tool's error message passed to the script. */
const MAX_TOOL_ERROR_CHARS = 2_000;
/**
 * Longest stretch of the host's loop spent answering queued unknown-name calls before it yields:
 * under the host's own idle response time (`npm run bench -- hostile`: a neighbour's `tools/list`
 * p99 is about 0.3 ms idle; with 1 ms slices it waited 10× that under a flood, with 0.25 ms 5×).
 */
const UNKNOWN_NAME_SLICE_MS = 0.25;

/**
 * The `code` of a successful settle whose payload is a server's JSON text: the sandbox parses it
 * and, when it is not valid JSON, gives the script the text itself (see `settle` in
 * sandbox/prelude.ts). Without it a payload is JSON the host wrote, and must parse.
 */
export const JSON_TEXT_PAYLOAD = 'json-text';

/** Where a run executes: an engine run in-process, or a run relayed to a worker. */
export interface RunBackend {
  settle(id: number, ok: boolean, payload: string | undefined, code?: string): void;
  /**
   * True when the backend answers an unknown name's suggestions itself: the host settles such a
   * call with the code {@link SUGGEST_IN_WORKER} and the name as payload.
   */
  readonly suggestsUnknownNames?: boolean;
  cancel(code: EngineFaultCode, message?: string): void;
  readonly outcome: Promise<EngineOutcome>;
}

/**
 * Asked for a name the script calls that its run's tools lack, before the call is refused as
 * unknown: `undefined` leaves it unknown; a promise may bring the tool's binding (a tool that
 * joined the catalog after the run's tools were bound: its server was still starting), a
 * message refusing it (`UNKNOWN_TOOL`), or `undefined`. `signal` aborts when the run ends.
 */
export type UnknownToolResolver = (
  name: string,
  signal: AbortSignal,
) => Promise<SandboxToolBinding | string | undefined> | undefined;

/** What one run needs on the host side. */
export interface RunControllerOptions {
  code: string;
  tools: SandboxToolBinding[];
  invoke: ToolInvoker;
  limits: SandboxLimits;
  signal?: AbortSignal;
  /** See {@link UnknownToolResolver}. @defaultValue none: names outside `tools` are unknown */
  resolveUnknown?: UnknownToolResolver | undefined;
}

/**
 * A call that passed the host's checks: queued, in flight, then ended. Once dispatched it is
 * also the call's record (one object per call, not two; the run's {@link ToolCallRecord}s are
 * made from them when it ends).
 */
interface QueuedCall {
  id: number;
  binding: SandboxToolBinding;
  args: unknown;
  argsBytes: number;
  /** What the call counts against the pending-arguments budget until it is answered. */
  cost: number;
  /** The model's script line of the call (tools bound with `reportsLine`). */
  line: number | undefined;
  ok: boolean;
  durationMs: number;
  resultBytes: number;
  /** The error message the script saw, when the call failed. */
  error: string | undefined;
}

/** The record of a dispatched call, as the run's result lists it. */
function recordOf(call: QueuedCall): ToolCallRecord {
  const record: ToolCallRecord = {
    tool: call.binding.name,
    ok: call.ok,
    durationMs: call.durationMs,
    argsBytes: call.argsBytes,
    resultBytes: call.resultBytes,
  };
  if (call.error !== undefined) record.error = call.error;
  return record;
}

class OutputBuffer {
  readonly #limit: number;
  #kept = '';
  #keptBytes = 0;
  totalBytes = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  append(text: string, droppedBytes: number): void {
    const bytes = Buffer.byteLength(text);
    this.totalBytes += bytes + droppedBytes;
    const room = this.#limit - this.#keptBytes;
    if (room <= 0) return;
    if (bytes <= room) {
      this.#kept += text;
      this.#keptBytes += bytes;
      return;
    }
    const cut = Buffer.from(text)
      .subarray(0, room)
      .toString('utf8')
      .replace(/\uFFFD$/, '');
    this.#kept += cut;
    this.#keptBytes += Buffer.byteLength(cut);
  }

  /** The kept text, with a marker when some was cut. */
  render(): string {
    if (this.totalBytes <= this.#keptBytes) return this.#kept;
    const separator = this.#kept === '' || this.#kept.endsWith('\n') ? '' : '\n';
    return `${this.#kept}${separator}${LIMIT_MESSAGES.output(this.#keptBytes, this.totalBytes)}`;
  }
}

/** The message of `TOOL_CALL_LIMIT`, word for word as the sandbox's own refusal says it. */
const callLimitMessage = LIMIT_MESSAGES.toolCalls;

/** Name indexes by bindings array: the executor hands every run of one catalog the same array. */
const nameIndexes = new WeakMap<readonly SandboxToolBinding[], ToolNameIndex>();

/** The name index of `tools`, shared by the runs that get the same bindings (same catalog). */
function nameIndexOf(tools: readonly SandboxToolBinding[]): ToolNameIndex {
  let index = nameIndexes.get(tools);
  if (!index) nameIndexes.set(tools, (index = new ToolNameIndex(tools)));
  return index;
}

/** JSON.parse that drops `__proto__` keys, so arguments can never carry a prototype. */
function parseArgs(json: string): unknown {
  if (!json.includes('"__proto__"')) return JSON.parse(json);
  return JSON.parse(json, (key, value: unknown) => (key === '__proto__' ? undefined : value));
}

/** Host error codes a script sees as its error's `code` (others arrive as `TOOL_ERROR`). */
const FORWARDED_CODES = new Set<string>(['APPROVAL_DENIED', 'APPROVAL_TIMEOUT', 'STORE_LIMIT']);

/** The `code` the script's error carries for a call that failed on the host with `error`. */
function scriptCodeOf(error: unknown): string {
  return isCodecallError(error) && FORWARDED_CODES.has(error.code) ? error.code : 'TOOL_ERROR';
}

function messageOf(error: unknown): string {
  let message: string;
  try {
    if (error instanceof Error) message = error.message;
    else if (
      typeof error === 'object' &&
      error !== null &&
      typeof (error as { message?: unknown }).message === 'string'
    ) {
      message = (error as { message: string }).message;
    } else message = String(error);
  } catch {
    message = 'the tool failed';
  }
  if (message === '') message = 'the tool failed without a message';
  return message.length > MAX_TOOL_ERROR_CHARS ? `${message.slice(0, MAX_TOOL_ERROR_CHARS)}…` : message;
}

const FAULT_MESSAGES: Record<EngineFaultCode, (limits: SandboxLimits) => string> = {
  CPU_TIMEOUT: (limits) =>
    `The script used more than ${limits.cpuTimeMs} ms of CPU time and was stopped. Do less work in the script: avoid large loops, and let tools filter data.`,
  WALL_TIMEOUT: (limits) =>
    `The script ran longer than ${limits.wallTimeMs} ms (including time waiting for tools) and was stopped. Make fewer or smaller tool calls, run independent calls in parallel with Promise.all, and print partial results early.`,
  MEMORY_LIMIT: (limits) =>
    `The script used more than ${limits.memoryMb} MB of memory and was stopped. Process data in smaller pieces and keep only what you need.`,
  SANDBOX_CRASHED: () =>
    'The sandbox stopped unexpectedly while running the script. Run it again; if it recurs, simplify the script.',
  ABORTED: () => 'The run was cancelled before the script finished.',
  SESSION_LOST: () =>
    'The session is gone (its sandbox no longer holds it), so its variables are lost. Start over: run the script again, fetching the data it needs.',
  STALLED: () =>
    'The script is waiting for a promise that can never settle: no tool call is in flight and the sandbox has no timers (setTimeout, setInterval and fetch do not exist). Await only tool calls.',
};

const FAULT_CODES: Record<EngineFaultCode, ExecutionErrorCode> = {
  CPU_TIMEOUT: 'CPU_TIMEOUT',
  WALL_TIMEOUT: 'WALL_TIMEOUT',
  MEMORY_LIMIT: 'MEMORY_LIMIT',
  SANDBOX_CRASHED: 'SANDBOX_CRASHED',
  ABORTED: 'ABORTED',
  STALLED: 'RUNTIME_ERROR',
  SESSION_LOST: 'SESSION_EXPIRED',
};

/**
 * Host codes an uncaught error may give the run's result. They count only when the host itself
 * answered a call of this run with that code and message: a script that throws
 * `{ code: 'TOOL_CALL_LIMIT' }` of its own gets `RUNTIME_ERROR`, not a host verdict.
 */
const SCRIPT_ERROR_CODES = new Set<string>(['TOOL_CALL_LIMIT', 'TOOL_RESULT_LIMIT']);

/**
 * Milliseconds of a monotonic clock for a call's duration (two reads per call). `performance`
 * and `Buffer` are imported, not read from the global object: there they are getters, and a
 * global getter is a call of its own at every use, even in optimised code. Imported,
 * `performance.now()` costs about half of `Number(process.hrtime.bigint())` (valgrind: ~230
 * instructions against ~430; a BigInt's conversion goes through the runtime).
 */
function nowMs(): number {
  return performance.now();
}

/** A settled promise: a reaction to it runs in the next microtask. */
const SETTLED = Promise.resolve();

/** Runs the host side of one script execution against a backend. */
export class RunController implements EngineSink {
  readonly #options: RunControllerOptions;
  readonly #limits: SandboxLimits;
  /** Each tool by both spellings: the catalog's map, shared by its runs (never copied per run). */
  readonly #byName: ReadonlyMap<string, SandboxToolBinding>;
  /** The name of the last call of a known tool, and its binding (see `call`). */
  #lastName = '';
  #lastBinding: SandboxToolBinding | undefined;
  /** Dispatched calls, in order: the run's records. */
  readonly #records: QueuedCall[] = [];
  readonly #queue: QueuedCall[] = [];
  /**
   * The first call dispatched in this turn and not started yet (see `#startDispatched`), and
   * the others, in order. A sequential script dispatches one call per turn: no list is made.
   */
  #dispatchedFirst: QueuedCall | undefined;
  #dispatchedMore: QueuedCall[] | undefined;
  readonly #abort = new AbortController();
  /** The run's signal, read once (`AbortController.signal` is a getter). */
  readonly #signal = this.#abort.signal;
  readonly #stdout: OutputBuffer;
  readonly #stderr: OutputBuffer;
  readonly #startedAt = performance.now();
  #backend: RunBackend | undefined;
  #calls = 0;
  readonly #unknownNames = new UnknownNameAnswerer(() => nameIndexOf(this.#options.tools));
  /** Unknown-name calls waiting for their answer (see `#answerUnknown`). */
  readonly #unknown: Array<[number, string]> = [];
  /** Tools the run's bindings lack that `resolveUnknown` found, by the name the script called. */
  #late: Map<string, SandboxToolBinding> | undefined;
  #inFlight = 0;
  #resultBytes = 0;
  /** Bytes of arguments of calls queued or in flight (see `maxPendingToolArgsBytes`). */
  #pendingArgsBytes = 0;
  readonly #maxNameChars: number;
  #ended = false;
  /** `code\0message` of every limit error the host answered a call with (see SCRIPT_ERROR_CODES). */
  readonly #issued = new Set<string>();
  #endWith: ((outcome: EngineOutcome) => void) | undefined;
  /** The compiled code's position table, read at the first call that reports its line. */
  #codeMap: { map: number[][] | undefined } | undefined;

  constructor(options: RunControllerOptions) {
    this.#options = options;
    this.#limits = options.limits;
    const catalog = SandboxToolCatalog.of(options.tools);
    this.#byName = catalog.byName;
    this.#maxNameChars = Math.max(options.limits.maxToolNameChars, catalog.engine.maxNameChars);
    this.#stdout = new OutputBuffer(options.limits.maxStdoutBytes);
    this.#stderr = new OutputBuffer(options.limits.maxStderrBytes);
    // Stored a second time: V8 takes a field stored only once for a constant, and throws away
    // the optimised code that relied on that when the first run ends (see EngineRun's constructor).
    this.#ended = false;
  }

  /** Milliseconds of wall time left. */
  wallTimeLeftMs(): number {
    return Math.max(0, this.#limits.wallTimeMs - (performance.now() - this.#startedAt));
  }

  /**
   * Runs the script on `backend` until it ends, the wall timer fires or the signal aborts.
   * Never throws for anything the script does.
   */
  async run(startBackend: (sink: EngineSink) => RunBackend): Promise<ExecutionResult> {
    const { signal } = this.#options;
    if (signal?.aborted) return this.#result({ ok: false, fault: { code: 'ABORTED' }, cpuMs: 0 });
    const external = new Promise<EngineOutcome>((resolve) => (this.#endWith = resolve));
    const timer = setTimeout(() => this.#stop('WALL_TIMEOUT'), this.wallTimeLeftMs());
    const onAbort = () => this.#stop('ABORTED');
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      let outcome: EngineOutcome;
      try {
        this.#backend = startBackend(this);
        outcome = await Promise.race([this.#backend.outcome, external]);
      } catch (error) {
        outcome = { ok: false, fault: { code: 'SANDBOX_CRASHED', message: messageOf(error) }, cpuMs: 0 };
      }
      return this.#result(outcome);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      this.#ended = true;
      this.#queue.length = 0;
      this.#abort.abort(new Error('The script run ended.'));
    }
  }

  #stop(code: 'WALL_TIMEOUT' | 'ABORTED'): void {
    if (this.#ended) return;
    this.#backend?.cancel(code);
    this.#endWith?.({ ok: false, fault: { code }, cpuMs: 0 });
  }

  output(stream: number, text: string, droppedBytes: number): void {
    if (this.#ended) return;
    (stream === 0 ? this.#stdout : this.#stderr).append(text, droppedBytes);
  }

  /**
   * Answers queued unknown-name calls for up to {@link UNKNOWN_NAME_SLICE_MS}, then yields. Each
   * answer is sent within the slice (not in a microtask after it), so the slice bounds the
   * replies too: a worker's reply is an IPC write, the host's largest cost in a flood of
   * unknown names, and 300 of them queued as microtasks went out in one stretch of the loop.
   */
  #answerUnknown(): void {
    const until = performance.now() + UNKNOWN_NAME_SLICE_MS;
    while (this.#unknown.length > 0 && performance.now() < until) {
      const [id, name] = this.#unknown.shift()!;
      // A did-you-mean lookup (tens of µs at thousands of tools) ends its slice.
      if (!this.#ended && this.#rejectUnknown(id, name)) break;
    }
    if (this.#unknown.length > 0) setImmediate(() => this.#answerUnknown());
  }

  /** Answers one unknown-name call; true when that took a did-you-mean lookup. */
  #rejectUnknown(id: number, name: string): boolean {
    // Only ever called from a slice (a turn of its own, never inside the backend's call).
    const backend = this.#backend;
    if (backend?.suggestsUnknownNames === true) {
      // A worker runs the script: it looks up the suggestions, at its own cost.
      backend.settle(id, false, name, SUGGEST_IN_WORKER);
      return false;
    }
    const { message, lookedUp } = this.#unknownNames.answer(name);
    backend?.settle(id, false, message, 'UNKNOWN_TOOL');
    return lookedUp;
  }

  /**
   * A call from the script. The common path is kept short and the refusals are functions of
   * their own: V8 optimises a function once it has run about as many bytecodes as a few thousand
   * calls through all of it would, so a long function whose calls take a short path stays
   * unoptimised for tens of thousands of calls.
   */
  call(id: number, name: string, argsJson: string, site?: string): void {
    if (this.#ended) return;
    // Every attempt counts, known tool or not: unknown names cost host work too.
    if (++this.#calls > this.#limits.maxToolCalls) return this.#rejectCallLimit(id);
    // No tool has a name this long: no lookup, no edit distance, and only a prefix echoed.
    if (name.length > this.#maxNameChars) return this.#rejectLongName(id, name);
    // The name arrives as a new string at every call: comparing it with the last one found is
    // cheaper than hashing it for the map (a loop calls one tool over and over).
    let binding = name === this.#lastName ? this.#lastBinding : undefined;
    if (binding === undefined) {
      binding = this.#byName.get(name) ?? this.#late?.get(name);
      if (binding === undefined) return this.#resolveUnknown(id, name, argsJson, site);
      this.#lastName = name;
      this.#lastBinding = binding;
    }
    const argsBytes = Buffer.byteLength(argsJson);
    if (argsBytes > this.#limits.maxToolArgsBytes) return this.#rejectArgs(id, binding, argsBytes);
    const cost = argsBytes + name.length + CALL_OVERHEAD_BYTES;
    if (this.#pendingArgsBytes + cost > this.#limits.maxPendingToolArgsBytes) {
      return this.#rejectPending(id, cost);
    }
    let args: unknown;
    try {
      args = parseArgs(argsJson);
    } catch {
      return this.#reject(id, `Arguments of ${binding.name} are not valid JSON.`, 'TOOL_ERROR');
    }
    // Only tools bound with a line report send a site; it is the sandbox's word, so it is checked.
    const line = site !== undefined && binding.reportsLine === true ? this.#lineOf(site) : undefined;
    this.#pendingArgsBytes += cost;
    const queued: QueuedCall = {
      id,
      binding,
      args,
      argsBytes,
      cost,
      line,
      ok: false,
      durationMs: 0,
      resultBytes: 0,
      error: undefined,
    };
    // Nothing waiting and room in flight (every call of a sequential script): straight out.
    if (this.#queue.length === 0 && this.#inFlight < this.#limits.maxConcurrentToolCalls)
      this.#dispatch(queued);
    else {
      this.#queue.push(queued);
      this.#pump();
    }
  }

  /** The model's script line of a call site the sandbox sent (`line:column` in the compiled code). */
  #lineOf(site: string): number | undefined {
    return mapCallSite((this.#codeMap ??= { map: readCodeMap(this.#options.code) }).map, site);
  }

  #rejectCallLimit(id: number): void {
    this.#reject(id, callLimitMessage(this.#limits.maxToolCalls), 'TOOL_CALL_LIMIT');
  }

  #rejectLongName(id: number, name: string): void {
    this.#reject(id, LIMIT_MESSAGES.toolName(name, this.#maxNameChars), 'UNKNOWN_TOOL');
  }

  /**
   * A name the run's tools lack: asks `resolveUnknown` whether the host can still call it (its
   * server was starting), then makes the call as if it had been bound, or refuses it. While it
   * waits, its arguments count against `maxPendingToolArgsBytes`.
   */
  #resolveUnknown(id: number, name: string, argsJson: string, site: string | undefined): void {
    const late = this.#options.resolveUnknown?.(name, this.#signal);
    if (late === undefined) return this.#queueUnknown(id, name);
    const argsBytes = Buffer.byteLength(argsJson);
    if (argsBytes > this.#limits.maxToolArgsBytes)
      return this.#reject(
        id,
        LIMIT_MESSAGES.toolArgs(name, argsBytes, this.#limits.maxToolArgsBytes),
        'TOOL_ARGS_LIMIT',
      );
    const cost = argsBytes + name.length + CALL_OVERHEAD_BYTES;
    if (this.#pendingArgsBytes + cost > this.#limits.maxPendingToolArgsBytes)
      return this.#rejectPending(id, cost);
    this.#pendingArgsBytes += cost;
    const settle = (found: SandboxToolBinding | string | undefined): void => {
      this.#pendingArgsBytes -= cost;
      if (this.#ended) return;
      if (found === undefined) return this.#queueUnknown(id, name);
      if (typeof found === 'string') return this.#reject(id, found, 'UNKNOWN_TOOL');
      (this.#late ??= new Map()).set(name, found);
      // Made as the call it was: counted once, checked and dispatched like a bound tool's.
      this.#calls--;
      this.call(id, name, argsJson, site);
    };
    late.then(settle, () => settle(undefined));
  }

  /**
   * Queues a call of an unknown name. Answered in slices off this turn: a flood of unknown names
   * (each a lookup and a reply) must not hold the host's loop for one long stretch.
   */
  #queueUnknown(id: number, name: string): void {
    this.#unknown.push([id, name]);
    if (this.#unknown.length === 1) setImmediate(() => this.#answerUnknown());
  }

  #rejectArgs(id: number, binding: SandboxToolBinding, argsBytes: number): void {
    this.#reject(
      id,
      LIMIT_MESSAGES.toolArgs(binding.name, argsBytes, this.#limits.maxToolArgsBytes),
      'TOOL_ARGS_LIMIT',
    );
  }

  #rejectPending(id: number, cost: number): void {
    this.#reject(
      id,
      LIMIT_MESSAGES.pendingToolArgs(this.#pendingArgsBytes, cost, this.#limits.maxPendingToolArgsBytes),
      'TOOL_ARGS_LIMIT',
    );
  }

  #reject(id: number, message: string, code: string): void {
    if (SCRIPT_ERROR_CODES.has(code)) this.#issued.add(`${code}\0${message}`);
    queueMicrotask(() => {
      if (!this.#ended) this.#backend?.settle(id, false, message, code);
    });
  }

  #pump(): void {
    while (this.#inFlight < this.#limits.maxConcurrentToolCalls && this.#queue.length > 0 && !this.#ended) {
      this.#dispatch(this.#queue.shift()!);
    }
  }

  #dispatch(call: QueuedCall): void {
    this.#inFlight++;
    this.#records.push(call);
    // Leave the isolate's callback first: the invoker never runs while the script is entered.
    // The calls of one entry start together, in one microtask (not one `await` each).
    // A reaction to a settled promise, not `queueMicrotask` (a call into Node that validates its
    // argument and, with an AsyncLocalStorage in use, makes an AsyncResource each time).
    if (this.#dispatchedFirst === undefined) {
      this.#dispatchedFirst = call;
      void SETTLED.then(this.#startDispatched);
    } else (this.#dispatchedMore ??= []).push(call);
  }

  /** Starts the calls dispatched since the last start (bound once: no closure per call). */
  readonly #startDispatched = (): void => {
    const first = this.#dispatchedFirst!;
    const more = this.#dispatchedMore;
    this.#dispatchedFirst = undefined;
    this.#dispatchedMore = undefined;
    void this.#invoke(first);
    if (more === undefined) return;
    for (let index = 0; index < more.length; index++) void this.#invoke(more[index]!);
  };

  async #invoke(call: QueuedCall): Promise<void> {
    const started = nowMs();
    const args = call.args;
    // The call outlives its answer as a record: it keeps no arguments.
    call.args = undefined;
    try {
      const value = await this.#options.invoke(
        call.line === undefined
          ? { name: call.binding.name, args, signal: this.#signal }
          : { name: call.binding.name, args, signal: this.#signal, line: call.line },
      );
      call.durationMs = nowMs() - started;
      this.#release(call);
      this.#succeeded(call, value);
    } catch (error) {
      call.durationMs = nowMs() - started;
      this.#release(call);
      this.#failed(call, messageOf(error), scriptCodeOf(error));
    }
    this.#inFlight--;
    this.#pump();
  }

  /** Frees the call's pending-arguments bytes (before its answer reaches the script). */
  #release(call: QueuedCall): void {
    this.#pendingArgsBytes -= call.cost;
    call.cost = 0;
  }

  /** Answers a call whose tool returned `value`: a host-written JSON success, the common path (see `call` on short paths). */
  #succeeded(call: QueuedCall, value: unknown): void {
    if (this.#ended) return;
    if (JsonText.isInstance(value)) return this.#succeededWithText(call, value);
    if (HeldResult.isInstance(value)) return this.#succeededWithHandle(call, value);
    let json: string | undefined;
    try {
      json = value === undefined ? undefined : (JSON.stringify(value) as string | undefined);
    } catch (error) {
      return this.#notJson(call, error);
    }
    const bytes = json === undefined ? 0 : Buffer.byteLength(json);
    call.resultBytes = bytes;
    if (
      bytes > this.#limits.maxToolResultBytes ||
      this.#resultBytes + bytes > this.#limits.maxTotalToolResultBytes
    ) {
      return this.#overResultLimit(call, bytes);
    }
    this.#resultBytes += bytes;
    call.ok = true;
    this.#backend?.settle(call.id, true, json);
  }

  /** A server's JSON text goes as it came: counted once, parsed once, in the sandbox. */
  #succeededWithText(call: QueuedCall, value: JsonText): void {
    const bytes = value.bytes;
    call.resultBytes = bytes;
    if (
      bytes > this.#limits.maxToolResultBytes ||
      this.#resultBytes + bytes > this.#limits.maxTotalToolResultBytes
    ) {
      return this.#overResultLimit(call, bytes);
    }
    this.#resultBytes += bytes;
    call.ok = true;
    this.#backend?.settle(call.id, true, value.text, JSON_TEXT_PAYLOAD);
  }

  /**
   * A result the host holds: only its descriptor crosses (the prelude makes the script's handle
   * of it). The held bytes count against no per-result limit of the sandbox: they never enter it.
   */
  #succeededWithHandle(call: QueuedCall, value: HeldResult): void {
    const json = JSON.stringify(value.descriptor);
    call.resultBytes = Buffer.byteLength(json);
    this.#resultBytes += call.resultBytes;
    call.ok = true;
    this.#backend?.settle(call.id, true, json, HANDLE_PAYLOAD);
  }

  #notJson(call: QueuedCall, error: unknown): void {
    this.#failed(
      call,
      `The result of ${call.binding.name} is not JSON data (${messageOf(error)}).`,
      'TOOL_ERROR',
    );
  }

  /** Fails a call whose result is over the bound of one result, or of the run's results. */
  #overResultLimit(call: QueuedCall, bytes: number): void {
    if (bytes > this.#limits.maxToolResultBytes) {
      return this.#failed(
        call,
        LIMIT_MESSAGES.toolResult(call.binding.name, bytes, this.#limits.maxToolResultBytes),
        'TOOL_RESULT_LIMIT',
      );
    }
    this.#failed(
      call,
      LIMIT_MESSAGES.totalToolResults(this.#resultBytes, this.#limits.maxTotalToolResultBytes),
      'TOOL_RESULT_LIMIT',
    );
  }

  #failed(call: QueuedCall, message: string, code: string): void {
    if (SCRIPT_ERROR_CODES.has(code)) this.#issued.add(`${code}\0${message}`);
    call.ok = false;
    call.error = message;
    if (!this.#ended) this.#backend?.settle(call.id, false, message, code);
  }

  #result(outcome: EngineOutcome): ExecutionResult {
    this.#ended = true;
    const stderr = this.#stderr;
    let returnValue: JsonValue | undefined;
    if (outcome.ok && outcome.returnJson !== undefined) {
      if (Buffer.byteLength(outcome.returnJson) > this.#limits.maxStdoutBytes) {
        stderr.append(LIMIT_MESSAGES.returnValue(this.#limits.maxStdoutBytes), 0);
      } else {
        try {
          returnValue = JSON.parse(outcome.returnJson) as JsonValue;
        } catch {
          returnValue = undefined;
        }
      }
    }
    const result: ExecutionResult = {
      status: outcome.ok ? 'ok' : 'error',
      stdout: this.#stdout.render(),
      stderr: stderr.render(),
      toolCalls: this.#records.map(recordOf),
      stats: {
        wallMs: performance.now() - this.#startedAt,
        cpuMs: outcome.cpuMs,
        toolResultBytes: this.#resultBytes,
        stdoutBytes: this.#stdout.totalBytes,
      },
    };
    if (returnValue !== undefined) result.returnValue = returnValue;
    if (!outcome.ok) {
      if (outcome.fault) {
        const base = FAULT_MESSAGES[outcome.fault.code](this.#limits);
        result.error = { code: FAULT_CODES[outcome.fault.code], message: base };
      } else {
        const thrown = outcome.thrown ?? {};
        // The sandbox refuses calls past maxToolCalls before they cross (see sandbox/prelude.ts):
        // its refusal is the host's limit once the host has counted that many calls.
        if (this.#calls >= this.#limits.maxToolCalls)
          this.#issued.add(`TOOL_CALL_LIMIT\0${callLimitMessage(this.#limits.maxToolCalls)}`);
        const code =
          thrown.code !== undefined && this.#issued.has(`${thrown.code}\0${thrown.message ?? ''}`)
            ? (thrown.code as ExecutionErrorCode)
            : 'RUNTIME_ERROR';
        result.error = { code, message: describeThrown(thrown, this.#options.code) };
      }
    }
    return result;
  }
}
