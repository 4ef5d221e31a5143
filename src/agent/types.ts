/**
 * @module
 * What an agent run reports: every step (the request's size, the model's response, the tool
 * calls it made, the scripts it ran with their output), provider usage per step and in total,
 * the savings meter, the tool sequences that fed the tool graph, and the events of a streamed
 * run. Plain data: a run result serialises with `JSON.stringify`.
 */
import type { CodecallError } from '../errors.js';
import type { Message, StopReason, TokenUsage } from '../providers/language-model.js';
import type { ApprovalRequest } from '../tools/index.js';
import type { ExecutionResult } from '../types.js';
import type { TokenizerName } from './count-tokens.js';

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
   * Tokens of the tool definitions a direct-mode request offers that this request did not carry
   * (deferred behind `search_tools`); 0 in `direct` mode.
   */
  deferredDefinitionTokens: number;
  durationMs: number;
}

/**
 * The savings meter: what entered the model's context over the run, and what code mode kept out
 * of it, both measured (o200k_base). It does not say how a direct-mode run would have done: a
 * competent direct model filters and paginates, so it may read far less than a script that
 * scans everything. For that, run both modes and use {@link compareRuns}.
 */
export interface SavingsReport {
  /** Σ over requests of the tokens each put in the model's context (system, messages, tool definitions). */
  contextTokens: number;
  /**
   * Tokens of the tool results the scripts consumed in the sandbox, each counted once as a direct
   * tool call would have shown it (its JSON text, cut at `maxToolResultBytes`). None of them
   * entered the context; what the scripts printed is in `contextTokens`. 0 in `direct` mode.
   */
  toolResultTokensKeptOut: number;
  /** Bytes of those results (Σ `ToolCallRecord.resultBytes` of the scripts' successful calls). */
  toolResultBytesKeptOut: number;
  /**
   * Σ over requests of the tokens of the tool definitions a direct-mode request offers that the
   * request did not carry (found through `search_tools` instead). 0 in `direct` mode.
   */
  toolDefinitionTokensDeferred: number;
  /**
   * What counted these tokens: `'o200k_base'` (js-tiktoken), or `'estimate'` (one token per four
   * characters) when js-tiktoken is not installed (`npm install js-tiktoken` for real counts).
   */
  tokenizer: TokenizerName;
}

/** One side of a {@link RunComparison}. */
export interface RunComparisonSide {
  /** `savings.contextTokens` of the run. */
  contextTokens: number;
  /** Model requests (steps). */
  requests: number;
  durationMs: number;
}

/** A code-mode run against a measured direct-mode run of the same task ({@link compareRuns}). */
export interface RunComparison {
  code: RunComparisonSide;
  direct: RunComparisonSide;
  /** `code.contextTokens / direct.contextTokens`: below 1 when code mode put fewer tokens in the context. */
  contextRatio: number;
  /** `code.requests / direct.requests`. */
  requestRatio: number;
  /** `code.durationMs / direct.durationMs`. */
  durationRatio: number;
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
  /**
   * The conversation to continue from: the messages the run started from, then every message of
   * this run (the model's, the tool results), ending with the model's answer. Append the user's
   * next message and pass it to `run` again.
   */
  messages: Message[];
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
  | {
      /**
       * Text the model wrote, as it writes it (`stream()` only): the pieces of one step joined are
       * its `response.text`. A model without a `stream` method reports its text in one piece.
       */
      type: 'text-delta';
      step: number;
      text: string;
    }
  | { type: 'model-response'; step: number; response: AgentModelResponse; usage: TokenUsage }
  | { type: 'tool-call-start'; step: number; id: string; name: string; input: unknown }
  | { type: 'execution-start'; step: number; toolCallId: string; code: string }
  | { type: 'execution-end'; step: number; execution: AgentExecution }
  | { type: 'tool-call-end'; step: number; call: AgentToolCall }
  | {
      /**
       * A tool call needs approval (`requireApproval`) and the run has no `onApproval`: the call
       * waits until `approve()` or `deny()` is called (the first answer counts), or the
       * approval timeout passes. `run()` denies these at once: nobody reads its events.
       */
      type: 'approval-request';
      step: number;
      request: ApprovalRequest;
      approve: (reason?: string) => void;
      deny: (reason?: string) => void;
    }
  | { type: 'step-end'; step: AgentStep }
  | { type: 'done'; result: RunResult }
  | {
      type: 'error';
      /** `MAX_STEPS_EXCEEDED`, `RUN_TIMEOUT`, `ABORTED`, a provider failure… */
      error: CodecallError;
      /** What the run did before it stopped (`answer` is empty). */
      result: RunResult;
    };
