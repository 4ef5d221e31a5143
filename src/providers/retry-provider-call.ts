/**
 * @module
 * The one retry layer of every provider (the SDKs' own retries are off): exponential backoff
 * with jitter, honouring a server's `retry-after`, bounded by a retry count and a maximum delay.
 * Auth failures and other client errors are never retried. An `AbortSignal` cancels both the
 * in-flight attempt and the backoff sleep.
 */
import { CodecallError } from '../errors.js';
import { backoffDelayMs } from '../util/backoff.js';
import type { ProviderFailure } from './classify-provider-error.js';

/** Retry bounds, fully resolved. */
export interface RetryPolicy {
  /** Retries after the first attempt (0 = one attempt). */
  maxRetries: number;
  /** First backoff delay; doubles per retry. */
  initialDelayMs: number;
  /** Cap of any one delay, including a server's `retry-after`. */
  maxDelayMs: number;
}

/** Reported before each retry. */
export interface ProviderRetryEvent {
  provider: string;
  /** 1 for the first retry. */
  retry: number;
  delayMs: number;
  failure: Omit<ProviderFailure, 'cause'>;
}

/** Options of {@link retryProviderCall}. */
export interface RetryProviderCallOptions {
  /** Human name of the provider, used in messages (`Anthropic`). */
  providerName: string;
  /** Environment variable that holds the key, named in auth errors (`ANTHROPIC_API_KEY`). */
  keyVariable: string;
  policy: RetryPolicy;
  classify: (error: unknown) => ProviderFailure;
  signal?: AbortSignal | undefined;
  onRetry?: ((event: ProviderRetryEvent) => void) | undefined;
  /** Random source for jitter, in [0, 1). */
  random?: () => number;
}

/** Share of a provider retry's delay that jitter may take off. */
const PROVIDER_RETRY_JITTER = 0.25;

/** Backoff before retry number `retry` (1-based): exponential, 0–25 % jitter, capped ({@link backoffDelayMs}). */
export function backoffDelay(
  retry: number,
  policy: RetryPolicy,
  failure: ProviderFailure,
  random: () => number,
): number {
  if (failure.retryAfterMs !== undefined) return Math.min(failure.retryAfterMs, policy.maxDelayMs);
  return backoffDelayMs(retry, { ...policy, jitter: PROVIDER_RETRY_JITTER, random });
}

function abortedError(providerName: string, cause: unknown): CodecallError {
  return new CodecallError('ABORTED', `The ${providerName} request was cancelled.`, { cause });
}

function sleep(milliseconds: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, milliseconds);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function describe(failure: ProviderFailure): string {
  const status = failure.status === undefined ? '' : `${failure.status} `;
  const type = failure.errorType === undefined ? '' : `${failure.errorType}: `;
  return `${status}${type}${failure.message}`;
}

function details(failure: ProviderFailure, attempts: number): Record<string, unknown> {
  return {
    attempts,
    ...(failure.status === undefined ? {} : { status: failure.status }),
    ...(failure.errorType === undefined ? {} : { errorType: failure.errorType }),
    ...(failure.requestId === undefined ? {} : { requestId: failure.requestId }),
  };
}

/**
 * Runs `attempt` until it succeeds, a failure is not retryable, or retries run out.
 *
 * @throws CodecallError `PROVIDER_AUTH` (401/403, never retried), `PROVIDER_REQUEST_FAILED`
 * (other client errors, or transient errors after the last retry), `ABORTED` (the signal fired).
 */
export async function retryProviderCall<T>(
  attempt: (signal: AbortSignal | undefined) => Promise<T>,
  options: RetryProviderCallOptions,
): Promise<T> {
  const { providerName, policy, signal } = options;
  const random = options.random ?? Math.random;
  for (let attempts = 1; ; attempts += 1) {
    if (signal?.aborted) throw abortedError(providerName, signal.reason);
    let failure: ProviderFailure;
    try {
      return await attempt(signal);
    } catch (error) {
      failure = signal?.aborted
        ? { kind: 'aborted', message: 'aborted', cause: error }
        : options.classify(error);
    }
    switch (failure.kind) {
      case 'aborted':
        throw abortedError(providerName, failure.cause);
      case 'auth':
        throw new CodecallError(
          'PROVIDER_AUTH',
          `${providerName} rejected the credentials (${describe(failure)}). Check ${options.keyVariable} or the apiKey option.`,
          {
            details: {
              provider: providerName,
              keyVariable: options.keyVariable,
              ...details(failure, attempts),
            },
            cause: failure.cause,
          },
        );
      case 'fatal':
        throw new CodecallError(
          'PROVIDER_REQUEST_FAILED',
          `${providerName} request failed: ${describe(failure)}`,
          {
            details: { provider: providerName, retryable: false, ...details(failure, attempts) },
            cause: failure.cause,
          },
        );
      case 'retryable':
        break;
    }
    if (attempts > policy.maxRetries) {
      throw new CodecallError(
        'PROVIDER_REQUEST_FAILED',
        `${providerName} request failed after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${describe(failure)}. ` +
          'The service may be overloaded or unreachable; try again later or raise maxRetries.',
        {
          details: { provider: providerName, retryable: true, ...details(failure, attempts) },
          cause: failure.cause,
        },
      );
    }
    const delayMs = backoffDelay(attempts, policy, failure, random);
    const { cause: _cause, ...reported } = failure;
    options.onRetry?.({ provider: providerName, retry: attempts, delayMs, failure: reported });
    try {
      await sleep(delayMs, signal);
    } catch (error) {
      throw abortedError(providerName, error);
    }
  }
}
