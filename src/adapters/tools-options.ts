/**
 * @module
 * Options every framework adapter's tools share, checked once.
 */
import { DEFAULT_AGENT_MAX_TOOL_RESULT_BYTES } from '../config/defaults.js';
import { CodecallError } from '../errors.js';

/** The checked options. */
export interface ResolvedToolsOptions {
  maxToolResultBytes: number;
}

/** Checks `maxToolResultBytes`; throws `INVALID_ARGUMENT` naming it when it is not a positive integer. */
export function checkToolsOptions(options: { maxToolResultBytes?: number }): ResolvedToolsOptions {
  const value = options.maxToolResultBytes ?? DEFAULT_AGENT_MAX_TOOL_RESULT_BYTES;
  if (!Number.isInteger(value) || value < 1) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `maxToolResultBytes must be a positive integer; got ${String(value)}.`,
      { details: { field: 'maxToolResultBytes', value } },
    );
  }
  return { maxToolResultBytes: value };
}
