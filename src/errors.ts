/**
 * @module
 * The one base error of codecall. Developer-facing failures (bad configuration, a server that
 * will not start, provider authentication) are thrown as a {@link CodecallError} subclass with a
 * stable string `code` and structured `details`; the message says what to do next.
 *
 * Model-facing failures (a script that throws, times out, calls a forbidden tool) are never
 * thrown: they are returned as data in an execution result.
 *
 * Recognise errors with {@link isCodecallError} / {@link CodecallError.isInstance} and `code`, never `instanceof`: errors may cross
 * realms (worker processes, isolates) as copied data.
 */

/** Stable codes of every error codecall throws. */
export type CodecallErrorCode =
  | 'CONFIG_NOT_FOUND'
  | 'CONFIG_INVALID'
  | 'CONFIG_ENV_MISSING'
  | 'CONFIG_NOT_TRUSTED'
  | 'SERVER_START_FAILED'
  | 'TOOL_NOT_FOUND'
  | 'SANDBOX_UNAVAILABLE'
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
  | 'SERVE_LISTEN_FAILED'
  | 'JOB_NOT_FOUND'
  | 'JOB_WAIT_TIMEOUT'
  | 'JOB_NOT_WAITING_APPROVAL'
  | 'JOB_CONFIG_UNKNOWN'
  | 'JOBS_BACKEND_UNAVAILABLE'
  /** A `codecall serve` jobs API refused the request: no or a wrong bearer token (401), or its Host/Origin checks (403). */
  | 'JOBS_AUTH_FAILED'
  | 'JOBS_QUEUE_FULL'
  | 'REPLAY_DIVERGED'
  | 'REPLAY_IN_DOUBT'
  | 'JOURNAL_WRITE_FAILED'
  /** Another process drives the run journal (its lock file names it). */
  | 'JOURNAL_LOCKED'
  | 'APPROVAL_DENIED'
  | 'APPROVAL_TIMEOUT'
  /** A script's `store.set` was refused: a value or the namespace over its byte limit. */
  | 'STORE_LIMIT'
  /** An optional package a feature needs is not installed (the message names the install command). */
  | 'PACKAGE_MISSING';

/**
 * Facts every payload may carry besides its typed fields (kept open so a payload can grow
 * without breaking readers; readers get `unknown` for what is not declared).
 */
export interface CodecallErrorFacts {
  [fact: string]: unknown;
}

/** A problem found in a configuration file. */
export interface CodecallErrorIssue {
  path: string;
  message: string;
}

/** Payload of an error that stops an agent run; `result` is the partial run (`RunResult`). */
export interface RunStopDetails extends CodecallErrorFacts {
  /** Steps the run made before it stopped. */
  steps?: number | undefined;
  /** The partial run (a `RunResult`), set by the agent loop. */
  result?: unknown;
}

/** The typed payload (`details`) of each error code. */
export interface CodecallErrorDetailsMap {
  CONFIG_NOT_FOUND: CodecallErrorFacts & {
    file?: string | undefined;
    cwd?: string | undefined;
    looked?: string[] | undefined;
  };
  CONFIG_INVALID: CodecallErrorFacts & {
    file?: string | undefined;
    issues: CodecallErrorIssue[];
  };
  CONFIG_ENV_MISSING: CodecallErrorFacts & {
    file?: string | undefined;
    path: string;
    variable: string;
  };
  SERVER_START_FAILED: CodecallErrorFacts & {
    /** The server that failed (one server's start). */
    server?: string | undefined;
    /** Every server that failed (one, or all of a pool opened with `requireAll`). */
    servers: string[];
    stderrTail?: string | undefined;
    reason?: string | undefined;
  };
  TOOL_NOT_FOUND: CodecallErrorFacts & { tool: string; suggestion?: string | undefined };
  SANDBOX_UNAVAILABLE: CodecallErrorFacts & { stderr?: string | undefined; tried?: unknown };
  PROVIDER_AUTH: CodecallErrorFacts & { provider: string; status?: number | undefined };
  PROVIDER_MISSING_KEY: CodecallErrorFacts & { provider: string; variable: string };
  PROVIDER_REQUEST_FAILED: CodecallErrorFacts & {
    provider: string;
    retryable: boolean;
    status?: number | undefined;
    attempts?: number | undefined;
  };
  PROVIDER_UNKNOWN: CodecallErrorFacts & {
    spec: string;
    provider?: string | undefined;
    knownProviders: string[];
  };
  MODEL_SCRIPT_EXHAUSTED: CodecallErrorFacts & {
    call?: number | undefined;
    steps?: number | undefined;
    lastMessage?: unknown;
  };
  MODEL_SCRIPT_MISMATCH: CodecallErrorFacts & {
    step?: number | undefined;
    steps?: number | undefined;
    reason?: string | undefined;
    label?: string | undefined;
    calls?: number | undefined;
    remaining?: number | undefined;
  };
  MAX_STEPS_EXCEEDED: RunStopDetails & { maxSteps: number };
  RUN_TIMEOUT: RunStopDetails & { maxRunTimeMs: number };
  ABORTED: RunStopDetails & { tool?: string | undefined };
  HISTORY_STORE_FAILED: CodecallErrorFacts & {
    /** The store that failed. */
    backend: 'sqlite' | 'redis' | 'postgres';
    /** The SQLite file. */
    path?: string | undefined;
  };
  SEARCH_INVALID_QUERY: CodecallErrorFacts & {
    query: string;
    pattern?: string | undefined;
    problem?: string | undefined;
  };
  INVALID_ARGUMENT: CodecallErrorFacts & {
    /** The option or field at fault (`maxSteps`, `state.sequences`…). */
    field: string;
    value?: unknown;
  };
  CLOSED: CodecallErrorFacts;
  TOOL_NOT_ALLOWED: CodecallErrorFacts & {
    tool: string;
    caller: string;
    allowedCallers: string[];
    configKey: string;
  };
  TOOL_INPUT_INVALID: CodecallErrorFacts & { tool: string; problems: string[] };
  TOOL_CALL_FAILED: CodecallErrorFacts & {
    tool: string;
    server?: string | undefined;
    mcpCode?: unknown;
  };
  TOOL_TIMEOUT: CodecallErrorFacts & { tool: string; timeoutMs: number };
  SERVER_UNAVAILABLE: CodecallErrorFacts & {
    server: string;
    tool?: string | undefined;
    state?: string | undefined;
  };
  SERVE_TOKEN_REQUIRED: CodecallErrorFacts & { host: string };
  SERVE_LISTEN_FAILED: CodecallErrorFacts & { host: string; port: number };
  CONFIG_NOT_TRUSTED: CodecallErrorFacts & { file: string; sha256: string };
  JOB_NOT_FOUND: CodecallErrorFacts & { id: string };
  JOB_WAIT_TIMEOUT: CodecallErrorFacts & { id: string; timeoutMs: number };
  JOB_NOT_WAITING_APPROVAL: CodecallErrorFacts & { id: string; state: string };
  JOB_CONFIG_UNKNOWN: CodecallErrorFacts & { config: string; available: string[] };
  JOBS_BACKEND_UNAVAILABLE: CodecallErrorFacts & { timeoutMs?: number | undefined };
  JOBS_AUTH_FAILED: CodecallErrorFacts & {
    /** The server's address. */
    url: string;
    /** 401 (token missing or refused) or 403 (Host/Origin refused). */
    status: number;
  };
  JOBS_QUEUE_FULL: CodecallErrorFacts & { maxWaiting?: number | undefined; maxParked?: number | undefined };
  /** A replayed script made a call the journal does not have, or left journaled calls unmade. */
  REPLAY_DIVERGED: CodecallErrorFacts & {
    /** The call the script made (qualified name), when one diverged. */
    tool?: string | undefined;
    /** Its position among the replay's calls (0-based). */
    index?: number | undefined;
    /** Journaled calls not made again (qualified names). */
    unmatched?: string[] | undefined;
  };
  /** A journaled call was in flight when its run stopped, and its tool is not idempotent. */
  REPLAY_IN_DOUBT: CodecallErrorFacts & { tool: string; index: number };
  /** The run journal could not record a call; the run stopped. */
  JOURNAL_WRITE_FAILED: CodecallErrorFacts & { tool: string };
  /** Another process drives the run journal; its lock file names it. */
  JOURNAL_LOCKED: CodecallErrorFacts & {
    /** The journal file. */
    path: string;
    /** Its lock file (`<journal>.lock`), to delete when no process uses the journal. */
    lockPath: string;
    /** The holder, when the lock file names one. */
    pid?: number | undefined;
    host?: string | undefined;
  };
  APPROVAL_DENIED: CodecallErrorFacts & {
    tool: string;
    /** Who decided: `callback`, `tty`, `flag`, `elicitation`, `policy` (nobody could be asked). */
    decidedBy: string;
    reason: string;
    configKey: string;
  };
  APPROVAL_TIMEOUT: CodecallErrorFacts & {
    tool: string;
    timeoutMs: number;
    configKey: string;
  };
  STORE_LIMIT: CodecallErrorFacts & {
    /** The key of the refused write. */
    key: string;
    /** The limit in bytes, and the configuration key that sets it. */
    limit: number;
    configKey: string;
  };
  PACKAGE_MISSING: CodecallErrorFacts & {
    /** The npm package to install. */
    package: string;
    /** What needs it, e.g. `the BullMQ jobs backend`. */
    feature: string;
    /** The exact command that installs it. */
    install: string;
  };
  SEARCH_EMBEDDING_FAILED: CodecallErrorFacts & {
    field?: string | undefined;
    path?: string | undefined;
    status?: number | undefined;
  };
}

/** The payload of errors with code `C`. */
export type CodecallErrorDetails<C extends CodecallErrorCode = CodecallErrorCode> =
  CodecallErrorDetailsMap[C];

const BRAND = Symbol.for('codecall.error');

/** Options for {@link CodecallError}. */
export interface CodecallErrorOptions<C extends CodecallErrorCode = CodecallErrorCode> {
  /**
   * Typed facts about the failure (file, path, server name…); required for a code whose payload
   * has required fields.
   */
  details?: CodecallErrorDetails<C>;
  /** The underlying error, if any. */
  cause?: unknown;
}

/**
 * The options argument of `new CodecallError(code, message, …)`: optional, with optional
 * `details`, for a code whose payload has no required field; else required, with `details`.
 */
export type CodecallErrorArguments<C extends CodecallErrorCode> =
  Record<string, never> extends CodecallErrorDetails<C>
    ? [options?: CodecallErrorOptions<C>]
    : [options: CodecallErrorOptions<C> & { details: CodecallErrorDetails<C> }];

/**
 * Base class of every error codecall throws; `C` is its code, `details` its typed payload.
 *
 * @example
 * ```ts
 * try { await loadConfig({ path: 'codecall.json' }); }
 * catch (error) {
 *   if (CodecallError.isInstance(error, 'CONFIG_INVALID')) console.error(error.message, error.details.issues);
 * }
 * ```
 */
export class CodecallError<C extends CodecallErrorCode = CodecallErrorCode> extends Error {
  readonly code: C;
  readonly details: CodecallErrorDetails<C>;
  readonly [BRAND] = true;

  constructor(code: C, message: string, ...[options]: CodecallErrorArguments<C>) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CodecallError';
    this.code = code;
    this.details = options?.details ?? ({} as CodecallErrorDetails<C>);
  }

  /**
   * True when `value` is a codecall error (by brand, across module copies and realms), and when
   * `code` is given, one with that code or one of those codes; narrows `details` to their payload.
   */
  static isInstance<K extends CodecallErrorCode = CodecallErrorCode>(
    value: unknown,
    code?: K | readonly K[],
  ): value is CodecallError<K> {
    if (!isCodecallError(value)) return false;
    if (code === undefined) return true;
    return typeof code === 'string' ? value.code === code : (code as readonly string[]).includes(value.code);
  }
}

/** Every codecall error as a union discriminated by `code`: `switch (error.code)` narrows `details`. */
export type AnyCodecallError = { [C in CodecallErrorCode]: CodecallError<C> }[CodecallErrorCode];

/** True when `value` is a codecall error (by brand, works across module copies). */
export function isCodecallError(value: unknown): value is AnyCodecallError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

/**
 * True when `value` looks like an error of any realm (an `Error` made in another context, a worker,
 * or copied as data): an object with a string `name` and `message`. Use it where `instanceof Error`
 * would miss errors that crossed a realm.
 */
export function isErrorLike(value: unknown): value is Error {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { name?: unknown }).name === 'string' &&
    typeof (value as { message?: unknown }).message === 'string'
  );
}
