/**
 * @module
 * Checks the orchestrator's options once and resolves them, with the configuration and the
 * `DEFAULT_AGENT_*` constants, into the fully-required form the loop reads.
 */
import {
  DEFAULT_AGENT_MAX_CONCURRENT_TOOL_CALLS,
  DEFAULT_AGENT_MAX_RUN_TIME_MS,
  DEFAULT_AGENT_MAX_STEPS,
  DEFAULT_AGENT_MAX_TOOL_RESULT_BYTES,
} from '../../config/defaults.js';
import type { CodecallConfig } from '../../config/index.js';
import { CodecallError } from '../../errors.js';
import { systemPrompt } from '../system-prompt.js';
import type { AgentMode } from '../types.js';

/** The options {@link resolveOptions} reads (a subset of `OrchestratorOptions`). */
export interface ResolvableOptions {
  mode?: AgentMode;
  maxSteps?: number;
  maxRunTimeMs?: number;
  maxConcurrentToolCalls?: number;
  maxToolResultBytes?: number;
  system?: string;
  maxOutputTokens?: number;
  temperature?: number;
  offerFoundDirectTools?: boolean;
}

/** The options of one orchestrator, checked and defaulted. */
export interface ResolvedOptions {
  mode: AgentMode;
  maxSteps: number;
  maxRunTimeMs: number;
  maxConcurrentToolCalls: number;
  maxToolResultBytes: number;
  system: string;
  maxOutputTokens: number | undefined;
  temperature: number | undefined;
  offerFoundDirectTools: boolean;
}

/** `value` when it is a positive integer, `undefined` when absent; throws `INVALID_ARGUMENT` otherwise. */
function optionalInteger(field: string, value: number | undefined): number | undefined {
  return value === undefined ? undefined : checkInteger(field, value, 0);
}

/** `value` when it is a positive integer, `fallback` when absent; throws `INVALID_ARGUMENT` otherwise. */
export function checkInteger(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `${field} must be a positive integer; got ${String(value)}.`,
      {
        details: { field, value },
      },
    );
  }
  return value;
}

/** Checks and defaults the options; throws `INVALID_ARGUMENT` naming the field at fault. */
export function resolveOptions(options: ResolvableOptions, config: CodecallConfig): ResolvedOptions {
  const mode = options.mode ?? 'code';
  if (mode !== 'code' && mode !== 'direct') {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `mode must be "code" or "direct"; got ${JSON.stringify(mode)}.`,
      {
        details: { field: 'mode', value: mode },
      },
    );
  }
  if (options.temperature !== undefined && !Number.isFinite(options.temperature)) {
    throw new CodecallError('INVALID_ARGUMENT', 'temperature must be a finite number.', {
      details: { field: 'temperature', value: options.temperature },
    });
  }
  return {
    mode,
    maxSteps: checkInteger('maxSteps', options.maxSteps ?? config.agent.maxSteps, DEFAULT_AGENT_MAX_STEPS),
    maxRunTimeMs: checkInteger('maxRunTimeMs', options.maxRunTimeMs, DEFAULT_AGENT_MAX_RUN_TIME_MS),
    maxConcurrentToolCalls: checkInteger(
      'maxConcurrentToolCalls',
      options.maxConcurrentToolCalls,
      DEFAULT_AGENT_MAX_CONCURRENT_TOOL_CALLS,
    ),
    maxToolResultBytes: checkInteger(
      'maxToolResultBytes',
      options.maxToolResultBytes,
      DEFAULT_AGENT_MAX_TOOL_RESULT_BYTES,
    ),
    system: systemPrompt(mode, options.system),
    // The option, else the configuration's (DEFAULT_PROVIDER_MAX_OUTPUT_TOKENS unless the file sets it).
    maxOutputTokens: optionalInteger(
      'maxOutputTokens',
      options.maxOutputTokens ?? config.agent.maxOutputTokens,
    ),
    temperature: options.temperature,
    offerFoundDirectTools: options.offerFoundDirectTools ?? true,
  };
}
