/**
 * @module
 * `LanguageModel.stream` of the real `@anthropic-ai/sdk` and `openai` clients against a loopback
 * server speaking each API's server-sent events: text deltas in order, tool-call input in JSON
 * fragments, usage (cache reads included), a failure before the stream opens retried, one after
 * it started not retried, a stalled stream bounded by `timeoutMs`, and abort.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createLanguageModel,
  type CreateLanguageModelOptions,
} from '../../../src/providers/create-language-model.js';
import type { GenerateRequest } from '../../../src/providers/language-model.js';
import { anthropicError, anthropicEvents, openaiChunks, rejection, WireServer } from './wire-server.js';

const ANTHROPIC = '/v1/messages';
const OPENAI = '/v1/chat/completions';

const request: GenerateRequest = {
  system: 'You write code that calls tools.',
  tools: [
    {
      name: 'execute_code',
      description: 'Run code.',
      inputSchema: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] },
    },
  ],
  messages: [{ role: 'user', content: 'Count the team.' }],
  maxOutputTokens: 512,
};

let server: WireServer;
beforeEach(async () => {
  server = await WireServer.open();
});
afterEach(async () => {
  await server.close();
});

function anthropic(options: CreateLanguageModelOptions = {}) {
  return createLanguageModel('anthropic:claude-sonnet-4-6', {
    apiKey: 'sk-ant-test-key',
    baseURL: server.origin,
    env: {},
    initialRetryDelayMs: 1,
    maxRetryDelayMs: 20,
    ...options,
  });
}

function openai(options: CreateLanguageModelOptions = {}) {
  return createLanguageModel('openai:gpt-4.1', {
    apiKey: 'sk-test',
    baseURL: `${server.origin}/v1`,
    env: {},
    initialRetryDelayMs: 1,
    maxRetryDelayMs: 20,
    ...options,
  });
}

/** A streamed Messages API answer: text in three deltas, then a tool call in JSON fragments. */
const ANTHROPIC_EVENTS = anthropicEvents([
  {
    type: 'message_start',
    message: {
      id: 'msg_01Stream',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-6',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: 25,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 1500,
        output_tokens: 1,
      },
    },
  },
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'ping' },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Let me ' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'count ' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'them.' } },
  { type: 'content_block_stop', index: 0 },
  {
    type: 'content_block_start',
    index: 1,
    content_block: { type: 'tool_use', id: 'toolu_01', name: 'execute_code', input: {} },
  },
  { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '' } },
  {
    type: 'content_block_delta',
    index: 1,
    delta: { type: 'input_json_delta', partial_json: '{"code": "console.' },
  },
  { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: 'log(20)"}' } },
  { type: 'content_block_stop', index: 1 },
  {
    type: 'message_delta',
    delta: { stop_reason: 'tool_use', stop_sequence: null },
    usage: { output_tokens: 45 },
  },
  { type: 'message_stop' },
]);

describe('Anthropic streaming over the wire', () => {
  it('reports text deltas in order and returns the whole response with usage and cache reads', async () => {
    server.enqueue(ANTHROPIC, { sse: ANTHROPIC_EVENTS });
    const deltas: string[] = [];
    const response = await anthropic().stream!(request, { onTextDelta: (text) => deltas.push(text) });

    expect(deltas).toEqual(['Let me ', 'count ', 'them.']);
    expect(response.content).toEqual([
      { type: 'text', text: 'Let me count them.' },
      { type: 'tool_call', id: 'toolu_01', name: 'execute_code', input: { code: 'console.log(20)' } },
    ]);
    expect(response.stopReason).toBe('tool_use');
    expect(response.usage).toEqual({
      inputTokens: 1525,
      outputTokens: 45,
      cacheReadTokens: 1500,
      cacheWriteTokens: 0,
    });
    const body = server.requestsTo(ANTHROPIC)[0]!.body;
    expect(body['stream']).toBe(true);
    // The stable prefix carries its cache breakpoints when streamed too.
    expect(body['system']).toEqual([
      { type: 'text', text: 'You write code that calls tools.', cache_control: { type: 'ephemeral' } },
    ]);
    expect((body['tools'] as Record<string, unknown>[]).at(-1)!['cache_control']).toEqual({
      type: 'ephemeral',
    });
  });

  it('retries a 529 that comes before the stream opens', async () => {
    server.enqueue(ANTHROPIC, anthropicError(529, 'overloaded_error', 'Overloaded'), {
      sse: ANTHROPIC_EVENTS,
    });
    const deltas: string[] = [];
    const response = await anthropic().stream!(request, { onTextDelta: (text) => deltas.push(text) });
    expect(server.requestsTo(ANTHROPIC)).toHaveLength(2);
    expect(deltas.join('')).toBe('Let me count them.');
    expect(response.stopReason).toBe('tool_use');
  });

  it('does not retry an error event after text was reported', async () => {
    server.enqueue(ANTHROPIC, {
      sse: [
        ...ANTHROPIC_EVENTS.slice(0, 4),
        {
          event: 'error',
          data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
        },
      ],
    });
    const deltas: string[] = [];
    const error = await rejection(anthropic().stream!(request, { onTextDelta: (text) => deltas.push(text) }));
    expect(error.code).toBe('PROVIDER_REQUEST_FAILED');
    expect(error.message).toContain('Overloaded');
    expect(error['details']).toMatchObject({ retryable: false });
    expect(deltas).toEqual(['Let me ']);
    expect(server.requestsTo(ANTHROPIC)).toHaveLength(1);
  });

  it('fails a stream the server closes before message_stop instead of returning a cut answer', async () => {
    server.enqueue(ANTHROPIC, { sse: ANTHROPIC_EVENTS.slice(0, 5) });
    const error = await rejection(anthropic().stream!(request));
    expect(error.code).toBe('PROVIDER_REQUEST_FAILED');
    expect(error.message).toContain('ended before message_stop');
  });

  it('fails a stream that goes silent for timeoutMs', async () => {
    server.enqueue(ANTHROPIC, { sse: ANTHROPIC_EVENTS.slice(0, 4), stall: true });
    const error = await rejection(anthropic({ timeoutMs: 300 }).stream!(request));
    expect(error.code).toBe('PROVIDER_REQUEST_FAILED');
    expect(error.message).toMatch(/stalled: no data for 300 ms/);
    expect(server.requestsTo(ANTHROPIC)).toHaveLength(1);
  });

  it('cancels a stream in flight when the signal aborts', async () => {
    server.enqueue(ANTHROPIC, { sse: ANTHROPIC_EVENTS.slice(0, 4), stall: true });
    const controller = new AbortController();
    const deltas: string[] = [];
    const pending = anthropic().stream!(request, {
      signal: controller.signal,
      onTextDelta: (text) => deltas.push(text),
    });
    await vi.waitFor(() => expect(deltas).toEqual(['Let me ']), { timeout: 10_000 });
    controller.abort();
    const error = await rejection(pending);
    expect(error.code).toBe('ABORTED');
  });
});

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> {
  return {
    id: 'chatcmpl-Stream',
    object: 'chat.completion.chunk',
    created: 1741570283,
    model: 'gpt-4.1-2025-04-14',
    system_fingerprint: 'fp_51e1070cf2',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    usage: null,
  };
}

describe('OpenAI streaming over the wire', () => {
  it('reports text deltas, joins tool-call pieces and reads usage (cached tokens) from the last chunk', async () => {
    server.enqueue(OPENAI, {
      sse: openaiChunks([
        chunk({ role: 'assistant', content: '', refusal: null }),
        chunk({ content: 'Count' }),
        chunk({ content: 'ing.' }),
        chunk({
          tool_calls: [
            {
              index: 0,
              id: 'call_abc',
              type: 'function',
              function: { name: 'execute_code', arguments: '' },
            },
          ],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"code":' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"console.log(20)"}' } }] }),
        chunk({}, 'tool_calls'),
        {
          id: 'chatcmpl-Stream',
          object: 'chat.completion.chunk',
          created: 1741570283,
          model: 'gpt-4.1-2025-04-14',
          choices: [],
          usage: {
            prompt_tokens: 2006,
            completion_tokens: 300,
            total_tokens: 2306,
            prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 0 },
          },
        },
      ]),
    });
    const deltas: string[] = [];
    const response = await openai().stream!(request, { onTextDelta: (text) => deltas.push(text) });

    expect(deltas).toEqual(['Count', 'ing.']);
    expect(response.content).toEqual([
      { type: 'text', text: 'Counting.' },
      { type: 'tool_call', id: 'call_abc', name: 'execute_code', input: { code: 'console.log(20)' } },
    ]);
    expect(response.stopReason).toBe('tool_use');
    expect(response.usage).toEqual({
      inputTokens: 2006,
      outputTokens: 300,
      cacheReadTokens: 1920,
      cacheWriteTokens: 0,
    });
    const body = server.requestsTo(OPENAI)[0]!.body;
    expect(body['stream']).toBe(true);
    expect(body['stream_options']).toEqual({ include_usage: true });
  });

  it('retries a 429 before the stream opens', async () => {
    server.enqueue(
      OPENAI,
      { status: 429, body: { error: { message: 'Rate limit', type: 'requests', param: null, code: null } } },
      { sse: openaiChunks([chunk({ content: 'Hi.' }), chunk({}, 'stop')]) },
    );
    const response = await openai().stream!(request);
    expect(server.requestsTo(OPENAI)).toHaveLength(2);
    expect(response.content).toEqual([{ type: 'text', text: 'Hi.' }]);
    expect(response.stopReason).toBe('end_turn');
  });
});
