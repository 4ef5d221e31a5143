/**
 * @module
 * Runs one streamed provider request: opening the stream (until the response headers arrive) is
 * retried like any request by {@link retryProviderCall}; the events are then read with a bound on
 * silence between them (the attempt timeout, since the SDKs' own timeout ends with the headers),
 * and a stream that breaks after it started is not retried — its text was already reported.
 */
import { CodecallError } from '../errors.js';
import { retryProviderCall, type RetryProviderCallOptions } from './retry-provider-call.js';

/** Options of {@link streamProviderCall}. */
export interface StreamProviderCallOptions extends RetryProviderCallOptions {
  /** Longest wait for the next event once the stream is open. */
  idleTimeoutMs: number;
}

function linkedController(signal: AbortSignal | undefined): {
  controller: AbortController;
  unlink: () => void;
} {
  const controller = new AbortController();
  if (signal === undefined) return { controller, unlink: () => {} };
  const onAbort = (): void => controller.abort(signal.reason);
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  return { controller, unlink: () => signal.removeEventListener('abort', onAbort) };
}

/** The error of a stream that stopped after it opened: cancelled, stalled or broken. */
function streamFailure(error: unknown, idle: boolean, options: StreamProviderCallOptions): CodecallError {
  const { providerName, idleTimeoutMs } = options;
  if (options.signal?.aborted) {
    return new CodecallError('ABORTED', `The ${providerName} request was cancelled.`, { cause: error });
  }
  if (idle) {
    return new CodecallError(
      'PROVIDER_REQUEST_FAILED',
      `${providerName} stream stalled: no data for ${idleTimeoutMs} ms. Raise timeoutMs if the model is slow to write.`,
      { details: { provider: providerName, retryable: false, idleTimeoutMs }, cause: error },
    );
  }
  const failure = options.classify(error);
  const status = failure.status === undefined ? '' : `${failure.status} `;
  const type = failure.errorType === undefined ? '' : `${failure.errorType}: `;
  return new CodecallError(
    'PROVIDER_REQUEST_FAILED',
    `${providerName} stream broke after it started: ${status}${type}${failure.message}`,
    {
      details: {
        provider: providerName,
        retryable: false,
        ...(failure.status === undefined ? {} : { status: failure.status }),
        ...(failure.errorType === undefined ? {} : { errorType: failure.errorType }),
      },
      cause: error,
    },
  );
}

/**
 * Opens a stream with retries, hands each event to `onEvent`, and returns when the stream ends.
 *
 * @throws CodecallError as {@link retryProviderCall} while opening; once open, `ABORTED` (the
 * caller's signal fired) or `PROVIDER_REQUEST_FAILED` (the stream broke, the server sent an
 * error event, or no event came for `idleTimeoutMs`).
 */
export async function streamProviderCall<E>(
  open: (signal: AbortSignal) => Promise<AsyncIterable<E>>,
  onEvent: (event: E) => void,
  options: StreamProviderCallOptions,
): Promise<void> {
  const { signal, idleTimeoutMs } = options;
  // One controller for the whole call: the idle timer aborts the request the SDK is reading.
  const { controller, unlink } = linkedController(signal);
  let idle = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      idle = true;
      controller.abort(new Error(`no data for ${idleTimeoutMs} ms`));
    }, idleTimeoutMs);
  };
  try {
    const stream = await retryProviderCall(() => open(controller.signal), {
      ...options,
      signal: controller.signal,
    });
    arm();
    let ownError: { error: unknown } | undefined;
    try {
      for await (const event of stream) {
        arm();
        try {
          onEvent(event);
        } catch (error) {
          // The caller's own failure (a bad event, its callback): not the provider's.
          ownError = { error };
          throw error;
        }
      }
    } catch (error) {
      if (ownError !== undefined) throw ownError.error;
      throw streamFailure(error, idle, options);
    }
    // The SDKs end a stream quietly when its request is aborted: that is no answer either.
    if (controller.signal.aborted) throw streamFailure(controller.signal.reason, idle, options);
  } finally {
    clearTimeout(timer);
    unlink();
  }
}
