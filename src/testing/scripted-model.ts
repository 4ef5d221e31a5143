/**
 * @module
 * A strict {@link LanguageModel} test double: it answers from a fixed script of steps, records
 * every request, fails loudly on a call past the script or a request that misses a step's
 * expectation, and `assertComplete()` fails while steps remain. Plus terse response builders.
 */
import { CodecallError } from '../errors.js';
import type {
  ContentPart,
  GenerateOptions,
  GenerateRequest,
  GenerateResponse,
  LanguageModel,
  StopReason,
  TokenUsage,
} from '../providers/language-model.js';

/** Computes a response from the request (or throws, to simulate a provider failure). */
export type ScriptedResponder = (
  request: GenerateRequest,
  step: number,
) => GenerateResponse | Promise<GenerateResponse>;

/** A step with a check on the request it answers. */
export interface ScriptedStepWithExpectation {
  /**
   * Checks the request: return `false` or throw to fail the call with `MODEL_SCRIPT_MISMATCH`
   * (a thrown error's message is kept in the error).
   */
  expect: (request: GenerateRequest) => boolean | void;
  response: GenerateResponse | ScriptedResponder;
  /** Named in mismatch messages. */
  label?: string;
}

/** One step of the script: a response, a responder, or either with an expectation. */
export type ScriptedStep = GenerateResponse | ScriptedResponder | ScriptedStepWithExpectation;

/** Options of {@link ScriptedLanguageModel}. */
export interface ScriptedLanguageModelOptions {
  /** @defaultValue `"scripted"` */
  modelId?: string;
}

const ZERO_USAGE: TokenUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

function isExpectation(step: ScriptedStep): step is ScriptedStepWithExpectation {
  return typeof step === 'object' && step !== null && 'response' in step && 'expect' in step;
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A language model that plays a script. Each `generate` call consumes the next step.
 *
 * Requests are recorded as deep copies, so a caller that mutates its message array afterwards
 * does not rewrite history; responses are handed out as copies too. Tool calls without an id get
 * a deterministic one (`toolu_scripted_<step>_<index>`).
 *
 * @example
 * ```ts
 * const model = new ScriptedLanguageModel([
 *   toolCall('execute_code', { code: 'console.log(1 + 1)' }),
 *   { expect: (request) => JSON.stringify(request.messages).includes('2'), response: text('It is 2.') },
 * ]);
 * // … run the agent with `model` …
 * model.assertComplete();
 * ```
 */
export class ScriptedLanguageModel implements LanguageModel {
  readonly provider = 'scripted';
  readonly modelId: string;
  readonly #steps: readonly ScriptedStep[];
  readonly #requests: GenerateRequest[] = [];
  readonly #failures: CodecallError[] = [];

  constructor(steps: readonly ScriptedStep[], options: ScriptedLanguageModelOptions = {}) {
    this.#steps = [...steps];
    this.modelId = options.modelId ?? 'scripted';
  }

  /** Every request received so far, in order (deep copies). */
  get requests(): readonly GenerateRequest[] {
    return this.#requests;
  }

  /** Steps not yet consumed. */
  get remaining(): number {
    return Math.max(0, this.#steps.length - this.#requests.length);
  }

  #fail(
    code: 'MODEL_SCRIPT_EXHAUSTED' | 'MODEL_SCRIPT_MISMATCH',
    message: string,
    options: { details: Record<string, unknown> },
  ): CodecallError {
    const error = new CodecallError(code, message, options);
    this.#failures.push(error);
    return error;
  }

  async generate(request: GenerateRequest, options: GenerateOptions = {}): Promise<GenerateResponse> {
    if (options.signal?.aborted) {
      throw new CodecallError('ABORTED', 'The scripted model call was cancelled.', {
        cause: options.signal.reason,
      });
    }
    const index = this.#requests.length;
    this.#requests.push(structuredClone(request));
    const step = this.#steps[index];
    if (step === undefined) {
      const last = request.messages.at(-1);
      throw this.#fail(
        'MODEL_SCRIPT_EXHAUSTED',
        `The scripted model was called ${index + 1} times but has only ${this.#steps.length} step${this.#steps.length === 1 ? '' : 's'}. ` +
          'Add a step for this call or find why the caller asked again.',
        { details: { call: index + 1, steps: this.#steps.length, lastMessage: last } },
      );
    }
    let responder: GenerateResponse | ScriptedResponder = step as GenerateResponse | ScriptedResponder;
    if (isExpectation(step)) {
      let passed: boolean;
      let reason = 'the expectation returned false';
      try {
        passed = step.expect(structuredClone(request)) !== false;
      } catch (error) {
        passed = false;
        reason = describeError(error);
      }
      if (!passed) {
        const label = step.label === undefined ? '' : ` ("${step.label}")`;
        throw this.#fail(
          'MODEL_SCRIPT_MISMATCH',
          `Request ${index + 1} did not match step ${index + 1}${label}: ${reason}.`,
          {
            details: { step: index + 1, reason, ...(step.label === undefined ? {} : { label: step.label }) },
          },
        );
      }
      responder = step.response;
    }
    const response =
      typeof responder === 'function'
        ? await responder(structuredClone(request), index + 1)
        : structuredClone(responder);
    return {
      ...response,
      content: response.content.map((part, position) =>
        part.type === 'tool_call' && part.id === ''
          ? { ...part, id: `toolu_scripted_${index + 1}_${position + 1}` }
          : part,
      ),
    };
  }

  /**
   * Throws the first `MODEL_SCRIPT_EXHAUSTED` / `MODEL_SCRIPT_MISMATCH` failure of any call (even
   * one the code under test caught), else `MODEL_SCRIPT_MISMATCH` when steps remain unconsumed
   * (the code under test stopped early).
   */
  assertComplete(): void {
    const failure = this.#failures[0];
    if (failure !== undefined) throw failure;
    if (this.remaining === 0) return;
    throw new CodecallError(
      'MODEL_SCRIPT_MISMATCH',
      `The scripted model has ${this.remaining} unconsumed step${this.remaining === 1 ? '' : 's'} (called ${this.#requests.length} of ${this.#steps.length} times).`,
      { details: { calls: this.#requests.length, steps: this.#steps.length, remaining: this.remaining } },
    );
  }
}

/** Options shared by the response builders. */
export interface ScriptedResponseOptions {
  /** @defaultValue all zeros */
  usage?: Partial<TokenUsage>;
}

/** A response from parts, with a stop reason (`tool_use` when any part is a tool call). */
export function scriptedResponse(
  content: ContentPart[],
  options: ScriptedResponseOptions & { stopReason?: StopReason } = {},
): GenerateResponse {
  const stopReason =
    options.stopReason ?? (content.some((part) => part.type === 'tool_call') ? 'tool_use' : 'end_turn');
  return { content, stopReason, usage: { ...ZERO_USAGE, ...options.usage } };
}

/** A final text answer (`end_turn`). */
export function text(value: string, options: ScriptedResponseOptions = {}): GenerateResponse {
  return scriptedResponse([{ type: 'text', text: value }], options);
}

/**
 * A response that calls one tool (`tool_use`). Without `id` the model assigns one;
 * `text` adds the words the model says before the call.
 */
export function toolCall(
  name: string,
  input: unknown,
  options: ScriptedResponseOptions & { id?: string; text?: string } = {},
): GenerateResponse {
  const parts: ContentPart[] = options.text === undefined ? [] : [{ type: 'text', text: options.text }];
  parts.push({ type: 'tool_call', id: options.id ?? '', name, input });
  return scriptedResponse(parts, options);
}
