/**
 * @module
 * The real `@google/genai` client against a loopback server speaking the Gemini REST API
 * (`generateContent`, `streamGenerateContent?alt=sse`): request mapping (system instruction,
 * function declarations, function calls with their thought signatures, function responses named
 * by the call they answer), response mapping (usage with implicit-cache hits), streaming, and the
 * retry policy (429 with RetryInfo retried, 400 and 403 not).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createLanguageModel,
  type CreateLanguageModelOptions,
} from '../../../src/providers/create-language-model.js';
import type { GenerateRequest } from '../../../src/providers/language-model.js';
import type { ProviderRetryEvent } from '../../../src/providers/retry-provider-call.js';
import { rejection, WireServer, type WireReply } from './wire-server.js';

const GENERATE = '/v1/models/gemini-2.5-flash:generateContent';
const STREAM = '/v1/models/gemini-2.5-flash:streamGenerateContent';

const request: GenerateRequest = {
  system: 'You write code that calls tools.',
  tools: [
    {
      name: 'execute_code',
      description: 'Run code.',
      inputSchema: { properties: { code: { type: 'string' } }, required: ['code'] },
    },
  ],
  messages: [
    { role: 'user', content: 'Count the team.' },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Running it.' },
        {
          type: 'tool_call',
          id: 'call_g1',
          name: 'execute_code',
          input: { code: 'print(1)' },
          providerData: { thoughtSignature: 'c2lnbmF0dXJlLTE=' },
        },
      ],
    },
    {
      role: 'tool',
      results: [{ toolCallId: 'call_g1', content: 'ReferenceError: print is not defined', isError: true }],
    },
  ],
  maxOutputTokens: 1024,
  temperature: 0,
};

/** A `generateContent` response body as the Gemini API sends it. */
function geminiResponse(options: {
  parts: unknown[];
  finishReason?: string;
  usage?: { prompt: number; output: number; cached?: number; thoughts?: number };
}): Record<string, unknown> {
  const usage = options.usage;
  return {
    candidates: [
      {
        content: { parts: options.parts, role: 'model' },
        ...(options.finishReason === undefined ? {} : { finishReason: options.finishReason }),
        index: 0,
      },
    ],
    ...(usage === undefined
      ? {}
      : {
          usageMetadata: {
            promptTokenCount: usage.prompt,
            candidatesTokenCount: usage.output,
            totalTokenCount: usage.prompt + usage.output + (usage.thoughts ?? 0),
            ...(usage.cached === undefined ? {} : { cachedContentTokenCount: usage.cached }),
            ...(usage.thoughts === undefined ? {} : { thoughtsTokenCount: usage.thoughts }),
            promptTokensDetails: [{ modality: 'TEXT', tokenCount: usage.prompt }],
          },
        }),
    modelVersion: 'gemini-2.5-flash',
    responseId: 'mK2fZ4WfLKaH1MkP0qi2uAk',
  };
}

function geminiError(status: number, code: string, message: string, details: unknown[] = []): WireReply {
  return { status, body: { error: { code: status, message, status: code, details } } };
}

let server: WireServer;
beforeEach(async () => {
  server = await WireServer.open();
});
afterEach(async () => {
  await server.close();
});

function model(options: CreateLanguageModelOptions = {}) {
  return createLanguageModel('gemini:gemini-2.5-flash', {
    apiKey: 'AIza-test-key',
    baseURL: server.origin,
    env: {},
    initialRetryDelayMs: 1,
    maxRetryDelayMs: 50,
    ...options,
  });
}

describe('Gemini over the wire', () => {
  it('sends contents, system instruction, function declarations and responses as generateContent expects', async () => {
    server.enqueue(GENERATE, {
      body: geminiResponse({
        parts: [
          { text: 'Let me think.', thought: true },
          { text: 'Fixing it.' },
          {
            functionCall: { name: 'execute_code', args: { code: 'console.log(1)' } },
            thoughtSignature: 'c2lnbmF0dXJlLTI=',
          },
        ],
        finishReason: 'STOP',
        usage: { prompt: 1800, output: 30, cached: 1500, thoughts: 12 },
      }),
    });
    const response = await model().generate(request);

    const [sent] = server.requestsTo(GENERATE);
    expect(sent!.method).toBe('POST');
    expect(sent!.headers['x-goog-api-key']).toBe('AIza-test-key');
    expect(sent!.body).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Count the team.' }] },
        {
          role: 'model',
          parts: [
            { text: 'Running it.' },
            {
              functionCall: { id: 'call_g1', name: 'execute_code', args: { code: 'print(1)' } },
              thoughtSignature: 'c2lnbmF0dXJlLTE=',
            },
          ],
        },
        {
          role: 'user',
          parts: [
            {
              functionResponse: {
                id: 'call_g1',
                name: 'execute_code',
                response: { error: 'ReferenceError: print is not defined' },
              },
            },
          ],
        },
      ],
      systemInstruction: { parts: [{ text: 'You write code that calls tools.' }], role: 'user' },
      tools: [
        {
          functionDeclarations: [
            {
              name: 'execute_code',
              description: 'Run code.',
              parametersJsonSchema: {
                type: 'object',
                properties: { code: { type: 'string' } },
                required: ['code'],
              },
            },
          ],
        },
      ],
      generationConfig: { maxOutputTokens: 1024, temperature: 0 },
    });

    // Thoughts are left out; a call without an id gets one codecall never sends back as an id.
    expect(response.content).toEqual([
      { type: 'text', text: 'Fixing it.' },
      {
        type: 'tool_call',
        id: 'gemini-call-0',
        name: 'execute_code',
        input: { code: 'console.log(1)' },
        providerData: { thoughtSignature: 'c2lnbmF0dXJlLTI=' },
      },
    ]);
    expect(response.stopReason).toBe('tool_use');
    expect(response.usage).toEqual({
      inputTokens: 1800,
      outputTokens: 42,
      cacheReadTokens: 1500,
      cacheWriteTokens: 0,
    });
  });

  it('sends a made-up call id back as no id', async () => {
    server.enqueue(GENERATE, {
      body: geminiResponse({
        parts: [{ text: 'ok' }],
        finishReason: 'STOP',
        usage: { prompt: 5, output: 1 },
      }),
    });
    await model().generate({
      tools: [],
      messages: [
        { role: 'user', content: 'Go.' },
        {
          role: 'assistant',
          content: [{ type: 'tool_call', id: 'gemini-call-0', name: 'execute_code', input: {} }],
        },
        { role: 'tool', results: [{ toolCallId: 'gemini-call-0', content: '20' }] },
      ],
    });
    const contents = server.requestsTo(GENERATE)[0]!.body['contents'] as { parts: unknown[] }[];
    expect(contents[1]!.parts).toEqual([{ functionCall: { name: 'execute_code', args: {} } }]);
    expect(contents[2]!.parts).toEqual([
      { functionResponse: { name: 'execute_code', response: { output: '20' } } },
    ]);
  });

  it('maps a safety block to refusal', async () => {
    server.enqueue(GENERATE, {
      body: geminiResponse({ parts: [], finishReason: 'SAFETY', usage: { prompt: 5, output: 0 } }),
    });
    const response = await model().generate(request);
    expect(response.stopReason).toBe('refusal');
    expect(response.content).toEqual([]);
  });

  it('streams text deltas over server-sent events', async () => {
    server.enqueue(STREAM, {
      sse: [
        { data: geminiResponse({ parts: [{ text: 'There are ' }] }) },
        { data: geminiResponse({ parts: [{ text: '20 members.' }] }) },
        {
          data: geminiResponse({
            parts: [{ text: '' }],
            finishReason: 'STOP',
            usage: { prompt: 40, output: 8, cached: 32 },
          }),
        },
      ],
    });
    const deltas: string[] = [];
    const response = await model().stream!(request, { onTextDelta: (text) => deltas.push(text) });
    expect(deltas).toEqual(['There are ', '20 members.']);
    expect(response.content).toEqual([{ type: 'text', text: 'There are 20 members.' }]);
    expect(response.stopReason).toBe('end_turn');
    expect(response.usage).toEqual({
      inputTokens: 40,
      outputTokens: 8,
      cacheReadTokens: 32,
      cacheWriteTokens: 0,
    });
    const [sent] = server.requestsTo(STREAM);
    expect(sent!.body['contents']).toHaveLength(3);
  });

  it('fails a stream that ends before a finish reason', async () => {
    server.enqueue(STREAM, { sse: [{ data: geminiResponse({ parts: [{ text: 'There are ' }] }) }] });
    const error = await rejection(model().stream!(request));
    expect(error.code).toBe('PROVIDER_REQUEST_FAILED');
    expect(error.message).toContain('ended before a finish reason');
  });

  it('retries 429 RESOURCE_EXHAUSTED after the RetryInfo delay', async () => {
    server.enqueue(
      GENERATE,
      geminiError(429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota.', [
        { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '0.02s' },
      ]),
      {
        body: geminiResponse({
          parts: [{ text: 'ok' }],
          finishReason: 'STOP',
          usage: { prompt: 5, output: 1 },
        }),
      },
    );
    const retries: ProviderRetryEvent[] = [];
    const response = await model({ onRetry: (event) => retries.push(event) }).generate(request);
    expect(response.content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(retries.map((event) => [event.failure.status, event.failure.errorType, event.delayMs])).toEqual([
      [429, 'RESOURCE_EXHAUSTED', 20],
    ]);
    expect(server.requestsTo(GENERATE)).toHaveLength(2);
  });

  it('does not retry 400 INVALID_ARGUMENT and reports the API message', async () => {
    server.enqueue(
      GENERATE,
      geminiError(400, 'INVALID_ARGUMENT', '* GenerateContentRequest.contents: contents is not specified'),
    );
    const error = await rejection(model().generate(request));
    expect(error.code).toBe('PROVIDER_REQUEST_FAILED');
    expect(error.message).toContain('contents is not specified');
    expect(error['details']).toMatchObject({ status: 400, errorType: 'INVALID_ARGUMENT', attempts: 1 });
    expect(server.requestsTo(GENERATE)).toHaveLength(1);
  });

  it('does not retry 403 PERMISSION_DENIED and names GEMINI_API_KEY', async () => {
    server.enqueue(
      GENERATE,
      geminiError(403, 'PERMISSION_DENIED', 'API key not valid. Please pass a valid API key.'),
    );
    const error = await rejection(model().generate(request));
    expect(error.code).toBe('PROVIDER_AUTH');
    expect(error.message).toContain('GEMINI_API_KEY');
    expect(server.requestsTo(GENERATE)).toHaveLength(1);
  });

  it('retries a request that times out', async () => {
    server.enqueue(
      GENERATE,
      { delayMs: 10_000, body: {} },
      {
        body: geminiResponse({
          parts: [{ text: 'late' }],
          finishReason: 'STOP',
          usage: { prompt: 5, output: 1 },
        }),
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
});
