/**
 * @module
 * A per-attempt time bound for SDKs whose own timeout does not fit the retry layer
 * (`@google/genai` keeps its timer armed while a stream is read; the AWS SDK's covers only the
 * socket): the attempt gets a signal that follows the caller's and also fires after
 * `timeoutMs`, and a failure caused by that timer is reported as a `TimeoutError`, which
 * {@link classifyTransportError} retries.
 */

/** Thrown when an attempt ran out of time. */
function timeoutError(timeoutMs: number, cause: unknown): Error {
  const error = new Error(`no answer within ${timeoutMs} ms`, { cause });
  error.name = 'TimeoutError';
  return error;
}

/**
 * Runs `attempt` with a signal that fires when `signal` does or after `timeoutMs`. The timer
 * stops when `attempt` settles (a stream it opened keeps following `signal`).
 */
export async function withAttemptTimeout<T>(
  signal: AbortSignal | undefined,
  timeoutMs: number,
  attempt: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const timer = new AbortController();
  const handle = setTimeout(() => timer.abort(timeoutError(timeoutMs, undefined)), timeoutMs);
  const combined = signal === undefined ? timer.signal : AbortSignal.any([signal, timer.signal]);
  try {
    return await attempt(combined);
  } catch (error) {
    if (timer.signal.aborted && signal?.aborted !== true) throw timeoutError(timeoutMs, error);
    throw error;
  } finally {
    clearTimeout(handle);
  }
}
