/**
 * @module
 * {@link LanguageModel} over Chat Completions via the `openai` package: OpenAI itself, or any
 * server that speaks the same wire format through `baseURL` (Ollama, vLLM, llama.cpp server,
 * OpenRouter). The SDK's own retries are off so that {@link retryProviderCall} is the only
 * retry layer.
 */
import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions/completions.js';
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
import { OpenAIStreamAccumulator } from './accumulate-openai-stream.js';
import { convertFromOpenAIResponse } from './convert-from-openai-response.js';
import { convertToOpenAIMessages } from './convert-to-openai-messages.js';
import { convertToOpenAITools } from './convert-to-openai-tools.js';
import { importOptional } from '../../util/optional-package.js';

/** Resolved options of {@link OpenAILanguageModel}. */
export interface OpenAILanguageModelOptions {
  modelId: string;
  /** `undefined` only with a `baseURL` (local servers): no `Authorization` header is sent. */
  apiKey: string | undefined;
  /** Root URL including `/v1` (`http://localhost:11434/v1`); OpenAI's when absent. */
  baseURL?: string | undefined;
  timeoutMs: number;
  retry: RetryPolicy;
  /**
   * Name of the output-token limit field: `max_completion_tokens` (OpenAI; required by its
   * reasoning models) or `max_tokens` (what every compatible server understands).
   */
  maxTokensField: 'max_completion_tokens' | 'max_tokens';
  fetch?: typeof globalThis.fetch | undefined;
  onRetry?: ((event: ProviderRetryEvent) => void) | undefined;
}

/** Builds the Chat Completions request body for one {@link GenerateRequest}. */
export function buildOpenAIRequest(
  modelId: string,
  request: GenerateRequest,
  options: { maxTokensField: 'max_completion_tokens' | 'max_tokens' },
): ChatCompletionCreateParamsNonStreaming {
  const tools = convertToOpenAITools(request.tools);
  return {
    model: modelId,
    messages: convertToOpenAIMessages(request.system, request.messages),
    [options.maxTokensField]: request.maxOutputTokens ?? DEFAULT_PROVIDER_MAX_OUTPUT_TOKENS,
    ...(tools.length === 0 ? {} : { tools }),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
  };
}

/**
 * A model behind the Chat Completions API. Usually created with
 * `createLanguageModel('openai:<model>')`.
 */
export class OpenAILanguageModel implements LanguageModel {
  readonly provider = 'openai';
  readonly modelId: string;
  /** The SDK is imported at the first request, so importing codecall does not load it. */
  #sdk: Promise<{ client: OpenAI; Sdk: typeof OpenAI }> | undefined;
  readonly #options: OpenAILanguageModelOptions;
  readonly #providerName: string;

  constructor(options: OpenAILanguageModelOptions) {
    this.modelId = options.modelId;
    this.#options = options;
    this.#providerName =
      options.baseURL === undefined ? 'OpenAI' : `OpenAI-compatible server ${options.baseURL}`;
  }

  async #loadSdk(): Promise<{ client: OpenAI; Sdk: typeof OpenAI }> {
    const { default: Sdk } = await importOptional<{ default: typeof OpenAI }>(
      'openai',
      'The openai provider',
    );
    const options = this.#options;
    const client = new Sdk({
      // The SDK insists on a credential; with none, send a placeholder and strip the header.
      apiKey: options.apiKey ?? 'no-key',
      adminAPIKey: null,
      organization: null,
      project: null,
      baseURL: options.baseURL ?? null,
      maxRetries: 0,
      timeout: options.timeoutMs,
      logLevel: 'off',
      ...(options.apiKey === undefined ? { defaultHeaders: { Authorization: null } } : {}),
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    });
    return { client, Sdk };
  }

  async generate(request: GenerateRequest, options: GenerateOptions = {}): Promise<GenerateResponse> {
    this.#sdk ??= this.#loadSdk();
    const { client, Sdk } = await this.#sdk;
    const body = buildOpenAIRequest(this.modelId, request, { maxTokensField: this.#options.maxTokensField });
    const completion = await retryProviderCall(
      (signal) => client.chat.completions.create(body, signal === undefined ? {} : { signal }),
      {
        providerName: this.#providerName,
        keyVariable: 'OPENAI_API_KEY',
        policy: this.#options.retry,
        classify: (error) => classifyProviderError(error, Sdk),
        signal: options.signal,
        onRetry: this.#options.onRetry,
      },
    );
    return convertFromOpenAIResponse(completion);
  }

  /**
   * {@link LanguageModel.stream} over Chat Completions chunks; asks for usage in the last chunk
   * (`stream_options.include_usage`).
   */
  async stream(request: GenerateRequest, options: StreamOptions = {}): Promise<GenerateResponse> {
    this.#sdk ??= this.#loadSdk();
    const { client, Sdk } = await this.#sdk;
    const body = buildOpenAIRequest(this.modelId, request, { maxTokensField: this.#options.maxTokensField });
    const accumulator = new OpenAIStreamAccumulator(options.onTextDelta);
    await streamProviderCall(
      (signal) =>
        client.chat.completions.create(
          { ...body, stream: true, stream_options: { include_usage: true } },
          { signal },
        ),
      (chunk) => accumulator.add(chunk),
      {
        providerName: this.#providerName,
        keyVariable: 'OPENAI_API_KEY',
        policy: this.#options.retry,
        classify: (error) => classifyProviderError(error, Sdk),
        signal: options.signal,
        onRetry: this.#options.onRetry,
        idleTimeoutMs: this.#options.timeoutMs,
      },
    );
    return convertFromOpenAIResponse(accumulator.finish(this.#providerName));
  }
}
