/**
 * @module
 * The host side of one run, in the trusted process in both modes: it owns the tool invoker,
 * the wall timer, every tool-call limit (count, concurrency, argument and result bytes), the
 * ordered call records and the captured output, and it assembles the {@link ExecutionResult}.
 * The place where the script runs (an {@link EngineRun} in-process, or a worker process) is a
 * {@link RunBackend}; this module never touches isolated-vm.
 */
import { editDistance } from '../util/edit-distance.js';
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
import { describeThrown } from './describe-error.js';

/** Characters of a tool's error message passed to the script. */
const MAX_TOOL_ERROR_CHARS = 2_000;
/** Close matches listed for an unknown tool name. */
const MAX_SUGGESTIONS = 3;

/** Where a run executes: an engine run in-process, or a run relayed to a worker. */
export interface RunBackend {
  settle(id: number, ok: boolean, payload: string | undefined, code?: string): void;
  cancel(code: EngineFaultCode, message?: string): void;
  readonly outcome: Promise<EngineOutcome>;
}

/** What one run needs on the host side. */
export interface RunControllerOptions {
  code: string;
  tools: SandboxToolBinding[];
  invoke: ToolInvoker;
  limits: SandboxLimits;
  signal?: AbortSignal;
}

interface QueuedCall {
  id: number;
  binding: SandboxToolBinding;
  args: unknown;
  argsBytes: number;
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
    return (
      `${this.#kept}${separator}[output truncated: ${this.#keptBytes} of ${this.totalBytes} bytes shown — ` +
      'print less: aggregate, slice, or select fields]\n'
    );
  }
}

/** Up to three tool names close to `name`, as the script would write them. */
function closeMatches(name: string, tools: SandboxToolBinding[]): string[] {
  const wanted = name.toLowerCase();
  const scored = tools.map((tool) => {
    const written = `${tool.namespace}.${tool.member}`;
    const candidates = [tool.name.toLowerCase(), written.toLowerCase(), tool.member.toLowerCase()];
    const distance = Math.min(...candidates.map((candidate) => editDistance(wanted, candidate)));
    const contains = candidates.some((candidate) => candidate.includes(wanted) || wanted.includes(candidate));
    return { written, score: contains ? Math.min(distance, 1) : distance };
  });
  const threshold = Math.max(2, Math.floor(wanted.length / 4));
  return scored
    .filter((entry) => entry.score <= threshold)
    .sort((a, b) => a.score - b.score)
    .slice(0, MAX_SUGGESTIONS)
    .map((entry) => `tools.${entry.written}`);
}

/** JSON.parse that drops `__proto__` keys, so arguments can never carry a prototype. */
function parseArgs(json: string): unknown {
  if (!json.includes('"__proto__"')) return JSON.parse(json);
  return JSON.parse(json, (key, value: unknown) => (key === '__proto__' ? undefined : value));
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
};

/**
 * Host codes an uncaught error may give the run's result. They count only when the host itself
 * answered a call of this run with that code and message: a script that throws
 * `{ code: 'TOOL_CALL_LIMIT' }` of its own gets `RUNTIME_ERROR`, not a host verdict.
 */
const SCRIPT_ERROR_CODES = new Set<string>(['TOOL_CALL_LIMIT', 'TOOL_RESULT_LIMIT']);

/** Runs the host side of one script execution against a backend. */
export class RunController implements EngineSink {
  readonly #options: RunControllerOptions;
  readonly #limits: SandboxLimits;
  readonly #byName = new Map<string, SandboxToolBinding>();
  readonly #records: ToolCallRecord[] = [];
  readonly #queue: QueuedCall[] = [];
  readonly #abort = new AbortController();
  readonly #stdout: OutputBuffer;
  readonly #stderr: OutputBuffer;
  readonly #startedAt = performance.now();
  #backend: RunBackend | undefined;
  #calls = 0;
  #inFlight = 0;
  #resultBytes = 0;
  #ended = false;
  /** `code\0message` of every limit error the host answered a call with (see SCRIPT_ERROR_CODES). */
  readonly #issued = new Set<string>();
  #endWith: ((outcome: EngineOutcome) => void) | undefined;

  constructor(options: RunControllerOptions) {
    this.#options = options;
    this.#limits = options.limits;
    for (const tool of options.tools) {
      this.#byName.set(tool.name, tool);
      this.#byName.set(`${tool.namespace}.${tool.member}`, tool);
    }
    this.#stdout = new OutputBuffer(options.limits.maxStdoutBytes);
    this.#stderr = new OutputBuffer(options.limits.maxStderrBytes);
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

  call(id: number, name: string, argsJson: string): void {
    if (this.#ended) return;
    const binding = this.#byName.get(name);
    if (binding === undefined) {
      const matches = closeMatches(name, this.#options.tools);
      const hint =
        matches.length > 0
          ? ` Did you mean: ${matches.join(', ')}?`
          : ' No tools are available to this script.';
      return this.#reject(
        id,
        `Unknown tool "${name}".${this.#options.tools.length > 0 && matches.length === 0 ? ' Check the names in `tools`.' : hint}`,
        'UNKNOWN_TOOL',
      );
    }
    if (++this.#calls > this.#limits.maxToolCalls) {
      return this.#reject(
        id,
        `Tool call limit reached: a script may make at most ${this.#limits.maxToolCalls} tool calls. Fetch data in fewer, larger calls and print a summary.`,
        'TOOL_CALL_LIMIT',
      );
    }
    const argsBytes = Buffer.byteLength(argsJson);
    if (argsBytes > this.#limits.maxToolArgsBytes) {
      return this.#reject(
        id,
        `Arguments of ${binding.name} are ${argsBytes} bytes of JSON; the limit is ${this.#limits.maxToolArgsBytes}. Pass less data per call.`,
        'TOOL_ARGS_LIMIT',
      );
    }
    let args: unknown;
    try {
      args = parseArgs(argsJson);
    } catch {
      return this.#reject(id, `Arguments of ${binding.name} are not valid JSON.`, 'TOOL_ERROR');
    }
    this.#queue.push({ id, binding, args, argsBytes });
    this.#pump();
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
    const record: ToolCallRecord = {
      tool: call.binding.name,
      ok: false,
      durationMs: 0,
      argsBytes: call.argsBytes,
      resultBytes: 0,
    };
    this.#records.push(record);
    void this.#invoke(call, record);
  }

  async #invoke(call: QueuedCall, record: ToolCallRecord): Promise<void> {
    // Leave the isolate's callback first: the invoker never runs while the script is entered.
    await Promise.resolve();
    const started = performance.now();
    try {
      const value = await this.#options.invoke({
        name: call.binding.name,
        args: call.args,
        signal: this.#abort.signal,
      });
      record.durationMs = performance.now() - started;
      this.#succeeded(call, record, value);
    } catch (error) {
      record.durationMs = performance.now() - started;
      this.#failed(call, record, messageOf(error), 'TOOL_ERROR');
    }
    this.#inFlight--;
    this.#pump();
  }

  #succeeded(call: QueuedCall, record: ToolCallRecord, value: unknown): void {
    if (this.#ended) return;
    let json: string | undefined;
    try {
      json = value === undefined ? undefined : (JSON.stringify(value) as string | undefined);
    } catch (error) {
      return this.#failed(
        call,
        record,
        `The result of ${call.binding.name} is not JSON data (${messageOf(error)}).`,
        'TOOL_ERROR',
      );
    }
    const bytes = json === undefined ? 0 : Buffer.byteLength(json);
    record.resultBytes = bytes;
    if (bytes > this.#limits.maxToolResultBytes) {
      return this.#failed(
        call,
        record,
        `The result of ${call.binding.name} is ${bytes} bytes of JSON; the limit for one tool result is ${this.#limits.maxToolResultBytes}. Ask for less (filter, paginate, or select fields).`,
        'TOOL_RESULT_LIMIT',
      );
    }
    if (this.#resultBytes + bytes > this.#limits.maxTotalToolResultBytes) {
      return this.#failed(
        call,
        record,
        `Tool results of this run would exceed ${this.#limits.maxTotalToolResultBytes} bytes in total (${this.#resultBytes} received so far). Ask tools for less data.`,
        'TOOL_RESULT_LIMIT',
      );
    }
    this.#resultBytes += bytes;
    record.ok = true;
    this.#backend?.settle(call.id, true, json);
  }

  #failed(call: QueuedCall, record: ToolCallRecord, message: string, code: string): void {
    if (SCRIPT_ERROR_CODES.has(code)) this.#issued.add(`${code}\0${message}`);
    record.ok = false;
    record.error = message;
    if (!this.#ended) this.#backend?.settle(call.id, false, message, code);
  }

  #result(outcome: EngineOutcome): ExecutionResult {
    this.#ended = true;
    const stderr = this.#stderr;
    let returnValue: JsonValue | undefined;
    if (outcome.ok && outcome.returnJson !== undefined) {
      if (Buffer.byteLength(outcome.returnJson) > this.#limits.maxStdoutBytes) {
        stderr.append(
          `[return value omitted: over ${this.#limits.maxStdoutBytes} bytes of JSON — return or print a summary instead]\n`,
          0,
        );
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
      toolCalls: this.#records.map((record) => ({ ...record })),
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
