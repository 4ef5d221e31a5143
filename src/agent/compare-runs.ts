/**
 * @module
 * "Code mode vs direct mode" as a measurement: two finished runs of the same task, one per mode,
 * compared side by side. The savings meter of one run never claims this on its own.
 */
import { CodecallError } from '../errors.js';
import type { RunComparison, RunComparisonSide, RunResult } from './types.js';

function side(run: RunResult): RunComparisonSide {
  return { contextTokens: run.savings.contextTokens, requests: run.steps.length, durationMs: run.durationMs };
}

const ratio = (a: number, b: number): number => (b === 0 ? (a === 0 ? 1 : Infinity) : a / b);

/**
 * Compares a code-mode run with a measured direct-mode run of the same task: context tokens,
 * model requests and wall time of each, and their ratios (code / direct). Throws
 * `INVALID_ARGUMENT` when the runs are not one of each mode. Whether both reached the same
 * answer is the caller's to check.
 *
 * @example
 * ```ts
 * const code = await codeAgent.run(task);
 * const direct = await directAgent.run(task); // createOrchestrator({ mode: 'direct', … })
 * const { contextRatio } = compareRuns(code, direct); // 0.4: 60 % fewer tokens in the context
 * ```
 */
export function compareRuns(code: RunResult, direct: RunResult): RunComparison {
  if (code.mode !== 'code' || direct.mode !== 'direct') {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `compareRuns(code, direct) takes a code-mode run and a direct-mode run; got ${code.mode} and ${direct.mode}.`,
      { details: { field: 'mode', value: [code.mode, direct.mode] } },
    );
  }
  const a = side(code);
  const b = side(direct);
  return {
    code: a,
    direct: b,
    contextRatio: ratio(a.contextTokens, b.contextTokens),
    requestRatio: ratio(a.requests, b.requests),
    durationRatio: ratio(a.durationMs, b.durationMs),
  };
}
