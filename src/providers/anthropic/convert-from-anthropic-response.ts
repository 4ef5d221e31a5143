/**
 * @module
 * Maps an Anthropic Messages API response to a provider-neutral {@link GenerateResponse}:
 * `text` and `tool_use` blocks in order (other block types are dropped), stop reason, and usage
 * with cache reads and writes folded into `inputTokens`.
 */
import type { Message as AnthropicMessage } from '@anthropic-ai/sdk/resources/messages/messages.js';
import type { ContentPart, GenerateResponse } from '../language-model.js';
import { mapAnthropicStopReason } from './map-anthropic-stop-reason.js';

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

/** Converts one Anthropic response. Tolerates missing fields (proxies trim them). */
export function convertFromAnthropicResponse(message: AnthropicMessage): GenerateResponse {
  const blocks: unknown[] = Array.isArray(message.content) ? message.content : [];
  const content = blocks.flatMap((block): ContentPart[] => {
    const b = block as { type?: unknown; text?: unknown; id?: unknown; name?: unknown; input?: unknown };
    if (b.type === 'text' && typeof b.text === 'string') return [{ type: 'text', text: b.text }];
    if (b.type === 'tool_use' && typeof b.id === 'string' && typeof b.name === 'string') {
      return [{ type: 'tool_call', id: b.id, name: b.name, input: b.input ?? {} }];
    }
    return [];
  });
  const usage = (message.usage ?? {}) as Partial<AnthropicMessage['usage']>;
  const cacheReadTokens = count(usage.cache_read_input_tokens);
  const cacheWriteTokens = count(usage.cache_creation_input_tokens);
  return {
    content,
    stopReason: mapAnthropicStopReason(message.stop_reason),
    usage: {
      inputTokens: count(usage.input_tokens) + cacheReadTokens + cacheWriteTokens,
      outputTokens: count(usage.output_tokens),
      cacheReadTokens,
      cacheWriteTokens,
    },
    raw: message,
  };
}
