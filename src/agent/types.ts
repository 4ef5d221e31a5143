/**
 * @module
 * What an agent run reports: every step (the request's size, the model's response, the tool
 * calls it made, the scripts it ran with their output), provider usage per step and in total,
 * the savings meter, the tool sequences that fed the tool graph, and the events of a streamed
 * run. Plain data: a run result serialises with `JSON.stringify`.
 */
import type { CodecallError } from '../errors.js';
import type { StopReason, TokenUsage } from '../providers/language-model.js';
import type { ExecutionResult } from '../types.js';

/**
 * How the model works: `code` (search_tools + execute_code, the default) or `direct` (every
 * tool definition up front, results straight into the context, no code): the traditional way,
 * for A/B comparison.
 */
export type AgentMode = 'code' | 'direct';

/** What kind of tool call the model made. */
export type AgentToolCallKind = 'search_tools' | 'execute_code' | 'direct' | 'invalid';

/** One tool call the model made and what it got back. */
export interface AgentToolCall {
  /** The provider's tool-call id. */
  id: string;
  /** The name the model called (`search_tools`, `execute_code`, `expenses__flag_expense`…). */
  name: string;
  /** The arguments as the model sent them (a string when they were not valid JSON). */
  input: unknown;
  /** `invalid`: an unknown tool or arguments that could not be read. */
  kind: AgentToolCallKind;
  /** The qualified MCP tool (`server.tool`) of a direct call. */
  tool?: string;
  /** The text the model reads as the result. */
  content: string;
  /** True when the result is an error the model should recover from. */
  isError: boolean;
  durationMs: number;
}

/** One `execute_code` run. */
export interface AgentExecution {
  /** The tool call that asked for it. */
  toolCallId: string;
  code: string;
  /** The full execution result (stdout, stderr, status, every tool call the script made). */
  result: ExecutionResult;
}

/** The model's answer in one step, summarised. */
export interface AgentModelResponse {
  /** The text parts, joined. */
  text: string;
  /** The tool calls, in order. */
  toolCalls: { id: string; name: string; input: unknown }[];
  stopReason: StopReason;
  durationMs: number;
}

/** What one step sent the model. */
export interface AgentRequestSummary {
  /** Messages in the conversation. */
  messages: number;
  /** Names of the tools offered, in order. */
  tools: string[];
  /** Tokens of everything the request put in the model's context (system, messages, tool definitions). */
  contextTokens: number;
}

/** One model request and everything it caused. */
export interface AgentStep {
  /** 1-based. */
  index: number;
  request: AgentRequestSummary;
  response: AgentModelResponse;
  /** What the provider reported for this request. */
  usage: TokenUsage;
  /** Tool calls of this step, in the order the model made them. */
  toolCalls: AgentToolCall[];
  /** Scripts run in this step. */
  executions: AgentExecution[];
  /**
   * Tokens this step's request would have put in the context with direct tool calling (see the
   * savings meter); equal to `request.contextTokens` in `direct` mode.
   */
  directEstimateTokens: number;
  durationMs: number;
}

/**
 * The savings meter: tokens that entered the model's context over the run, against what direct
 * tool calling would have cost (every tool definition up front in every request, every tool
 * result in the context). Counted with the `o200k_base` tokenizer on both sides.
 */
export interface SavingsReport {
  /** Σ over steps of the tokens each request put in the model's context. */
  contextTokens: number;
  /**
   * Σ over steps of what each request would have held with direct tool calling. In `code` mode
   * an estimate (see docs/agent.md, "The savings meter"); in `direct` mode the measured count.
   */
  directEstimateTokens: number;
  /** `directEstimateTokens - contextTokens` (negative when code mode cost more). */
  savedTokens: number;
  /** `savedTokens / directEstimateTokens` (0 when nothing was counted). */
  savedRatio: number;
  /**
   * `estimate`: a code-mode run against the direct-calling counterfactual, whose tool results are
   * counted exactly as direct calling would have put them in the context (from the runs'
   * `onToolResult` events; only a runtime that reports none falls back to 4 bytes per token), and
   * whose other assumptions (as many steps, no script arguments) make it a lower bound.
   * `measured`: a direct-mode run, both sides counted.
   */
  method: 'estimate' | 'measured';
}

/** What a finished run returns. */
export interface RunResult {
  /** The model's final text. */
  answer: string;
  /** Why the model's last response ended (`end_turn` normally). */
  stopReason: StopReason;
  mode: AgentMode;
  /** `provider:modelId` of the model. */
  model: string;
  steps: AgentStep[];
  /** Provider-reported usage, summed over steps. */
  usage: TokenUsage;
  savings: SavingsReport;
  /**
   * Tool sequences this run fed the tool graph: one per script that called tools (its
   * successful calls in dispatch order), plus one for the model's direct calls over the run.
   */
  toolSequences: string[][];
  durationMs: number;
}

/** Events of {@link Orchestrator.stream}, in the order they happen. */
export type AgentEvent =
  | {
      type: 'run-start';
      mode: AgentMode;
      model: string;
      /** Tools the first request offers. */
      tools: string[];
    }
  | { type: 'step-start'; step: number; request: AgentRequestSummary }
  | { type: 'model-response'; step: number; response: AgentModelResponse; usage: TokenUsage }
  | { type: 'tool-call-start'; step: number; id: string; name: string; input: unknown }
  | { type: 'execution-start'; step: number; toolCallId: string; code: string }
  | { type: 'execution-end'; step: number; execution: AgentExecution }
  | { type: 'tool-call-end'; step: number; call: AgentToolCall }
  | { type: 'step-end'; step: AgentStep }
  | { type: 'done'; result: RunResult }
  | {
      type: 'error';
      /** `MAX_STEPS_EXCEEDED`, `RUN_TIMEOUT`, `ABORTED`, a provider failure… */
      error: CodecallError;
      /** What the run did before it stopped (`answer` is empty). */
      result: RunResult;
    };
