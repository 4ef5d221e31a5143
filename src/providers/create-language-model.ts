/**
 * @module
 * Picks a provider from a `provider:model` spec (`anthropic:claude-sonnet-4-5`,
 * `openai:gpt-4.1`, `openai:llama3.1:8b` with a local `baseURL`, `gemini:gemini-2.5-flash`,
 * `bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0`), resolves its key (or, for Bedrock,
 * its region and AWS credentials) from the options or the usual environment variables, and
 * resolves retry and timeout options once.
 */
import {
  DEFAULT_PROVIDER_INITIAL_RETRY_DELAY_MS,
  DEFAULT_PROVIDER_MAX_RETRIES,
  DEFAULT_PROVIDER_MAX_RETRY_DELAY_MS,
  DEFAULT_PROVIDER_TIMEOUT_MS,
} from '../config/defaults.js';
import { MAX_TIMER_DELAY_MS } from '../util/long-timeout.js';
import { CodecallError } from '../errors.js';
import { AnthropicLanguageModel } from './anthropic/anthropic-model.js';
import { BedrockLanguageModel, type BedrockCredentials } from './bedrock/bedrock-model.js';
import { GeminiLanguageModel } from './gemini/gemini-model.js';
import type { LanguageModel } from './language-model.js';
import { OpenAILanguageModel } from './openai/openai-model.js';
import type { ProviderRetryEvent, RetryPolicy } from './retry-provider-call.js';

/** Providers {@link createLanguageModel} knows. */
export const KNOWN_PROVIDERS = ['anthropic', 'openai', 'gemini', 'bedrock'] as const;

/** A provider {@link createLanguageModel} knows. */
export type ProviderName = (typeof KNOWN_PROVIDERS)[number];

/** Environment variables each provider reads. */
export const PROVIDER_ENV: Readonly<Record<ProviderName, { apiKey: string; baseURL: string }>> = {
  anthropic: { apiKey: 'ANTHROPIC_API_KEY', baseURL: 'ANTHROPIC_BASE_URL' },
  openai: { apiKey: 'OPENAI_API_KEY', baseURL: 'OPENAI_BASE_URL' },
  gemini: { apiKey: 'GEMINI_API_KEY', baseURL: 'GOOGLE_GEMINI_BASE_URL' },
  // A Bedrock API key is optional: AWS credentials (SigV4) are the usual way.
  bedrock: { apiKey: 'AWS_BEARER_TOKEN_BEDROCK', baseURL: 'AWS_ENDPOINT_URL_BEDROCK_RUNTIME' },
};

/** Environment variables Bedrock reads besides {@link PROVIDER_ENV}. */
export const BEDROCK_ENV = {
  region: ['AWS_REGION', 'AWS_DEFAULT_REGION'],
  accessKeyId: 'AWS_ACCESS_KEY_ID',
  secretAccessKey: 'AWS_SECRET_ACCESS_KEY',
  sessionToken: 'AWS_SESSION_TOKEN',
} as const;

/** Options of {@link createLanguageModel}. */
export interface CreateLanguageModelOptions {
  /**
   * API key.
   * @defaultValue `ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `GEMINI_API_KEY` (or `GOOGLE_API_KEY`)
   * or `AWS_BEARER_TOKEN_BEDROCK` from `env`. Optional for `openai:` when a base URL is set
   * (local servers; no `Authorization` header is sent then) and for `bedrock:` (a Bedrock API
   * key; without one, requests are signed with AWS credentials).
   */
  apiKey?: string | undefined;
  /**
   * Root URL of the API: Anthropic without `/v1`, OpenAI-compatible with `/v1`
   * (`http://localhost:11434/v1` for Ollama).
   * @defaultValue `ANTHROPIC_BASE_URL` or `OPENAI_BASE_URL` from `env`, else the provider's own.
   */
  baseURL?: string | undefined;
  /**
   * Where keys and base URLs are looked up.
   * @defaultValue `process.env`
   */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Retries after a transient failure (408, 409, 429, 5xx, 529, connection errors, timeouts).
   * @defaultValue `DEFAULT_PROVIDER_MAX_RETRIES` (4)
   */
  maxRetries?: number;
  /**
   * Time one attempt may take before it is abandoned (and retried).
   * @defaultValue `DEFAULT_PROVIDER_TIMEOUT_MS` (300,000 ms)
   */
  timeoutMs?: number;
  /**
   * First backoff delay; doubles per retry, 0–25 % jitter.
   * @defaultValue `DEFAULT_PROVIDER_INITIAL_RETRY_DELAY_MS` (500 ms)
   */
  initialRetryDelayMs?: number;
  /**
   * Longest delay between retries, also the cap on a server's `retry-after`.
   * @defaultValue `DEFAULT_PROVIDER_MAX_RETRY_DELAY_MS` (30,000 ms)
   */
  maxRetryDelayMs?: number;
  /**
   * Anthropic: prompt-cache breakpoints on the last tool, the system prompt and the last
   * message. Bedrock: `cachePoint` blocks after the tools and the system prompt (for models that
   * support prompt caching; turn it off for others).
   * @defaultValue `true`
   */
  promptCaching?: boolean;
  /**
   * Bedrock only: the AWS region.
   * @defaultValue `AWS_REGION`, else `AWS_DEFAULT_REGION` from `env`.
   */
  region?: string | undefined;
  /**
   * Bedrock only: AWS credentials to sign requests with (SigV4).
   * @defaultValue `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` / `AWS_SESSION_TOKEN` from `env`
   * when set there, else the AWS SDK's default chain (profiles, SSO, instance and task roles).
   */
  credentials?: BedrockCredentials;
  /**
   * OpenAI only: the output-token limit field.
   * @defaultValue `max_completion_tokens` for OpenAI itself, `max_tokens` with another base URL.
   */
  maxTokensField?: 'max_completion_tokens' | 'max_tokens';
  /** `fetch` used by the SDK client (tests, proxies). @defaultValue `globalThis.fetch` */
  fetch?: typeof globalThis.fetch;
  /** Called before each retry (logging, metrics). */
  onRetry?: (event: ProviderRetryEvent) => void;
}

/** A parsed `provider:model` spec. */
export interface ModelSpec {
  provider: ProviderName;
  modelId: string;
}

/**
 * Parses `provider:model`. The model part may itself contain colons (`openai:llama3.1:8b`).
 *
 * @throws CodecallError `PROVIDER_UNKNOWN` for a provider other than {@link KNOWN_PROVIDERS},
 * `INVALID_ARGUMENT` for an empty model.
 */
export function parseModelSpec(spec: string): ModelSpec {
  const text = typeof spec === 'string' ? spec.trim() : '';
  const colon = text.indexOf(':');
  const known = KNOWN_PROVIDERS.map((name) => `"${name}:"`).join(', ');
  if (colon <= 0) {
    throw new CodecallError(
      'PROVIDER_UNKNOWN',
      `Model "${String(spec)}" names no provider. Write it as provider:model, e.g. "anthropic:claude-sonnet-4-5" or "openai:gpt-4.1" (known providers: ${known}).`,
      { details: { spec, knownProviders: [...KNOWN_PROVIDERS] } },
    );
  }
  const provider = text.slice(0, colon).trim().toLowerCase();
  const modelId = text.slice(colon + 1).trim();
  if (!(KNOWN_PROVIDERS as readonly string[]).includes(provider)) {
    throw new CodecallError(
      'PROVIDER_UNKNOWN',
      `Unknown provider "${provider}" in model "${text}". Known providers: ${known}. ` +
        'For Ollama, vLLM, llama.cpp or OpenRouter use "openai:<model>" with a baseURL.',
      { details: { spec, provider, knownProviders: [...KNOWN_PROVIDERS] } },
    );
  }
  if (modelId === '') {
    throw new CodecallError('INVALID_ARGUMENT', `Model "${text}" has no model name after "${provider}:".`, {
      details: { spec, field: 'model' },
    });
  }
  return { provider: provider as ProviderName, modelId };
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

function checkNumber(
  field: string,
  value: number | undefined,
  fallback: number,
  minimum: number,
  integer: boolean,
  maximum = Number.MAX_VALUE,
): number {
  if (value === undefined) return fallback;
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < minimum ||
    value > maximum ||
    (integer && !Number.isInteger(value))
  ) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `${field} must be ${integer ? 'an integer' : 'a number'} ≥ ${minimum}${maximum < Number.MAX_VALUE ? ` and ≤ ${maximum}` : ''}; got ${String(value)}.`,
      { details: { field, value } },
    );
  }
  return value;
}

function isHttpURL(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

function isOpenAIHost(baseURL: string): boolean {
  try {
    return new URL(baseURL).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}

function bedrockRegion(
  options: CreateLanguageModelOptions,
  env: Readonly<Record<string, string | undefined>>,
): string {
  const region =
    nonEmpty(options.region) ?? nonEmpty(env[BEDROCK_ENV.region[0]]) ?? nonEmpty(env[BEDROCK_ENV.region[1]]);
  if (region === undefined) {
    throw new CodecallError(
      'PROVIDER_MISSING_KEY',
      'No AWS region for bedrock: set AWS_REGION in the environment or pass region (e.g. "us-east-1").',
      { details: { provider: 'bedrock', variable: 'AWS_REGION' } },
    );
  }
  if (!/^[a-z]{2}(-[a-z]+)+-\d+$/.test(region)) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `region "${region}" is not an AWS region name; write it like us-east-1.`,
      { details: { field: 'region', value: region } },
    );
  }
  return region;
}

function bedrockCredentials(
  env: Readonly<Record<string, string | undefined>>,
): BedrockCredentials | undefined {
  const accessKeyId = nonEmpty(env[BEDROCK_ENV.accessKeyId]);
  const secretAccessKey = nonEmpty(env[BEDROCK_ENV.secretAccessKey]);
  if (accessKeyId === undefined || secretAccessKey === undefined) return undefined;
  return { accessKeyId, secretAccessKey, sessionToken: nonEmpty(env[BEDROCK_ENV.sessionToken]) };
}

/**
 * Creates a {@link LanguageModel} from a `provider:model` spec.
 *
 * @throws CodecallError `PROVIDER_UNKNOWN` (unknown provider), `PROVIDER_MISSING_KEY` (no key in
 * options or the environment; the message names the variable), `INVALID_ARGUMENT` (bad option).
 *
 * @example
 * ```ts
 * const claude = createLanguageModel('anthropic:claude-sonnet-4-6');
 * const local = createLanguageModel('openai:llama3.1:8b', { baseURL: 'http://localhost:11434/v1' });
 * const gemini = createLanguageModel('gemini:gemini-2.5-flash');
 * const bedrock = createLanguageModel('bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0', {
 *   region: 'us-east-1',
 * });
 * ```
 */
export function createLanguageModel(spec: string, options: CreateLanguageModelOptions = {}): LanguageModel {
  const { provider, modelId } = parseModelSpec(spec);
  const env = options.env ?? process.env;
  const variables = PROVIDER_ENV[provider];
  const apiKey =
    nonEmpty(options.apiKey) ??
    nonEmpty(env[variables.apiKey]) ??
    (provider === 'gemini' ? nonEmpty(env['GOOGLE_API_KEY']) : undefined);
  const baseURL = nonEmpty(options.baseURL) ?? nonEmpty(env[variables.baseURL]);
  const retry: RetryPolicy = {
    maxRetries: checkNumber('maxRetries', options.maxRetries, DEFAULT_PROVIDER_MAX_RETRIES, 0, true),
    initialDelayMs: checkNumber(
      'initialRetryDelayMs',
      options.initialRetryDelayMs,
      DEFAULT_PROVIDER_INITIAL_RETRY_DELAY_MS,
      0,
      false,
    ),
    maxDelayMs: checkNumber(
      'maxRetryDelayMs',
      options.maxRetryDelayMs,
      DEFAULT_PROVIDER_MAX_RETRY_DELAY_MS,
      0,
      false,
      MAX_TIMER_DELAY_MS,
    ),
  };
  // Handed to the SDKs' own timers, which fire a longer delay after 1 ms.
  const timeoutMs = checkNumber(
    'timeoutMs',
    options.timeoutMs,
    DEFAULT_PROVIDER_TIMEOUT_MS,
    1,
    false,
    MAX_TIMER_DELAY_MS,
  );
  if (baseURL !== undefined && !isHttpURL(baseURL)) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `baseURL "${baseURL}" is not an http(s) URL; write it like http://localhost:11434/v1.`,
      { details: { field: 'baseURL', value: baseURL } },
    );
  }
  if (provider === 'bedrock') {
    return new BedrockLanguageModel({
      modelId,
      region: bedrockRegion(options, env),
      apiKey,
      credentials: options.credentials ?? bedrockCredentials(env),
      baseURL,
      timeoutMs,
      retry,
      promptCaching: options.promptCaching ?? true,
      onRetry: options.onRetry,
    });
  }
  if (apiKey === undefined && !(provider === 'openai' && baseURL !== undefined)) {
    throw new CodecallError(
      'PROVIDER_MISSING_KEY',
      `No API key for ${provider}: set ${variables.apiKey} in the environment or pass apiKey.` +
        (provider === 'openai'
          ? ` (A local server needs no key: pass baseURL or set ${variables.baseURL}.)`
          : ''),
      { details: { provider, variable: variables.apiKey } },
    );
  }
  if (provider === 'gemini') {
    return new GeminiLanguageModel({
      modelId,
      apiKey: apiKey!,
      baseURL,
      timeoutMs,
      retry,
      onRetry: options.onRetry,
    });
  }
  if (provider === 'anthropic') {
    return new AnthropicLanguageModel({
      modelId,
      apiKey: apiKey!,
      baseURL,
      timeoutMs,
      retry,
      promptCaching: options.promptCaching ?? true,
      fetch: options.fetch,
      onRetry: options.onRetry,
    });
  }
  return new OpenAILanguageModel({
    modelId,
    apiKey,
    baseURL,
    timeoutMs,
    retry,
    maxTokensField:
      options.maxTokensField ??
      (baseURL === undefined || isOpenAIHost(baseURL) ? 'max_completion_tokens' : 'max_tokens'),
    fetch: options.fetch,
    onRetry: options.onRetry,
  });
}
