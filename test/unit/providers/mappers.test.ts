/**
 * @module
 * The pure mappers: edge cases the wire tests do not reach.
 */
import { describe, expect, it } from 'vitest';
import { convertFromAnthropicResponse } from '../../../src/providers/anthropic/convert-from-anthropic-response.js';
import { convertToAnthropicMessages } from '../../../src/providers/anthropic/convert-to-anthropic-messages.js';
import { mapAnthropicStopReason } from '../../../src/providers/anthropic/map-anthropic-stop-reason.js';
import { convertFromOpenAIResponse } from '../../../src/providers/openai/convert-from-openai-response.js';
import { mapOpenAIFinishReason } from '../../../src/providers/openai/map-openai-finish-reason.js';

describe('convertToAnthropicMessages', () => {
  it('merges consecutive turns of one role and drops empty text', () => {
    const messages = convertToAnthropicMessages(
      [
        { role: 'user', content: 'first' },
        { role: 'user', content: '' },
        { role: 'assistant', content: [{ type: 'text', text: '' }] },
        { role: 'user', content: 'second' },
        { role: 'assistant', content: [{ type: 'tool_call', id: 't1', name: 'x', input: 'not an object' }] },
        { role: 'tool', results: [{ toolCallId: 't1', content: 'ok' }] },
        { role: 'user', content: 'reminder' },
      ],
      { cacheLastMessage: false },
    );
    expect(messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'first' },
          { type: 'text', text: 'second' },
        ],
      },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 't1', name: 'x', input: { arguments: 'not an object' } }],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: 'ok' },
          { type: 'text', text: 'reminder' },
        ],
      },
    ]);
  });
});

describe('stop reasons', () => {
  it('maps Anthropic stop_reason', () => {
    expect(mapAnthropicStopReason('end_turn')).toBe('end_turn');
    expect(mapAnthropicStopReason('refusal')).toBe('refusal');
    expect(mapAnthropicStopReason('model_context_window_exceeded')).toBe('max_tokens');
    expect(mapAnthropicStopReason('pause_turn')).toBe('other');
    expect(mapAnthropicStopReason(null)).toBe('other');
  });

  it('maps OpenAI finish_reason, trusting tool calls over the reason', () => {
    expect(mapOpenAIFinishReason('stop', false)).toBe('end_turn');
    expect(mapOpenAIFinishReason('length', false)).toBe('max_tokens');
    expect(mapOpenAIFinishReason('content_filter', false)).toBe('refusal');
    expect(mapOpenAIFinishReason('stop', true)).toBe('tool_use');
    expect(mapOpenAIFinishReason(null, false)).toBe('other');
  });
});

describe('response conversion', () => {
  it('keeps only text and tool_use blocks from Anthropic and tolerates missing usage', () => {
    const response = convertFromAnthropicResponse({
      content: [
        { type: 'thinking', thinking: '…', signature: 's' },
        { type: 'text', text: 'hi', citations: null },
      ],
      stop_reason: 'end_turn',
    } as never);
    expect(response.content).toEqual([{ type: 'text', text: 'hi' }]);
    expect(response.usage).toEqual({
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
  });

  it('gives OpenAI tool calls without an id a stable one and reads empty arguments as {}', () => {
    const response = convertFromOpenAIResponse({
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: '',
            tool_calls: [{ id: '', type: 'function', function: { name: 'search_tools', arguments: '' } }],
          },
        },
      ],
    } as never);
    expect(response.content).toEqual([{ type: 'tool_call', id: 'call_0', name: 'search_tools', input: {} }]);
  });
});
