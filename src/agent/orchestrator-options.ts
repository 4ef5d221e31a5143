/**
 * @module
 * The options of the agent loop: what `createOrchestrator` takes (model, runtime, bounds,
 * telemetry), the hooks and stop conditions of a run (`stopWhen`, `prepareStep`, `onStepFinish`,
 * `onToolCall`, `onExecution`), and what a run starts from (a task or a conversation).
 */
import type { CodecallConfig, LoadConfigOptions } from '../config/index.js';
import type { CodecallRuntime, CodecallRuntimeOptions } from '../execute/index.js';
import type { CreateLanguageModelOptions } from '../providers/create-language-model.js';
import type { LanguageModel, Message, ToolDefinition } from '../providers/language-model.js';
import type { Approver } from '../tools/index.js';
import type { TelemetryOptions } from './runner/run-telemetry.js';
import type { StopCondition } from './runner/stop-condition.js';
import type { AgentExecution, AgentMode, AgentStep, AgentToolCall } from './types.js';

/** What {@link PrepareStep} sees before a step's model request. */
export interface PrepareStepOptions {
  /** 1-based number of the step about to run. */
  stepNumber: number;
  /** The steps so far. */
  steps: readonly AgentStep[];
  /** The conversation the request will carry. */
  messages: readonly Message[];
  /** The model the step will use. */
  model: LanguageModel;
  /** The tools the step will offer. */
  tools: readonly ToolDefinition[];
  /** The system prompt the step will use. */
  system: string;
}

/** What {@link PrepareStep} may change for one step (absent fields keep the run's). */
export interface PrepareStepResult {
  /** The model of this step. */
  model?: LanguageModel;
  /** Names of the offered tools to keep for this step (the others are not offered, nor callable). */
  activeTools?: readonly string[];
  /** The system prompt of this step. */
  system?: string;
  /** The messages this step sends (the run's conversation is unchanged). */
  messages?: Message[];
}

/** Called before each model request; may change the model, tools, system prompt or messages of the step. */
export type PrepareStep = (
  options: PrepareStepOptions,
) => PrepareStepResult | undefined | void | PromiseLike<PrepareStepResult | undefined | void>;

/** Hooks and stop conditions of a run (options of the orchestrator, or of one run, which win). */
export interface RunHooks {
  /**
   * When to end a run early, checked after each step that called tools: the run then returns
   * with that step's text as its answer (see {@link stepCountIs}, {@link hasToolCall}, or any
   * predicate over the steps). `maxSteps` bounds every run regardless.
   * @defaultValue none: the run ends when the model answers without tool calls
   */
  stopWhen?: StopCondition | readonly StopCondition[];
  /** Called before each model request (see {@link PrepareStep}). */
  prepareStep?: PrepareStep;
  /** Called (and awaited) after each step, the last one included. */
  onStepFinish?: (step: AgentStep) => void | PromiseLike<void>;
  /** Called (and awaited) after each tool call the model made, with what it got back. */
  onToolCall?: (call: AgentToolCall) => void | PromiseLike<void>;
  /** Called (and awaited) after each `execute_code` run, with its full result. */
  onExecution?: (execution: AgentExecution) => void | PromiseLike<void>;
  /**
   * Decides tool calls that need approval (`requireApproval`), from scripts and direct calls.
   * @defaultValue the runtime's `onApproval`; else `stream()` emits an `approval-request` event
   * to answer, and `run()` denies
   */
  onApproval?: Approver;
}

/** Options of {@link createOrchestrator}. */
export interface OrchestratorOptions extends RunHooks {
  /**
   * The model: a {@link LanguageModel}, a `provider:model` spec (`anthropic:claude-sonnet-4-6`,
   * `openai:gpt-4.1`), or `demo` (the offline stand-in, see {@link DemoLanguageModel}).
   * @defaultValue the configuration's `agent.model`, else the `CODECALL_MODEL` environment variable
   */
  model?: LanguageModel | string;
  /** Options of {@link createLanguageModel} when `model` is a spec (key, base URL, retries…). */
  modelOptions?: CreateLanguageModelOptions;
  /** A resolved configuration. Ignored when `runtime` is given. */
  config?: CodecallConfig;
  /** Where to load the configuration from when neither `config` nor `runtime` is given. */
  load?: LoadConfigOptions;
  /**
   * An open runtime to use. The orchestrator then borrows it: `close()` leaves it open.
   * @defaultValue a runtime the orchestrator opens (and closes)
   */
  runtime?: CodecallRuntime;
  /** Options of the runtime the orchestrator opens (history store, in-memory transports, sandbox). */
  runtimeOptions?: Omit<CodecallRuntimeOptions, 'config' | 'load'>;
  /** @defaultValue `'code'` */
  mode?: AgentMode;
  /**
   * Model requests one run may make.
   * @defaultValue the configuration's `agent.maxSteps`, else {@link DEFAULT_AGENT_MAX_STEPS} (20)
   */
  maxSteps?: number;
  /** Wall time of one run. @defaultValue {@link DEFAULT_AGENT_MAX_RUN_TIME_MS} (600,000 ms) */
  maxRunTimeMs?: number;
  /**
   * Tool calls of one step run at once.
   * @defaultValue {@link DEFAULT_AGENT_MAX_CONCURRENT_TOOL_CALLS} (8)
   */
  maxConcurrentToolCalls?: number;
  /**
   * Bytes of one tool result text put in the context (direct results, search results); longer
   * text is cut with a marker. @defaultValue {@link DEFAULT_AGENT_MAX_TOOL_RESULT_BYTES} (262,144)
   */
  maxToolResultBytes?: number;
  /** Extra instructions appended to the system prompt. */
  system?: string;
  /**
   * Output tokens per model response (`max_tokens` on the wire); lower it for local servers with a
   * small context window. @defaultValue config `agent.maxOutputTokens`, else
   * `DEFAULT_PROVIDER_MAX_OUTPUT_TOKENS` (8,192)
   */
  maxOutputTokens?: number;
  /** Sampling temperature. @defaultValue the provider's default */
  temperature?: number;
  /**
   * Code mode: offer a tool that only the model may call (`allowedCallers: ["direct"]`) from the
   * step after `search_tools` finds it. This changes the tool list (a prompt-cache miss).
   * @defaultValue true
   */
  offerFoundDirectTools?: boolean;
  /**
   * OpenTelemetry spans of every run (GenAI semantic conventions), through `@opentelemetry/api`
   * (an optional peer dependency, loaded only when this is set). `true` uses the global tracer.
   * @defaultValue off
   */
  telemetry?: TelemetryOptions | boolean;
}

/** Options of {@link Orchestrator.run} and {@link Orchestrator.stream}; hooks here win over the orchestrator's. */
export interface RunOptions extends RunHooks {
  /** Cancels the run: the model request, scripts and tool calls in flight. */
  signal?: AbortSignal;
  /**
   * `stream()` only: ask the model for its text as it writes it (`text-delta` events). Turn it
   * off when nobody reads the deltas (a job, a CLI that prints whole steps): each step is then
   * one plain request, as `run()` makes.
   * @defaultValue true
   */
  streamText?: boolean;
}

/** A task, or a conversation to continue (its last message is the user's). */
export type RunInput = string | readonly Message[];
