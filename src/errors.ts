/**
 * @module
 * The one base error of codecall. Developer-facing failures (bad configuration, a server that
 * will not start, provider authentication) are thrown as a {@link CodecallError} subclass with a
 * stable string `code` and structured `details`; the message says what to do next.
 *
 * Model-facing failures (a script that throws, times out, calls a forbidden tool) are never
 * thrown: they are returned as data in an execution result.
 *
 * Recognise errors with {@link isCodecallError} and `code`, never `instanceof`: errors may cross
 * realms (worker processes, isolates) as copied data.
 */

/** Stable codes of every error codecall throws. */
export type CodecallErrorCode =
  | 'CONFIG_NOT_FOUND'
  | 'CONFIG_INVALID'
  | 'CONFIG_ENV_MISSING'
  | 'SERVER_START_FAILED'
  | 'SERVER_NOT_FOUND'
  | 'TOOL_NOT_FOUND'
  | 'SANDBOX_UNAVAILABLE'
  | 'SANDBOX_CRASHED'
  | 'PROVIDER_AUTH'
  | 'PROVIDER_MISSING_KEY'
  | 'PROVIDER_REQUEST_FAILED'
  | 'PROVIDER_UNKNOWN'
  | 'MODEL_SCRIPT_EXHAUSTED'
  | 'MODEL_SCRIPT_MISMATCH'
  | 'MAX_STEPS_EXCEEDED'
  | 'RUN_TIMEOUT'
  | 'ABORTED'
  | 'HISTORY_STORE_FAILED'
  | 'SEARCH_INVALID_QUERY'
  | 'SEARCH_EMBEDDING_FAILED'
  | 'INVALID_ARGUMENT'
  | 'CLOSED'
  | 'TOOL_NOT_ALLOWED'
  | 'TOOL_INPUT_INVALID'
  | 'TOOL_CALL_FAILED'
  | 'TOOL_TIMEOUT'
  | 'SERVER_UNAVAILABLE'
  | 'SERVE_TOKEN_REQUIRED'
  | 'SERVE_LISTEN_FAILED';

const BRAND = Symbol.for('codecall.error');

/** Options for {@link CodecallError}. */
export interface CodecallErrorOptions {
  /** Structured facts about the failure (file, path, server name…). */
  details?: Record<string, unknown>;
  /** The underlying error, if any. */
  cause?: unknown;
}

/**
 * Base class of every error codecall throws.
 *
 * @example
 * ```ts
 * try { await loadConfig({ path: 'codecall.json' }); }
 * catch (error) { if (isCodecallError(error) && error.code === 'CONFIG_INVALID') console.error(error.message); }
 * ```
 */
export class CodecallError extends Error {
  readonly code: CodecallErrorCode;
  readonly details: Record<string, unknown>;
  readonly [BRAND] = true;

  constructor(code: CodecallErrorCode, message: string, options: CodecallErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CodecallError';
    this.code = code;
    this.details = options.details ?? {};
  }
}

/** True when `value` is a codecall error (by brand, works across module copies). */
export function isCodecallError(value: unknown): value is CodecallError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}
