/**
 * @module
 * The real `@anthropic-ai/sdk` client against a loopback server speaking the Messages API:
 * request mapping (tools, system, tool_result with is_error, cache_control), response mapping
 * (tool_use, usage with cache reads and writes), and the retry policy (529, 429 + retry-after,
 * 401 not retried, timeouts, connection errors, abort).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createLanguageModel,
  type CreateLanguageModelOptions,
} from '../../../src/providers/create-language-model.js';
import type { GenerateRequest } from '../../../src/providers/language-model.js';
import type { ProviderRetryEvent } from '../../../src/providers/retry-provider-call.js';
import { anthropicError, anthropicMessage, rejection, WireServer } from './wire-server.js';

const PATH = '/v1/messages';

const request: GenerateRequest = {
  system: 'You write code that calls tools.',
  tools: [
    {
      name: 'search_tools',
      description: 'Find tools.',
      inputSchema: { type: 'object', properties: { query: { type: 'string' } } },
    },
    {
      name: 'execute_code',
      description: 'Run code.',
      inputSchema: { properties: { code: { type: 'string' } }, required: ['code'] },
    },
  ],
  messages: [
    { role: 'user', content: 'Sum the expenses.' },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Running it.' },
        { type: 'tool_call', id: 'toolu_01', name: 'execute_code', input: { code: 'print(1)' } },
      ],
    },
    {
      role: 'tool',
      results: [{ toolCallId: 'toolu_01', content: 'ReferenceError: print is not defined', isError: true }],
    },
  ],
  maxOutputTokens: 1024,
  temperature: 0,
};

let server: WireServer;
beforeEach(async () => {
  server = await WireServer.open();
});
afterEach(async () => {
  await server.close();
});

function model(options: CreateLanguageModelOptions = {}) {
  return createLanguageModel('anthropic:claude-sonnet-4-6', {
    apiKey: 'sk-ant-test-key',
    baseURL: server.origin,
    env: {},
    initialRetryDelayMs: 1,
    maxRetryDelayMs: 50,
    ...options,
  });
}

describe('Anthropic over the wire', () => {
  it('sends tools, system prompt, tool results and cache breakpoints as the Messages API expects', async () => {
    server.enqueue(PATH, {
      body: anthropicMessage({
        content: [
          { type: 'text', text: 'Let me fix that.', citations: null },
          { type: 'tool_use', id: 'toolu_02', name: 'execute_code', input: { code: 'console.log(1)' } },
        ],
        stopReason: 'tool_use',
        usage: { input: 40, output: 30, cacheRead: 1500, cacheWrite: 200 },
      }),
    });
    const response = await model().generate(request);

    const [sent] = server.requestsTo(PATH);
    expect(sent!.method).toBe('POST');
    expect(sent!.headers['authorization'] ?? sent!.headers['x-api-key']).toContain('sk-ant-test-key');
    expect(sent!.headers['anthropic-version']).toBeTypeOf('string');
    const body = sent!.body;
    expect(body['model']).toBe('claude-sonnet-4-6');
    expect(body['max_tokens']).toBe(1024);
    expect(body['temperature']).toBe(0);
    expect(body['system']).toEqual([
      { type: 'text', text: 'You write code that calls tools.', cache_control: { type: 'ephemeral' } },
    ]);
    expect(body['tools']).toEqual([
      {
        name: 'search_tools',
        description: 'Find tools.',
        input_schema: { type: 'object', properties: { query: { type: 'string' } } },
      },
      {
        name: 'execute_code',
        description: 'Run code.',
        input_schema: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] },
        cache_control: { type: 'ephemeral' },
      },
    ]);
    expect(body['messages']).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Sum the expenses.' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Running it.' },
          { type: 'tool_use', id: 'toolu_01', name: 'execute_code', input: { code: 'print(1)' } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01',
            content: 'ReferenceError: print is not defined',
            is_error: true,
            cache_control: { type: 'ephemeral' },
          },
        ],
      },
    ]);

    expect(response.content).toEqual([
      { type: 'text', text: 'Let me fix that.' },
      { type: 'tool_call', id: 'toolu_02', name: 'execute_code', input: { code: 'console.log(1)' } },
    ]);
    expect(response.stopReason).toBe('tool_use');
    expect(response.usage).toEqual({
      inputTokens: 1740,
      outputTokens: 30,
      cacheReadTokens: 1500,
      cacheWriteTokens: 200,
    });
  });

  it('leaves cache_control out when prompt caching is off', async () => {
    server.enqueue(PATH, {
      body: anthropicMessage({ content: [{ type: 'text', text: 'ok' }], stopReason: 'end_turn' }),
    });
    const response = await model({ promptCaching: false }).generate(request);
    expect(JSON.stringify(server.requests[0]!.body)).not.toContain('cache_control');
    expect(response.stopReason).toBe('end_turn');
  });

  it('retries 529 overloaded_error and returns the later success', async () => {
    server.enqueue(
      PATH,
      anthropicError(529, 'overloaded_error', 'Overloaded'),
      anthropicError(529, 'overloaded_error', 'Overloaded'),
      { body: anthropicMessage({ content: [{ type: 'text', text: 'done' }], stopReason: 'end_turn' }) },
    );
    const retries: ProviderRetryEvent[] = [];
    const response = await model({ onRetry: (event) => retries.push(event) }).generate(request);
    expect(response.content).toEqual([{ type: 'text', text: 'done' }]);
    expect(server.requestsTo(PATH)).toHaveLength(3);
    expect(retries.map((event) => [event.retry, event.failure.status, event.failure.errorType])).toEqual([
      [1, 529, 'overloaded_error'],
      [2, 529, 'overloaded_error'],
    ]);
  });

  it('honours retry-after on 429 rate_limit_error', async () => {
    server.enqueue(
      PATH,
      anthropicError(
        429,
        'rate_limit_error',
        'Number of request tokens has exceeded your per-minute rate limit',
        {
          'retry-after': '1',
        },
      ),
      { body: anthropicMessage({ content: [{ type: 'text', text: 'ok' }], stopReason: 'end_turn' }) },
    );
    const retries: ProviderRetryEvent[] = [];
    const started = Date.now();
    await model({ maxRetryDelayMs: 60_000, onRetry: (event) => retries.push(event) }).generate(request);
    expect(retries).toHaveLength(1);
    expect(retries[0]!.delayMs).toBe(1_000);
    expect(retries[0]!.failure.retryAfterMs).toBe(1_000);
    // Sanity only: the client did wait instead of retrying at once.
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('does not retry 401 authentication_error and names the key variable', async () => {
    server.enqueue(PATH, anthropicError(401, 'authentication_error', 'invalid x-api-key'));
    const error = await rejection(model().generate(request));
    expect(error.code).toBe('PROVIDER_AUTH');
    expect(error.message).toContain('ANTHROPIC_API_KEY');
    expect(error.message).toContain('invalid x-api-key');
    expect(server.requestsTo(PATH)).toHaveLength(1);
  });

  it('does not retry 400 invalid_request_error', async () => {
    server.enqueue(
      PATH,
      anthropicError(400, 'invalid_request_error', 'messages: text content blocks must be non-empty'),
    );
    const error = await rejection(model().generate(request));
    expect(error.code).toBe('PROVIDER_REQUEST_FAILED');
    expect(error.message).toContain('text content blocks must be non-empty');
    expect(error['details']).toMatchObject({
      status: 400,
      errorType: 'invalid_request_error',
      retryable: false,
      attempts: 1,
    });
    expect(server.requestsTo(PATH)).toHaveLength(1);
  });

  it('gives up after maxRetries with the last failure', async () => {
    server.enqueue(
      PATH,
      anthropicError(500, 'api_error', 'Internal server error'),
      anthropicError(502, 'api_error', 'Bad gateway'),
      anthropicError(503, 'api_error', 'Service unavailable'),
    );
    const error = await rejection(model({ maxRetries: 2 }).generate(request));
    expect(error.code).toBe('PROVIDER_REQUEST_FAILED');
    expect(error['details']).toMatchObject({ attempts: 3, status: 503, retryable: true });
    expect(server.requestsTo(PATH)).toHaveLength(3);
  });

  it('retries a request that times out', async () => {
    server.enqueue(
      PATH,
      { delayMs: 10_000, body: {} },
      {
        body: anthropicMessage({ content: [{ type: 'text', text: 'late' }], stopReason: 'end_turn' }),
      },
    );
    const retries: ProviderRetryEvent[] = [];
    const response = await model({ timeoutMs: 300, onRetry: (event) => retries.push(event) }).generate(
      request,
    );
    expect(response.content).toEqual([{ type: 'text', text: 'late' }]);
    expect(retries).toHaveLength(1);
    expect(retries[0]!.failure.message).toMatch(/timed out/i);
  });

  it('retries connection errors and then fails with PROVIDER_REQUEST_FAILED', async () => {
    const origin = server.origin;
    await server.close();
    const error = await rejection(model({ baseURL: origin, maxRetries: 1 }).generate(request));
    expect(error.code).toBe('PROVIDER_REQUEST_FAILED');
    expect(error['details']).toMatchObject({ attempts: 2, retryable: true });
  });

  it('cancels the in-flight request when the signal aborts', async () => {
    server.enqueue(PATH, { delayMs: 10_000, body: {} });
    const controller = new AbortController();
    const pending = model().generate(request, { signal: controller.signal });
    await vi.waitFor(() => expect(server.requestsTo(PATH)).toHaveLength(1), { timeout: 10_000 });
    controller.abort();
    const error = await rejection(pending);
    expect(error.code).toBe('ABORTED');
    expect(server.requestsTo(PATH)).toHaveLength(1);
  });

  it('cancels the backoff sleep when the signal aborts', async () => {
    server.enqueue(PATH, anthropicError(429, 'rate_limit_error', 'slow down', { 'retry-after': '30' }));
    const controller = new AbortController();
    const pending = model({ maxRetryDelayMs: 60_000, onRetry: () => controller.abort() }).generate(request, {
      signal: controller.signal,
    });
    const error = await rejection(pending);
    expect(error.code).toBe('ABORTED');
    expect(server.requestsTo(PATH)).toHaveLength(1);
  });
});
