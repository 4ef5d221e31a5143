/**
 * @module
 * The provider-neutral model interface: {@link LanguageModel.generate} takes a conversation plus
 * tool definitions and returns content, tool calls, a stop reason and token usage; the optional
 * {@link LanguageModel.stream} does the same while reporting the model's text as it is written.
 * Providers (Anthropic, OpenAI-compatible, Gemini, Bedrock) are mappers to and from these types.
 */
import type { JsonSchema } from '../types.js';

/** A tool the model may call directly (the agent's meta-tools: `search_tools`, `execute_code`…). */
export interface ToolDefinition {
  /** Model-facing name, snake_case (`execute_code`). */
  name: string;
  /** What the tool does, written for the model. */
  description: string;
  /** JSON Schema of the tool's input (an object schema). */
  inputSchema: JsonSchema;
}

/** Text the model wrote. */
export interface TextPart {
  type: 'text';
  text: string;
}

/** A tool call the model asked for. */
export interface ToolCallPart {
  type: 'tool_call';
  /** Provider-assigned id; a tool result answers it with the same `toolCallId`. */
  id: string;
  name: string;
  /**
   * The parsed arguments. When a model sends arguments that are not valid JSON (small local
   * models do), this is the raw argument string, so the caller can tell the model what was wrong.
   */
  input: unknown;
  /**
   * Opaque data the provider needs back with this call in later requests (Gemini's
   * `thoughtSignature`). Kept as it came; other providers ignore it.
   */
  providerData?: Record<string, unknown>;
}

/** One piece of an assistant message. */
export type ContentPart = TextPart | ToolCallPart;

/** What the user (or the agent on the user's behalf) said. */
export interface UserMessage {
  role: 'user';
  content: string;
}

/** What the model said, as returned by {@link LanguageModel.generate}. */
export interface AssistantMessage {
  role: 'assistant';
  content: ContentPart[];
}

/** The answer to one tool call. */
export interface ToolResult {
  /** The `id` of the {@link ToolCallPart} this answers. */
  toolCallId: string;
  /** The result as text, as the model will read it. */
  content: string;
  /**
   * True when the call failed. Sent as `is_error` to Anthropic; OpenAI has no such flag, so the
   * content is prefixed with `Error: ` instead.
   */
  isError?: boolean;
}

/** The answers to the tool calls of the previous assistant message. */
export interface ToolMessage {
  role: 'tool';
  results: ToolResult[];
}

/** One turn of a conversation. */
export type Message = UserMessage | AssistantMessage | ToolMessage;

/** One model request. */
export interface GenerateRequest {
  /** System prompt. Anthropic caches it (with the tool definitions) between requests. */
  system?: string;
  messages: Message[];
  /** Tools the model may call; may be empty. */
  tools: ToolDefinition[];
  /**
   * Output tokens the response may use.
   * @defaultValue `DEFAULT_PROVIDER_MAX_OUTPUT_TOKENS` (8,192)
   */
  maxOutputTokens?: number;
  /** Sampling temperature; the provider's default when absent. */
  temperature?: number;
}

/**
 * Why the model stopped: it finished (`end_turn`), wants tool results (`tool_use`), ran out of
 * output tokens or context (`max_tokens`), hit a stop sequence, refused or was filtered
 * (`refusal`), or anything else the provider reported (`other`).
 */
export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'refusal' | 'other';

/** Tokens one request used, as the provider reported them. */
export interface TokenUsage {
  /**
   * Every input token the model processed, including those read from or written to the prompt
   * cache (Anthropic's `input_tokens` + `cache_read_input_tokens` + `cache_creation_input_tokens`;
   * OpenAI's `prompt_tokens`).
   */
  inputTokens: number;
  outputTokens: number;
  /** Input tokens served from the prompt cache (part of `inputTokens`). */
  cacheReadTokens: number;
  /** Input tokens written to the prompt cache (part of `inputTokens`; Anthropic only). */
  cacheWriteTokens: number;
}

/** One model response. */
export interface GenerateResponse {
  /** Text and tool calls, in the order the model produced them. */
  content: ContentPart[];
  stopReason: StopReason;
  usage: TokenUsage;
  /** The provider's response body, for debugging. */
  raw?: unknown;
}

/** Per-call options of {@link LanguageModel.generate}. */
export interface GenerateOptions {
  /** Cancels the in-flight request and any retry backoff; the call rejects with `ABORTED`. */
  signal?: AbortSignal;
}

/** Per-call options of {@link LanguageModel.stream}. */
export interface StreamOptions extends GenerateOptions {
  /**
   * Called with each piece of text as the model writes it, in order; the pieces joined are the
   * text parts of the response. Not called for tool-call arguments.
   */
  onTextDelta?: (text: string) => void;
}

/**
 * A language model: one method that turns a request into a response.
 *
 * Implementations retry transient provider failures themselves and throw a `CodecallError`
 * (`PROVIDER_AUTH`, `PROVIDER_REQUEST_FAILED`, `ABORTED`) when they give up.
 *
 * @example
 * ```ts
 * const model = createLanguageModel('anthropic:claude-sonnet-4-6');
 * const response = await model.generate({ messages: [{ role: 'user', content: 'Hi' }], tools: [] });
 * ```
 */
export interface LanguageModel {
  /** `anthropic`, `openai`, `scripted`… */
  readonly provider: string;
  /** The model id as the provider knows it (`claude-sonnet-4-5`). */
  readonly modelId: string;
  generate(request: GenerateRequest, options?: GenerateOptions): Promise<GenerateResponse>;
  /**
   * Optional: the same request streamed. Resolves to the same response `generate` would return,
   * after calling `options.onTextDelta` with the text as it arrives. Failures before the first
   * byte of the answer are retried like `generate`'s; a stream that breaks later rejects with
   * `PROVIDER_REQUEST_FAILED` (never retried: text was already reported). Models without it are
   * asked with `generate` and their text reported whole.
   */
  stream?(request: GenerateRequest, options?: StreamOptions): Promise<GenerateResponse>;
}
