/**
 * @module
 * Maps Anthropic's `stop_reason` to the provider-neutral {@link StopReason}.
 */
import type { StopReason } from '../language-model.js';

/** `pause_turn` and unknown reasons map to `other`; running out of context counts as `max_tokens`. */
export function mapAnthropicStopReason(reason: string | null | undefined): StopReason {
  switch (reason) {
    case 'end_turn':
    case 'tool_use':
    case 'max_tokens':
    case 'stop_sequence':
    case 'refusal':
      return reason;
    case 'model_context_window_exceeded':
      return 'max_tokens';
    default:
      return 'other';
  }
}
