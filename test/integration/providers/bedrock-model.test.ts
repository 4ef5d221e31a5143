/**
 * @module
 * The real `@aws-sdk/client-bedrock-runtime` client against a loopback server speaking the
 * Bedrock Converse JSON API: SigV4-signed requests (fake credentials; the server does not
 * verify), request mapping (system, toolSpec, toolUse / toolResult with `status: "error"`,
 * cache points), response mapping (usage with cache reads and writes), and the retry policy
 * (ThrottlingException retried, ValidationException and AccessDeniedException not), and
 * `ConverseStream` over AWS event-stream frames (text deltas, tool input fragments, usage,
 * exception events, a cut or stalled stream).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createLanguageModel,
  type CreateLanguageModelOptions,
} from '../../../src/providers/create-language-model.js';
import type { GenerateRequest } from '../../../src/providers/language-model.js';
import type { ProviderRetryEvent } from '../../../src/providers/retry-provider-call.js';
import { bedrockEventFrames, rejection, WireServer, type WireReply } from './wire-server.js';

const MODEL = 'anthropic.claude-sonnet-4-5-20250929-v1:0';
const PATH = `/model/${encodeURIComponent(MODEL)}/converse`;
const STREAM_PATH = `/model/${encodeURIComponent(MODEL)}/converse-stream`;

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
        { type: 'tool_call', id: 'tooluse_01', name: 'execute_code', input: { code: 'print(1)' } },
      ],
    },
    {
      role: 'tool',
      results: [{ toolCallId: 'tooluse_01', content: 'ReferenceError: print is not defined', isError: true }],
    },
  ],
  maxOutputTokens: 1024,
  temperature: 0,
};

/** A Converse response body as Bedrock sends it. */
function converseResponse(options: {
  content: unknown[];
  stopReason: string;
  usage?: { input: number; output: number; cacheRead?: number; cacheWrite?: number };
}): WireReply {
  const usage = options.usage ?? { input: 10, output: 5 };
  return {
    headers: { 'x-amzn-requestid': '8a9f1c52-3b1e-4d8b-9a8e-2c7f5e4d3b2a' },
    body: {
      output: { message: { role: 'assistant', content: options.content } },
      stopReason: options.stopReason,
      usage: {
        inputTokens: usage.input,
        outputTokens: usage.output,
        totalTokens: usage.input + usage.output + (usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0),
        ...(usage.cacheRead === undefined ? {} : { cacheReadInputTokens: usage.cacheRead }),
        ...(usage.cacheWrite === undefined ? {} : { cacheWriteInputTokens: usage.cacheWrite }),
      },
      metrics: { latencyMs: 812 },
    },
  };
}

/** A Bedrock error as the service sends it: the type in `x-amzn-ErrorType`, `{message}` body. */
function bedrockError(status: number, type: string, message: string): WireReply {
  return {
    status,
    headers: {
      'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
      'x-amzn-requestid': '1f2e3d4c-5b6a-7980-a1b2-c3d4e5f60718',
    },
    body: { message },
  };
}

let server: WireServer;
beforeEach(async () => {
  server = await WireServer.open({ http2: true });
});
afterEach(async () => {
  await server.close();
});

function model(options: CreateLanguageModelOptions = {}) {
  return createLanguageModel(`bedrock:${MODEL}`, {
    baseURL: server.origin,
    env: {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    },
    initialRetryDelayMs: 1,
    maxRetryDelayMs: 50,
    ...options,
  });
}

describe('Bedrock Converse over the wire', () => {
  it('sends a SigV4-signed Converse request with tools, system, tool results and cache points', async () => {
    server.enqueue(
      PATH,
      converseResponse({
        content: [
          { text: 'Fixing it.' },
          { toolUse: { toolUseId: 'tooluse_02', name: 'execute_code', input: { code: 'console.log(1)' } } },
        ],
        stopReason: 'tool_use',
        usage: { input: 40, output: 30, cacheRead: 1500, cacheWrite: 200 },
      }),
    );
    const response = await model().generate(request);

    const [sent] = server.requestsTo(PATH);
    expect(sent!.method).toBe('POST');
    expect(sent!.headers['authorization']).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\/\d{8}\/us-east-1\/bedrock\/aws4_request, SignedHeaders=.+, Signature=[0-9a-f]{64}$/,
    );
    expect(sent!.headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
    expect(sent!.body).toEqual({
      messages: [
        { role: 'user', content: [{ text: 'Count the team.' }] },
        {
          role: 'assistant',
          content: [
            { text: 'Running it.' },
            { toolUse: { toolUseId: 'tooluse_01', name: 'execute_code', input: { code: 'print(1)' } } },
          ],
        },
        {
          role: 'user',
          content: [
            {
              toolResult: {
                toolUseId: 'tooluse_01',
                content: [{ text: 'ReferenceError: print is not defined' }],
                status: 'error',
              },
            },
          ],
        },
      ],
      system: [{ text: 'You write code that calls tools.' }, { cachePoint: { type: 'default' } }],
      toolConfig: {
        tools: [
          {
            toolSpec: {
              name: 'execute_code',
              description: 'Run code.',
              inputSchema: {
                json: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] },
              },
            },
          },
          { cachePoint: { type: 'default' } },
        ],
      },
      inferenceConfig: { maxTokens: 1024, temperature: 0 },
    });

    expect(response.content).toEqual([
      { type: 'text', text: 'Fixing it.' },
      { type: 'tool_call', id: 'tooluse_02', name: 'execute_code', input: { code: 'console.log(1)' } },
    ]);
    expect(response.stopReason).toBe('tool_use');
    expect(response.usage).toEqual({
      inputTokens: 1740,
      outputTokens: 30,
      cacheReadTokens: 1500,
      cacheWriteTokens: 200,
    });
  });

  it('leaves cache points out when prompt caching is off, and sends a Bedrock API key as a bearer token', async () => {
    server.enqueue(PATH, converseResponse({ content: [{ text: 'ok' }], stopReason: 'end_turn' }));
    const response = await model({ promptCaching: false, apiKey: 'bedrock-api-key-test' }).generate(request);
    const [sent] = server.requestsTo(PATH);
    expect(JSON.stringify(sent!.body)).not.toContain('cachePoint');
    expect(sent!.headers['authorization']).toBe('Bearer bedrock-api-key-test');
    expect(response.stopReason).toBe('end_turn');
  });

  it('maps a guardrail intervention to refusal', async () => {
    server.enqueue(
      PATH,
      converseResponse({ content: [{ text: 'Sorry, I cannot help.' }], stopReason: 'guardrail_intervened' }),
    );
    expect((await model().generate(request)).stopReason).toBe('refusal');
  });

  it('retries ThrottlingException (429) and returns the later success', async () => {
    server.enqueue(
      PATH,
      bedrockError(429, 'ThrottlingException', 'Too many requests, please wait before trying again.'),
      converseResponse({ content: [{ text: 'done' }], stopReason: 'end_turn' }),
    );
    const retries: ProviderRetryEvent[] = [];
    const response = await model({ onRetry: (event) => retries.push(event) }).generate(request);
    expect(response.content).toEqual([{ type: 'text', text: 'done' }]);
    expect(retries.map((event) => [event.failure.status, event.failure.errorType])).toEqual([
      [429, 'ThrottlingException'],
    ]);
    expect(server.requestsTo(PATH)).toHaveLength(2);
  });

  it('does not retry ValidationException (400) and reports its message', async () => {
    server.enqueue(
      PATH,
      bedrockError(400, 'ValidationException', 'The provided model identifier is invalid.'),
    );
    const error = await rejection(model().generate(request));
    expect(error.code).toBe('PROVIDER_REQUEST_FAILED');
    expect(error.message).toContain('The provided model identifier is invalid.');
    expect(error['details']).toMatchObject({ status: 400, errorType: 'ValidationException', attempts: 1 });
    expect(server.requestsTo(PATH)).toHaveLength(1);
  });

  it('does not retry AccessDeniedException (403)', async () => {
    server.enqueue(
      PATH,
      bedrockError(
        403,
        'AccessDeniedException',
        "You don't have access to the model with the specified model ID.",
      ),
    );
    const error = await rejection(model().generate(request));
    expect(error.code).toBe('PROVIDER_AUTH');
    expect(error.message).toContain('AWS_ACCESS_KEY_ID');
    expect(server.requestsTo(PATH)).toHaveLength(1);
  });

  it('retries a request that times out', async () => {
    server.enqueue(
      PATH,
      { delayMs: 10_000, body: {} },
      converseResponse({ content: [{ text: 'late' }], stopReason: 'end_turn' }),
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

/** A streamed Converse answer: text in three deltas, then a tool call whose input comes in two fragments. */
const STREAM_EVENTS = bedrockEventFrames([
  { event: 'messageStart', data: { role: 'assistant' } },
  { event: 'contentBlockDelta', data: { contentBlockIndex: 0, delta: { text: 'Let me ' } } },
  { event: 'contentBlockDelta', data: { contentBlockIndex: 0, delta: { text: 'count ' } } },
  { event: 'contentBlockDelta', data: { contentBlockIndex: 0, delta: { text: 'them.' } } },
  { event: 'contentBlockStop', data: { contentBlockIndex: 0 } },
  {
    event: 'contentBlockStart',
    data: { contentBlockIndex: 1, start: { toolUse: { toolUseId: 'tooluse_s1', name: 'execute_code' } } },
  },
  {
    event: 'contentBlockDelta',
    data: { contentBlockIndex: 1, delta: { toolUse: { input: '{"code": "console.' } } },
  },
  { event: 'contentBlockDelta', data: { contentBlockIndex: 1, delta: { toolUse: { input: 'log(20)"}' } } } },
  { event: 'contentBlockStop', data: { contentBlockIndex: 1 } },
  { event: 'messageStop', data: { stopReason: 'tool_use' } },
  {
    event: 'metadata',
    data: {
      usage: {
        inputTokens: 25,
        outputTokens: 45,
        totalTokens: 1770,
        cacheReadInputTokens: 1500,
        cacheWriteInputTokens: 200,
      },
      metrics: { latencyMs: 640 },
    },
  },
]);

describe('Bedrock ConverseStream over the wire (AWS event-stream frames)', () => {
  it('reports text deltas in order and returns the whole response with the tool call and usage', async () => {
    server.enqueue(STREAM_PATH, { frames: STREAM_EVENTS });
    const deltas: string[] = [];
    const response = await model().stream!(request, { onTextDelta: (text) => deltas.push(text) });
    expect(deltas).toEqual(['Let me ', 'count ', 'them.']);
    expect(response.content).toEqual([
      { type: 'text', text: 'Let me count them.' },
      { type: 'tool_call', id: 'tooluse_s1', name: 'execute_code', input: { code: 'console.log(20)' } },
    ]);
    expect(response.stopReason).toBe('tool_use');
    expect(response.usage).toEqual({
      inputTokens: 1725,
      outputTokens: 45,
      cacheReadTokens: 1500,
      cacheWriteTokens: 200,
    });
    const [sent] = server.requestsTo(STREAM_PATH);
    expect(sent!.headers['authorization']).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\//);
    // The same request as Converse, cache points included.
    expect(JSON.stringify(sent!.body.system)).toContain('cachePoint');
  });

  it('retries a ThrottlingException before the stream opens', async () => {
    server.enqueue(
      STREAM_PATH,
      bedrockError(429, 'ThrottlingException', 'Too many requests, please wait before trying again.'),
      { frames: STREAM_EVENTS },
    );
    const response = await model().stream!(request);
    expect(response.stopReason).toBe('tool_use');
    expect(server.requestsTo(STREAM_PATH)).toHaveLength(2);
  });

  it('fails without a retry on an exception event after the stream started, keeping the text already reported', async () => {
    server.enqueue(STREAM_PATH, {
      frames: bedrockEventFrames([
        { event: 'messageStart', data: { role: 'assistant' } },
        { event: 'contentBlockDelta', data: { contentBlockIndex: 0, delta: { text: 'Partial ' } } },
        { exception: 'modelStreamErrorException', data: { message: 'The model stopped unexpectedly.' } },
      ]),
    });
    const deltas: string[] = [];
    const error = await rejection(model().stream!(request, { onTextDelta: (text) => deltas.push(text) }));
    expect(error.code).toBe('PROVIDER_REQUEST_FAILED');
    expect(error.message).toMatch(/Bedrock stream .*The model stopped unexpectedly/);
    expect(deltas).toEqual(['Partial ']);
    expect(server.requestsTo(STREAM_PATH)).toHaveLength(1);
  });

  it('reports a stream cut before messageStop as incomplete, and a stalled one within timeoutMs', async () => {
    server.enqueue(STREAM_PATH, { frames: STREAM_EVENTS.slice(0, 4) });
    const cut = await rejection(model().stream!(request));
    expect(cut.message).toMatch(/Bedrock stream ended before messageStop/);
    server.enqueue(STREAM_PATH, { frames: STREAM_EVENTS.slice(0, 2), stall: true });
    // The stall timer's own message: without it the stream would wait until the test's timeout.
    const stalled = await rejection(model({ timeoutMs: 400 }).stream!(request));
    expect(stalled.message).toMatch(/Bedrock stream stalled: no data for 400 ms/);
  });
});
