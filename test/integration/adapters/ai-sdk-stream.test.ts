/**
 * @module
 * `fromAiSdkModel(...).stream` reads the provider's `doStream` (the AI SDK's own mock model):
 * text deltas as they come, tool calls, usage from the `finish` part; an `error` part and a
 * stream without `finish` fail the request.
 */
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { fromAiSdkModel } from '../../../src/adapters/ai-sdk/index.js';
import type { GenerateRequest } from '../../../src/providers/language-model.js';
import { rejection } from '../providers/wire-server.js';

const request: GenerateRequest = { messages: [{ role: 'user', content: 'Count the team.' }], tools: [] };

const usage = {
  inputTokens: { total: 120, noCache: 20, cacheRead: 100, cacheWrite: 0 },
  outputTokens: { total: 15, text: 15, reasoning: 0 },
};

function streaming(parts: LanguageModelV4StreamPart[]) {
  return new MockLanguageModelV4({ doStream: async () => ({ stream: convertArrayToReadableStream(parts) }) });
}

describe('fromAiSdkModel streaming', () => {
  it('reports text deltas and returns text, tool calls, finish reason and usage', async () => {
    const model = fromAiSdkModel(
      streaming([
        { type: 'stream-start', warnings: [] },
        { type: 'text-start', id: 't1' },
        { type: 'text-delta', id: 't1', delta: 'Counting ' },
        { type: 'text-delta', id: 't1', delta: 'them.' },
        { type: 'text-end', id: 't1' },
        {
          type: 'tool-call',
          toolCallId: 'c1',
          toolName: 'execute_code',
          input: '{"code":"console.log(20)"}',
        },
        { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage },
      ]),
      { maxRetries: 0 },
    );
    const deltas: string[] = [];
    const response = await model.stream!(request, { onTextDelta: (text) => deltas.push(text) });
    expect(deltas).toEqual(['Counting ', 'them.']);
    expect(response.content).toEqual([
      { type: 'text', text: 'Counting them.' },
      { type: 'tool_call', id: 'c1', name: 'execute_code', input: { code: 'console.log(20)' } },
    ]);
    expect(response.stopReason).toBe('tool_use');
    expect(response.usage).toEqual({
      inputTokens: 120,
      outputTokens: 15,
      cacheReadTokens: 100,
      cacheWriteTokens: 0,
    });
  });

  it('fails on an error part and on a stream without finish', async () => {
    const broken = fromAiSdkModel(
      streaming([
        { type: 'text-delta', id: 't1', delta: 'Count' },
        { type: 'error', error: new Error('overloaded') },
      ]),
      { maxRetries: 0 },
    );
    const error = await rejection(broken.stream!(request));
    expect(error.code).toBe('PROVIDER_REQUEST_FAILED');
    expect(error.message).toContain('overloaded');
    const cut = fromAiSdkModel(streaming([{ type: 'text-delta', id: 't1', delta: 'Count' }]), {
      maxRetries: 0,
    });
    expect((await rejection(cut.stream!(request))).message).toContain('without a finish part');
  });
});
