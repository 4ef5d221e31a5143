/**
 * @module
 * Picks a provider from a `provider:model` spec (`anthropic:claude-sonnet-4-5`,
 * `openai:gpt-4.1`, `openai:llama3.1:8b` with a local `baseURL`), resolves its key from the
 * options or the usual environment variable, and resolves retry and timeout options once.
 */
import {
  DEFAULT_PROVIDER_INITIAL_RETRY_DELAY_MS,
  DEFAULT_PROVIDER_MAX_RETRIES,
  DEFAULT_PROVIDER_MAX_RETRY_DELAY_MS,
  DEFAULT_PROVIDER_TIMEOUT_MS,
} from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import { AnthropicLanguageModel } from './anthropic/anthropic-model.js';
import type { LanguageModel } from './language-model.js';
import { OpenAILanguageModel } from './openai/openai-model.js';
import type { ProviderRetryEvent, RetryPolicy } from './retry-provider-call.js';

/** Providers {@link createLanguageModel} knows. */
export const KNOWN_PROVIDERS = ['anthropic', 'openai'] as const;

/** A provider {@link createLanguageModel} knows. */
export type ProviderName = (typeof KNOWN_PROVIDERS)[number];

/** Environment variables each provider reads. */
export const PROVIDER_ENV: Readonly<Record<ProviderName, { apiKey: string; baseURL: string }>> = {
  anthropic: { apiKey: 'ANTHROPIC_API_KEY', baseURL: 'ANTHROPIC_BASE_URL' },
  openai: { apiKey: 'OPENAI_API_KEY', baseURL: 'OPENAI_BASE_URL' },
};

/** Options of {@link createLanguageModel}. */
export interface CreateLanguageModelOptions {
  /**
   * API key.
   * @defaultValue `ANTHROPIC_API_KEY` or `OPENAI_API_KEY` from `env`. Optional for `openai:`
   * when a base URL is set (local servers); no `Authorization` header is sent then.
   */
  apiKey?: string;
  /**
   * Root URL of the API: Anthropic without `/v1`, OpenAI-compatible with `/v1`
   * (`http://localhost:11434/v1` for Ollama).
   * @defaultValue `ANTHROPIC_BASE_URL` or `OPENAI_BASE_URL` from `env`, else the provider's own.
   */
  baseURL?: string;
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
   * Anthropic only: prompt-cache breakpoints on the last tool, the system prompt and the last
   * message.
   * @defaultValue `true`
   */
  promptCaching?: boolean;
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
): number {
  if (value === undefined) return fallback;
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < minimum ||
    (integer && !Number.isInteger(value))
  ) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `${field} must be ${integer ? 'an integer' : 'a number'} ≥ ${minimum}; got ${String(value)}.`,
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
 * ```
 */
export function createLanguageModel(spec: string, options: CreateLanguageModelOptions = {}): LanguageModel {
  const { provider, modelId } = parseModelSpec(spec);
  const env = options.env ?? process.env;
  const variables = PROVIDER_ENV[provider];
  const apiKey = nonEmpty(options.apiKey) ?? nonEmpty(env[variables.apiKey]);
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
    ),
  };
  const timeoutMs = checkNumber('timeoutMs', options.timeoutMs, DEFAULT_PROVIDER_TIMEOUT_MS, 1, false);
  if (baseURL !== undefined && !isHttpURL(baseURL)) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `baseURL "${baseURL}" is not an http(s) URL; write it like http://localhost:11434/v1.`,
      { details: { field: 'baseURL', value: baseURL } },
    );
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
