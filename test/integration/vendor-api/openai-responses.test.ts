/**
 * @module
 * `POST /v1/responses` through `startHttpServer`, driven by the unmodified `openai` client
 * (`responses.create`, JSON and streaming) and the OpenAI Agents SDK's Responses model on
 * loopback. The model behind is a scripted model over the OpenAI Chat Completions wire: a script
 * that calls a client function pauses with a `program` item (its `fingerprint` a signed journal
 * cursor) and nested `function_call` items with `caller: {type: "program"}`; the round-tripped
 * items resume it, and the script's end is a `program_output` item.
 */
import { Agent, run, tool } from '@openai/agents';
import { OpenAIResponsesModel, programmaticToolCallingTool } from '@openai/agents-openai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

import { DemoLanguageModel } from '../../../src/agent/index.js';
import { parseConfig } from '../../../src/config/index.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { createLanguageModel } from '../../../src/providers/create-language-model.js';
import type { LanguageModel } from '../../../src/providers/language-model.js';
import { startHttpServer, type HttpServerHandle } from '../../../src/server/index.js';
import { createExpenseServer, inMemoryTransport } from '../../../src/testing/servers/index.js';
import { createVendorRoutes } from '../../../src/vendor-api/index.js';
import { openaiCompletion, WireServer } from '../providers/wire-server.js';

const TOKEN = 'vendor-openai-token';
const CHAT = '/v1/chat/completions';
let runtime: CodecallRuntime;
let wire: WireServer;
let http: HttpServerHandle;
let client: OpenAI;

beforeAll(async () => {
  runtime = await CodecallRuntime.open({
    config: parseConfig(
      { mcpServers: {}, sandbox: { workers: 1 }, history: { enabled: false } },
      { file: '<openai-responses.test>' },
    ),
    history: false,
    tools: { transports: { expenses: inMemoryTransport(() => createExpenseServer()) } },
  });
  wire = await WireServer.open();
  const models: Record<string, LanguageModel> = {
    demo: new DemoLanguageModel(),
    'gpt-scripted': createLanguageModel('openai:gpt-wire-scripted', {
      apiKey: 'sk-wire',
      baseURL: `${wire.origin}/v1`,
      maxRetries: 0,
    }),
  };
  http = await startHttpServer({
    runtime,
    port: 0,
    token: TOKEN,
    routes: createVendorRoutes({
      runtime,
      model: (name) => (Object.hasOwn(models, name) ? models[name] : undefined),
      modelNames: () => Object.keys(models),
    }),
  });
  client = new OpenAI({ apiKey: TOKEN, baseURL: `http://127.0.0.1:${http.port}/v1`, maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  await http?.close();
  await wire?.close();
  await runtime?.close();
});

const SCRIPT = `const { members } = await tools.expenses.get_team_members();
const weather = await tools.client.get_weather({ city: 'Paris' });
console.log(\`\${members.length} members; Paris \${weather.temp}\`);`;

const TOOLS: OpenAI.Responses.Tool[] = [
  { type: 'programmatic_tool_calling' },
  {
    type: 'function',
    name: 'get_weather',
    description: 'Weather of a city.',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    strict: false,
    allowed_callers: ['programmatic'],
  },
];

/** The scripted model writes the script; with `answer`, it then answers once it has read the output. */
function enqueueScript(answer?: string): void {
  wire.enqueue(CHAT, {
    body: openaiCompletion({
      content: null,
      toolCalls: [{ id: 'call_model_1', name: 'execute_code', arguments: JSON.stringify({ code: SCRIPT }) }],
      finishReason: 'tool_calls',
      usage: { prompt: 100, completion: 40 },
    }),
  });
  if (answer !== undefined)
    wire.enqueue(CHAT, {
      body: openaiCompletion({
        content: answer,
        finishReason: 'stop',
        usage: { prompt: 150, completion: 10 },
      }),
    });
}

describe('POST /v1/responses with openai', () => {
  it('pauses a program on a client function and resumes it from the round-tripped items (JSON)', async () => {
    enqueueScript('It is 21 degrees in Paris.');
    const before = wire.requestsTo(CHAT).length;
    const first = await client.responses.create({
      model: 'gpt-scripted',
      tools: TOOLS,
      input: 'Weather in Paris?',
    });
    expect(first.status).toBe('completed');
    const program = first.output.find((item) => item.type === 'program')!;
    expect(program).toMatchObject({ code: SCRIPT, fingerprint: expect.stringMatching(/^container_cc1_/) });
    const calls = first.output.filter((item) => item.type === 'function_call');
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      name: 'get_weather',
      arguments: JSON.stringify({ city: 'Paris' }),
      caller: { type: 'program', caller_id: program.call_id },
    });
    expect(first.usage).toMatchObject({ input_tokens: 100, output_tokens: 40 });

    const second = await client.responses.create({
      model: 'gpt-scripted',
      tools: TOOLS,
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        ...(first.output as OpenAI.Responses.ResponseInputItem[]),
        { type: 'function_call_output', call_id: calls[0]!.call_id, output: '{"temp": 21}' },
      ],
    });
    expect(second.output[0]).toMatchObject({
      type: 'program_output',
      call_id: program.call_id,
      status: 'completed',
      result: expect.stringMatching(/^stdout:\n\d+ members; Paris 21\n/),
    });
    expect(second.output_text).toBe('It is 21 degrees in Paris.');
    expect(JSON.stringify(wire.requestsTo(CHAT).slice(before)[1]!.body.messages)).toContain('Paris 21');
  }, 120_000);

  it('streams: the completed response carries the program and its nested call', async () => {
    enqueueScript();
    const stream = client.responses.stream({
      model: 'gpt-scripted',
      tools: TOOLS,
      input: 'Weather in Paris?',
    });
    const final = await stream.finalResponse();
    const program = final.output.find((item) => item.type === 'program')!;
    expect(program.fingerprint).toMatch(/^container_cc1_/);
    expect(final.output.find((item) => item.type === 'function_call')).toMatchObject({
      caller: { type: 'program', caller_id: program.call_id },
    });
  }, 120_000);

  it('refuses a forged fingerprint and an unknown model with OpenAI error shapes', async () => {
    enqueueScript();
    const first = await client.responses.create({
      model: 'gpt-scripted',
      tools: TOOLS,
      input: 'Weather in Paris?',
    });
    const program = first.output.find((item) => item.type === 'program')!;
    const call = first.output.find((item) => item.type === 'function_call')!;
    const forged = { ...program, fingerprint: `${program.fingerprint.slice(0, -4)}AAAA` };
    const refused = await client.responses
      .create({
        model: 'gpt-scripted',
        tools: TOOLS,
        input: [
          { role: 'user', content: 'Weather in Paris?' },
          forged as OpenAI.Responses.ResponseInputItem,
          call as OpenAI.Responses.ResponseInputItem,
          { type: 'function_call_output', call_id: call.call_id, output: '{"temp": 1}' },
        ],
      })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      type: 'invalid_request_error',
      param: 'fingerprint',
      message: expect.stringMatching(/not issued by this server/),
    });
    const unknown = await client.responses
      .create({ model: 'nope', input: 'hi' })
      .catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect((unknown as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
  }, 120_000);

  it('runs an Agents SDK agent (OpenAIResponsesModel) whose function is called from the program', async () => {
    enqueueScript('Paris is at 21 degrees.');
    const asked: string[] = [];
    const agent = new Agent({
      name: 'weather',
      instructions: 'Answer with the weather.',
      model: new OpenAIResponsesModel(client, 'gpt-scripted'),
      tools: [
        programmaticToolCallingTool(),
        tool({
          name: 'get_weather',
          description: 'Weather of a city.',
          parameters: z.object({ city: z.string() }),
          allowedCallers: ['programmatic'],
          execute: ({ city }) => {
            asked.push(city);
            return { temp: 21 };
          },
        }),
      ],
    });
    const result = await run(agent, 'Weather in Paris?');
    expect(asked).toEqual(['Paris']);
    expect(result.finalOutput).toBe('Paris is at 21 degrees.');
  }, 120_000);

  it('refuses an expired program fingerprint with the OpenAI error shape (a serve whose fingerprints last 1 ms)', async () => {
    const scripted = createLanguageModel('openai:gpt-wire-scripted', {
      apiKey: 'sk-wire',
      baseURL: `${wire.origin}/v1`,
      maxRetries: 0,
    });
    const shortLived = await startHttpServer({
      runtime,
      port: 0,
      token: TOKEN,
      routes: createVendorRoutes({
        runtime,
        model: (name) => (name === 'gpt-scripted' ? scripted : undefined),
        modelNames: () => ['gpt-scripted'],
        containerTtlMs: 1,
      }),
    });
    try {
      const short = new OpenAI({
        apiKey: TOKEN,
        baseURL: `http://127.0.0.1:${shortLived.port}/v1`,
        maxRetries: 0,
      });
      enqueueScript();
      const first = await short.responses.create({
        model: 'gpt-scripted',
        tools: TOOLS,
        input: 'Weather in Paris?',
      });
      const program = first.output.find((item) => item.type === 'program')!;
      const call = first.output.find((item) => item.type === 'function_call')!;
      expect(program.fingerprint).toMatch(/^container_cc1_/);
      await new Promise((resolve) => setTimeout(resolve, 20));
      const before = wire.requestsTo(CHAT).length;
      const refused = await short.responses
        .create({
          model: 'gpt-scripted',
          tools: TOOLS,
          input: [
            { role: 'user', content: 'Weather in Paris?' },
            ...(first.output as OpenAI.Responses.ResponseInputItem[]),
            { type: 'function_call_output', call_id: call.call_id, output: '{"temp": 3}' },
          ],
        })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      expect((refused as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
        type: 'invalid_request_error',
        param: 'fingerprint',
        code: null,
        message: expect.stringMatching(/^fingerprint: it expired; start the turn again/),
      });
      // Refused before the model behind was asked.
      expect(wire.requestsTo(CHAT).length).toBe(before);
    } finally {
      await shortLived.close();
    }
  }, 120_000);
});
