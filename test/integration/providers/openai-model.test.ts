/**
 * @module
 * The real `openai` client against a loopback server speaking Chat Completions: request mapping
 * (system message, function tools, tool_calls with JSON-string arguments, tool messages), response
 * mapping (tool calls, cached tokens, invalid JSON arguments), keyless local servers, and the
 * retry policy (429 + retry-after-ms, 503, 401 not retried).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createLanguageModel,
  type CreateLanguageModelOptions,
} from '../../../src/providers/create-language-model.js';
import type { GenerateRequest } from '../../../src/providers/language-model.js';
import type { ProviderRetryEvent } from '../../../src/providers/retry-provider-call.js';
import { openaiCompletion, openaiError, rejection, WireServer } from './wire-server.js';

const PATH = '/v1/chat/completions';

const request: GenerateRequest = {
  system: 'You write code that calls tools.',
  tools: [
    {
      name: 'execute_code',
      description: 'Run code.',
      inputSchema: { properties: { code: { type: 'string' } } },
    },
  ],
  messages: [
    { role: 'user', content: 'Sum the expenses.' },
    {
      role: 'assistant',
      content: [
        { type: 'tool_call', id: 'call_a', name: 'execute_code', input: { code: 'bad(' } },
        { type: 'tool_call', id: 'call_b', name: 'execute_code', input: { code: 'console.log(2)' } },
      ],
    },
    {
      role: 'tool',
      results: [
        { toolCallId: 'call_a', content: 'SyntaxError at 1:5', isError: true },
        { toolCallId: 'call_b', content: '2' },
      ],
    },
  ],
  maxOutputTokens: 512,
};

let server: WireServer;
beforeEach(async () => {
  server = await WireServer.open();
});
afterEach(async () => {
  await server.close();
});

function model(options: CreateLanguageModelOptions = {}) {
  return createLanguageModel('openai:gpt-4.1', {
    apiKey: 'sk-proj-test-key',
    baseURL: `${server.origin}/v1`,
    env: {},
    initialRetryDelayMs: 1,
    maxRetryDelayMs: 50,
    ...options,
  });
}

describe('OpenAI-compatible over the wire', () => {
  it('sends system, function tools, tool_calls and tool messages as Chat Completions expects', async () => {
    server.enqueue(PATH, {
      body: openaiCompletion({
        content: null,
        toolCalls: [{ id: 'call_c', name: 'execute_code', arguments: '{"code":"console.log(3)"}' }],
        finishReason: 'tool_calls',
        usage: { prompt: 2000, completion: 15, cached: 1792 },
      }),
    });
    const response = await model({ maxTokensField: 'max_completion_tokens' }).generate(request);

    const [sent] = server.requestsTo(PATH);
    expect(sent!.headers['authorization']).toBe('Bearer sk-proj-test-key');
    expect(sent!.body).toEqual({
      model: 'gpt-4.1',
      max_completion_tokens: 512,
      tools: [
        {
          type: 'function',
          function: {
            name: 'execute_code',
            description: 'Run code.',
            parameters: { type: 'object', properties: { code: { type: 'string' } } },
          },
        },
      ],
      messages: [
        { role: 'system', content: 'You write code that calls tools.' },
        { role: 'user', content: 'Sum the expenses.' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_a',
              type: 'function',
              function: { name: 'execute_code', arguments: '{"code":"bad("}' },
            },
            {
              id: 'call_b',
              type: 'function',
              function: { name: 'execute_code', arguments: '{"code":"console.log(2)"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: 'Error: SyntaxError at 1:5' },
        { role: 'tool', tool_call_id: 'call_b', content: '2' },
      ],
    });
    expect(response).toMatchObject({
      content: [{ type: 'tool_call', id: 'call_c', name: 'execute_code', input: { code: 'console.log(3)' } }],
      stopReason: 'tool_use',
      usage: { inputTokens: 2000, outputTokens: 15, cacheReadTokens: 1792, cacheWriteTokens: 0 },
    });
  });

  it('uses max_tokens for other servers and passes invalid JSON arguments on as text', async () => {
    server.enqueue(PATH, {
      body: openaiCompletion({
        content: 'Calling.',
        toolCalls: [{ id: 'call_d', name: 'execute_code', arguments: '{"code": "x' }],
        finishReason: 'stop',
        usage: null,
      }),
    });
    const response = await model().generate({ messages: [{ role: 'user', content: 'hi' }], tools: [] });
    const body = server.requests[0]!.body;
    expect(body['max_tokens']).toBe(8_192);
    expect(body).not.toHaveProperty('max_completion_tokens');
    expect(body).not.toHaveProperty('tools');
    expect(response.content).toEqual([
      { type: 'text', text: 'Calling.' },
      { type: 'tool_call', id: 'call_d', name: 'execute_code', input: '{"code": "x' },
    ]);
    expect(response.stopReason).toBe('tool_use');
    expect(response.usage).toEqual({
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
  });

  it('talks to a keyless local server without an Authorization header', async () => {
    server.enqueue(PATH, { body: openaiCompletion({ content: 'hello', finishReason: 'stop' }) });
    const local = createLanguageModel('openai:llama3.1:8b', {
      env: { OPENAI_BASE_URL: `${server.origin}/v1` },
    });
    const response = await local.generate({ messages: [{ role: 'user', content: 'hi' }], tools: [] });
    expect(local.modelId).toBe('llama3.1:8b');
    expect(server.requests[0]!.headers['authorization']).toBeUndefined();
    expect(server.requests[0]!.body['model']).toBe('llama3.1:8b');
    expect(response.content).toEqual([{ type: 'text', text: 'hello' }]);
    expect(response.stopReason).toBe('end_turn');
  });

  it('honours retry-after-ms on 429 and retries 503', async () => {
    server.enqueue(
      PATH,
      openaiError(429, 'requests', 'rate_limit_exceeded', 'Rate limit reached for gpt-4.1', {
        'retry-after-ms': '40',
      }),
      openaiError(503, 'server_error', null, 'The server is overloaded or not ready yet.'),
      { body: openaiCompletion({ content: 'ok', finishReason: 'stop' }) },
    );
    const retries: ProviderRetryEvent[] = [];
    const response = await model({ onRetry: (event) => retries.push(event) }).generate(request);
    expect(response.content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(server.requestsTo(PATH)).toHaveLength(3);
    expect(retries.map((event) => event.failure.status)).toEqual([429, 503]);
    expect(retries[0]!.delayMs).toBe(40);
    expect(retries[0]!.failure.message).toBe('Rate limit reached for gpt-4.1');
  });

  it('does not retry 401 invalid_api_key and names OPENAI_API_KEY', async () => {
    server.enqueue(
      PATH,
      openaiError(
        401,
        'invalid_request_error',
        'invalid_api_key',
        'Incorrect API key provided: sk-proj-****-key.',
      ),
    );
    const error = await rejection(model().generate(request));
    expect(error.code).toBe('PROVIDER_AUTH');
    expect(error.message).toContain('OPENAI_API_KEY');
    expect(error.message).toContain('Incorrect API key provided');
    expect(server.requestsTo(PATH)).toHaveLength(1);
  });

  it('fails clearly when a gateway answers 200 without choices', async () => {
    server.enqueue(PATH, { body: { error: { message: 'No endpoints found for this model', code: 404 } } });
    const error = await rejection(model().generate(request));
    expect(error.code).toBe('PROVIDER_REQUEST_FAILED');
    expect(error.message).toContain('No endpoints found');
  });
});
