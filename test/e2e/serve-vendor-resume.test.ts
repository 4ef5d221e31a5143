/**
 * @module
 * A script paused on a client tool by one `codecall serve --http` process resumes on another
 * (the first one stopped): both share `serve.vendorSecret` and `serve.vendorJournalDir`. Driven by
 * the unmodified `@anthropic-ai/sdk`; the model behind is a scripted Claude on the Anthropic wire.
 */
import Anthropic from '@anthropic-ai/sdk';
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

const TOOLS: Anthropic.ToolUnion[] = [
  { type: 'code_execution_20250825', name: 'code_execution' },
  {
    name: 'get_weather',
    description: 'Weather of a city.',
    input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    allowed_callers: ['code_execution_20250825'],
  },
];

async function start(
  configPath: string,
  wire: WireServer,
): Promise<{ serve: ServeProcess; client: Anthropic }> {
  const serve = spawnServe(['--http', '--port', '0', '--config', configPath], {
    env: { ANTHROPIC_BASE_URL: wire.origin, ANTHROPIC_API_KEY: 'sk-wire' },
  });
  running.push(serve);
  const [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)\/mcp/)) as [string, string];
  return { serve, client: new Anthropic({ baseURL: url, apiKey: 'unused-on-loopback', maxRetries: 0 }) };
}

describe('codecall serve --http: /v1/messages across processes', () => {
  it('resumes a paused script on another serve process sharing the key and the journal folder', async () => {
    await using wire = await WireServer.open();
    const temp = tempServeConfig({
      serve: {
        models: { 'claude-wire': 'anthropic:claude-wire-scripted' },
        vendorSecret: 'a-shared-secret-of-32-characters',
        vendorJournalDir: 'paused',
      },
    });
    dirs.push(temp.dir);
    wire.enqueue(
      '/v1/messages',
      {
        body: anthropicMessage({
          content: [{ type: 'tool_use', id: 'toolu_model_1', name: 'execute_code', input: { code: SCRIPT } }],
          stopReason: 'tool_use',
        }),
      },
      { body: anthropicMessage({ content: [{ type: 'text', text: 'Done.' }], stopReason: 'end_turn' }) },
    );
    const question = { role: 'user' as const, content: 'Count the team and tell me the weather in Paris.' };

    const a = await start(temp.configPath, wire);
    const first = await a.client.messages.create({
      model: 'claude-wire',
      max_tokens: 256,
      tools: TOOLS,
      messages: [question],
    });
    expect(first.stop_reason).toBe('tool_use');
    const nested = first.content.find((b) => b.type === 'tool_use')!;
    expect(nested).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });
    a.serve.child.kill('SIGTERM');
    await a.serve.exited;

    const b = await start(temp.configPath, wire);
    const second = await b.client.messages.create({
      model: 'claude-wire',
      max_tokens: 256,
      tools: TOOLS,
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
    b.serve.child.kill('SIGTERM');
    await b.serve.exited;
  }, 240_000);
});
