/**
 * @module
 * An AI SDK generate result (specification v4) as a codecall {@link GenerateResponse}: text and
 * tool calls in order (arguments parsed; kept as the raw string when they are not JSON, so the
 * loop can tell the model), the finish reason, and token usage.
 */
import type { LanguageModelV4FinishReason, LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import type { ContentPart, GenerateResponse, StopReason } from '../../providers/language-model.js';

/** codecall's stop reason for an AI SDK finish reason. */
export function mapAiSdkFinishReason(reason: LanguageModelV4FinishReason | string | undefined): StopReason {
  const unified = typeof reason === 'string' ? reason : reason?.unified;
  switch (unified) {
    case 'stop':
      return 'end_turn';
    case 'tool-calls':
      return 'tool_use';
    case 'length':
      return 'max_tokens';
    case 'content-filter':
      return 'refusal';
    default:
      return 'other';
  }
}

function parseInput(input: string): unknown {
  if (input.trim() === '') return {};
  try {
    return JSON.parse(input) as unknown;
  } catch {
    return input;
  }
}

/** The codecall response of an AI SDK result. */
export function mapAiSdkResponse(result: LanguageModelV4GenerateResult): GenerateResponse {
  const content: ContentPart[] = [];
  for (const part of result.content) {
    if (part.type === 'text' && part.text !== '') content.push({ type: 'text', text: part.text });
    else if (part.type === 'tool-call' && part.providerExecuted !== true) {
      content.push({
        type: 'tool_call',
        id: part.toolCallId,
        name: part.toolName,
        input: parseInput(part.input),
      });
    }
  }
  const usage = result.usage;
  return {
    content,
    stopReason: mapAiSdkFinishReason(result.finishReason),
    usage: {
      inputTokens: usage.inputTokens.total ?? 0,
      outputTokens: usage.outputTokens.total ?? 0,
      cacheReadTokens: usage.inputTokens.cacheRead ?? 0,
      cacheWriteTokens: usage.inputTokens.cacheWrite ?? 0,
    },
    raw: result.response?.body,
  };
}
