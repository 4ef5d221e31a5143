/**
 * @module
 * {@link LanguageModel} over Amazon Bedrock's Converse API via `@aws-sdk/client-bedrock-runtime`,
 * imported at the first request (an optional peer dependency). Requests are signed with AWS
 * SigV4 from the credentials given (or the SDK's default chain: environment, profiles, SSO,
 * instance roles), or carry a Bedrock API key as a bearer token. The SDK's retries are off
 * (`maxAttempts: 1`) so that {@link retryProviderCall} is the only retry layer;
 * {@link withAttemptTimeout} bounds each attempt. {@link BedrockLanguageModel.stream} uses
 * `ConverseStream` (AWS's binary event stream, decoded by the SDK).
 */
import type * as Bedrock from '@aws-sdk/client-bedrock-runtime';
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { CodecallError } from '../../errors.js';
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
import { BedrockStreamAccumulator } from './accumulate-bedrock-stream.js';
import { buildBedrockRequest, convertFromBedrockResponse } from './convert-bedrock.js';
import { importOptional } from '../../util/optional-package.js';

/** AWS credentials for SigV4 signing. */
export interface BedrockCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string | undefined;
}

/** Resolved options of {@link BedrockLanguageModel}. */
export interface BedrockLanguageModelOptions {
  /** A Bedrock model or inference-profile id (`us.anthropic.claude-sonnet-4-5-20250929-v1:0`). */
  modelId: string;
  region: string;
  /** A Bedrock API key, sent as a bearer token instead of signing. */
  apiKey?: string | undefined;
  /** Explicit credentials; the SDK's default chain when absent. */
  credentials?: BedrockCredentials | undefined;
  /** Endpoint URL (`https://bedrock-runtime.us-east-1.amazonaws.com`); the region's when absent. */
  baseURL?: string | undefined;
  timeoutMs: number;
  retry: RetryPolicy;
  /** `cachePoint` blocks after the tools and the system prompt. */
  promptCaching: boolean;
  onRetry?: ((event: ProviderRetryEvent) => void) | undefined;
}

type BedrockModule = typeof Bedrock;

/** Sorts a failed AWS SDK attempt for the retry loop (`$metadata.httpStatusCode`, `$retryable`). */
export function classifyBedrockError(error: unknown): ProviderFailure {
  const fields = (typeof error === 'object' && error !== null ? error : {}) as {
    name?: unknown;
    message?: unknown;
    $fault?: unknown;
    $retryable?: unknown;
    $metadata?: { httpStatusCode?: unknown; requestId?: unknown };
  };
  const status =
    typeof fields.$metadata?.httpStatusCode === 'number' ? fields.$metadata.httpStatusCode : undefined;
  if (fields.$fault === 'client' || fields.$fault === 'server' || status !== undefined) {
    const name = typeof fields.name === 'string' ? fields.name : undefined;
    const requestId = fields.$metadata?.requestId;
    const throttled =
      name === 'ThrottlingException' ||
      name === 'ServiceUnavailableException' ||
      name === 'ModelNotReadyException';
    return {
      kind: kindOfStatus(status, fields.$retryable !== undefined || throttled),
      ...(status === undefined ? {} : { status }),
      ...(name === undefined ? {} : { errorType: name }),
      message: typeof fields.message === 'string' && fields.message !== '' ? fields.message : String(name),
      ...(typeof requestId === 'string' ? { requestId } : {}),
      cause: error,
    };
  }
  const transport = classifyTransportError(error);
  if (transport !== undefined) return transport;
  return { kind: 'fatal', message: error instanceof Error ? error.message : String(error), cause: error };
}

/**
 * A model on Amazon Bedrock through the Converse API. Usually created with
 * `createLanguageModel('bedrock:<model id>')`.
 */
export class BedrockLanguageModel implements LanguageModel {
  readonly provider = 'bedrock';
  readonly modelId: string;
  #sdk: Promise<{ client: BedrockRuntimeClient; Sdk: BedrockModule }> | undefined;
  readonly #options: BedrockLanguageModelOptions;

  constructor(options: BedrockLanguageModelOptions) {
    this.modelId = options.modelId;
    this.#options = options;
  }

  async #loadSdk(): Promise<{ client: BedrockRuntimeClient; Sdk: BedrockModule }> {
    const Sdk = await importOptional<BedrockModule>(
      '@aws-sdk/client-bedrock-runtime',
      'The bedrock provider',
    );
    const options = this.#options;
    const client = new Sdk.BedrockRuntimeClient({
      region: options.region,
      maxAttempts: 1,
      ...(options.baseURL === undefined ? {} : { endpoint: options.baseURL }),
      ...(options.apiKey !== undefined
        ? { token: { token: options.apiKey }, authSchemePreference: ['httpBearerAuth'] }
        : options.credentials !== undefined
          ? {
              credentials: {
                accessKeyId: options.credentials.accessKeyId,
                secretAccessKey: options.credentials.secretAccessKey,
                ...(options.credentials.sessionToken === undefined
                  ? {}
                  : { sessionToken: options.credentials.sessionToken }),
              },
            }
          : {}),
    });
    return { client, Sdk };
  }

  async generate(request: GenerateRequest, options: GenerateOptions = {}): Promise<GenerateResponse> {
    this.#sdk ??= this.#loadSdk();
    const { client, Sdk } = await this.#sdk;
    const input = buildBedrockRequest(this.modelId, request, { promptCaching: this.#options.promptCaching });
    const response = await retryProviderCall(
      (signal) =>
        withAttemptTimeout(signal, this.#options.timeoutMs, (abortSignal) =>
          client.send(new Sdk.ConverseCommand(input), { abortSignal }),
        ),
      this.#retryOptions(options.signal),
    );
    return convertFromBedrockResponse(response);
  }

  /** {@link LanguageModel.stream} over `ConverseStream`. */
  async stream(request: GenerateRequest, options: StreamOptions = {}): Promise<GenerateResponse> {
    this.#sdk ??= this.#loadSdk();
    const { client, Sdk } = await this.#sdk;
    const input = buildBedrockRequest(this.modelId, request, { promptCaching: this.#options.promptCaching });
    const accumulator = new BedrockStreamAccumulator(options.onTextDelta);
    await streamProviderCall(
      (signal) =>
        withAttemptTimeout(signal, this.#options.timeoutMs, async (abortSignal) => {
          const response = await client.send(new Sdk.ConverseStreamCommand(input), { abortSignal });
          if (response.stream === undefined) {
            throw new CodecallError(
              'PROVIDER_REQUEST_FAILED',
              'Bedrock ConverseStream answered without a stream.',
              {
                details: { provider: 'Bedrock', retryable: false },
              },
            );
          }
          return response.stream;
        }),
      (event) => accumulator.add(event),
      { ...this.#retryOptions(options.signal), idleTimeoutMs: this.#options.timeoutMs },
    );
    return convertFromBedrockResponse(accumulator.finish());
  }

  #retryOptions(signal: AbortSignal | undefined) {
    return {
      providerName: 'Bedrock',
      keyVariable: this.#options.apiKey === undefined ? 'AWS_ACCESS_KEY_ID' : 'AWS_BEARER_TOKEN_BEDROCK',
      policy: this.#options.retry,
      classify: classifyBedrockError,
      signal,
      onRetry: this.#options.onRetry,
    };
  }
}
