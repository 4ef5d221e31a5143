/**
 * @module
 * A tool search, then a script calling the tool it loaded from code, paused by one
 * `codecall serve --http` process and resumed on another (both share `serve.vendorSecret` and
 * `serve.vendorJournalDir`), in both dialects: the second process knows the deferred tool is
 * loaded only from the history the client sends back (Anthropic's `tool_reference` blocks,
 * OpenAI's `tool_search_output` item), and the replayed script needs it bound. Driven by the
 * unmodified `@anthropic-ai/sdk` and `openai` clients; the model behind is a scripted Claude on
 * the Anthropic wire.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';

import { anthropicMessage, WireServer } from '../integration/providers/wire-server.js';
import { spawnServe, tempServeConfig, type ServeProcess } from './serve-helpers.js';

const running: ServeProcess[] = [];
const dirs: string[] = [];

afterAll(() => {
  for (const serve of running) serve.child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const SCRIPT = `const { members } = await tools.expenses.get_team_members();
const weather = await tools.client.get_weather({ city: 'Paris' });
console.log(\`\${members.length} members; Paris \${weather.temp}\`);`;

const WEATHER = {
  name: 'get_weather',
  description: 'Current weather and temperature of a city.',
  schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};

async function start(configPath: string, wire: WireServer): Promise<{ serve: ServeProcess; url: string }> {
  const serve = spawnServe(['--http', '--port', '0', '--config', configPath], {
    env: { ANTHROPIC_BASE_URL: wire.origin, ANTHROPIC_API_KEY: 'sk-wire' },
  });
  running.push(serve);
  const [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)\/mcp/)) as [string, string];
  return { serve, url };
}

async function stop(serve: ServeProcess): Promise<void> {
  serve.child.kill('SIGTERM');
  await serve.exited;
}

/** The scripted model: a search for the weather tool, then the script, then an answer. */
function enqueueTurns(wire: WireServer, searchName: string): void {
  wire.enqueue(
    '/v1/messages',
    {
      body: anthropicMessage({
        content: [
          {
            type: 'tool_use',
            id: 'toolu_search_1',
            name: searchName,
            input: { query: 'weather temperature' },
          },
        ],
        stopReason: 'tool_use',
      }),
    },
    {
      body: anthropicMessage({
        content: [{ type: 'tool_use', id: 'toolu_code_1', name: 'execute_code', input: { code: SCRIPT } }],
        stopReason: 'tool_use',
      }),
    },
    { body: anthropicMessage({ content: [{ type: 'text', text: 'Done.' }], stopReason: 'end_turn' }) },
  );
}

function config(): string {
  const temp = tempServeConfig({
    serve: {
      models: { 'claude-wire': 'anthropic:claude-wire-scripted' },
      vendorSecret: 'a-shared-secret-of-32-characters',
      vendorJournalDir: 'paused',
    },
  });
  dirs.push(temp.dir);
  return temp.configPath;
}

describe('codecall serve --http: a tool search, then a paused script resumed on another process', () => {
  it('Messages: tool_search_tool_bm25 loads a deferred tool the script calls; another process resumes it', async () => {
    await using wire = await WireServer.open();
    const configPath = config();
    enqueueTurns(wire, 'tool_search_tool_bm25');
    const tools: Anthropic.ToolUnion[] = [
      { type: 'code_execution_20250825', name: 'code_execution' },
      { type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' },
      {
        name: WEATHER.name,
        description: WEATHER.description,
        input_schema: WEATHER.schema,
        allowed_callers: ['code_execution_20250825'],
        defer_loading: true,
      },
    ];
    const question = { role: 'user' as const, content: 'Count the team and tell me the weather in Paris.' };

    const a = await start(configPath, wire);
    const first = await new Anthropic({ baseURL: a.url, apiKey: 'unused', maxRetries: 0 }).messages.create({
      model: 'claude-wire',
      max_tokens: 256,
      tools,
      messages: [question],
    });
    expect(first.content.find((b) => b.type === 'tool_search_tool_result')?.content).toEqual({
      type: 'tool_search_tool_search_result',
      tool_references: [{ type: 'tool_reference', tool_name: 'get_weather' }],
    });
    expect(first.stop_reason).toBe('tool_use');
    const nested = first.content.find((b) => b.type === 'tool_use')!;
    expect(nested).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });
    await stop(a.serve);

    const b = await start(configPath, wire);
    const second = await new Anthropic({ baseURL: b.url, apiKey: 'unused', maxRetries: 0 }).messages.create({
      model: 'claude-wire',
      max_tokens: 256,
      tools,
      container: first.container!.id,
      messages: [
        question,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: nested.id, content: '{"temp": 21}' }] },
      ],
    });
    expect(second.content[0]).toMatchObject({
      type: 'code_execution_tool_result',
      content: { return_code: 0, stdout: expect.stringMatching(/^\d+ members; Paris 21\n$/) },
    });
    expect(second.content.at(-1)).toMatchObject({ type: 'text', text: 'Done.' });
    await stop(b.serve);
  }, 240_000);

  it('Responses: a server tool_search loads a deferred function the program calls; another process resumes it', async () => {
    await using wire = await WireServer.open();
    const configPath = config();
    enqueueTurns(wire, 'tool_search');
    const tools = [
      { type: 'programmatic_tool_calling' },
      { type: 'tool_search', execution: 'server' },
      {
        type: 'function',
        name: WEATHER.name,
        description: WEATHER.description,
        parameters: WEATHER.schema,
        strict: false,
        allowed_callers: ['programmatic'],
        defer_loading: true,
      },
    ] as OpenAI.Responses.Tool[];
    const question = { role: 'user' as const, content: 'Count the team and tell me the weather in Paris.' };

    const a = await start(configPath, wire);
    const first = await new OpenAI({
      baseURL: `${a.url}/v1`,
      apiKey: 'unused',
      maxRetries: 0,
    }).responses.create({
      model: 'claude-wire',
      tools,
      input: [question],
    });
    expect(first.output.find((i) => i.type === 'tool_search_output')).toMatchObject({
      execution: 'server',
      tools: [expect.objectContaining({ type: 'function', name: 'get_weather' })],
    });
    const call = first.output.find((i) => i.type === 'function_call')!;
    expect(call).toMatchObject({ name: 'get_weather', caller: { type: 'program' } });
    await stop(a.serve);

    const b = await start(configPath, wire);
    const second = await new OpenAI({
      baseURL: `${b.url}/v1`,
      apiKey: 'unused',
      maxRetries: 0,
    }).responses.create({
      model: 'claude-wire',
      tools,
      input: [
        question,
        ...(first.output as OpenAI.Responses.ResponseInputItem[]),
        { type: 'function_call_output', call_id: call.call_id, output: '{"temp": 21}' },
      ],
    });
    expect(second.output[0]).toMatchObject({
      type: 'program_output',
      status: 'completed',
      result: expect.stringMatching(/\d+ members; Paris 21/),
    });
    expect(second.output_text).toBe('Done.');
    await stop(b.serve);
  }, 240_000);
});
