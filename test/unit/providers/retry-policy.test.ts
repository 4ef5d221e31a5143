/**
 * @module
 * retry-after parsing, backoff bounds and the retry loop's decisions, without any network.
 */
import { describe, expect, it } from 'vitest';
import { isCodecallError } from '../../../src/errors.js';
import { parseRetryAfter, type ProviderFailure } from '../../../src/providers/classify-provider-error.js';
import {
  backoffDelay,
  retryProviderCall,
  type RetryPolicy,
} from '../../../src/providers/retry-provider-call.js';

const headers = (values: Record<string, string>) => new Headers(values);
const policy: RetryPolicy = { maxRetries: 3, initialDelayMs: 100, maxDelayMs: 1_000 };
const transient: ProviderFailure = { kind: 'retryable', status: 503, message: 'unavailable', cause: null };

describe('parseRetryAfter', () => {
  it('reads retry-after-ms, retry-after seconds and HTTP dates', () => {
    expect(parseRetryAfter(headers({ 'retry-after-ms': '250' }))).toBe(250);
    expect(parseRetryAfter(headers({ 'retry-after': '3' }))).toBe(3_000);
    expect(parseRetryAfter(headers({ 'retry-after-ms': '40', 'retry-after': '3' }))).toBe(40);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter(headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }), now)).toBe(5_000);
  });

  it('ignores absent, negative and garbage values', () => {
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter(headers({}))).toBeUndefined();
    expect(parseRetryAfter(headers({ 'retry-after': '-1' }))).toBeUndefined();
    expect(parseRetryAfter(headers({ 'retry-after': 'soon' }))).toBeUndefined();
  });
});

describe('backoffDelay', () => {
  it('doubles per retry with up to 25 % jitter, capped', () => {
    expect(backoffDelay(1, policy, transient, () => 0)).toBe(100);
    expect(backoffDelay(3, policy, transient, () => 0)).toBe(400);
    expect(backoffDelay(3, policy, transient, () => 0.999)).toBeGreaterThan(300);
    expect(backoffDelay(10, policy, transient, () => 0)).toBe(1_000);
  });

  it('uses retry-after when given, capped by maxDelayMs', () => {
    expect(backoffDelay(1, policy, { ...transient, retryAfterMs: 700 }, () => 0.5)).toBe(700);
    expect(backoffDelay(1, policy, { ...transient, retryAfterMs: 60_000 }, () => 0.5)).toBe(1_000);
  });
});

describe('retryProviderCall', () => {
  const fast: RetryPolicy = { maxRetries: 2, initialDelayMs: 0, maxDelayMs: 0 };
  const base = { providerName: 'Test', keyVariable: 'TEST_API_KEY', policy: fast };

  it('retries retryable failures up to maxRetries, then reports attempts', async () => {
    let calls = 0;
    const error = await retryProviderCall(
      async () => {
        calls += 1;
        throw new Error('boom');
      },
      { ...base, classify: (cause) => ({ ...transient, cause }) },
    ).catch((caught: unknown) => caught);
    expect(calls).toBe(3);
    expect(isCodecallError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'PROVIDER_REQUEST_FAILED', details: { attempts: 3, status: 503 } });
  });

  it('stops at once on auth and fatal failures', async () => {
    for (const [kind, code] of [
      ['auth', 'PROVIDER_AUTH'],
      ['fatal', 'PROVIDER_REQUEST_FAILED'],
      ['aborted', 'ABORTED'],
    ] as const) {
      let calls = 0;
      const error = await retryProviderCall(
        async () => {
          calls += 1;
          throw new Error(kind);
        },
        { ...base, classify: (cause) => ({ kind, message: kind, cause }) },
      ).catch((caught: unknown) => caught);
      expect(calls).toBe(1);
      expect(error).toMatchObject({ code });
    }
  });

  it('returns the first success', async () => {
    let calls = 0;
    const value = await retryProviderCall(
      async () => {
        calls += 1;
        if (calls < 2) throw new Error('once');
        return 'ok';
      },
      { ...base, classify: (cause) => ({ ...transient, cause }) },
    );
    expect(value).toBe('ok');
  });
});
