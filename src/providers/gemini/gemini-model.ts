/**
 * @module
 * {@link LanguageModel} over the Gemini API (`generateContent`, `streamGenerateContent`) via
 * `@google/genai`, imported at the first request (an optional peer dependency). The SDK's own
 * retries are off (no `retryOptions`) and its timeout unused, so {@link retryProviderCall} and
 * {@link withAttemptTimeout} bound every attempt as for the other providers.
 */
import type * as GenAI from '@google/genai';
import type { GoogleGenAI } from '@google/genai';
import { withAttemptTimeout } from '../attempt-timeout.js';
import { classifyTransportError, kindOfStatus, type ProviderFailure } from '../classify-provider-error.js';
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
import { convertFromGeminiResponse, GeminiResponseAccumulator } from './convert-from-gemini-response.js';
import { buildGeminiRequest } from './convert-to-gemini.js';
import { importOptional } from '../../util/optional-package.js';

/** Resolved options of {@link GeminiLanguageModel}. */
export interface GeminiLanguageModelOptions {
  modelId: string;
  apiKey: string;
  /** API root without the version (`https://generativelanguage.googleapis.com`); the SDK's when absent. */
  baseURL?: string | undefined;
  timeoutMs: number;
  retry: RetryPolicy;
  onRetry?: ((event: ProviderRetryEvent) => void) | undefined;
}

type GenAIModule = typeof GenAI;

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

/** `{"error":{"code","message","status","details":[{RetryInfo retryDelay:"37s"}]}}` from the message. */
function describeApiError(message: string): { type?: string; message?: string; retryAfterMs?: number } {
  let body: unknown;
  try {
    body = JSON.parse(message);
  } catch {
    return {};
  }
  const error = record(record(body)['error']);
  const details = Array.isArray(error['details']) ? error['details'] : [];
  const delay = details
    .map((detail) => record(detail)['retryDelay'])
    .find((value): value is string => typeof value === 'string');
  const seconds = delay === undefined ? Number.NaN : Number.parseFloat(delay);
  return {
    ...(typeof error['status'] === 'string' ? { type: error['status'] } : {}),
    ...(typeof error['message'] === 'string' ? { message: error['message'] } : {}),
    ...(Number.isFinite(seconds) && seconds >= 0 ? { retryAfterMs: seconds * 1_000 } : {}),
  };
}

/** Sorts a failed `@google/genai` attempt for the retry loop. */
export function classifyGeminiError(error: unknown, sdk: Pick<GenAIModule, 'ApiError'>): ProviderFailure {
  if (error instanceof sdk.ApiError) {
    const described = describeApiError(error.message);
    return {
      kind: kindOfStatus(error.status),
      status: error.status,
      ...(described.type === undefined ? {} : { errorType: described.type }),
      ...(described.retryAfterMs === undefined ? {} : { retryAfterMs: described.retryAfterMs }),
      message: described.message ?? error.message,
      cause: error,
    };
  }
  const transport = classifyTransportError(error);
  if (transport !== undefined) return transport;
  return { kind: 'fatal', message: error instanceof Error ? error.message : String(error), cause: error };
}

/**
 * Gemini through the Gemini API. Usually created with `createLanguageModel('gemini:<model>')`.
 */
export class GeminiLanguageModel implements LanguageModel {
  readonly provider = 'gemini';
  readonly modelId: string;
  #sdk: Promise<{ client: GoogleGenAI; Sdk: GenAIModule }> | undefined;
  readonly #options: GeminiLanguageModelOptions;

  constructor(options: GeminiLanguageModelOptions) {
    this.modelId = options.modelId;
    this.#options = options;
  }

  async #loadSdk(): Promise<{ client: GoogleGenAI; Sdk: GenAIModule }> {
    const Sdk = await importOptional<GenAIModule>('@google/genai', 'The gemini provider');
    const options = this.#options;
    const client = new Sdk.GoogleGenAI({
      apiKey: options.apiKey,
      vertexai: false,
      ...(options.baseURL === undefined ? {} : { httpOptions: { baseUrl: options.baseURL } }),
    });
    return { client, Sdk };
  }

  #retryOptions(Sdk: GenAIModule, signal: AbortSignal | undefined) {
    return {
      providerName: 'Gemini',
      keyVariable: 'GEMINI_API_KEY',
      policy: this.#options.retry,
      classify: (error: unknown) => classifyGeminiError(error, Sdk),
      signal,
      onRetry: this.#options.onRetry,
    };
  }

  async generate(request: GenerateRequest, options: GenerateOptions = {}): Promise<GenerateResponse> {
    this.#sdk ??= this.#loadSdk();
    const { client, Sdk } = await this.#sdk;
    const params = buildGeminiRequest(this.modelId, request);
    const response = await retryProviderCall(
      (signal) =>
        withAttemptTimeout(signal, this.#options.timeoutMs, (abortSignal) =>
          client.models.generateContent({ ...params, config: { ...params.config, abortSignal } }),
        ),
      this.#retryOptions(Sdk, options.signal),
    );
    return convertFromGeminiResponse(response);
  }

  /** {@link LanguageModel.stream} over `streamGenerateContent?alt=sse`. */
  async stream(request: GenerateRequest, options: StreamOptions = {}): Promise<GenerateResponse> {
    this.#sdk ??= this.#loadSdk();
    const { client, Sdk } = await this.#sdk;
    const params = buildGeminiRequest(this.modelId, request);
    const accumulator = new GeminiResponseAccumulator(options.onTextDelta);
    await streamProviderCall(
      (signal) =>
        withAttemptTimeout(signal, this.#options.timeoutMs, (abortSignal) =>
          client.models.generateContentStream({ ...params, config: { ...params.config, abortSignal } }),
        ),
      (chunk) => accumulator.add(chunk),
      { ...this.#retryOptions(Sdk, options.signal), idleTimeoutMs: this.#options.timeoutMs },
    );
    return accumulator.finish({ streamed: true });
  }
}
