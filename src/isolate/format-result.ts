/**
 * @module
 * THE one place that renders an execution result as text for the model: stdout, stderr and
 * the exit status, in the spirit of Anthropic's `code_execution_tool_result`. Only what the
 * script printed (and how it ended) reaches the model.
 */
import type { ExecutionResult } from '../types.js';

/**
 * What the rendering reads of a result: an {@link ExecutionResult}, or the same fields kept by a
 * finished job (whose tool calls are only names).
 */
export type FormattableResult = Pick<ExecutionResult, 'status' | 'stdout' | 'stderr'> & {
  returnValue?: unknown;
  error?: { code: string; message: string } | undefined;
  toolCalls: readonly unknown[];
};

/** Longest rendering of a return value, in characters (stdout is already bounded). */
const MAX_RETURN_VALUE_CHARS = 4_000;

/**
 * Renders stdout, stderr, the return value (if any) and the exit status.
 *
 * @example
 * ```ts
 * const text = formatResultForModel(await pool.run({ code, tools, invoke }));
 * ```
 */
export function formatResultForModel(result: FormattableResult): string {
  const parts: string[] = [];
  const stdout = result.stdout.replace(/\n$/, '');
  const stderr = result.stderr.replace(/\n$/, '');
  parts.push(stdout === '' ? 'stdout: (empty)' : `stdout:\n${stdout}`);
  if (stderr !== '') parts.push(`stderr:\n${stderr}`);
  if (result.returnValue !== undefined) {
    const json = JSON.stringify(result.returnValue);
    const shown =
      json.length > MAX_RETURN_VALUE_CHARS ? `${json.slice(0, MAX_RETURN_VALUE_CHARS)}… (cut)` : json;
    parts.push(`return value: ${shown}`);
  }
  const calls = result.toolCalls.length;
  const callNote = calls > 0 ? ` after ${calls} tool call${calls === 1 ? '' : 's'}` : '';
  if (result.status === 'ok') parts.push(`exit status: ok${callNote}`);
  else {
    const error = result.error ?? { code: 'RUNTIME_ERROR', message: 'The script failed.' };
    parts.push(`exit status: error (${error.code})${callNote}\n${error.message}`);
  }
  return parts.join('\n\n');
}
