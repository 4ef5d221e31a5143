/**
 * @module
 * Any AI SDK provider model (`@ai-sdk/anthropic`, `@ai-sdk/openai`, `@ai-sdk/google`, Bedrock,
 * Vertex…) as a codecall {@link LanguageModel}, so it can drive `createOrchestrator`. Transient
 * failures are retried with codecall's backoff (the provider's `isRetryable`, `retry-after`);
 * credentials rejected become `PROVIDER_AUTH`, the rest `PROVIDER_REQUEST_FAILED`.
 */
import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { APICallError } from 'ai';
import {
  DEFAULT_PROVIDER_INITIAL_RETRY_DELAY_MS,
  DEFAULT_PROVIDER_MAX_RETRIES,
  DEFAULT_PROVIDER_MAX_RETRY_DELAY_MS,
  DEFAULT_PROVIDER_TIMEOUT_MS,
} from '../../config/defaults.js';
import { CodecallError } from '../../errors.js';
import {
  AUTH_STATUSES,
  parseRetryAfter,
  type ProviderFailure,
} from '../../providers/classify-provider-error.js';
import type {
  GenerateOptions,
  GenerateRequest,
  GenerateResponse,
  LanguageModel,
  StreamOptions,
} from '../../providers/language-model.js';
import { retryProviderCall, type ProviderRetryEvent } from '../../providers/retry-provider-call.js';
import { streamProviderCall } from '../../providers/stream-provider-call.js';
import { convertToAiSdkCallOptions } from './convert-to-ai-sdk-prompt.js';
import { AiSdkStreamAccumulator, mapAiSdkResponse } from './map-ai-sdk-response.js';

/** Options of {@link fromAiSdkModel}. */
export interface FromAiSdkModelOptions {
  /** Retries of a transient failure. @defaultValue {@link DEFAULT_PROVIDER_MAX_RETRIES} (4) */
  maxRetries?: number;
  /** First backoff delay. @defaultValue {@link DEFAULT_PROVIDER_INITIAL_RETRY_DELAY_MS} (500 ms) */
  initialRetryDelayMs?: number;
  /** Longest backoff delay. @defaultValue {@link DEFAULT_PROVIDER_MAX_RETRY_DELAY_MS} (30,000 ms) */
  maxRetryDelayMs?: number;
  /** Told before each retry. */
  onRetry?: (event: ProviderRetryEvent) => void;
}

function classify(error: unknown, signal: AbortSignal | undefined): ProviderFailure {
  const message = error instanceof Error ? error.message : String(error);
  if (signal?.aborted || (error instanceof Error && error.name === 'AbortError')) {
    return { kind: 'aborted', message, cause: error };
  }
  if (!APICallError.isInstance(error)) return { kind: 'fatal', message, cause: error };
  const status = error.statusCode;
  const headers = error.responseHeaders ?? {};
  const retryAfterMs = parseRetryAfter({ get: (name: string) => headers[name] ?? null });
  const kind: ProviderFailure['kind'] =
    status !== undefined && AUTH_STATUSES.has(status) ? 'auth' : error.isRetryable ? 'retryable' : 'fatal';
  return {
    kind,
    ...(status === undefined ? {} : { status }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    message,
    cause: error,
  };
}

class AiSdkLanguageModel implements LanguageModel {
  readonly provider: string;
  readonly modelId: string;
  readonly #model: LanguageModelV4;
  readonly #options: FromAiSdkModelOptions;

  constructor(model: LanguageModelV4, options: FromAiSdkModelOptions) {
    this.#model = model;
    this.#options = options;
    this.provider = model.provider;
    this.modelId = model.modelId;
  }

  async generate(request: GenerateRequest, options: GenerateOptions = {}): Promise<GenerateResponse> {
    return retryProviderCall(
      async (attemptSignal) =>
        mapAiSdkResponse(await this.#model.doGenerate(convertToAiSdkCallOptions(request, attemptSignal))),
      this.#retryOptions(options.signal),
    );
  }

  /**
   * {@link LanguageModel.stream} through the provider's `doStream`; opening it is retried, a
   * stream that reports an `error` part fails with `PROVIDER_REQUEST_FAILED`.
   */
  async stream(request: GenerateRequest, options: StreamOptions = {}): Promise<GenerateResponse> {
    const accumulator = new AiSdkStreamAccumulator(options.onTextDelta, this.provider);
    await streamProviderCall<LanguageModelV4StreamPart>(
      async (attemptSignal) => {
        const { stream } = await this.#model.doStream(convertToAiSdkCallOptions(request, attemptSignal));
        return stream;
      },
      (part) => accumulator.add(part),
      { ...this.#retryOptions(options.signal), idleTimeoutMs: DEFAULT_PROVIDER_TIMEOUT_MS },
    );
    return accumulator.finish(this.provider);
  }

  #retryOptions(signal: AbortSignal | undefined) {
    return {
      providerName: this.provider,
      keyVariable: `the ${this.provider} provider's API key`,
      policy: {
        maxRetries: this.#options.maxRetries ?? DEFAULT_PROVIDER_MAX_RETRIES,
        initialDelayMs: this.#options.initialRetryDelayMs ?? DEFAULT_PROVIDER_INITIAL_RETRY_DELAY_MS,
        maxDelayMs: this.#options.maxRetryDelayMs ?? DEFAULT_PROVIDER_MAX_RETRY_DELAY_MS,
      },
      classify: (error: unknown) => classify(error, signal),
      signal,
      onRetry: this.#options.onRetry,
    };
  }
}

/**
 * An AI SDK language model (specification v4, what current `@ai-sdk/*` providers return) as a
 * codecall {@link LanguageModel}.
 *
 * @example
 * ```ts
 * import { createOpenAI } from '@ai-sdk/openai';
 * import { createOrchestrator } from 'codecall';
 * import { fromAiSdkModel } from 'codecall/ai-sdk';
 *
 * const agent = await createOrchestrator({
 *   model: fromAiSdkModel(createOpenAI().chat('gpt-4.1')),
 *   load: { path: 'codecall.json' },
 * });
 * ```
 */
export function fromAiSdkModel(model: LanguageModelV4, options: FromAiSdkModelOptions = {}): LanguageModel {
  if (typeof model !== 'object' || model === null || typeof model.doGenerate !== 'function') {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      'fromAiSdkModel needs an AI SDK language model (an object with doGenerate), such as openai.chat("gpt-4.1").',
      {
        details: { field: 'model' },
      },
    );
  }
  if (model.specificationVersion !== 'v4') {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `fromAiSdkModel supports AI SDK language models of specification v4; this one is ${String(model.specificationVersion)}. Update the provider package (@ai-sdk/*).`,
      { details: { field: 'model', value: model.specificationVersion } },
    );
  }
  return new AiSdkLanguageModel(model, options);
}
