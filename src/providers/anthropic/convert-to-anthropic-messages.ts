/**
 * @module
 * Maps provider-neutral messages to Anthropic Messages API `messages`: tool calls become
 * `tool_use` blocks, tool results `tool_result` blocks (with `is_error`) in a user turn.
 * Consecutive turns of one role are merged, empty text is dropped (the API rejects both), and
 * the last block gets a prompt-cache breakpoint so a growing conversation hits the cache.
 */
import type {
  ContentBlockParam,
  MessageParam,
  TextBlockParam,
  ToolResultBlockParam,
  ToolUseBlockParam,
} from '@anthropic-ai/sdk/resources/messages/messages.js';
import type { Message } from '../language-model.js';

/** Options of {@link convertToAnthropicMessages}. */
export interface ConvertToAnthropicMessagesOptions {
  /** Put `cache_control` on the last block of the last message. */
  cacheLastMessage: boolean;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function convertOne(message: Message): { role: 'user' | 'assistant'; blocks: ContentBlockParam[] } {
  switch (message.role) {
    case 'user':
      return {
        role: 'user',
        blocks: message.content === '' ? [] : [{ type: 'text', text: message.content }],
      };
    case 'assistant':
      return {
        role: 'assistant',
        blocks: message.content.flatMap((part): ContentBlockParam[] => {
          if (part.type === 'text') return part.text === '' ? [] : [{ type: 'text', text: part.text }];
          // The API requires an object; a model's unparseable arguments are sent back as one.
          const input = isObject(part.input) ? part.input : { arguments: part.input };
          const block: ToolUseBlockParam = { type: 'tool_use', id: part.id, name: part.name, input };
          return [block];
        }),
      };
    case 'tool':
      return {
        role: 'user',
        blocks: message.results.map((result): ToolResultBlockParam => ({
          type: 'tool_result',
          tool_use_id: result.toolCallId,
          content: result.content,
          ...(result.isError === true ? { is_error: true } : {}),
        })),
      };
  }
}

/** Converts a conversation to Anthropic `messages`. */
export function convertToAnthropicMessages(
  messages: readonly Message[],
  options: ConvertToAnthropicMessagesOptions,
): MessageParam[] {
  const merged: { role: 'user' | 'assistant'; blocks: ContentBlockParam[] }[] = [];
  for (const message of messages) {
    const converted = convertOne(message);
    if (converted.blocks.length === 0) continue;
    const previous = merged.at(-1);
    if (previous !== undefined && previous.role === converted.role) previous.blocks.push(...converted.blocks);
    else merged.push(converted);
  }
  const result: MessageParam[] = merged.map(({ role, blocks }) => ({ role, content: blocks }));
  if (options.cacheLastMessage) {
    const last = result.at(-1);
    const blocks = last?.content;
    const block = Array.isArray(blocks) ? blocks.at(-1) : undefined;
    if (
      block !== undefined &&
      (block.type === 'text' || block.type === 'tool_result' || block.type === 'tool_use')
    ) {
      (block as TextBlockParam).cache_control = { type: 'ephemeral' };
    }
  }
  return result;
}
