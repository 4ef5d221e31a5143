/**
 * @module
 * What one run accumulates (steps, usage, tool sequences, the answer, the conversation) and the
 * {@link RunResult} built from it — also when the run stops early.
 */
import type { Message, TokenUsage } from '../../providers/language-model.js';
import type { ContextMeter } from '../context-meter.js';
import { tokenizerName } from '../count-tokens.js';
import type { AgentMode, AgentModelResponse, AgentStep, RunResult } from '../types.js';

/** The state of one run; what the result is built from, also when it stops early. */
export interface RunState {
  started: number;
  steps: AgentStep[];
  usage: TokenUsage;
  toolSequences: string[][];
  directSequence: string[];
  answer: string;
  stopReason: AgentModelResponse['stopReason'];
  /** The conversation so far: the caller's history, then every message of this run. */
  messages: Message[];
  /** The run's savings meter (what scripts kept out of the context, definitions deferred). */
  meter?: ContextMeter;
}

/** A zero usage. */
export function zeroUsage(): TokenUsage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
}

/** Adds `usage` into `total`. */
export function addUsage(total: TokenUsage, usage: TokenUsage): void {
  total.inputTokens += usage.inputTokens;
  total.outputTokens += usage.outputTokens;
  total.cacheReadTokens += usage.cacheReadTokens;
  total.cacheWriteTokens += usage.cacheWriteTokens;
}

/** A fresh state for a run that starts from `messages`. */
export function createRunState(messages: readonly Message[]): RunState {
  return {
    started: performance.now(),
    steps: [],
    usage: zeroUsage(),
    toolSequences: [],
    directSequence: [],
    answer: '',
    stopReason: 'other',
    messages: [...messages],
  };
}

/** The result of a run from its state. */
export function buildRunResult(state: RunState, mode: AgentMode, model: string): RunResult {
  let contextTokens = 0;
  for (const step of state.steps) contextTokens += step.request.contextTokens;
  const kept = state.meter?.totals();
  return {
    answer: state.answer,
    stopReason: state.stopReason,
    mode,
    model,
    steps: state.steps,
    messages: state.messages.map((message) => structuredClone(message)),
    usage: { ...state.usage },
    savings: {
      contextTokens,
      toolResultTokensKeptOut: kept?.toolResultTokensKeptOut ?? 0,
      toolResultBytesKeptOut: kept?.toolResultBytesKeptOut ?? 0,
      toolDefinitionTokensDeferred: kept?.toolDefinitionTokensDeferred ?? 0,
      tokenizer: tokenizerName(),
    },
    toolSequences: state.toolSequences.map((sequence) => [...sequence]),
    durationMs: performance.now() - state.started,
  };
}
