/**
 * @module
 * Errors of the vendor endpoints, in each vendor's documented shape: Anthropic's
 * `{"type":"error","error":{"type","message"}}` and OpenAI's `{"error":{"message","type","param","code"}}`.
 */

/** Anthropic's error types (https://docs.anthropic.com/en/api/errors). */
export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'api_error'
  | 'overloaded_error';

const STATUS: Record<AnthropicErrorType, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  not_found_error: 404,
  request_too_large: 413,
  api_error: 500,
  overloaded_error: 529,
};

/** A refusal with its vendor error type; the message names the field and the fix. */
export class VendorError extends Error {
  readonly type: AnthropicErrorType;
  /** The request field at fault (`messages.2.content`), when one is. */
  readonly param: string | undefined;

  constructor(type: AnthropicErrorType, message: string, param?: string) {
    super(message);
    this.name = 'VendorError';
    this.type = type;
    this.param = param;
  }

  get status(): number {
    return STATUS[this.type];
  }

  /** OpenAI's body (https://platform.openai.com/docs/guides/error-codes). */
  openaiBody(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    const type =
      this.type === 'api_error' || this.type === 'overloaded_error'
        ? 'server_error'
        : 'invalid_request_error';
    const code =
      this.type === 'authentication_error'
        ? 'invalid_api_key'
        : this.type === 'not_found_error' && this.param === 'model'
          ? 'model_not_found'
          : null;
    return { error: { message: this.message, type, param: this.param ?? null, code } };
  }

  /** Anthropic's body. */
  anthropicBody(): { type: 'error'; error: { type: AnthropicErrorType; message: string } } {
    return { type: 'error', error: { type: this.type, message: this.message } };
  }
}

/** A 400 `invalid_request_error` naming `param`. */
export function invalid(param: string, message: string): VendorError {
  return new VendorError('invalid_request_error', `${param}: ${message}`, param);
}
