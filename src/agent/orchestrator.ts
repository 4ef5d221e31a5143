/**
 * @module
 * The agent loop. `createOrchestrator` opens a {@link CodecallRuntime} (or borrows one) and runs
 * tasks with a language model:
 *
 * - **code mode** (default): the model starts with `search_tools`, `execute_code` and the tools
 *   configured `deferLoading: false` that it may call directly. Search returns TypeScript
 *   declarations; code runs in the sandbox and only its stdout, stderr and exit status return.
 *   A tool that code may not call but the model may (`allowedCallers: ["direct"]`) is offered
 *   from the step after a search finds it.
 * - **direct mode**: every tool the model may call is offered up front and every result goes
 *   into the context, the traditional way, for A/B comparison.
 *
 * Tool calls of one step run in parallel (bounded); a failing one returns an error result the
 * model can read. A run stops at `maxSteps` (`MAX_STEPS_EXCEEDED`), at `maxRunTimeMs`
 * (`RUN_TIMEOUT`) or when the caller's signal fires (`ABORTED`), cancelling the model request,
 * scripts and tool calls in flight. `run` and `stream` share one loop: `run` collects the events
 * of `stream`.
 */
import { usagesOfRun } from './usage-of-run.js';
import {
  DEFAULT_AGENT_MAX_CONCURRENT_TOOL_CALLS,
  DEFAULT_AGENT_MAX_RUN_TIME_MS,
  DEFAULT_AGENT_MAX_STEPS,
  DEFAULT_AGENT_MAX_TOOL_RESULT_BYTES,
} from '../config/defaults.js';
import { loadConfig, type CodecallConfig, type LoadConfigOptions } from '../config/index.js';
import { CodecallError, isCodecallError } from '../errors.js';
import {
  CodecallRuntime,
  formatResultForModel,
  type CodecallRuntimeOptions,
  type RuntimeExecuteOptions,
  type RuntimeSearchOptions,
  type RuntimeSearchResult,
} from '../execute/index.js';
import { createLanguageModel, type CreateLanguageModelOptions } from '../providers/create-language-model.js';
import type {
  GenerateRequest,
  LanguageModel,
  Message,
  TokenUsage,
  ToolCallPart,
  ToolDefinition,
  ToolResult,
} from '../providers/language-model.js';
import type { CatalogTool } from '../tools/index.js';
import type { ExecutionResult } from '../types.js';
import { ContextMeter } from './context-meter.js';
import { DEMO_MODEL_NAME, DemoLanguageModel } from './demo-model.js';
import { assignDirectNames, directToolDefinition } from './direct-tools.js';
import {
  EXECUTE_CODE_NAME,
  SEARCH_TOOLS_NAME,
  executeCodeDefinition,
  parseExecuteCodeInput,
  parseSearchToolsInput,
  searchToolsDefinition,
} from './meta-tools.js';
import { renderSearchResult } from './render-search-result.js';
import { systemPrompt } from './system-prompt.js';
import type {
  AgentEvent,
  AgentExecution,
  AgentMode,
  AgentModelResponse,
  AgentStep,
  AgentToolCall,
  RunResult,
} from './types.js';

/** Environment variable naming the default model (`provider:model` or `demo`). */
export const MODEL_ENV_VARIABLE = 'CODECALL_MODEL';
/** Tool names listed in an "unknown tool" message. */
const MAX_NAMES_LISTED = 20;
/** Codes of the errors that stop a run; they carry the partial run as `details.result`. */
const STOP_CODES: ReadonlySet<string> = new Set(['MAX_STEPS_EXCEEDED', 'RUN_TIMEOUT', 'ABORTED']);
/** Characters of malformed arguments quoted back to the model. */
const MAX_QUOTED_INPUT_CHARS = 200;

/** Options of {@link createOrchestrator}. */
export interface OrchestratorOptions {
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
  /** Output tokens per model response. @defaultValue the provider's default */
  maxOutputTokens?: number;
  /** Sampling temperature. @defaultValue the provider's default */
  temperature?: number;
  /**
   * Code mode: offer a tool that only the model may call (`allowedCallers: ["direct"]`) from the
   * step after `search_tools` finds it. This changes the tool list (a prompt-cache miss).
   * @defaultValue true
   */
  offerFoundDirectTools?: boolean;
}

/** Options of {@link Orchestrator.run} and {@link Orchestrator.stream}. */
export interface RunOptions {
  /** Cancels the run: the model request, scripts and tool calls in flight. */
  signal?: AbortSignal;
}

/**
 * Runs tasks with a model over the configured MCP servers.
 *
 * @example
 * ```ts
 * await using agent = await createOrchestrator({
 *   model: 'anthropic:claude-sonnet-4-6',
 *   load: { path: 'examples/codecall.json' },
 * });
 * const result = await agent.run('Which team members exceeded their Q3 travel budget?');
 * console.log(result.answer, result.savings);
 * ```
 */
export interface Orchestrator {
  readonly runtime: CodecallRuntime;
  readonly model: LanguageModel;
  readonly mode: AgentMode;
  /**
   * Runs a task to its answer. Throws `MAX_STEPS_EXCEEDED`, `RUN_TIMEOUT` or `ABORTED` (with the
   * partial run as `error.details.result`), or the provider's error (`PROVIDER_*`).
   */
  run(task: string, options?: RunOptions): Promise<RunResult>;
  /**
   * Runs a task and yields its events as they happen; the last is `done` (with the result) or
   * `error` (with the error and the partial run). Stopping the iteration early cancels the run.
   */
  stream(task: string, options?: RunOptions): AsyncGenerator<AgentEvent, void, undefined>;
  /** Tool search over the live catalog (what `search_tools` answers from). */
  searchTools(query: string, options?: RuntimeSearchOptions): RuntimeSearchResult;
  /** Runs code in the sandbox (what `execute_code` does). */
  execute(code: string, options?: RuntimeExecuteOptions): Promise<ExecutionResult>;
  /** Cancels runs in flight; closes the runtime if the orchestrator opened it. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

interface ResolvedOptions {
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

function checkInteger(field: string, value: number | undefined, fallback: number): number {
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

function resolveOptions(options: OrchestratorOptions, config: CodecallConfig): ResolvedOptions {
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
    maxOutputTokens:
      options.maxOutputTokens === undefined
        ? undefined
        : checkInteger('maxOutputTokens', options.maxOutputTokens, 0),
    temperature: options.temperature,
    offerFoundDirectTools: options.offerFoundDirectTools ?? true,
  };
}

/**
 * Turns a model spec into a {@link LanguageModel}: `demo` is the offline {@link DemoLanguageModel};
 * anything else goes to {@link createLanguageModel} (`anthropic:…`, `openai:…`).
 */
export function resolveLanguageModel(spec: string, options: CreateLanguageModelOptions = {}): LanguageModel {
  if (spec.trim().toLowerCase() === DEMO_MODEL_NAME) return new DemoLanguageModel();
  return createLanguageModel(spec, options);
}

function chooseModel(options: OrchestratorOptions, config: CodecallConfig): LanguageModel {
  if (typeof options.model === 'object' && options.model !== null) return options.model;
  const env = options.modelOptions?.env ?? options.load?.env ?? process.env;
  const spec = options.model ?? config.agent.model ?? env[MODEL_ENV_VARIABLE];
  if (spec === undefined || spec.trim() === '') {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      'No model chosen. Pass one (--model anthropic:claude-sonnet-4-6 with ANTHROPIC_API_KEY set, or ' +
        'openai:gpt-4.1 with OPENAI_API_KEY), set "agent": {"model": "…"} in the configuration or the ' +
        `${MODEL_ENV_VARIABLE} environment variable. To try codecall offline, use --model demo.`,
      { details: { field: 'model' } },
    );
  }
  return resolveLanguageModel(spec, options.modelOptions);
}

/**
 * Opens the runtime (unless one is given), resolves the model and the options, and returns an
 * {@link Orchestrator}. Throws for developer faults (bad configuration, no model, a server that
 * will not start with `requireAll`) before anything runs.
 *
 * @example
 * ```ts
 * const agent = await createOrchestrator({ model: 'demo', load: { path: 'examples/codecall.json' } });
 * try {
 *   for await (const event of agent.stream('Which team members exceeded their Q3 travel budget?')) {
 *     if (event.type === 'done') console.log(event.result.answer);
 *   }
 * } finally {
 *   await agent.close();
 * }
 * ```
 */
export async function createOrchestrator(options: OrchestratorOptions): Promise<Orchestrator> {
  const config = options.runtime?.config ?? options.config ?? (await loadConfig(options.load ?? {}));
  const resolved = resolveOptions(options, config);
  const model = chooseModel(options, config);
  const owned = options.runtime === undefined;
  const runtime = options.runtime ?? (await CodecallRuntime.open({ ...options.runtimeOptions, config }));
  return new AgentOrchestrator(runtime, model, resolved, owned);
}

/** Sum of two usages. */
function addUsage(total: TokenUsage, usage: TokenUsage): void {
  total.inputTokens += usage.inputTokens;
  total.outputTokens += usage.outputTokens;
  total.cacheReadTokens += usage.cacheReadTokens;
  total.cacheWriteTokens += usage.cacheWriteTokens;
}

function zeroUsage(): TokenUsage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
}

/** Cuts `text` to at most `maxBytes` UTF-8 bytes, with a marker that tells the model how to ask for less. */
export function cutToBytes(text: string, maxBytes: number): string {
  const bytes = Buffer.byteLength(text);
  if (bytes <= maxBytes) return text;
  let kept = Buffer.from(text).subarray(0, maxBytes).toString('utf8');
  if (kept.endsWith('\uFFFD')) kept = kept.slice(0, -1);
  return `${kept}\n… [cut: this result is ${bytes} bytes; only the first ${maxBytes} are shown. Ask for less: filter, paginate or select fields.]`;
}

function renderValue(value: unknown): string {
  if (value === null || value === undefined) return '(no content)';
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? '(no content)';
}

function errorText(error: unknown): string {
  if (isCodecallError(error)) return error.message;
  return `The call failed unexpectedly: ${error instanceof Error ? error.message : String(error)}`;
}

function quote(input: string): string {
  return JSON.stringify(
    input.length > MAX_QUOTED_INPUT_CHARS ? `${input.slice(0, MAX_QUOTED_INPUT_CHARS)}…` : input,
  );
}

/** Runs `work` over `items` with at most `limit` in flight; results in input order. */
async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** Resolves with `promise`, or rejects as soon as `signal` fires (the work itself sees the signal too). */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error as Error);
      },
    );
  });
}

/** The state of one run; what the result is built from, also when it stops early. */
interface RunState {
  started: number;
  steps: AgentStep[];
  usage: TokenUsage;
  toolSequences: string[][];
  directSequence: string[];
  answer: string;
  stopReason: AgentModelResponse['stopReason'];
  /** The run's savings meter (what scripts kept out of the context, definitions deferred). */
  meter?: ContextMeter;
}

/** What one step offers: the definitions, and the MCP tool behind each direct name. */
interface Offer {
  definitions: ToolDefinition[];
  direct: Map<string, CatalogTool>;
  /** Direct names of every tool of the catalog (for guidance on unknown names). */
  names: Map<string, string>;
  catalog: CatalogTool[];
}

class AgentOrchestrator implements Orchestrator {
  readonly runtime: CodecallRuntime;
  readonly model: LanguageModel;
  readonly mode: AgentMode;
  readonly #options: ResolvedOptions;
  readonly #owned: boolean;
  readonly #running = new Set<AbortController>();
  readonly #definitions = new WeakMap<CatalogTool, ToolDefinition>();
  readonly #metaDefinitions: ToolDefinition[];
  #closing: Promise<void> | undefined;

  constructor(runtime: CodecallRuntime, model: LanguageModel, options: ResolvedOptions, owned: boolean) {
    this.runtime = runtime;
    this.model = model;
    this.mode = options.mode;
    this.#options = options;
    this.#owned = owned;
    this.#metaDefinitions = [searchToolsDefinition(), executeCodeDefinition(runtime.config.sandbox.limits)];
  }

  async run(task: string, options: RunOptions = {}): Promise<RunResult> {
    for await (const event of this.stream(task, options)) {
      if (event.type === 'done') return event.result;
      if (event.type === 'error') throw event.error;
    }
    throw new CodecallError('ABORTED', 'The run ended without a result.');
  }

  async *stream(task: string, options: RunOptions = {}): AsyncGenerator<AgentEvent, void, undefined> {
    if (this.#closing) throw new CodecallError('CLOSED', 'Cannot run: the orchestrator is closed.');
    if (typeof task !== 'string' || task.trim() === '') {
      throw new CodecallError('INVALID_ARGUMENT', 'The task must be a non-empty string.', {
        details: { field: 'task' },
      });
    }
    const queue: AgentEvent[] = [];
    let wake: (() => void) | undefined;
    let finished = false;
    let failure: { error: unknown } | undefined;
    const stop = new AbortController();
    this.#running.add(stop);
    const state: RunState = {
      started: performance.now(),
      steps: [],
      usage: zeroUsage(),
      toolSequences: [],
      directSequence: [],
      answer: '',
      stopReason: 'other',
    };
    let ended = false;
    const emit = (event: AgentEvent): void => {
      // Work cancelled by a stop may still report after the run ended: drop it.
      if (ended) return;
      if (event.type === 'done' || event.type === 'error') ended = true;
      queue.push(event);
      wake?.();
    };
    const loop = this.#loop(task, state, options.signal, stop.signal, emit).then(
      (result) => emit({ type: 'done', result }),
      (error: unknown) => {
        if (isCodecallError(error)) emit({ type: 'error', error, result: this.#result(state) });
        else failure = { error };
      },
    );
    const done = loop.finally(() => {
      finished = true;
      this.#running.delete(stop);
      wake?.();
    });
    try {
      for (;;) {
        while (queue.length > 0) yield queue.shift()!;
        if (finished) break;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
      if (failure !== undefined) throw failure.error;
    } finally {
      if (!finished) {
        stop.abort(new CodecallError('ABORTED', 'The run was cancelled: the stream was closed early.'));
        await done;
      }
    }
  }

  searchTools(query: string, options?: RuntimeSearchOptions): RuntimeSearchResult {
    return this.runtime.searchTools(query, options);
  }

  execute(code: string, options?: RuntimeExecuteOptions): Promise<ExecutionResult> {
    return this.runtime.execute(code, options);
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      for (const run of this.#running) {
        run.abort(new CodecallError('ABORTED', 'The run was cancelled: the orchestrator closed.'));
      }
      if (this.#owned) await this.runtime.close();
      else await this.runtime.flush();
    })();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #result(state: RunState): RunResult {
    let contextTokens = 0;
    for (const step of state.steps) contextTokens += step.request.contextTokens;
    const kept = state.meter?.totals();
    return {
      answer: state.answer,
      stopReason: state.stopReason,
      mode: this.mode,
      model: `${this.model.provider}:${this.model.modelId}`,
      steps: state.steps,
      usage: { ...state.usage },
      savings: {
        contextTokens,
        toolResultTokensKeptOut: kept?.toolResultTokensKeptOut ?? 0,
        toolResultBytesKeptOut: kept?.toolResultBytesKeptOut ?? 0,
        toolDefinitionTokensDeferred: kept?.toolDefinitionTokensDeferred ?? 0,
      },
      toolSequences: state.toolSequences.map((sequence) => [...sequence]),
      durationMs: performance.now() - state.started,
    };
  }

  #definition(tool: CatalogTool, name: string): ToolDefinition {
    let definition = this.#definitions.get(tool);
    if (definition === undefined || definition.name !== name) {
      definition = directToolDefinition(tool, name);
      this.#definitions.set(tool, definition);
    }
    return definition;
  }

  /** The tools one step offers. Stable unless the catalog changes or search finds a direct-only tool. */
  #offer(found: readonly string[]): Offer {
    const catalog = this.runtime.catalog();
    const names = assignDirectNames(catalog);
    const byName = new Map(catalog.map((tool) => [tool.name, tool]));
    const callable = catalog
      .filter((tool) => tool.allowedCallers.includes('direct'))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const chosen: CatalogTool[] =
      this.mode === 'direct' ? callable : callable.filter((tool) => !tool.deferLoading);
    if (this.mode === 'code') {
      const initial = new Set(chosen.map((tool) => tool.name));
      for (const name of found) {
        const tool = byName.get(name);
        if (tool && tool.allowedCallers.includes('direct') && !initial.has(name)) chosen.push(tool);
      }
    }
    const direct = new Map<string, CatalogTool>();
    const definitions = this.mode === 'code' ? [...this.#metaDefinitions] : [];
    for (const tool of chosen) {
      const name = names.get(tool.name)!;
      direct.set(name, tool);
      definitions.push(this.#definition(tool, name));
    }
    return { definitions, direct, names, catalog };
  }

  async #loop(
    task: string,
    state: RunState,
    callerSignal: AbortSignal | undefined,
    stopSignal: AbortSignal,
    emit: (event: AgentEvent) => void,
  ): Promise<RunResult> {
    const options = this.#options;
    const controller = new AbortController();
    const signal = controller.signal;
    let timedOut = false;
    const onCallerAbort = (): void => controller.abort(callerSignal?.reason);
    const onStop = (): void => controller.abort(stopSignal.reason);
    callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
    stopSignal.addEventListener('abort', onStop, { once: true });
    if (callerSignal?.aborted) onCallerAbort();
    if (stopSignal.aborted) onStop();
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new CodecallError('RUN_TIMEOUT', 'The run took too long.'));
    }, options.maxRunTimeMs);
    timer.unref?.();

    const stopError = (): CodecallError => {
      const step = state.steps.length;
      if (timedOut) {
        return new CodecallError(
          'RUN_TIMEOUT',
          `The run took longer than ${options.maxRunTimeMs} ms (maxRunTimeMs) and was stopped after ${step} step${step === 1 ? '' : 's'}. ` +
            'Raise maxRunTimeMs or make the task narrower.',
          { details: { maxRunTimeMs: options.maxRunTimeMs, steps: step } },
        );
      }
      return new CodecallError(
        'ABORTED',
        `The run was cancelled after ${step} step${step === 1 ? '' : 's'}.`,
        {
          cause: signal.reason,
          details: { steps: step },
        },
      );
    };
    const checkStop = (): void => {
      if (signal.aborted) throw stopError();
    };

    const meter = new ContextMeter({
      // What a direct-mode request offers (see #offer), in code mode only.
      ...(this.mode === 'code'
        ? {
            directTools: () => {
              const catalog = this.runtime.catalog();
              const names = assignDirectNames(catalog);
              return catalog
                .filter((tool) => tool.allowedCallers.includes('direct'))
                .map((tool) => this.#definition(tool, names.get(tool.name)!));
            },
          }
        : {}),
      // Exactly as #call renders a direct tool's result into the context.
      renderDirectResult: (value) => cutToBytes(renderValue(value), this.#options.maxToolResultBytes),
    });
    state.meter = meter;
    const found: string[] = [];
    const messages: Message[] = [{ role: 'user', content: task }];
    let recorded = false;
    /** The model's direct calls over the run are one sequence for the tool graph. */
    const recordDirect = (): void => {
      if (recorded) return;
      recorded = true;
      for (const usage of usagesOfRun(state.steps)) this.runtime.recordUsage(usage);
      if (state.directSequence.length === 0) return;
      this.runtime.recordSequence(state.directSequence);
      state.toolSequences.push([...state.directSequence]);
    };

    try {
      const first = this.#offer(found);
      emit({
        type: 'run-start',
        mode: this.mode,
        model: `${this.model.provider}:${this.model.modelId}`,
        tools: first.definitions.map((d) => d.name),
      });
      for (let index = 1; ; index++) {
        checkStop();
        if (index > options.maxSteps) {
          throw new CodecallError(
            'MAX_STEPS_EXCEEDED',
            `The model did not finish within ${options.maxSteps} steps (model requests). Raise maxSteps ` +
              '(the maxSteps option, "agent": {"maxSteps": N} in the configuration, or --max-steps), or make the task narrower.',
            { details: { maxSteps: options.maxSteps } },
          );
        }
        const stepStarted = performance.now();
        const offer = index === 1 ? first : this.#offer(found);
        const request: GenerateRequest = {
          system: options.system,
          messages: [...messages],
          tools: offer.definitions,
          ...(options.maxOutputTokens !== undefined ? { maxOutputTokens: options.maxOutputTokens } : {}),
          ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
        };
        const tokens = await raceAbort(meter.measure(request), signal).catch((error: unknown) => {
          if (signal.aborted) throw stopError();
          throw error;
        });
        const requestSummary = {
          messages: request.messages.length,
          tools: offer.definitions.map((d) => d.name),
          contextTokens: tokens.contextTokens,
        };
        emit({ type: 'step-start', step: index, request: requestSummary });

        const modelStarted = performance.now();
        let response;
        try {
          response = await raceAbort(this.model.generate(request, { signal }), signal);
        } catch (error) {
          if (signal.aborted) throw stopError();
          throw error;
        }
        checkStop();
        const calls = response.content.filter((part): part is ToolCallPart => part.type === 'tool_call');
        const text = response.content
          .filter((part) => part.type === 'text')
          .map((part) => part.text)
          .join('');
        const summary: AgentModelResponse = {
          text,
          toolCalls: calls.map((call) => ({ id: call.id, name: call.name, input: call.input })),
          stopReason: response.stopReason,
          durationMs: performance.now() - modelStarted,
        };
        addUsage(state.usage, response.usage);
        state.stopReason = response.stopReason;
        emit({ type: 'model-response', step: index, response: summary, usage: { ...response.usage } });

        const step: AgentStep = {
          index,
          request: requestSummary,
          response: summary,
          usage: { ...response.usage },
          toolCalls: [],
          executions: [],
          deferredDefinitionTokens: tokens.deferredDefinitionTokens,
          durationMs: 0,
        };
        if (calls.length === 0) {
          state.answer = text;
          step.durationMs = performance.now() - stepStarted;
          state.steps.push(step);
          emit({ type: 'step-end', step });
          recordDirect();
          return this.#result(state);
        }
        messages.push({ role: 'assistant', content: response.content });
        state.steps.push(step);

        const outcomes = await raceAbort(
          mapBounded(calls, options.maxConcurrentToolCalls, (call) =>
            this.#call(call, index, offer, signal, meter, found, emit),
          ),
          signal,
        ).catch((error: unknown) => {
          if (signal.aborted) throw stopError();
          throw error;
        });
        checkStop();
        const results: ToolResult[] = [];
        for (const outcome of outcomes) {
          step.toolCalls.push(outcome.call);
          if (outcome.execution) {
            step.executions.push(outcome.execution);
            const sequence = outcome.execution.result.toolCalls.filter((c) => c.ok).map((c) => c.tool);
            if (sequence.length > 0) state.toolSequences.push(sequence);
          }
          if (outcome.call.kind === 'direct' && !outcome.call.isError && outcome.call.tool !== undefined) {
            state.directSequence.push(outcome.call.tool);
          }
          results.push({
            toolCallId: outcome.call.id,
            content: outcome.call.content,
            ...(outcome.call.isError ? { isError: true } : {}),
          });
        }
        messages.push({ role: 'tool', results });
        step.durationMs = performance.now() - stepStarted;
        emit({ type: 'step-end', step });
      }
    } catch (error) {
      recordDirect();
      if (isCodecallError(error) && STOP_CODES.has(error.code)) error.details.result = this.#result(state);
      throw error;
    } finally {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCallerAbort);
      stopSignal.removeEventListener('abort', onStop);
    }
  }

  async #call(
    part: ToolCallPart,
    step: number,
    offer: Offer,
    signal: AbortSignal,
    meter: ContextMeter,
    found: string[],
    emit: (event: AgentEvent) => void,
  ): Promise<{ call: AgentToolCall; execution?: AgentExecution }> {
    const started = performance.now();
    emit({ type: 'tool-call-start', step, id: part.id, name: part.name, input: part.input });
    const finish = (
      kind: AgentToolCall['kind'],
      content: string,
      isError: boolean,
      extra: { tool?: string; execution?: AgentExecution } = {},
    ): { call: AgentToolCall; execution?: AgentExecution } => {
      const call: AgentToolCall = {
        id: part.id,
        name: part.name,
        input: part.input,
        kind,
        ...(extra.tool !== undefined ? { tool: extra.tool } : {}),
        content: cutToBytes(content, this.#options.maxToolResultBytes),
        isError,
        durationMs: performance.now() - started,
      };
      emit({ type: 'tool-call-end', step, call });
      return extra.execution ? { call, execution: extra.execution } : { call };
    };

    if (typeof part.input === 'string') {
      return finish(
        'invalid',
        `The arguments of ${part.name} were not valid JSON: ${quote(part.input)}. Send one JSON object that matches the tool's input schema.`,
        true,
      );
    }
    const isMeta =
      this.mode === 'code' && (part.name === SEARCH_TOOLS_NAME || part.name === EXECUTE_CODE_NAME);
    if (isMeta && part.name === SEARCH_TOOLS_NAME) {
      const input = parseSearchToolsInput(part.input);
      if ('error' in input) return finish('search_tools', input.error, true);
      try {
        const result = this.runtime.searchTools(input.query, {
          ...(input.limit !== undefined ? { limit: input.limit } : {}),
          ...(input.regex !== undefined ? { regex: input.regex } : {}),
        });
        if (this.#options.offerFoundDirectTools) {
          for (const hit of result.hits) {
            const tool = hit.tool;
            if (
              tool.allowedCallers.includes('direct') &&
              !tool.allowedCallers.includes('code_execution') &&
              !found.includes(tool.name)
            ) {
              found.push(tool.name);
            }
          }
        }
        const offered = new Set(offer.direct.values());
        const directName = (tool: CatalogTool): string | undefined =>
          offered.has(tool) || found.includes(tool.name) ? offer.names.get(tool.name) : undefined;
        return finish('search_tools', renderSearchResult(result, { query: input.query, directName }), false);
      } catch (error) {
        return finish('search_tools', errorText(error), true);
      }
    }
    if (isMeta) {
      const input = parseExecuteCodeInput(part.input);
      if ('error' in input) return finish('execute_code', input.error, true);
      emit({ type: 'execution-start', step, toolCallId: part.id, code: input.code });
      const counter = meter.scriptResults();
      const result = await this.runtime.execute(input.code, { signal, onToolResult: counter.onToolResult });
      await counter.finish(result.toolCalls);
      const execution: AgentExecution = { toolCallId: part.id, code: input.code, result };
      emit({ type: 'execution-end', step, execution });
      return finish('execute_code', formatResultForModel(result), result.status === 'error', { execution });
    }

    const tool = offer.direct.get(part.name);
    if (tool === undefined) return finish('invalid', this.#unknownTool(part.name, offer), true);
    const input = part.input ?? {};
    if (typeof input !== 'object' || Array.isArray(input)) {
      return finish(
        'invalid',
        `The arguments of ${part.name} must be one JSON object; got ${Array.isArray(input) ? 'an array' : JSON.stringify(input)}.`,
        true,
        { tool: tool.name },
      );
    }
    try {
      const value = await this.runtime.callTool(tool.name, input, { signal, caller: 'direct' });
      return finish('direct', renderValue(value), false, { tool: tool.name });
    } catch (error) {
      if (signal.aborted) throw error;
      return finish('direct', errorText(error), true, { tool: tool.name });
    }
  }

  #unknownTool(name: string, offer: Offer): string {
    const available = offer.definitions.map((d) => d.name);
    const listed =
      available.length > MAX_NAMES_LISTED
        ? `${available.slice(0, MAX_NAMES_LISTED).join(', ')} and ${available.length - MAX_NAMES_LISTED} more`
        : available.join(', ');
    const target = offer.catalog.find(
      (tool) => tool.name === name || offer.names.get(tool.name) === name || tool.tool === name,
    );
    if (target && this.mode === 'code') {
      if (target.allowedCallers.includes('code_execution')) {
        return `${name} is not one of your tools. Call it from ${EXECUTE_CODE_NAME}: \`await tools.${target.namespace}.${target.member}(args)\` (${SEARCH_TOOLS_NAME} shows its declaration).`;
      }
      if (target.allowedCallers.includes('direct')) {
        return `${name} is not one of your tools yet. Find it with ${SEARCH_TOOLS_NAME} (e.g. query ${JSON.stringify(target.tool)}); then call it directly as "${offer.names.get(target.name)}".`;
      }
    }
    if (target) {
      return `${target.name} may not be called by the model directly (allowedCallers). Your tools are: ${listed}.`;
    }
    return `Unknown tool "${name}". Your tools are: ${listed}.`;
  }
}
