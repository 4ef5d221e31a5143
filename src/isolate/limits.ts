/**
 * @module
 * The bounds of one sandbox run and their resolution from partial options into a fully
 * required form, validated once, with errors that name the field and the fix.
 */
import {
  DEFAULT_CPU_TIME_MS,
  DEFAULT_MAX_CONCURRENT_TOOL_CALLS,
  DEFAULT_MAX_STDERR_BYTES,
  DEFAULT_MAX_STDOUT_BYTES,
  DEFAULT_MAX_TOOL_ARGS_BYTES,
  DEFAULT_MAX_TOOL_CALLS,
  DEFAULT_MAX_TOOL_RESULT_BYTES,
  DEFAULT_MAX_TOTAL_TOOL_RESULT_BYTES,
  DEFAULT_MEMORY_MB,
  DEFAULT_WALL_TIME_MS,
} from '../config/defaults.js';
import { CodecallError } from '../errors.js';

/** Every bound of one sandbox run. Each field has a `DEFAULT_*` constant in `config/defaults`. */
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
}

const DEFAULTS: SandboxLimits = {
  wallTimeMs: DEFAULT_WALL_TIME_MS,
  cpuTimeMs: DEFAULT_CPU_TIME_MS,
  memoryMb: DEFAULT_MEMORY_MB,
  maxToolCalls: DEFAULT_MAX_TOOL_CALLS,
  maxConcurrentToolCalls: DEFAULT_MAX_CONCURRENT_TOOL_CALLS,
  maxToolArgsBytes: DEFAULT_MAX_TOOL_ARGS_BYTES,
  maxToolResultBytes: DEFAULT_MAX_TOOL_RESULT_BYTES,
  maxTotalToolResultBytes: DEFAULT_MAX_TOTAL_TOOL_RESULT_BYTES,
  maxStdoutBytes: DEFAULT_MAX_STDOUT_BYTES,
  maxStderrBytes: DEFAULT_MAX_STDERR_BYTES,
};

/** Smallest heap isolated-vm accepts. */
const MIN_MEMORY_MB = 8;
/** Largest timer delay Node accepts (about 24.8 days). */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Fills in defaults and validates every field (positive integers; `memoryMb` at least 8).
 * Throws a `CodecallError` with code `INVALID_ARGUMENT` naming the field otherwise.
 *
 * @example
 * ```ts
 * const limits = resolveSandboxLimits({ wallTimeMs: 10_000 });
 * ```
 */
export function resolveSandboxLimits(limits: Partial<SandboxLimits> = {}): SandboxLimits {
  const resolved: SandboxLimits = { ...DEFAULTS };
  for (const [key, value] of Object.entries(limits ?? {})) {
    if (!(key in DEFAULTS)) {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `Unknown sandbox limit "${key}". Known limits: ${Object.keys(DEFAULTS).join(', ')}.`,
        {
          details: { field: key },
        },
      );
    }
    if (value === undefined) continue;
    const min = key === 'memoryMb' ? MIN_MEMORY_MB : 1;
    const max = key === 'wallTimeMs' || key === 'cpuTimeMs' ? MAX_TIMER_MS : Number.MAX_SAFE_INTEGER;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `Sandbox limit "${key}" must be an integer from ${min} to ${max}; got ${JSON.stringify(value)}.`,
        { details: { field: key, value } },
      );
    }
    resolved[key as keyof SandboxLimits] = value;
  }
  return resolved;
}
