/**
 * @module
 * Folds the server-sent events of a streamed Messages API response (`message_start`,
 * `content_block_start` / `_delta` / `_stop`, `message_delta`, `message_stop`) into the message
 * a non-streamed request returns, reporting text deltas as they come. Tool-call input arrives as
 * JSON fragments and is parsed when its block ends (unparseable input stays the raw string, as
 * the agent reports it to the model). Unknown events and block types are ignored; a stream that
 * ends before `message_stop` is an error, not a shorter answer.
 */
import type { Message as AnthropicMessage } from '@anthropic-ai/sdk/resources/messages/messages.js';
import { CodecallError } from '../../errors.js';

interface Block {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  /** Concatenated `input_json_delta` fragments of a `tool_use` block. */
  json?: string;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

function parseInput(json: string | undefined, fallback: unknown): unknown {
  if (json === undefined || json.trim() === '') return fallback ?? {};
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return json;
  }
}

/** Accumulates one streamed response; see the module comment. */
export class AnthropicStreamAccumulator {
  readonly #blocks: Block[] = [];
  readonly #onTextDelta: ((text: string) => void) | undefined;
  #message: Record<string, unknown> = {};
  #usage: Record<string, unknown> = {};
  #stopReason: unknown = null;
  #started = false;
  #stopped = false;

  constructor(onTextDelta: ((text: string) => void) | undefined) {
    this.#onTextDelta = onTextDelta;
  }

  /** Takes one event (`{type, …}` as the SDK parses it). */
  add(event: unknown): void {
    const e = record(event);
    switch (e['type']) {
      case 'message_start': {
        this.#started = true;
        this.#message = record(e['message']);
        this.#usage = { ...record(this.#message['usage']) };
        break;
      }
      case 'content_block_start': {
        const index = e['index'];
        const block = record(e['content_block']);
        if (typeof index !== 'number' || typeof block['type'] !== 'string') break;
        this.#blocks[index] = { ...block, type: block['type'] };
        const text = block['text'];
        if (block['type'] === 'text' && typeof text === 'string' && text !== '') this.#onTextDelta?.(text);
        break;
      }
      case 'content_block_delta': {
        const index = e['index'];
        const block = typeof index === 'number' ? this.#blocks[index] : undefined;
        const delta = record(e['delta']);
        if (block === undefined) break;
        if (delta['type'] === 'text_delta' && typeof delta['text'] === 'string') {
          block.text = (block.text ?? '') + delta['text'];
          if (delta['text'] !== '') this.#onTextDelta?.(delta['text']);
        } else if (delta['type'] === 'input_json_delta' && typeof delta['partial_json'] === 'string') {
          block.json = (block.json ?? '') + delta['partial_json'];
        }
        break;
      }
      case 'message_delta': {
        const delta = record(e['delta']);
        if ('stop_reason' in delta) this.#stopReason = delta['stop_reason'];
        // Counts here are cumulative: they replace the ones from message_start.
        for (const [key, value] of Object.entries(record(e['usage']))) {
          if (typeof value === 'number') this.#usage[key] = value;
        }
        break;
      }
      case 'message_stop':
        this.#stopped = true;
        break;
      case 'error': {
        const error = record(e['error']);
        const type = typeof error['type'] === 'string' ? error['type'] : 'error';
        const message = typeof error['message'] === 'string' ? error['message'] : 'stream error';
        throw new CodecallError('PROVIDER_REQUEST_FAILED', `Anthropic stream error: ${type}: ${message}`, {
          details: { provider: 'Anthropic', retryable: false, errorType: type },
        });
      }
      default:
        break;
    }
  }

  /**
   * The whole message, shaped like a non-streamed response.
   *
   * @throws CodecallError `PROVIDER_REQUEST_FAILED` when the stream ended before `message_stop`
   * (the connection closed early: the answer is cut).
   */
  finish(): AnthropicMessage {
    if (!this.#started || !this.#stopped) {
      throw new CodecallError(
        'PROVIDER_REQUEST_FAILED',
        `Anthropic stream ended before ${this.#started ? 'message_stop' : 'message_start'}: the answer is incomplete.`,
        { details: { provider: 'Anthropic', retryable: false } },
      );
    }
    const content = this.#blocks.flatMap((block) => {
      if (block === undefined) return [];
      const { json, ...rest } = block;
      return block.type === 'tool_use' ? [{ ...rest, input: parseInput(json, block.input) }] : [rest];
    });
    return {
      ...this.#message,
      content,
      stop_reason: this.#stopReason,
      usage: this.#usage,
    } as unknown as AnthropicMessage;
  }
}
