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
 * A run starts from a task or a conversation and returns the conversation to continue from.
 * Each step: `prepareStep` may change the model, tools or system prompt; the model answers; its
 * tool calls run in parallel (bounded, see `runner/dispatch-tool-call.ts`); hooks hear every
 * call, script and step; `stopWhen` may end the run. A run stops at `maxSteps`
 * (`MAX_STEPS_EXCEEDED`), at `maxRunTimeMs` (`RUN_TIMEOUT`) or when the caller's signal fires
 * (`ABORTED`), cancelling the model request, scripts and tool calls in flight. `run` and
 * `stream` share one loop: `run` collects the events of `stream`. Helpers live in `runner/`.
 */
import { randomUUID } from 'node:crypto';

import { usagesOfRun } from './usage-of-run.js';
import { loadConfig } from '../config/index.js';
import { CodecallError, isCodecallError, type CodecallErrorCode } from '../errors.js';
import {
  CodecallRuntime,
  type RuntimeExecuteOptions,
  type RuntimeSearchOptions,
  type RuntimeSearchResult,
} from '../execute/index.js';
import { cutToBytes } from '../meta/index.js';
import type {
  GenerateRequest,
  LanguageModel,
  ToolCallPart,
  ToolResult,
} from '../providers/language-model.js';
import type { ApprovalDecision, Approver } from '../tools/index.js';
import type { ExecutionResult } from '../types.js';
import { ContextMeter } from './context-meter.js';
import { callModel } from './runner/call-model.js';
import { chooseModel } from './runner/choose-model.js';
import { dispatchToolCall, renderValue } from './runner/dispatch-tool-call.js';
import { streamEvents } from './runner/event-stream.js';
import { mapBounded } from './runner/map-bounded.js';
import { resolveOptions, type ResolvedOptions } from './runner/resolve-options.js';
import { RunScope } from './runner/run-scope.js';
import { addUsage, buildRunResult, createRunState, type RunState } from './runner/run-state.js';
import { loadOtelApi, RunTelemetry, type OtelApi, type TelemetryOptions } from './runner/run-telemetry.js';
import { isStopConditionMet, type StopCondition } from './runner/stop-condition.js';
import { ToolOffer, type Offer } from './runner/tool-offer.js';
import type { OrchestratorOptions, RunHooks, RunInput, RunOptions } from './orchestrator-options.js';
import { normalizeRunInput } from './runner/run-input.js';
import type { AgentEvent, AgentMode, AgentModelResponse, AgentStep, RunResult } from './types.js';

export { MODEL_ENV_VARIABLE, resolveLanguageModel } from './runner/choose-model.js';
export { cutToBytes } from '../meta/index.js';
export type {
  OrchestratorOptions,
  PrepareStep,
  PrepareStepOptions,
  PrepareStepResult,
  RunHooks,
  RunInput,
  RunOptions,
} from './orchestrator-options.js';

/** Codes of the errors that stop a run; they carry the partial run as `details.result`. */
const STOP_CODES: readonly CodecallErrorCode[] = ['MAX_STEPS_EXCEEDED', 'RUN_TIMEOUT', 'ABORTED'];

/**
 * Runs tasks with a model over the configured MCP servers.
 *
 * @example
 * ```ts
 * await using agent = await createOrchestrator({
 *   model: 'anthropic:claude-sonnet-4-6',
 *   load: { path: 'examples/codecall.json' },
 * });
 * const first = await agent.run('Which team members exceeded their Q3 travel budget?');
 * const next = await agent.run([...first.messages, { role: 'user', content: 'And in Q2?' }]);
 * console.log(next.answer, next.savings);
 * ```
 */
export interface Orchestrator {
  readonly runtime: CodecallRuntime;
  readonly model: LanguageModel;
  readonly mode: AgentMode;
  /**
   * Runs a task (or continues a conversation) to its answer; `result.messages` is the
   * conversation to continue from. Throws `MAX_STEPS_EXCEEDED`, `RUN_TIMEOUT` or `ABORTED`
   * (with the partial run as `error.details.result`), or the provider's error (`PROVIDER_*`).
   */
  run(input: RunInput, options?: RunOptions): Promise<RunResult>;
  /**
   * Runs a task (or continues a conversation) and yields its events as they happen; the last
   * is `done` (with the result) or `error` (with the error and the partial run). The model's
   * text comes as `text-delta` events while it writes (models with a `stream` method; others
   * in one piece per step). Stopping the iteration early cancels the run.
   */
  stream(input: RunInput, options?: RunOptions): AsyncGenerator<AgentEvent, void, undefined>;
  /** Tool search over the live catalog (what `search_tools` answers from). */
  searchTools(query: string, options?: RuntimeSearchOptions): RuntimeSearchResult;
  /** Runs code in the sandbox (what `execute_code` does). */
  execute(code: string, options?: RuntimeExecuteOptions): Promise<ExecutionResult>;
  /** Cancels runs in flight; closes the runtime if the orchestrator opened it. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
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
  const telemetry =
    options.telemetry === true ? {} : options.telemetry === false ? undefined : options.telemetry;
  const otel = telemetry === undefined ? undefined : await loadOtelApi();
  const owned = options.runtime === undefined;
  const runtime = options.runtime ?? (await CodecallRuntime.open({ ...options.runtimeOptions, config }));
  return new AgentOrchestrator(
    runtime,
    model,
    resolved,
    owned,
    options,
    otel === undefined ? undefined : { api: otel, options: telemetry! },
  );
}

function asList(stopWhen: RunHooks['stopWhen']): readonly StopCondition[] {
  if (stopWhen === undefined) return [];
  return typeof stopWhen === 'function' ? [stopWhen] : stopWhen;
}

/** The offer narrowed to `activeTools` (names not offered stay out, and are not callable). */
function narrowOffer(offer: Offer, activeTools: readonly string[] | undefined): Offer {
  if (activeTools === undefined) return offer;
  const keep = new Set(activeTools);
  return {
    ...offer,
    definitions: offer.definitions.filter((definition) => keep.has(definition.name)),
    direct: new Map([...offer.direct].filter(([name]) => keep.has(name))),
  };
}

class AgentOrchestrator implements Orchestrator {
  readonly runtime: CodecallRuntime;
  readonly model: LanguageModel;
  readonly mode: AgentMode;
  readonly #options: ResolvedOptions;
  readonly #hooks: RunHooks;
  readonly #owned: boolean;
  readonly #running = new Set<AbortController>();
  readonly #offer: ToolOffer;
  readonly #otel: { api: OtelApi; options: TelemetryOptions } | undefined;
  #closing: Promise<void> | undefined;

  constructor(
    runtime: CodecallRuntime,
    model: LanguageModel,
    options: ResolvedOptions,
    owned: boolean,
    hooks: RunHooks,
    otel: { api: OtelApi; options: TelemetryOptions } | undefined,
  ) {
    this.runtime = runtime;
    this.model = model;
    this.mode = options.mode;
    this.#options = options;
    this.#owned = owned;
    this.#hooks = definedHooks(hooks);
    this.#offer = new ToolOffer(runtime, options.mode);
    this.#otel = otel;
  }

  async run(input: RunInput, options: RunOptions = {}): Promise<RunResult> {
    for await (const event of this.#events(input, options, false)) {
      if (event.type === 'approval-request')
        event.deny(
          'nobody can answer approval requests of run(): pass onApproval to run() or createOrchestrator(), or answer the approval-request events of stream()',
        );
      if (event.type === 'done') return event.result;
      if (event.type === 'error') throw event.error;
    }
    throw new CodecallError('ABORTED', 'The run ended without a result.');
  }

  stream(input: RunInput, options: RunOptions = {}): AsyncGenerator<AgentEvent, void, undefined> {
    return this.#events(input, options, options.streamText ?? true);
  }

  /** The events of one run; `streamText`: report the model's text as it is written (`text-delta`). */
  async *#events(
    input: RunInput,
    options: RunOptions,
    streamText: boolean,
  ): AsyncGenerator<AgentEvent, void, undefined> {
    // A generator: a closed orchestrator or a bad input rejects the first `next()`, as before.
    if (this.#closing) throw new CodecallError('CLOSED', 'Cannot run: the orchestrator is closed.');
    const messages = normalizeRunInput(input);
    const stop = new AbortController();
    const state = createRunState(messages);
    const hooks: RunHooks = { ...this.#hooks, ...definedHooks(options) };
    yield* streamEvents<AgentEvent>({
      start: async (emit) => {
        this.#running.add(stop);
        try {
          const result = await this.#loop(state, hooks, options.signal, stop.signal, emit, streamText);
          emit({ type: 'done', result });
        } catch (error) {
          if (!isCodecallError(error)) throw error;
          emit({ type: 'error', error, result: this.#result(state) });
        } finally {
          this.#running.delete(stop);
        }
      },
      isLast: (event) => event.type === 'done' || event.type === 'error',
      stop: () =>
        stop.abort(new CodecallError('ABORTED', 'The run was cancelled: the stream was closed early.')),
    });
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
    return buildRunResult(state, this.mode, `${this.model.provider}:${this.model.modelId}`);
  }

  async #loop(
    state: RunState,
    hooks: RunHooks,
    callerSignal: AbortSignal | undefined,
    stopSignal: AbortSignal,
    emit: (event: AgentEvent) => void,
    streamText: boolean,
  ): Promise<RunResult> {
    const options = this.#options;
    const scope = new RunScope({
      callerSignal,
      stopSignal,
      maxRunTimeMs: options.maxRunTimeMs,
      steps: () => state.steps.length,
    });
    const telemetry = new RunTelemetry(this.#otel?.api, this.#otel?.options, this.model);
    const runSpan = telemetry.startRun(this.mode);
    const stopWhen = asList(hooks.stopWhen);
    const meter = new ContextMeter({
      // What a direct-mode request offers, in code mode only.
      ...(this.mode === 'code' ? { directTools: () => this.#offer.directDefinitions() } : {}),
      // Exactly as a direct tool's result is rendered into the context.
      renderDirectResult: (value) => cutToBytes(renderValue(value), options.maxToolResultBytes),
    });
    state.meter = meter;
    const found: string[] = [];
    // Who answers approvals: the run's hook, else the runtime's, else whoever reads stream().
    const approver: Approver =
      hooks.onApproval ??
      this.runtime.tools.approver ??
      ((request) =>
        new Promise<ApprovalDecision>((resolve) => {
          let answered = false;
          const answer = (decision: ApprovalDecision): void => {
            if (answered) return;
            answered = true;
            resolve(decision);
          };
          emit({
            type: 'approval-request',
            step: state.steps.length,
            request,
            approve: (reason) => answer({ approved: true, ...(reason !== undefined ? { reason } : {}) }),
            deny: (reason) => answer({ approved: false, reason: reason ?? 'denied by the stream consumer' }),
          });
        }));
    // The run's sandbox sessions: scripts of this run share state; other runs never see it.
    const sessionOwner = `run:${randomUUID()}`;
    const messages = state.messages;
    let recorded = false;
    /** The model's direct calls over the run are one sequence for the tool graph. */
    const recordDirect = (): void => {
      if (recorded) return;
      recorded = true;
      // In the background (flushed by close): the agent's result is the caller's, not a client's.
      for (const usage of usagesOfRun(state.steps)) void this.runtime.recordUsage(usage);
      if (state.directSequence.length === 0) return;
      void this.runtime.recordSequence(state.directSequence);
      state.toolSequences.push([...state.directSequence]);
    };
    const finishStep = async (step: AgentStep): Promise<void> => {
      emit({ type: 'step-end', step });
      await hooks.onStepFinish?.(step);
    };

    try {
      const first = this.#offer.offer(found);
      emit({
        type: 'run-start',
        mode: this.mode,
        model: `${this.model.provider}:${this.model.modelId}`,
        tools: first.definitions.map((d) => d.name),
      });
      for (let index = 1; ; index++) {
        scope.check();
        if (index > options.maxSteps) {
          throw new CodecallError(
            'MAX_STEPS_EXCEEDED',
            `The model did not finish within ${options.maxSteps} steps (model requests). Raise maxSteps ` +
              '(the maxSteps option, "agent": {"maxSteps": N} in the configuration, or --max-steps), or make the task narrower.',
            { details: { maxSteps: options.maxSteps } },
          );
        }
        const stepStarted = performance.now();
        let offer = index === 1 ? first : this.#offer.offer(found);
        const prepared =
          (await hooks.prepareStep?.({
            stepNumber: index,
            steps: state.steps,
            messages,
            model: this.model,
            tools: offer.definitions,
            system: options.system,
          })) ?? undefined;
        offer = narrowOffer(offer, prepared?.activeTools);
        const model = prepared?.model ?? this.model;
        const request: GenerateRequest = {
          system: prepared?.system ?? options.system,
          messages: [...(prepared?.messages ?? messages)],
          tools: offer.definitions,
          ...(options.maxOutputTokens !== undefined ? { maxOutputTokens: options.maxOutputTokens } : {}),
          ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
        };
        const tokens = await scope.race(meter.measure(request));
        const requestSummary = {
          messages: request.messages.length,
          tools: offer.definitions.map((d) => d.name),
          contextTokens: tokens.contextTokens,
        };
        emit({ type: 'step-start', step: index, request: requestSummary });

        const modelStarted = performance.now();
        const chatSpan = telemetry.startChat(runSpan, index, request, model);
        let response;
        try {
          response = await scope.race(
            callModel(model, request, {
              signal: scope.signal,
              onTextDelta: streamText ? (text) => emit({ type: 'text-delta', step: index, text }) : undefined,
            }),
          );
        } catch (error) {
          telemetry.endChat(chatSpan, { error });
          throw error;
        }
        telemetry.endChat(chatSpan, response);
        scope.check();
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
        messages.push({ role: 'assistant', content: response.content });
        if (calls.length === 0) {
          state.answer = text;
          step.durationMs = performance.now() - stepStarted;
          state.steps.push(step);
          await finishStep(step);
          recordDirect();
          const result = this.#result(state);
          telemetry.endRun(runSpan, result);
          return result;
        }
        state.steps.push(step);

        const outcomes = await scope.race(
          mapBounded(calls, options.maxConcurrentToolCalls, (call) =>
            dispatchToolCall(call, {
              runtime: this.runtime,
              mode: this.mode,
              maxToolResultBytes: options.maxToolResultBytes,
              offerFoundDirectTools: options.offerFoundDirectTools,
              sessionOwner,
              step: index,
              offer,
              signal: scope.signal,
              meter,
              found,
              emit,
              telemetry,
              trace: runSpan,
              onToolCall: hooks.onToolCall,
              onExecution: hooks.onExecution,
              approver,
            }),
          ),
        );
        scope.check();
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
        await finishStep(step);
        if (stopWhen.length > 0 && (await isStopConditionMet(stopWhen, state.steps))) {
          state.answer = text;
          recordDirect();
          const result = this.#result(state);
          telemetry.endRun(runSpan, result);
          return result;
        }
      }
    } catch (error) {
      recordDirect();
      const result = this.#result(state);
      if (CodecallError.isInstance(error, STOP_CODES)) error.details.result = result;
      telemetry.endRun(
        runSpan,
        result,
        isCodecallError(error)
          ? error
          : { code: 'Error', message: error instanceof Error ? error.message : String(error) },
      );
      throw error;
    } finally {
      scope.dispose();
      this.runtime.closeSandboxSessions(sessionOwner);
    }
  }
}

function definedHooks(options: RunOptions): RunHooks {
  const hooks: RunHooks = {};
  if (options.stopWhen !== undefined) hooks.stopWhen = options.stopWhen;
  if (options.prepareStep !== undefined) hooks.prepareStep = options.prepareStep;
  if (options.onStepFinish !== undefined) hooks.onStepFinish = options.onStepFinish;
  if (options.onToolCall !== undefined) hooks.onToolCall = options.onToolCall;
  if (options.onExecution !== undefined) hooks.onExecution = options.onExecution;
  if (options.onApproval !== undefined) hooks.onApproval = options.onApproval;
  return hooks;
}
