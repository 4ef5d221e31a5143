/**
 * @module
 * The bounds of one sandbox run and their resolution from partial options into a fully
 * required form, validated once, with errors that name the field and the fix.
 */
import { DEFAULT_SANDBOX_LIMITS } from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import type { SandboxLimits } from '../types.js';
import { MAX_TIMER_DELAY_MS } from '../util/long-timeout.js';

export type { SandboxLimits };

/** Smallest heap isolated-vm accepts. */
const MIN_MEMORY_MB = 8;

/**
 * Fills in defaults and validates every field (positive integers; `memoryMb` at least 8).
 * Throws a `CodecallError` with code `INVALID_ARGUMENT` naming the field otherwise.
 *
 * @example
 * ```ts
 * const limits = resolveSandboxLimits({ wallTimeMs: 10_000 });
 * ```
 */
export function resolveSandboxLimits(limits: Partial<SandboxLimits> = {}): SandboxLimits {
  const resolved: SandboxLimits = { ...DEFAULT_SANDBOX_LIMITS };
  for (const [key, value] of Object.entries(limits ?? {})) {
    if (!(key in DEFAULT_SANDBOX_LIMITS)) {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `Unknown sandbox limit "${key}". Known limits: ${Object.keys(DEFAULT_SANDBOX_LIMITS).join(', ')}.`,
        {
          details: { field: key },
        },
      );
    }
    if (value === undefined) continue;
    const min = key === 'memoryMb' ? MIN_MEMORY_MB : 1;
    const max = key === 'wallTimeMs' || key === 'cpuTimeMs' ? MAX_TIMER_DELAY_MS : Number.MAX_SAFE_INTEGER;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `Sandbox limit "${key}" must be an integer from ${min} to ${max}; got ${JSON.stringify(value)}.`,
        { details: { field: key, value } },
      );
    }
    resolved[key as keyof SandboxLimits] = value;
  }
  return resolved;
}
