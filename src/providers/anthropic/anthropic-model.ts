/**
 * @module
 * {@link LanguageModel} over the Anthropic Messages API via `@anthropic-ai/sdk`. Requests are
 * built by the pure mappers next to this file; the SDK's own retries are off so that
 * {@link retryProviderCall} is the only retry layer. Prompt caching puts breakpoints on the
 * last tool, the system prompt and the last message. `stream` reads the same request as
 * server-sent events.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/messages/messages.js';
import { DEFAULT_PROVIDER_MAX_OUTPUT_TOKENS } from '../../config/defaults.js';
import { classifyProviderError } from '../classify-provider-error.js';
import type {
  GenerateOptions,
  GenerateRequest,
  GenerateResponse,
  LanguageModel,
  StreamOptions,
} from '../language-model.js';
import type { ProviderRetryEvent, RetryPolicy } from '../retry-provider-call.js';
import { retryProviderCall } from '../retry-provider-call.js';
import { streamProviderCall } from '../stream-provider-call.js';
import { AnthropicStreamAccumulator } from './accumulate-anthropic-stream.js';
import { convertFromAnthropicResponse } from './convert-from-anthropic-response.js';
import { convertToAnthropicMessages } from './convert-to-anthropic-messages.js';
import { convertToAnthropicTools } from './convert-to-anthropic-tools.js';
import { importOptional } from '../../util/optional-package.js';

/** Resolved options of {@link AnthropicLanguageModel}. */
export interface AnthropicLanguageModelOptions {
  modelId: string;
  apiKey: string;
  /** Root URL of the API, without `/v1` (`https://api.anthropic.com`); the SDK's default when absent. */
  baseURL?: string | undefined;
  /** Time one attempt may take. */
  timeoutMs: number;
  retry: RetryPolicy;
  /** Put prompt-cache breakpoints on tools, system prompt and the last message. */
  promptCaching: boolean;
  fetch?: typeof globalThis.fetch | undefined;
  onRetry?: ((event: ProviderRetryEvent) => void) | undefined;
}

/** Builds the Messages API request body for one {@link GenerateRequest}. */
export function buildAnthropicRequest(
  modelId: string,
  request: GenerateRequest,
  options: { promptCaching: boolean },
): MessageCreateParamsNonStreaming {
  const cache = options.promptCaching;
  const tools = convertToAnthropicTools(request.tools, { cache });
  const system = request.system;
  return {
    model: modelId,
    max_tokens: request.maxOutputTokens ?? DEFAULT_PROVIDER_MAX_OUTPUT_TOKENS,
    messages: convertToAnthropicMessages(request.messages, { cacheLastMessage: cache }),
    ...(system === undefined || system === ''
      ? {}
      : {
          system: [
            {
              type: 'text',
              text: system,
              ...(cache ? { cache_control: { type: 'ephemeral' as const } } : {}),
            },
          ],
        }),
    ...(tools.length === 0 ? {} : { tools }),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
  };
}

/**
 * Claude through the Anthropic Messages API. Usually created with
 * `createLanguageModel('anthropic:<model>')`.
 */
export class AnthropicLanguageModel implements LanguageModel {
  readonly provider = 'anthropic';
  readonly modelId: string;
  /** The SDK is imported at the first request, so importing codecall does not load it. */
  #sdk: Promise<{ client: Anthropic; Sdk: typeof Anthropic }> | undefined;
  readonly #options: AnthropicLanguageModelOptions;

  constructor(options: AnthropicLanguageModelOptions) {
    this.modelId = options.modelId;
    this.#options = options;
  }

  async #loadSdk(): Promise<{ client: Anthropic; Sdk: typeof Anthropic }> {
    const { default: Sdk } = await importOptional<{ default: typeof Anthropic }>(
      '@anthropic-ai/sdk',
      'The anthropic provider',
    );
    const options = this.#options;
    const client = new Sdk({
      apiKey: options.apiKey,
      authToken: null,
      ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
      maxRetries: 0,
      timeout: options.timeoutMs,
      logLevel: 'off',
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    });
    return { client, Sdk };
  }

  async generate(request: GenerateRequest, options: GenerateOptions = {}): Promise<GenerateResponse> {
    this.#sdk ??= this.#loadSdk();
    const { client, Sdk } = await this.#sdk;
    const body = buildAnthropicRequest(this.modelId, request, { promptCaching: this.#options.promptCaching });
    const message = await retryProviderCall(
      (signal) => client.messages.create(body, signal === undefined ? {} : { signal }),
      {
        providerName: 'Anthropic',
        keyVariable: 'ANTHROPIC_API_KEY',
        policy: this.#options.retry,
        classify: (error) => classifyProviderError(error, Sdk),
        signal: options.signal,
        onRetry: this.#options.onRetry,
      },
    );
    return convertFromAnthropicResponse(message);
  }

  /** {@link LanguageModel.stream} over the Messages API's server-sent events. */
  async stream(request: GenerateRequest, options: StreamOptions = {}): Promise<GenerateResponse> {
    this.#sdk ??= this.#loadSdk();
    const { client, Sdk } = await this.#sdk;
    const body = buildAnthropicRequest(this.modelId, request, { promptCaching: this.#options.promptCaching });
    const accumulator = new AnthropicStreamAccumulator(options.onTextDelta);
    await streamProviderCall(
      (signal) => client.messages.create({ ...body, stream: true }, { signal }),
      (event) => accumulator.add(event),
      {
        providerName: 'Anthropic',
        keyVariable: 'ANTHROPIC_API_KEY',
        policy: this.#options.retry,
        classify: (error) => classifyProviderError(error, Sdk),
        signal: options.signal,
        onRetry: this.#options.onRetry,
        idleTimeoutMs: this.#options.timeoutMs,
      },
    );
    return convertFromAnthropicResponse(accumulator.finish());
  }
}
