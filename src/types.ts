/**
 * @module
 * Plain data types shared across capability folders. Leaf module: imports nothing from src/.
 */

/** A JSON value: the only kind of data that crosses the sandbox boundary. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A JSON Schema object as MCP servers send it (untrusted; may be anything). */
export type JsonSchema = Record<string, unknown>;

/** Who may call a tool: the model directly, or code running in the sandbox. */
export type ToolCaller = 'direct' | 'code_execution';

/**
 * How a tool appears inside the sandbox: `tools.<namespace>.<member>(args)`; `name` is the
 * qualified `server.tool` name that the host dispatches on (and that `callTool` accepts).
 */
export interface SandboxToolBinding {
  /** Qualified name, `server.tool`. */
  name: string;
  /** Identifier-safe server name inside the sandbox. */
  namespace: string;
  /** Identifier-safe tool name inside the sandbox. */
  member: string;
  /**
   * The sandbox reports the script line of each call (tools that may need approval, so the
   * request can name the line); other calls skip the stack capture and pay nothing.
   * @defaultValue false
   */
  reportsLine?: boolean;
}

/** One tool call a script asked for, as the host receives it. */
export interface ToolInvocation {
  /** Qualified name, `server.tool`. */
  name: string;
  /** The arguments, a copy of plain data from the sandbox. */
  args: unknown;
  /** Aborted when the run ends, times out or is cancelled. */
  signal: AbortSignal;
  /** The model's script line (1-based) that made the call, for tools bound with `reportsLine`. */
  line?: number;
}

/**
 * Host side of a tool call. Resolves with the (JSON-serialisable) result, or a `JsonText` (a
 * server's JSON text, which the sandbox parses itself), or rejects with an error whose `message`
 * is shown to the script. Injected into the sandbox; the sandbox never sees the MCP pool.
 */
export type ToolInvoker = (invocation: ToolInvocation) => Promise<unknown>;

/** Codes of model-facing execution failures (returned as data, never thrown). */
export type ExecutionErrorCode =
  | 'SYNTAX_ERROR'
  | 'RUNTIME_ERROR'
  | 'WALL_TIMEOUT'
  | 'CPU_TIMEOUT'
  | 'MEMORY_LIMIT'
  | 'TOOL_CALL_LIMIT'
  | 'TOOL_RESULT_LIMIT'
  | 'OUTPUT_LIMIT'
  | 'SANDBOX_CRASHED'
  | 'ABORTED'
  /** The run's session expired, was evicted or lost its sandbox: its state is gone; start over. */
  | 'SESSION_EXPIRED'
  /** Too many sessions are running at once to open another one. */
  | 'SESSION_LIMIT';

/** One tool call made by a script, in dispatch order. */
export interface ToolCallRecord {
  /** Qualified name, `server.tool`. */
  tool: string;
  ok: boolean;
  durationMs: number;
  argsBytes: number;
  resultBytes: number;
  /** The error message the script saw, when `ok` is false. */
  error?: string;
}

/** Figures about one execution. */
export interface ExecutionStats {
  wallMs: number;
  cpuMs: number;
  toolResultBytes: number;
  stdoutBytes: number;
}

/** The result of running model code. `status: "error"` is a normal result, not a throw. */
export interface ExecutionResult {
  status: 'ok' | 'error';
  stdout: string;
  stderr: string;
  error?: { code: ExecutionErrorCode; message: string };
  /** The value the script returned (top-level `return`), when it is JSON. */
  returnValue?: JsonValue;
  toolCalls: ToolCallRecord[];
  stats: ExecutionStats;
}

/** Every bound of one sandbox run. Each field has a `DEFAULT_*` constant in `config/defaults.ts`
 * (`DEFAULT_SANDBOX_LIMITS` gathers them). */
export interface SandboxLimits {
  /** Wall time of the run, including time awaiting tools (host-side timer). @defaultValue {@link DEFAULT_WALL_TIME_MS} */
  wallTimeMs: number;
  /** CPU time spent running script code in the isolate. @defaultValue {@link DEFAULT_CPU_TIME_MS} */
  cpuTimeMs: number;
  /** Heap limit of the isolate (minimum 8). @defaultValue {@link DEFAULT_MEMORY_MB} */
  memoryMb: number;
  /** Tool calls the script may make. @defaultValue {@link DEFAULT_MAX_TOOL_CALLS} */
  maxToolCalls: number;
  /** Tool calls in flight at once; more wait their turn. @defaultValue {@link DEFAULT_MAX_CONCURRENT_TOOL_CALLS} */
  maxConcurrentToolCalls: number;
  /** Serialized JSON bytes of one call's arguments. @defaultValue {@link DEFAULT_MAX_TOOL_ARGS_BYTES} */
  maxToolArgsBytes: number;
  /** Serialized JSON bytes of one tool result. @defaultValue {@link DEFAULT_MAX_TOOL_RESULT_BYTES} */
  maxToolResultBytes: number;
  /** Serialized JSON bytes of all tool results of the run. @defaultValue {@link DEFAULT_MAX_TOTAL_TOOL_RESULT_BYTES} */
  maxTotalToolResultBytes: number;
  /** Bytes of stdout kept (truncated past this, with a marker). @defaultValue {@link DEFAULT_MAX_STDOUT_BYTES} */
  maxStdoutBytes: number;
  /** Bytes of stderr kept (truncated past this, with a marker). @defaultValue {@link DEFAULT_MAX_STDERR_BYTES} */
  maxStderrBytes: number;
  /** Serialized JSON bytes of the arguments of calls not yet answered. @defaultValue {@link DEFAULT_MAX_PENDING_TOOL_ARGS_BYTES} */
  maxPendingToolArgsBytes: number;
  /** Characters of a tool name a script may call (never below the longest bound name). @defaultValue {@link DEFAULT_MAX_TOOL_NAME_CHARS} */
  maxToolNameChars: number;
  /** Values `console` formats for one call before it cuts the output. @defaultValue {@link DEFAULT_MAX_FORMATTED_VALUES} */
  maxFormattedValues: number;
}
