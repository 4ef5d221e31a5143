/**
 * @module
 * Folds the chunks of a streamed Chat Completions response into the completion a non-streamed
 * request returns, reporting text deltas as they come. Tool calls arrive in pieces keyed by
 * `index` (the id and name in the first, the arguments spread over the rest); usage arrives in a
 * last chunk with no choices when the request asked for it (`stream_options.include_usage`). A
 * stream that ends before any chunk carried a `finish_reason` is an error, not a shorter answer.
 */
import type { ChatCompletion } from 'openai/resources/chat/completions/completions.js';
import { CodecallError } from '../../errors.js';

interface ToolCallPieces {
  id?: string;
  name?: string;
  arguments: string;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

/** Accumulates one streamed response; see the module comment. */
export class OpenAIStreamAccumulator {
  readonly #onTextDelta: ((text: string) => void) | undefined;
  readonly #toolCalls: ToolCallPieces[] = [];
  #text = '';
  #finishReason: unknown = null;
  #usage: unknown;
  #sawChoice = false;
  #head: Record<string, unknown> = {};

  constructor(onTextDelta: ((text: string) => void) | undefined) {
    this.#onTextDelta = onTextDelta;
  }

  /** Takes one `chat.completion.chunk`. */
  add(chunk: unknown): void {
    const c = record(chunk);
    if (Object.keys(this.#head).length === 0) {
      this.#head = { id: c['id'], created: c['created'], model: c['model'] };
    }
    if (c['usage'] !== undefined && c['usage'] !== null) this.#usage = c['usage'];
    // A gateway may send `{error}` as a chunk; the completion then has no choice and fails below.
    const choice = Array.isArray(c['choices']) ? record(c['choices'][0]) : undefined;
    if (choice === undefined || Object.keys(choice).length === 0) return;
    this.#sawChoice = true;
    const delta = record(choice['delta']);
    if (typeof delta['content'] === 'string' && delta['content'] !== '') {
      this.#text += delta['content'];
      this.#onTextDelta?.(delta['content']);
    }
    if (Array.isArray(delta['tool_calls'])) {
      delta['tool_calls'].forEach((piece: unknown, position: number) => {
        const p = record(piece);
        // Some local servers leave `index` out of single calls.
        const index = typeof p['index'] === 'number' ? p['index'] : position;
        const call = (this.#toolCalls[index] ??= { arguments: '' });
        const fn = record(p['function']);
        if (typeof p['id'] === 'string' && p['id'] !== '') call.id = p['id'];
        if (typeof fn['name'] === 'string' && fn['name'] !== '') call.name = fn['name'];
        if (typeof fn['arguments'] === 'string') call.arguments += fn['arguments'];
      });
    }
    if (typeof choice['finish_reason'] === 'string') this.#finishReason = choice['finish_reason'];
  }

  /**
   * The whole completion, shaped like a non-streamed response.
   *
   * @throws CodecallError `PROVIDER_REQUEST_FAILED` when no chunk carried a `finish_reason` (the
   * connection closed early: the answer is cut).
   */
  finish(providerName: string): ChatCompletion {
    if (this.#sawChoice && this.#finishReason === null) {
      throw new CodecallError(
        'PROVIDER_REQUEST_FAILED',
        `${providerName} stream ended before a finish_reason: the answer is incomplete.`,
        { details: { provider: providerName, retryable: false } },
      );
    }
    const toolCalls = this.#toolCalls.flatMap((call) =>
      call === undefined || call.name === undefined
        ? []
        : [
            {
              ...(call.id === undefined ? {} : { id: call.id }),
              type: 'function',
              function: { name: call.name, arguments: call.arguments },
            },
          ],
    );
    return {
      ...this.#head,
      object: 'chat.completion',
      choices: this.#sawChoice
        ? [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: this.#text === '' ? null : this.#text,
                ...(toolCalls.length === 0 ? {} : { tool_calls: toolCalls }),
              },
              finish_reason: this.#finishReason,
            },
          ]
        : [],
      ...(this.#usage === undefined ? {} : { usage: this.#usage }),
    } as unknown as ChatCompletion;
  }
}
