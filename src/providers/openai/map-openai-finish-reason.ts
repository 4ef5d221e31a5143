/**
 * @module
 * Maps Chat Completions `finish_reason` to the provider-neutral {@link StopReason}.
 */
import type { StopReason } from '../language-model.js';

/**
 * `stop` → `end_turn`, `tool_calls`/`function_call` → `tool_use`, `length` → `max_tokens`,
 * `content_filter` → `refusal`, anything else → `other`. When the message carries tool calls the
 * answer is `tool_use` whatever the reason says (some local servers report `stop`).
 */
export function mapOpenAIFinishReason(reason: string | null | undefined, hasToolCalls: boolean): StopReason {
  if (hasToolCalls) return 'tool_use';
  switch (reason) {
    case 'stop':
      return 'end_turn';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'length':
      return 'max_tokens';
    case 'content_filter':
      return 'refusal';
    default:
      return 'other';
  }
}
