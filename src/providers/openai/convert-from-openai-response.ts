/**
 * @module
 * Maps a Chat Completions response to a provider-neutral {@link GenerateResponse}. Arguments
 * that are not valid JSON are passed on as the raw string (the model's fault, reported to it by
 * the caller); usage that a local server leaves out counts as zero.
 */
import type { ChatCompletion } from 'openai/resources/chat/completions/completions.js';
import { CodecallError } from '../../errors.js';
import type { ContentPart, GenerateResponse } from '../language-model.js';
import { mapOpenAIFinishReason } from './map-openai-finish-reason.js';

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

function parseArguments(text: unknown): unknown {
  if (typeof text !== 'string') return text ?? {};
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * Converts one Chat Completions response.
 *
 * @throws CodecallError `PROVIDER_REQUEST_FAILED` when the response has no choice (some gateways
 * answer 200 with an error body).
 */
export function convertFromOpenAIResponse(completion: ChatCompletion): GenerateResponse {
  const choice = Array.isArray(completion.choices) ? completion.choices[0] : undefined;
  if (choice === undefined || typeof choice.message !== 'object' || choice.message === null) {
    const body = completion as unknown as { error?: { message?: unknown } };
    const reason = typeof body.error?.message === 'string' ? `: ${body.error.message}` : '';
    throw new CodecallError(
      'PROVIDER_REQUEST_FAILED',
      `OpenAI-compatible response had no choices${reason}.`,
      {
        details: { provider: 'OpenAI', retryable: false },
      },
    );
  }
  const content: ContentPart[] = [];
  const message = choice.message;
  if (typeof message.content === 'string' && message.content !== '')
    content.push({ type: 'text', text: message.content });
  const toolCalls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  toolCalls.forEach((call, index) => {
    if (call.type !== 'function' || typeof call.function?.name !== 'string') return;
    // Some local servers leave the id out; the tool result must still answer something.
    const id = typeof call.id === 'string' && call.id !== '' ? call.id : `call_${index}`;
    content.push({
      type: 'tool_call',
      id,
      name: call.function.name,
      input: parseArguments(call.function.arguments),
    });
  });
  const usage = completion.usage;
  return {
    content,
    stopReason: mapOpenAIFinishReason(
      choice.finish_reason,
      content.some((part) => part.type === 'tool_call'),
    ),
    usage: {
      inputTokens: count(usage?.prompt_tokens),
      outputTokens: count(usage?.completion_tokens),
      cacheReadTokens: count(usage?.prompt_tokens_details?.cached_tokens),
      cacheWriteTokens: 0,
    },
    raw: completion,
  };
}
