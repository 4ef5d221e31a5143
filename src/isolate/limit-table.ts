/**
 * @module
 * The one table of sandbox limits and their model-facing messages. Every limit a script can hit
 * is enforced twice — by the prelude inside the isolate (cheap, before a call crosses) and by the
 * host's {@link RunController} (authoritative: a worker is a separate process and the host never
 * trusts what crosses) — and both sides phrase the refusal with the functions here, so the model
 * reads the same words whichever side refused.
 *
 * Imports nothing at run time: sandbox/prelude.ts bundles this file into the isolate (no Node
 * APIs, no host objects), and src/isolate/ imports it on the host.
 */
import type { SandboxLimits } from '../types.js';

/** Characters of a tool name repeated in a message. */
export const MAX_ECHOED_NAME_CHARS = 80;

/** Counted per call on top of its arguments and name (the call's message and bookkeeping). */
export const CALL_OVERHEAD_BYTES = 64;

/** `name` as repeated in a message: never more than a short prefix. */
export function echoName(name: string): string {
  return name.length > MAX_ECHOED_NAME_CHARS
    ? `${name.slice(0, MAX_ECHOED_NAME_CHARS)}… (${name.length} characters)`
    : name;
}

/** Where a limit is checked: in the sandbox and on the host, or on the host alone. */
export type LimitSides = 'both' | 'host';

/** One row of {@link SANDBOX_LIMIT_TABLE}. */
export interface SandboxLimitRow {
  /** The field of {@link SandboxLimits} that sets it. */
  field: keyof SandboxLimits;
  /** The `code` a refused call's error carries in the script (undefined: output is cut, not refused). */
  code: 'TOOL_CALL_LIMIT' | 'TOOL_ARGS_LIMIT' | 'TOOL_RESULT_LIMIT' | 'UNKNOWN_TOOL' | undefined;
  sides: LimitSides;
}

/**
 * Every per-call and per-output limit, by name. The prelude checks the `'both'` rows before a
 * call crosses; the host checks every row. Time and memory limits are the engine's (watchdog,
 * isolate heap) and have no row here.
 */
export const SANDBOX_LIMIT_TABLE = {
  toolCalls: { field: 'maxToolCalls', code: 'TOOL_CALL_LIMIT', sides: 'both' },
  toolName: { field: 'maxToolNameChars', code: 'UNKNOWN_TOOL', sides: 'both' },
  toolArgs: { field: 'maxToolArgsBytes', code: 'TOOL_ARGS_LIMIT', sides: 'both' },
  pendingToolArgs: { field: 'maxPendingToolArgsBytes', code: 'TOOL_ARGS_LIMIT', sides: 'both' },
  stdout: { field: 'maxStdoutBytes', code: undefined, sides: 'both' },
  stderr: { field: 'maxStderrBytes', code: undefined, sides: 'both' },
  returnValue: { field: 'maxStdoutBytes', code: undefined, sides: 'both' },
  toolResult: { field: 'maxToolResultBytes', code: 'TOOL_RESULT_LIMIT', sides: 'host' },
  totalToolResults: { field: 'maxTotalToolResultBytes', code: 'TOOL_RESULT_LIMIT', sides: 'host' },
} as const satisfies Record<string, SandboxLimitRow>;

/** The model-facing message of each limit (see {@link SANDBOX_LIMIT_TABLE}). */
export const LIMIT_MESSAGES = {
  toolCalls: (maxToolCalls: number): string =>
    `Tool call limit reached: a script may make at most ${maxToolCalls} tool calls. Fetch data in fewer, larger calls and print a summary.`,
  toolName: (name: string, maxChars: number): string =>
    `Unknown tool "${echoName(name)}": tool names are at most ${maxChars} characters. Use the names in \`tools\`.`,
  toolArgs: (name: string, bytes: number, maxBytes: number): string =>
    `Arguments of ${echoName(name)} are ${bytes} bytes of JSON; the limit is ${maxBytes}. Pass less data per call (split it over several calls).`,
  pendingToolArgs: (pendingBytes: number, costBytes: number, maxBytes: number): string =>
    `Arguments of tool calls waiting for an answer would exceed ${maxBytes} bytes of JSON (${pendingBytes} pending now, this call adds ${costBytes}). Await earlier calls before starting more (for example in batches with Promise.all).`,
  output: (keptBytes: number, totalBytes: number): string =>
    `[output truncated: ${keptBytes} of ${totalBytes} bytes shown — print less: aggregate, slice, or select fields]\n`,
  returnValue: (maxBytes: number): string =>
    `[return value omitted: over ${maxBytes} bytes of JSON — return or print a summary instead]\n`,
  toolResult: (name: string, bytes: number, maxBytes: number): string =>
    `The result of ${name} is ${bytes} bytes of JSON; the limit for one tool result is ${maxBytes}. Ask for less (filter, paginate, or select fields).`,
  totalToolResults: (receivedBytes: number, maxBytes: number): string =>
    `Tool results of this run would exceed ${maxBytes} bytes in total (${receivedBytes} received so far). Ask tools for less data.`,
} as const satisfies Record<string, (...args: never[]) => string>;
