/**
 * @module
 * A codecall {@link GenerateRequest} as AI SDK language-model call options (specification v4):
 * the system prompt, user text, assistant text and tool calls, tool results (errors as
 * `error-text`), and function tools.
 */
import type {
  LanguageModelV4CallOptions,
  LanguageModelV4FunctionTool,
  LanguageModelV4Message,
} from '@ai-sdk/provider';
import type { GenerateRequest, Message } from '../../providers/language-model.js';

/** The AI SDK prompt of a codecall conversation. */
export function convertToAiSdkPrompt(
  system: string | undefined,
  messages: readonly Message[],
): LanguageModelV4Message[] {
  const prompt: LanguageModelV4Message[] = [];
  if (system !== undefined && system !== '') prompt.push({ role: 'system', content: system });
  /** Tool names by call id: an AI SDK tool result names its tool. */
  const names = new Map<string, string>();
  for (const message of messages) {
    if (message.role === 'user') {
      prompt.push({ role: 'user', content: [{ type: 'text', text: message.content }] });
    } else if (message.role === 'assistant') {
      prompt.push({
        role: 'assistant',
        content: message.content.map((part) => {
          if (part.type === 'text') return { type: 'text', text: part.text };
          names.set(part.id, part.name);
          return { type: 'tool-call', toolCallId: part.id, toolName: part.name, input: part.input ?? {} };
        }),
      });
    } else {
      prompt.push({
        role: 'tool',
        content: message.results.map((result) => ({
          type: 'tool-result',
          toolCallId: result.toolCallId,
          toolName: names.get(result.toolCallId) ?? 'unknown',
          output: result.isError
            ? { type: 'error-text', value: result.content }
            : { type: 'text', value: result.content },
        })),
      });
    }
  }
  return prompt;
}

/** The AI SDK call options of a codecall request. */
export function convertToAiSdkCallOptions(
  request: GenerateRequest,
  signal: AbortSignal | undefined,
): LanguageModelV4CallOptions {
  const tools: LanguageModelV4FunctionTool[] = request.tools.map((tool) => ({
    type: 'function',
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema as LanguageModelV4FunctionTool['inputSchema'],
  }));
  return {
    prompt: convertToAiSdkPrompt(request.system, request.messages),
    ...(tools.length > 0 ? { tools, toolChoice: { type: 'auto' } } : {}),
    ...(request.maxOutputTokens !== undefined ? { maxOutputTokens: request.maxOutputTokens } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(signal !== undefined ? { abortSignal: signal } : {}),
  };
}
