/**
 * @module
 * Every bound codecall applies, as a named default with its unit in the name. Configuration
 * and options override them; nothing else hard-codes a limit.
 */

/** Wall time of one script run, including time spent awaiting tools. */
export const DEFAULT_WALL_TIME_MS = 120_000;
/** CPU time of one script run inside the isolate. */
export const DEFAULT_CPU_TIME_MS = 30_000;
/** Heap limit of one isolate. */
export const DEFAULT_MEMORY_MB = 256;
/** Tool calls one script run may make. */
export const DEFAULT_MAX_TOOL_CALLS = 1_000;
/** Tool calls of one run that may be in flight at once. */
export const DEFAULT_MAX_CONCURRENT_TOOL_CALLS = 16;
/** Serialized bytes of one tool call's arguments. */
export const DEFAULT_MAX_TOOL_ARGS_BYTES = 1_048_576;
/** Serialized bytes of one tool result delivered to a script. */
export const DEFAULT_MAX_TOOL_RESULT_BYTES = 32 * 1_048_576;
/** Serialized bytes of all tool results of one run. */
export const DEFAULT_MAX_TOTAL_TOOL_RESULT_BYTES = 256 * 1_048_576;
/** Bytes of stdout returned to the model (truncated past this, with a marker). */
export const DEFAULT_MAX_STDOUT_BYTES = 32_768;
/** Bytes of stderr returned to the model (truncated past this, with a marker). */
export const DEFAULT_MAX_STDERR_BYTES = 16_384;
/** Bytes of model code accepted for one run. */
export const DEFAULT_MAX_CODE_BYTES = 262_144;
/** Worker processes in the sandbox pool (process isolation mode). */
export const DEFAULT_SANDBOX_WORKERS = 2;
/** Time to connect to one MCP server and list its tools. */
export const DEFAULT_SERVER_CONNECT_TIMEOUT_MS = 30_000;
/** Time one MCP tool call may take. */
export const DEFAULT_TOOL_CALL_TIMEOUT_MS = 60_000;
