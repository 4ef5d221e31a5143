/**
 * @module
 * Sorts one failed provider attempt into auth / retryable / fatal / aborted. Both official SDKs
 * (Anthropic, OpenAI) share one error hierarchy shape (`APIError` with `status`, `headers`,
 * `error` body; `APIConnectionError`, `APIConnectionTimeoutError`, `APIUserAbortError`), so one
 * classifier serves both, given the SDK's classes.
 */

/** HTTP statuses worth retrying: timeout, conflict, rate limit, server errors, overload. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 409, 429, 500, 502, 503, 504, 529]);

/** HTTP statuses that mean the credentials were rejected (never retried). */
export const AUTH_STATUSES: ReadonlySet<number> = new Set([401, 403]);

/** One failed attempt, as the retry loop sees it. */
export interface ProviderFailure {
  kind: 'auth' | 'retryable' | 'fatal' | 'aborted';
  /** HTTP status, when the server answered. */
  status?: number;
  /** Delay the server asked for (`retry-after-ms` / `retry-after`), in milliseconds. */
  retryAfterMs?: number;
  /** The provider's error type (`overloaded_error`, `rate_limit_exceeded`…), when it sent one. */
  errorType?: string;
  /** The provider's message, or the transport error's. */
  message: string;
  requestId?: string;
  cause: unknown;
}

type ErrorClass = abstract new (...args: never[]) => Error;

/** The error classes of a Stainless-generated SDK (`@anthropic-ai/sdk`, `openai`). */
export interface SdkErrorClasses {
  APIError: ErrorClass;
  APIConnectionError: ErrorClass;
  APIConnectionTimeoutError: ErrorClass;
  APIUserAbortError: ErrorClass;
}

interface HeadersLike {
  get(name: string): string | null;
}

/**
 * Milliseconds a server asked the client to wait, from `retry-after-ms`, or `retry-after` as
 * seconds or an HTTP date. `undefined` when absent, unparseable or negative.
 */
export function parseRetryAfter(
  headers: HeadersLike | undefined,
  now: number = Date.now(),
): number | undefined {
  if (headers === undefined || typeof headers.get !== 'function') return undefined;
  const milliseconds = headers.get('retry-after-ms');
  if (milliseconds !== null && milliseconds.trim() !== '') {
    const value = Number(milliseconds);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const retryAfter = headers.get('retry-after');
  if (retryAfter === null || retryAfter.trim() === '') return undefined;
  const seconds = Number(retryAfter);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1_000 : undefined;
  const date = Date.parse(retryAfter);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
}

function stringField(value: unknown, key: string): string | undefined {
  const field = record(value)?.[key];
  return typeof field === 'string' && field !== '' ? field : undefined;
}

/** `{type:'error', error:{type, message}}` (Anthropic) or `{message, type, code}` (OpenAI). */
function describeBody(body: unknown): { type?: string; message?: string } {
  const nested = record(record(body)?.['error']);
  const source = nested ?? body;
  const type = stringField(source, 'type') ?? stringField(source, 'code');
  const message = stringField(source, 'message');
  return { ...(type === undefined ? {} : { type }), ...(message === undefined ? {} : { message }) };
}

/**
 * Classifies an error thrown by one SDK attempt.
 *
 * `x-should-retry: true|false` from the server overrides the status-based decision, as both
 * SDKs do.
 */
export function classifyProviderError(error: unknown, classes: SdkErrorClasses): ProviderFailure {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof classes.APIUserAbortError) return { kind: 'aborted', message, cause: error };
  if (error instanceof classes.APIConnectionTimeoutError) {
    return { kind: 'retryable', message: `request timed out (${message})`, cause: error };
  }
  if (error instanceof classes.APIConnectionError) {
    const reason = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return { kind: 'retryable', message: `${message}${reason}`, cause: error };
  }
  if (!(error instanceof classes.APIError)) return { kind: 'fatal', message, cause: error };

  const fields = error as unknown as Record<string, unknown>;
  const status = typeof fields['status'] === 'number' ? fields['status'] : undefined;
  const headers = record(fields['headers']) as HeadersLike | undefined;
  const body = describeBody(fields['error']);
  const requestId =
    stringField(fields, 'requestID') ?? headers?.get?.('request-id') ?? headers?.get?.('x-request-id');
  const retryAfterMs = parseRetryAfter(headers);
  const shouldRetry = headers?.get?.('x-should-retry');

  let kind: ProviderFailure['kind'];
  if (status !== undefined && AUTH_STATUSES.has(status)) kind = 'auth';
  else if (shouldRetry === 'true') kind = 'retryable';
  else if (shouldRetry === 'false') kind = 'fatal';
  else kind = status !== undefined && RETRYABLE_STATUSES.has(status) ? 'retryable' : 'fatal';

  return {
    kind,
    ...(status === undefined ? {} : { status }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    ...(body.type === undefined ? {} : { errorType: body.type }),
    message: body.message ?? message,
    ...(requestId === undefined || requestId === null ? {} : { requestId }),
    cause: error,
  };
}

/**
 * The kind of a failure an SDK reports by HTTP status alone (`@google/genai`, the AWS SDK):
 * auth for 401/403, retryable for {@link RETRYABLE_STATUSES} or when `retryable` says so, else
 * fatal.
 */
export function kindOfStatus(status: number | undefined, retryable?: boolean): ProviderFailure['kind'] {
  if (status !== undefined && AUTH_STATUSES.has(status)) return 'auth';
  if (retryable === true) return 'retryable';
  return status !== undefined && RETRYABLE_STATUSES.has(status) ? 'retryable' : 'fatal';
}

/**
 * A failure of a plain `fetch`-based SDK that is not an HTTP error: the caller's abort, an
 * attempt timeout (`TimeoutError`), or a connection failure (`TypeError: fetch failed`,
 * `ECONNREFUSED`, an HTTP/2 stream or session error…, on the error or its cause). `undefined`
 * for anything else.
 */
export function classifyTransportError(error: unknown): ProviderFailure | undefined {
  if (!(error instanceof Error)) return undefined;
  const codes = [(error as { code?: unknown }).code, (error.cause as { code?: unknown } | undefined)?.code];
  if (error.name === 'TimeoutError') {
    return { kind: 'retryable', message: `request timed out (${error.message})`, cause: error };
  }
  if (error.name === 'AbortError') return { kind: 'aborted', message: error.message, cause: error };
  if (
    (error instanceof TypeError && /fetch failed|network/i.test(error.message)) ||
    codes.some(
      (code) =>
        typeof code === 'string' &&
        /^(ECONN|EPIPE|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|UND_ERR|ERR_HTTP2)/.test(code),
    )
  ) {
    const reason = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return { kind: 'retryable', message: `${error.message}${reason}`, cause: error };
  }
  return undefined;
}
