/**
 * @module
 * Maps a provider-neutral conversation to Chat Completions `messages`: the system prompt becomes
 * a `system` message, tool calls `tool_calls` with JSON-string arguments, and each tool result a
 * `tool` message (prefixed `Error: ` when it failed, since the API has no error flag).
 */
import type {
  ChatCompletionAssistantMessageParam,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions/completions.js';
import type { Message } from '../language-model.js';

function convertAssistant(
  message: Extract<Message, { role: 'assistant' }>,
): ChatCompletionAssistantMessageParam {
  const text = message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
  const toolCalls = message.content.flatMap((part): ChatCompletionMessageFunctionToolCall[] =>
    part.type === 'tool_call'
      ? [
          {
            id: part.id,
            type: 'function',
            function: {
              name: part.name,
              arguments: typeof part.input === 'string' ? part.input : JSON.stringify(part.input ?? {}),
            },
          },
        ]
      : [],
  );
  return {
    role: 'assistant',
    content: text === '' && toolCalls.length > 0 ? null : text,
    ...(toolCalls.length === 0 ? {} : { tool_calls: toolCalls }),
  };
}

/** Converts a system prompt and conversation to Chat Completions `messages`. */
export function convertToOpenAIMessages(
  system: string | undefined,
  messages: readonly Message[],
): ChatCompletionMessageParam[] {
  const result: ChatCompletionMessageParam[] = [];
  if (system !== undefined && system !== '') result.push({ role: 'system', content: system });
  for (const message of messages) {
    switch (message.role) {
      case 'user':
        result.push({ role: 'user', content: message.content });
        break;
      case 'assistant':
        result.push(convertAssistant(message));
        break;
      case 'tool':
        for (const toolResult of message.results) {
          result.push({
            role: 'tool',
            tool_call_id: toolResult.toolCallId,
            content: toolResult.isError === true ? `Error: ${toolResult.content}` : toolResult.content,
          });
        }
        break;
    }
  }
  return result;
}
