/**
 * @module
 * `POST /v1/messages` through `startHttpServer` (what `codecall serve --http` mounts), driven by
 * the unmodified `@anthropic-ai/sdk` client on loopback. The model behind is the offline `demo`
 * model, or a scripted Claude served over the Anthropic wire (the provider tests' wire server):
 * a script that calls a client tool pauses with `stop_reason: "tool_use"`, the nested `tool_use`
 * (with `caller`) and a signed `container`; the continuation resumes it by journal replay.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DemoLanguageModel } from '../../../src/agent/index.js';
import { parseConfig } from '../../../src/config/index.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { createLanguageModel } from '../../../src/providers/create-language-model.js';
import type { LanguageModel } from '../../../src/providers/language-model.js';
import { startHttpServer, type HttpServerHandle } from '../../../src/server/index.js';
import { createExpenseServer, inMemoryTransport } from '../../../src/testing/servers/index.js';
import { createVendorRoutes } from '../../../src/vendor-api/index.js';
import { anthropicMessage, WireServer } from '../providers/wire-server.js';

const TOKEN = 'vendor-test-token';
let runtime: CodecallRuntime;
let wire: WireServer;
let http: HttpServerHandle;
let client: Anthropic;

beforeAll(async () => {
  runtime = await CodecallRuntime.open({
    config: parseConfig(
      { mcpServers: {}, sandbox: { workers: 1 }, history: { enabled: false } },
      { file: '<anthropic-messages.test>' },
    ),
    history: false,
    tools: { transports: { expenses: inMemoryTransport(() => createExpenseServer()) } },
  });
  wire = await WireServer.open();
  const models: Record<string, LanguageModel> = {
    demo: new DemoLanguageModel(),
    'claude-scripted': createLanguageModel('anthropic:claude-wire-scripted', {
      apiKey: 'sk-wire',
      baseURL: wire.origin,
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
  client = new Anthropic({ apiKey: TOKEN, baseURL: `http://127.0.0.1:${http.port}`, maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  await http?.close();
  await wire?.close();
  await runtime?.close();
});

const CODE_TOOL: Anthropic.CodeExecutionTool20250825 = {
  type: 'code_execution_20250825',
  name: 'code_execution',
};
const WEATHER: Anthropic.Tool = {
  name: 'get_weather',
  description: 'Weather of a city.',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  allowed_callers: ['code_execution_20250825'],
};

/** The script the scripted model writes: one MCP call, one client call, one printed line. */
const SCRIPT = `const { members } = await tools.expenses.get_team_members();
const weather = await tools.client.get_weather({ city: 'Paris' });
console.log(\`\${members.length} members; Paris \${weather.temp}\`);`;

describe('POST /v1/messages with @anthropic-ai/sdk', () => {
  it('answers the demo task with the demo model: server_tool_use, code_execution_tool_result, text', async () => {
    const message = await client.messages.create({
      model: 'demo',
      max_tokens: 1024,
      tools: [CODE_TOOL],
      messages: [{ role: 'user', content: 'Which team members exceeded their Q3 travel budget?' }],
    });
    expect(message.stop_reason).toBe('end_turn');
    expect(message.container).toBeNull();
    const types = message.content.map((b) => b.type);
    expect(types).toContain('server_tool_use');
    const code = message.content.find((b) => b.type === 'server_tool_use')!;
    expect(code).toMatchObject({
      name: 'code_execution',
      input: { code: expect.stringContaining('get_expenses') },
    });
    const result = message.content.find((b) => b.type === 'code_execution_tool_result')!;
    expect(result).toMatchObject({
      tool_use_id: code.id,
      content: {
        type: 'code_execution_result',
        return_code: 0,
        stdout: expect.stringMatching(/exceeded their Q3 travel budget/),
      },
    });
    const last = message.content.at(-1)!;
    expect(last.type).toBe('text');
    expect(last.type === 'text' && last.text).toMatch(/of \d+ team members exceeded/);
  }, 120_000);

  it('pauses a script on a client tool and resumes it from the container (non-streaming)', async () => {
    wire.enqueue(
      '/v1/messages',
      {
        body: anthropicMessage({
          content: [{ type: 'tool_use', id: 'toolu_model_1', name: 'execute_code', input: { code: SCRIPT } }],
          stopReason: 'tool_use',
          usage: { input: 100, output: 40 },
        }),
      },
      {
        body: anthropicMessage({
          content: [{ type: 'text', text: 'It is 21 degrees in Paris.' }],
          stopReason: 'end_turn',
          usage: { input: 150, output: 10 },
        }),
      },
    );
    const before = wire.requestsTo('/v1/messages').length;
    const question = { role: 'user' as const, content: 'Count the team and tell me the weather in Paris.' };
    const first = await client.messages.create({
      model: 'claude-scripted',
      max_tokens: 1024,
      tools: [CODE_TOOL, WEATHER],
      messages: [question],
    });
    expect(first.stop_reason).toBe('tool_use');
    const server = first.content.find((b) => b.type === 'server_tool_use')!;
    expect(server).toMatchObject({ name: 'code_execution', input: { code: SCRIPT } });
    const nested = first.content.filter((b) => b.type === 'tool_use');
    expect(nested).toHaveLength(1);
    expect(nested[0]).toMatchObject({
      name: 'get_weather',
      input: { city: 'Paris' },
      caller: { type: 'code_execution_20250825', tool_id: server.id },
    });
    expect(first.container?.id).toMatch(/^container_/);
    expect(Date.parse(first.container!.expires_at)).toBeGreaterThan(Date.now());
    expect(first.usage).toMatchObject({ input_tokens: 100, output_tokens: 40 });

    const second = await client.messages.create({
      model: 'claude-scripted',
      max_tokens: 1024,
      tools: [CODE_TOOL, WEATHER],
      container: first.container!.id,
      messages: [
        question,
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: nested[0]!.id, content: '{"temp": 21}' }],
        },
      ],
    });
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content[0]).toMatchObject({
      type: 'code_execution_tool_result',
      tool_use_id: server.id,
      content: {
        type: 'code_execution_result',
        return_code: 0,
        stdout: expect.stringMatching(/^\d+ members; Paris 21\n$/),
      },
    });
    expect(second.content.at(-1)).toMatchObject({ type: 'text', text: 'It is 21 degrees in Paris.' });
    // The model behind was asked twice, and read the script's output the second time.
    const asked = wire.requestsTo('/v1/messages').slice(before);
    expect(asked).toHaveLength(2);
    expect(JSON.stringify(asked[1]!.body.messages)).toContain('Paris 21');
  }, 120_000);

  it('streams with messages.stream: the final message carries the container of the pause', async () => {
    wire.enqueue('/v1/messages', {
      body: anthropicMessage({
        content: [{ type: 'tool_use', id: 'toolu_model_2', name: 'execute_code', input: { code: SCRIPT } }],
        stopReason: 'tool_use',
      }),
    });
    const stream = client.messages.stream({
      model: 'claude-scripted',
      max_tokens: 1024,
      tools: [CODE_TOOL, WEATHER],
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
    });
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    expect(final.container?.id).toMatch(/^container_/);
    const server = final.content.find((b) => b.type === 'server_tool_use')!;
    expect(server.input).toEqual({ code: SCRIPT });
    expect(final.content.find((b) => b.type === 'tool_use')).toMatchObject({
      input: { city: 'Paris' },
      caller: { type: 'code_execution_20250825', tool_id: server.id },
    });
  }, 120_000);

  it('refuses a forged container, an unknown model and a missing token with Anthropic error shapes', async () => {
    wire.enqueue('/v1/messages', {
      body: anthropicMessage({
        content: [{ type: 'tool_use', id: 'toolu_model_3', name: 'execute_code', input: { code: SCRIPT } }],
        stopReason: 'tool_use',
      }),
    });
    const question = { role: 'user' as const, content: 'Weather in Paris?' };
    const first = await client.messages.create({
      model: 'claude-scripted',
      max_tokens: 64,
      tools: [CODE_TOOL, WEATHER],
      messages: [question],
    });
    const nested = first.content.find((b) => b.type === 'tool_use')!;
    const id = first.container!.id;
    const forged = `${id.slice(0, -4)}${id.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    const continuation = (container: string) =>
      client.messages.create({
        model: 'claude-scripted',
        max_tokens: 64,
        tools: [CODE_TOOL, WEATHER],
        container,
        messages: [
          question,
          { role: 'assistant', content: first.content },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: nested.id, content: '{"temp": 3}' }],
          },
        ],
      });
    const refused = await continuation(forged).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect((refused as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: expect.stringMatching(/^container: .*not issued by this server/),
      },
    });

    const unknown = await client.messages
      .create({ model: 'gpt-nope', max_tokens: 64, messages: [question] })
      .catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(Anthropic.NotFoundError);
    expect(String((unknown as Error).message)).toMatch(/gpt-nope.*serve\.models/);

    const anonymous = new Anthropic({
      apiKey: 'wrong',
      baseURL: `http://127.0.0.1:${http.port}`,
      maxRetries: 0,
    });
    const denied = await anonymous.messages
      .create({ model: 'demo', max_tokens: 64, messages: [question] })
      .catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(Anthropic.AuthenticationError);
  }, 120_000);

  it('refuses an expired container with the Anthropic error shape (a serve whose containers last 1 ms)', async () => {
    const shortLived = await startHttpServer({
      runtime,
      port: 0,
      token: TOKEN,
      routes: createVendorRoutes({
        runtime,
        model: (name) => (name === 'claude-scripted' ? scripted : undefined),
        modelNames: () => ['claude-scripted'],
        containerTtlMs: 1,
      }),
    });
    const scripted = createLanguageModel('anthropic:claude-wire-scripted', {
      apiKey: 'sk-wire',
      baseURL: wire.origin,
      maxRetries: 0,
    });
    try {
      const short = new Anthropic({
        apiKey: TOKEN,
        baseURL: `http://127.0.0.1:${shortLived.port}`,
        maxRetries: 0,
      });
      wire.enqueue('/v1/messages', {
        body: anthropicMessage({
          content: [{ type: 'tool_use', id: 'toolu_model_9', name: 'execute_code', input: { code: SCRIPT } }],
          stopReason: 'tool_use',
        }),
      });
      const question = { role: 'user' as const, content: 'Weather in Paris?' };
      const first = await short.messages.create({
        model: 'claude-scripted',
        max_tokens: 64,
        tools: [CODE_TOOL, WEATHER],
        messages: [question],
      });
      const nested = first.content.find((b) => b.type === 'tool_use')!;
      await new Promise((resolve) => setTimeout(resolve, 20));
      const refused = await short.messages
        .create({
          model: 'claude-scripted',
          max_tokens: 64,
          tools: [CODE_TOOL, WEATHER],
          container: first.container!.id,
          messages: [
            question,
            { role: 'assistant', content: first.content },
            {
              role: 'user',
              content: [{ type: 'tool_result', tool_use_id: nested.id, content: '{"temp": 3}' }],
            },
          ],
        })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
      expect((refused as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message: expect.stringMatching(/^container: it expired; start the turn again/),
        },
      });
    } finally {
      await shortLived.close();
    }
  });
});
