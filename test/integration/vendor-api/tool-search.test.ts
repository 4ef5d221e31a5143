/**
 * @module
 * Tool search on the vendor wires, driven by the unmodified official clients on loopback:
 * Anthropic's `tool_search_tool_bm25_20251119` / `tool_search_tool_regex_20251119` with
 * `defer_loading` tools (`server_tool_use` + `tool_search_tool_result` with `tool_reference`s),
 * and OpenAI's `tool_search` with `execution: "server"` (codecall answers: `tool_search_call` +
 * `tool_search_output`) and `"client"` (the `tool_search_call` goes to the client, whose
 * `tool_search_output` loads the tools). The model behind is a scripted Claude on the Anthropic
 * wire (what it was offered is read back from the wire), or the offline `demo` model.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DemoLanguageModel } from '../../../src/agent/index.js';
import { parseConfig } from '../../../src/config/index.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { createLanguageModel } from '../../../src/providers/create-language-model.js';
import type { LanguageModel } from '../../../src/providers/language-model.js';
import { startHttpServer, type HttpServerHandle } from '../../../src/server/index.js';
import { createExpenseData, overBudgetMembers } from '../../../src/testing/servers/index.js';
import { createVendorRoutes } from '../../../src/vendor-api/index.js';
import { anthropicMessage, WireServer } from '../providers/wire-server.js';

const TOKEN = 'vendor-search-token';
let runtime: CodecallRuntime;
let wire: WireServer;
let http: HttpServerHandle;
let anthropic: Anthropic;
let openai: OpenAI;

beforeAll(async () => {
  runtime = await CodecallRuntime.open({
    config: parseConfig(
      { mcpServers: {}, sandbox: { workers: 1 }, history: { enabled: false } },
      { file: '<tool-search.test>' },
    ),
    history: false,
  });
  wire = await WireServer.open();
  const models: Record<string, LanguageModel> = {
    demo: new DemoLanguageModel(),
    scripted: createLanguageModel('anthropic:claude-wire-scripted', {
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
  const baseURL = `http://127.0.0.1:${http.port}`;
  anthropic = new Anthropic({ apiKey: TOKEN, baseURL, maxRetries: 0 });
  openai = new OpenAI({ apiKey: TOKEN, baseURL: `${baseURL}/v1`, maxRetries: 0 });
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
const BM25: Anthropic.ToolSearchToolBm25_20251119 = {
  type: 'tool_search_tool_bm25_20251119',
  name: 'tool_search_tool_bm25',
};
const REGEX: Anthropic.ToolSearchToolRegex20251119 = {
  type: 'tool_search_tool_regex_20251119',
  name: 'tool_search_tool_regex',
};
const citySchema = {
  type: 'object' as const,
  properties: { city: { type: 'string' } },
  required: ['city'],
};
const WEATHER: Anthropic.Tool = {
  name: 'get_weather',
  description: 'Current weather and temperature of a city.',
  input_schema: citySchema,
  defer_loading: true,
};
const destinationSchema = {
  type: 'object' as const,
  properties: { destination: { type: 'string' } },
  required: ['destination'],
};
const FLIGHTS: Anthropic.Tool = {
  name: 'book_flight',
  description: 'Books a plane ticket.',
  input_schema: destinationSchema,
  defer_loading: true,
};
const CLOCK: Anthropic.Tool = {
  name: 'local_time',
  description: 'The local time of a city.',
  input_schema: citySchema,
};

/** Names of the tools the model behind was offered in its `n`-th request from `before`. */
function offered(before: number, n: number): string[] {
  const request = wire.requestsTo('/v1/messages')[before + n]!;
  return (request.body.tools as { name: string }[]).map((t) => t.name);
}

function searchCall(id: string, name: string, query: string): ReturnType<typeof anthropicMessage> {
  return anthropicMessage({
    content: [{ type: 'tool_use', id, name, input: { query } }],
    stopReason: 'tool_use',
    usage: { input: 50, output: 10 },
  });
}

describe('Anthropic tool search (tool_search_tool_bm25 / _regex, defer_loading)', () => {
  it('a BM25 search answers with tool_reference blocks and loads the deferred tool for the next model turn', async () => {
    wire.enqueue(
      '/v1/messages',
      { body: searchCall('toolu_s1', 'tool_search_tool_bm25', 'weather temperature') },
      {
        body: anthropicMessage({
          content: [{ type: 'tool_use', id: 'toolu_w1', name: 'get_weather', input: { city: 'Oslo' } }],
          stopReason: 'tool_use',
        }),
      },
    );
    const before = wire.requestsTo('/v1/messages').length;
    const message = await anthropic.messages.create({
      model: 'scripted',
      max_tokens: 512,
      tools: [CODE_TOOL, BM25, WEATHER, FLIGHTS, CLOCK],
      messages: [{ role: 'user', content: 'Weather in Oslo?' }],
    });
    expect(message.stop_reason).toBe('tool_use');
    const [search, result, call] = message.content;
    expect(search).toMatchObject({
      type: 'server_tool_use',
      name: 'tool_search_tool_bm25',
      input: { query: 'weather temperature' },
    });
    expect(search!.type === 'server_tool_use' && search.id).toMatch(/^srvtoolu_/);
    expect(result).toEqual({
      type: 'tool_search_tool_result',
      tool_use_id: search!.type === 'server_tool_use' ? search.id : '',
      content: {
        type: 'tool_search_tool_search_result',
        tool_references: [{ type: 'tool_reference', tool_name: 'get_weather' }],
      },
    });
    expect(call).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Oslo' } });
    // Deferred tools are hidden until referenced: the first turn saw neither, the second saw get_weather only.
    expect(offered(before, 0)).toContain('tool_search_tool_bm25');
    expect(offered(before, 0)).toContain('local_time');
    expect(offered(before, 0)).not.toContain('get_weather');
    expect(offered(before, 0)).not.toContain('book_flight');
    expect(offered(before, 1)).toContain('get_weather');
    expect(offered(before, 1)).not.toContain('book_flight');

    // The continuation (the client's tool_result) keeps the tool loaded from the history's tool_reference.
    wire.enqueue('/v1/messages', {
      body: anthropicMessage({ content: [{ type: 'text', text: 'Cold.' }], stopReason: 'end_turn' }),
    });
    const next = await anthropic.messages.create({
      model: 'scripted',
      max_tokens: 512,
      tools: [CODE_TOOL, BM25, WEATHER, FLIGHTS, CLOCK],
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: message.content },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: (call as Anthropic.ToolUseBlock).id, content: '-3C' },
          ],
        },
      ],
    });
    expect(next.content.at(-1)).toMatchObject({ type: 'text', text: 'Cold.' });
    expect(offered(before, 2)).toContain('get_weather');
    expect(offered(before, 2)).not.toContain('book_flight');
    expect(JSON.stringify(wire.requestsTo('/v1/messages')[before + 2]!.body.messages)).toContain(
      'callable now',
    );
  }, 120_000);

  it('a regex search matches names and descriptions; a pattern it cannot run is a tool_search_tool_result_error', async () => {
    wire.enqueue(
      '/v1/messages',
      {
        body: anthropicMessage({
          content: [
            {
              type: 'tool_use',
              id: 'toolu_r1',
              name: 'tool_search_tool_regex',
              input: { query: '(?i)FLIGHT|ticket' },
            },
            { type: 'tool_use', id: 'toolu_r2', name: 'tool_search_tool_regex', input: { query: '(a)\\1' } },
            {
              type: 'tool_use',
              id: 'toolu_r3',
              name: 'tool_search_tool_regex',
              input: { query: 'x'.repeat(201) },
            },
          ],
          stopReason: 'tool_use',
        }),
      },
      { body: anthropicMessage({ content: [{ type: 'text', text: 'Done.' }], stopReason: 'end_turn' }) },
    );
    const before = wire.requestsTo('/v1/messages').length;
    const message = await anthropic.messages.create({
      model: 'scripted',
      max_tokens: 512,
      tools: [REGEX, WEATHER, FLIGHTS],
      messages: [{ role: 'user', content: 'Book me a flight.' }],
    });
    const results = message.content.filter((b) => b.type === 'tool_search_tool_result');
    expect(results.map((r) => r.content)).toEqual([
      {
        type: 'tool_search_tool_search_result',
        tool_references: [{ type: 'tool_reference', tool_name: 'book_flight' }],
      },
      {
        type: 'tool_search_tool_result_error',
        error_code: 'invalid_tool_input',
        error_message: expect.stringMatching(/backreference/i),
      },
      {
        type: 'tool_search_tool_result_error',
        error_code: 'invalid_tool_input',
        error_message: expect.stringMatching(/201 characters; at most 200/),
      },
    ]);
    expect(offered(before, 1)).toContain('book_flight');
    expect(offered(before, 1)).not.toContain('get_weather');
  }, 120_000);

  it('a deferred tool opened to code is declared and callable from code only once a search loaded it', async () => {
    const weatherFromCode: Anthropic.Tool = { ...WEATHER, allowed_callers: ['code_execution_20250825'] };
    const script = `const w = await tools.client.get_weather({ city: 'Rome' });\nconsole.log('Rome', w.temp);`;
    wire.enqueue(
      '/v1/messages',
      // Before any search the script cannot see the tool: it fails.
      {
        body: anthropicMessage({
          content: [{ type: 'tool_use', id: 'toolu_c0', name: 'execute_code', input: { code: script } }],
          stopReason: 'tool_use',
        }),
      },
      { body: searchCall('toolu_c1', 'tool_search_tool_bm25', 'weather') },
      {
        body: anthropicMessage({
          content: [{ type: 'tool_use', id: 'toolu_c2', name: 'execute_code', input: { code: script } }],
          stopReason: 'tool_use',
        }),
      },
    );
    const before = wire.requestsTo('/v1/messages').length;
    const first = await anthropic.messages.create({
      model: 'scripted',
      max_tokens: 512,
      tools: [CODE_TOOL, BM25, weatherFromCode],
      messages: [{ role: 'user', content: 'Weather in Rome?' }],
    });
    const codeDescription = (n: number): string =>
      (
        wire.requestsTo('/v1/messages')[before + n]!.body.tools as { name: string; description: string }[]
      ).find((t) => t.name === 'execute_code')!.description;
    expect(codeDescription(0)).not.toContain('get_weather');
    const failed = first.content.find((b) => b.type === 'code_execution_tool_result')!;
    expect(failed.content).toMatchObject({ return_code: 1 });
    expect(codeDescription(2)).toContain('get_weather');
    expect(first.stop_reason).toBe('tool_use');
    const nested = first.content.filter((b) => b.type === 'tool_use');
    expect(nested).toHaveLength(1);
    expect(nested[0]).toMatchObject({ name: 'get_weather', caller: { type: 'code_execution_20250825' } });
    expect(first.container?.id).toMatch(/^container_/);

    wire.enqueue('/v1/messages', {
      body: anthropicMessage({ content: [{ type: 'text', text: 'Warm.' }], stopReason: 'end_turn' }),
    });
    const second = await anthropic.messages.create({
      model: 'scripted',
      max_tokens: 512,
      tools: [CODE_TOOL, BM25, weatherFromCode],
      container: first.container!.id,
      messages: [
        { role: 'user', content: 'Weather in Rome?' },
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: nested[0]!.id, content: '{"temp": 24}' }],
        },
      ],
    });
    expect(second.content[0]).toMatchObject({
      type: 'code_execution_tool_result',
      content: { return_code: 0, stdout: 'Rome 24\n' },
    });
  }, 120_000);

  it('the demo model searches, then its script calls the loaded client tools (messages.stream)', async () => {
    const expected = overBudgetMembers(createExpenseData(), 'Q3', 'travel');
    const data = createExpenseData();
    const tools: Anthropic.ToolUnion[] = [
      CODE_TOOL,
      BM25,
      ...['get_team_members', 'get_budget_by_level', 'get_expenses'].map((name) => ({
        name,
        description: `Expense example tool ${name.replaceAll('_', ' ')}.`,
        input_schema: { type: 'object' as const, properties: {} },
        allowed_callers: ['code_execution_20250825' as const],
        defer_loading: true,
      })),
    ];
    const messages: Anthropic.MessageParam[] = [
      { role: 'user', content: 'Which team members exceeded their Q3 travel budget?' },
    ];
    const answer = (name: string, input: Record<string, unknown>): string => {
      if (name === 'get_team_members') return JSON.stringify({ members: data.members });
      if (name === 'get_budget_by_level')
        return JSON.stringify(
          data.budgets.find((b) => b.level === input.level && b.quarter === input.quarter),
        );
      return JSON.stringify({ items: data.expenses, total: data.expenses.length, nextOffset: null });
    };
    let response = await anthropic.messages
      .stream({ model: 'demo', max_tokens: 4096, tools, messages })
      .finalMessage();
    const search = response.content.find((b) => b.type === 'tool_search_tool_result');
    expect(search?.content).toMatchObject({
      tool_references: expect.arrayContaining([
        { type: 'tool_reference', tool_name: 'get_team_members' },
        { type: 'tool_reference', tool_name: 'get_expenses' },
        { type: 'tool_reference', tool_name: 'get_budget_by_level' },
      ]),
    });
    let rounds = 0;
    while (response.stop_reason === 'tool_use' && rounds < 10) {
      rounds++;
      messages.push({ role: 'assistant', content: response.content });
      messages.push({
        role: 'user',
        content: response.content
          .filter((b) => b.type === 'tool_use')
          .map((b) => ({
            type: 'tool_result' as const,
            tool_use_id: b.id,
            content: answer(b.name, b.input as Record<string, unknown>),
          })),
      });
      response = await anthropic.messages
        .stream({ model: 'demo', max_tokens: 4096, tools, messages, container: response.container!.id })
        .finalMessage();
    }
    expect(rounds).toBeGreaterThanOrEqual(2);
    const text = response.content.filter((b) => b.type === 'text').at(-1);
    expect(text?.type === 'text' && text.text).toContain(
      `${expected.length} of 20 team members exceeded their Q3 travel budget`,
    );
  }, 180_000);

  it("tool_reference blocks in the client's own tool_result (a client-side search) load the deferred tool", async () => {
    wire.enqueue('/v1/messages', {
      body: anthropicMessage({ content: [{ type: 'text', text: 'Loaded.' }], stopReason: 'end_turn' }),
    });
    const before = wire.requestsTo('/v1/messages').length;
    const mySearch: Anthropic.Tool = {
      name: 'my_search',
      description: "The client's own tool search.",
      input_schema: { type: 'object', properties: { q: { type: 'string' } } },
    };
    await anthropic.messages.create({
      model: 'scripted',
      max_tokens: 256,
      tools: [BM25, mySearch, WEATHER, FLIGHTS],
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_my_1', name: 'my_search', input: { q: 'weather' } }],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_my_1',
              content: [{ type: 'tool_reference', tool_name: 'get_weather' }],
            },
          ],
        },
      ],
    });
    expect(offered(before, 0)).toContain('get_weather');
    expect(offered(before, 0)).not.toContain('book_flight');
  }, 60_000);

  it('refuses defer_loading without a search tool, and a deferred search tool, naming the field', async () => {
    const bad = anthropic.messages.create({
      model: 'scripted',
      max_tokens: 64,
      tools: [WEATHER],
      messages: [{ role: 'user', content: 'hi' }],
    });
    await expect(bad).rejects.toMatchObject({
      status: 400,
      error: {
        error: { type: 'invalid_request_error', message: expect.stringMatching(/^tools: .*defer_loading/) },
      },
    });
    const deferredSearch = anthropic.messages.create({
      model: 'scripted',
      max_tokens: 64,
      tools: [{ ...BM25, defer_loading: true }, WEATHER],
      messages: [{ role: 'user', content: 'hi' }],
    });
    await expect(deferredSearch).rejects.toMatchObject({
      status: 400,
      error: { error: { message: expect.stringMatching(/^tools\.0\.defer_loading: /) } },
    });
  }, 60_000);
});

const WEATHER_FN: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Current weather and temperature of a city.',
  parameters: citySchema,
  strict: false,
  defer_loading: true,
};
const FLIGHT_FN: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'book_flight',
  description: 'Books a plane ticket.',
  parameters: destinationSchema,
  strict: false,
  defer_loading: true,
};

describe('OpenAI tool_search (execution "server" and "client", defer_loading)', () => {
  it('server execution: codecall answers with tool_search_call + tool_search_output and loads the function', async () => {
    wire.enqueue(
      '/v1/messages',
      { body: searchCall('toolu_o1', 'tool_search', 'weather temperature') },
      {
        body: anthropicMessage({
          content: [{ type: 'tool_use', id: 'toolu_o2', name: 'get_weather', input: { city: 'Lima' } }],
          stopReason: 'tool_use',
        }),
      },
    );
    const before = wire.requestsTo('/v1/messages').length;
    const response = await openai.responses.create({
      model: 'scripted',
      input: 'Weather in Lima?',
      tools: [{ type: 'tool_search' }, WEATHER_FN, FLIGHT_FN],
    });
    const [call, output, fn] = response.output;
    expect(call).toMatchObject({
      type: 'tool_search_call',
      call_id: 'toolu_o1',
      execution: 'server',
      status: 'completed',
      arguments: { query: 'weather temperature' },
    });
    expect(output).toMatchObject({
      type: 'tool_search_output',
      call_id: 'toolu_o1',
      execution: 'server',
      status: 'completed',
      tools: [{ ...WEATHER_FN }],
    });
    expect(fn).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Lima"}' });
    expect(offered(before, 0)).not.toContain('get_weather');
    // The Responses API shows deferred functions' names and descriptions; codecall lists them in the search tool.
    const searchTool = (
      wire.requestsTo('/v1/messages')[before]!.body.tools as { name: string; description: string }[]
    ).find((t) => t.name === 'tool_search')!;
    expect(searchTool.description).toContain('- book_flight: Books a plane ticket.');
    expect(offered(before, 1)).toContain('get_weather');
    expect(offered(before, 1)).not.toContain('book_flight');
  }, 120_000);

  it('client execution: the tool_search_call goes to the client, whose tool_search_output loads the tools', async () => {
    wire.enqueue('/v1/messages', { body: searchCall('toolu_oc1', 'tool_search', 'plane tickets') });
    const before = wire.requestsTo('/v1/messages').length;
    const tools: OpenAI.Responses.Tool[] = [
      {
        type: 'tool_search',
        execution: 'client',
        description: 'Search the travel tools.',
        parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
      },
      FLIGHT_FN,
    ];
    const first = await openai.responses.create({ model: 'scripted', input: 'Fly me to Quito.', tools });
    expect(first.output).toEqual([
      {
        type: 'tool_search_call',
        id: expect.stringMatching(/^tsc_/),
        call_id: 'toolu_oc1',
        arguments: { query: 'plane tickets' },
        execution: 'client',
        status: 'completed',
      },
    ]);
    const sent = wire.requestsTo('/v1/messages')[before]!.body.tools as {
      name: string;
      description: string;
      input_schema: unknown;
    }[];
    expect(sent.find((t) => t.name === 'tool_search')).toMatchObject({
      description: expect.stringContaining('Search the travel tools.'),
      input_schema: { required: ['query'] },
    });

    wire.enqueue('/v1/messages', {
      body: anthropicMessage({
        content: [
          { type: 'tool_use', id: 'toolu_oc2', name: 'book_flight', input: { destination: 'Quito' } },
        ],
        stopReason: 'tool_use',
      }),
    });
    const second = await openai.responses.create({
      model: 'scripted',
      tools,
      input: [
        { role: 'user', content: 'Fly me to Quito.' },
        ...(first.output as OpenAI.Responses.ResponseInputItem[]),
        {
          type: 'tool_search_output',
          call_id: 'toolu_oc1',
          execution: 'client',
          status: 'completed',
          tools: [FLIGHT_FN],
        },
      ],
    });
    expect(second.output.at(-1)).toMatchObject({ type: 'function_call', name: 'book_flight' });
    expect(offered(before, 1)).toContain('book_flight');
    expect(JSON.stringify(wire.requestsTo('/v1/messages')[before + 1]!.body.messages)).toContain(
      'callable now: book_flight',
    );
  }, 120_000);

  it('the demo model answers the budget question through a server tool_search, streaming', async () => {
    const expected = overBudgetMembers(createExpenseData(), 'Q3', 'travel');
    const data = createExpenseData();
    const tools: OpenAI.Responses.Tool[] = [
      { type: 'programmatic_tool_calling' } as unknown as OpenAI.Responses.Tool,
      { type: 'tool_search' },
      ...['get_team_members', 'get_budget_by_level', 'get_expenses'].map(
        (name): OpenAI.Responses.FunctionTool => ({
          type: 'function',
          name,
          description: `Expense example tool ${name.replaceAll('_', ' ')}.`,
          parameters: { type: 'object', properties: {} },
          strict: false,
          defer_loading: true,
          allowed_callers: ['programmatic'],
        }),
      ),
    ];
    const input: OpenAI.Responses.ResponseInputItem[] = [
      { role: 'user', content: 'Which team members exceeded their Q3 travel budget?' },
    ];
    const answer = (name: string, args: Record<string, unknown>): string => {
      if (name === 'get_team_members') return JSON.stringify({ members: data.members });
      if (name === 'get_budget_by_level')
        return JSON.stringify(data.budgets.find((b) => b.level === args.level && b.quarter === args.quarter));
      return JSON.stringify({ items: data.expenses, total: data.expenses.length, nextOffset: null });
    };
    const ask = async (): Promise<OpenAI.Responses.Response> => {
      const stream = await openai.responses.create({ model: 'demo', input, tools, stream: true });
      let done: OpenAI.Responses.Response | undefined;
      for await (const event of stream) if (event.type === 'response.completed') done = event.response;
      return done!;
    };
    let response = await ask();
    expect(response.output.find((i) => i.type === 'tool_search_output')).toMatchObject({
      execution: 'server',
      tools: expect.arrayContaining([expect.objectContaining({ name: 'get_expenses' })]),
    });
    let rounds = 0;
    for (;;) {
      const calls = response.output.filter((i) => i.type === 'function_call');
      if (calls.length === 0 || rounds >= 10) break;
      rounds++;
      input.push(...(response.output as OpenAI.Responses.ResponseInputItem[]));
      for (const call of calls)
        input.push({
          type: 'function_call_output',
          call_id: call.call_id,
          output: answer(call.name, JSON.parse(call.arguments) as Record<string, unknown>),
        });
      response = await ask();
    }
    expect(rounds).toBeGreaterThanOrEqual(2);
    const text = response.output
      .flatMap((i) => (i.type === 'message' ? i.content : []))
      .map((c) => (c.type === 'output_text' ? c.text : ''))
      .join('\n');
    expect(text).toContain(`${expected.length} of 20 team members exceeded their Q3 travel budget`);
  }, 180_000);

  it('refuses defer_loading without tool_search, naming tools', async () => {
    await expect(
      openai.responses.create({ model: 'scripted', input: 'hi', tools: [WEATHER_FN] }),
    ).rejects.toMatchObject({
      status: 400,
      error: { param: 'tools', message: expect.stringMatching(/tool_search/) },
    });
  }, 60_000);
});
