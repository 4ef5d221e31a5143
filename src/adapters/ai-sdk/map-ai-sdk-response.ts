/**
 * @module
 * An AI SDK generate result (specification v4) as a codecall {@link GenerateResponse}: text and
 * tool calls in order (arguments parsed; kept as the raw string when they are not JSON, so the
 * loop can tell the model), the finish reason, and token usage.
 */
import type {
  LanguageModelV4FinishReason,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider';
import { CodecallError } from '../../errors.js';
import type { ContentPart, GenerateResponse, StopReason } from '../../providers/language-model.js';

/** codecall's stop reason for an AI SDK finish reason. */
export function mapAiSdkFinishReason(reason: LanguageModelV4FinishReason | string | undefined): StopReason {
  const unified = typeof reason === 'string' ? reason : reason?.unified;
  switch (unified) {
    case 'stop':
      return 'end_turn';
    case 'tool-calls':
      return 'tool_use';
    case 'length':
      return 'max_tokens';
    case 'content-filter':
      return 'refusal';
    default:
      return 'other';
  }
}

function parseInput(input: string): unknown {
  if (input.trim() === '') return {};
  try {
    return JSON.parse(input) as unknown;
  } catch {
    return input;
  }
}

/** The codecall response of an AI SDK result. */
export function mapAiSdkResponse(result: LanguageModelV4GenerateResult): GenerateResponse {
  const content: ContentPart[] = [];
  for (const part of result.content) {
    if (part.type === 'text' && part.text !== '') content.push({ type: 'text', text: part.text });
    else if (part.type === 'tool-call' && part.providerExecuted !== true) {
      content.push({
        type: 'tool_call',
        id: part.toolCallId,
        name: part.toolName,
        input: parseInput(part.input),
      });
    }
  }
  const usage = result.usage;
  return {
    content,
    stopReason: mapAiSdkFinishReason(result.finishReason),
    usage: {
      inputTokens: usage.inputTokens.total ?? 0,
      outputTokens: usage.outputTokens.total ?? 0,
      cacheReadTokens: usage.inputTokens.cacheRead ?? 0,
      cacheWriteTokens: usage.inputTokens.cacheWrite ?? 0,
    },
    raw: result.response?.body,
  };
}

/**
 * Folds the parts of an AI SDK stream (`text-delta`, `tool-call`, `finish`, `error`…) into the
 * response `mapAiSdkResponse` would give for the whole result, reporting text as it comes.
 */
export class AiSdkStreamAccumulator {
  readonly #content: ContentPart[] = [];
  readonly #onTextDelta: ((text: string) => void) | undefined;
  readonly #provider: string;
  #finish: Extract<LanguageModelV4StreamPart, { type: 'finish' }> | undefined;

  /** `provider`: the provider's name, for the errors the stream reports. */
  constructor(onTextDelta: ((text: string) => void) | undefined, provider: string) {
    this.#onTextDelta = onTextDelta;
    this.#provider = provider;
  }

  add(part: LanguageModelV4StreamPart): void {
    switch (part.type) {
      case 'text-delta': {
        if (part.delta === '') break;
        const last = this.#content.at(-1);
        if (last?.type === 'text') last.text += part.delta;
        else this.#content.push({ type: 'text', text: part.delta });
        this.#onTextDelta?.(part.delta);
        break;
      }
      case 'tool-call':
        if (part.providerExecuted === true) break;
        this.#content.push({
          type: 'tool_call',
          id: part.toolCallId,
          name: part.toolName,
          input: parseInput(part.input),
        });
        break;
      case 'finish':
        this.#finish = part;
        break;
      case 'error': {
        const message = part.error instanceof Error ? part.error.message : String(part.error);
        throw new CodecallError(
          'PROVIDER_REQUEST_FAILED',
          `The model's stream reported an error: ${message}`,
          {
            details: { provider: this.#provider, retryable: false },
            cause: part.error,
          },
        );
      }
      default:
        break;
    }
  }

  /**
   * @throws CodecallError `PROVIDER_REQUEST_FAILED` when the stream ended without a `finish` part.
   */
  finish(provider: string): GenerateResponse {
    const finish = this.#finish;
    if (finish === undefined) {
      throw new CodecallError(
        'PROVIDER_REQUEST_FAILED',
        `${provider} stream ended without a finish part: the answer is incomplete.`,
        { details: { provider, retryable: false } },
      );
    }
    return {
      content: this.#content,
      stopReason: mapAiSdkFinishReason(finish.finishReason),
      usage: {
        inputTokens: finish.usage.inputTokens.total ?? 0,
        outputTokens: finish.usage.outputTokens.total ?? 0,
        cacheReadTokens: finish.usage.inputTokens.cacheRead ?? 0,
        cacheWriteTokens: finish.usage.inputTokens.cacheWrite ?? 0,
      },
    };
  }
}
