/**
 * @module
 * A script paused on a client tool by one `codecall serve --http` process resumes on another when
 * their jobs backend is a shared Redis (`bullmq`) or PostgreSQL (`postgres`): the paused run lives
 * there, not in the process. The first process is killed (`SIGKILL`: nothing is flushed on the
 * way out) before the second starts. Real `redis-server` and PostgreSQL 15 on free loopback
 * ports; the unmodified `@anthropic-ai/sdk` (Redis) and `openai` (PostgreSQL) clients; the
 * model behind is scripted over the provider's wire.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';

import { hasRedisServer, startRedis } from '../integration/jobs/jobs-helpers.js';
import { postgresBinDir, startPostgres } from '../integration/jobs/postgres-helpers.js';
import { anthropicMessage, openaiCompletion, WireServer } from '../integration/providers/wire-server.js';
import { spawnServe, tempServeConfig, type ServeProcess } from './serve-helpers.js';

const ON_CI = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
const running: ServeProcess[] = [];
const dirs: string[] = [];

afterAll(() => {
  for (const serve of running) serve.child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const SCRIPT = `const { members } = await tools.expenses.get_team_members();
const weather = await tools.client.get_weather({ city: 'Paris' });
console.log(\`\${members.length} members; Paris \${weather.temp}\`);`;
const SECRET = 'a-shared-secret-of-32-characters';

async function start(
  configPath: string,
  env: Record<string, string>,
): Promise<{ serve: ServeProcess; url: string; log: string }> {
  const serve = spawnServe(['--http', '--port', '0', '--config', configPath], { env });
  running.push(serve);
  const [, where] = (await serve.waitFor(/paused scripts (in [^;]+);/)) as [string, string];
  const [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)\/mcp/)) as [string, string];
  return { serve, url, log: where };
}

async function kill(serve: ServeProcess): Promise<void> {
  serve.child.kill('SIGKILL');
  await serve.exited;
}

describe('codecall serve --http: paused vendor scripts in the jobs backend', () => {
  it.skipIf(!hasRedisServer() && !ON_CI)(
    'Redis (bullmq): /v1/messages pauses on one process and resumes on the next after a SIGKILL',
    async () => {
      const redis = await startRedis();
      await using wire = await WireServer.open();
      try {
        const temp = tempServeConfig({
          serve: { models: { 'claude-wire': 'anthropic:claude-wire-scripted' }, vendorSecret: SECRET },
          jobs: { backend: 'bullmq', connection: redis.url },
        });
        dirs.push(temp.dir);
        wire.enqueue(
          '/v1/messages',
          {
            body: anthropicMessage({
              content: [
                { type: 'tool_use', id: 'toolu_model_1', name: 'execute_code', input: { code: SCRIPT } },
              ],
              stopReason: 'tool_use',
            }),
          },
          { body: anthropicMessage({ content: [{ type: 'text', text: 'Done.' }], stopReason: 'end_turn' }) },
        );
        const env = { ANTHROPIC_BASE_URL: wire.origin, ANTHROPIC_API_KEY: 'sk-wire' };
        const tools: Anthropic.ToolUnion[] = [
          { type: 'code_execution_20250825', name: 'code_execution' },
          {
            name: 'get_weather',
            description: 'Weather of a city.',
            input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
            allowed_callers: ['code_execution_20250825'],
          },
        ];
        const question = {
          role: 'user' as const,
          content: 'Count the team and tell me the weather in Paris.',
        };

        const a = await start(temp.configPath, env);
        expect(a.log).toBe('in Redis (jobs.connection)');
        const clientA = new Anthropic({ baseURL: a.url, apiKey: 'unused-on-loopback', maxRetries: 0 });
        const first = await clientA.messages.create({
          model: 'claude-wire',
          max_tokens: 256,
          tools,
          messages: [question],
        });
        expect(first.stop_reason).toBe('tool_use');
        const nested = first.content.find((b) => b.type === 'tool_use')!;
        expect(nested).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });
        await kill(a.serve);

        const b = await start(temp.configPath, env);
        const clientB = new Anthropic({ baseURL: b.url, apiKey: 'unused-on-loopback', maxRetries: 0 });
        const second = await clientB.messages.create({
          model: 'claude-wire',
          max_tokens: 256,
          tools,
          container: first.container!.id,
          messages: [
            question,
            { role: 'assistant', content: first.content },
            {
              role: 'user',
              content: [{ type: 'tool_result', tool_use_id: nested.id, content: '{"temp": 21}' }],
            },
          ],
        });
        expect(second.content[0]).toMatchObject({
          type: 'code_execution_tool_result',
          content: { return_code: 0, stdout: expect.stringMatching(/^\d+ members; Paris 21\n$/) },
        });
        expect(second.content.at(-1)).toMatchObject({ type: 'text', text: 'Done.' });
        b.serve.child.kill('SIGTERM');
        await b.serve.exited;
      } finally {
        await redis.stop();
      }
    },
    300_000,
  );

  it.skipIf(postgresBinDir() === undefined && !ON_CI)(
    'PostgreSQL (postgres): /v1/responses pauses on one process and resumes on the next after a SIGKILL',
    async () => {
      const pg = await startPostgres();
      await using wire = await WireServer.open();
      try {
        const temp = tempServeConfig({
          serve: { models: { 'gpt-wire': 'openai:gpt-wire-scripted' }, vendorSecret: SECRET },
          jobs: { backend: 'postgres', connection: pg.url },
        });
        dirs.push(temp.dir);
        wire.enqueue(
          '/v1/chat/completions',
          {
            body: openaiCompletion({
              content: null,
              toolCalls: [
                { id: 'call_model_1', name: 'execute_code', arguments: JSON.stringify({ code: SCRIPT }) },
              ],
              finishReason: 'tool_calls',
            }),
          },
          { body: openaiCompletion({ content: 'It is 21 degrees in Paris.', finishReason: 'stop' }) },
        );
        const env = { OPENAI_BASE_URL: `${wire.origin}/v1`, OPENAI_API_KEY: 'sk-wire' };
        const tools: OpenAI.Responses.Tool[] = [
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

        const a = await start(temp.configPath, env);
        expect(a.log).toBe('in PostgreSQL (jobs.connection)');
        const clientA = new OpenAI({ baseURL: `${a.url}/v1`, apiKey: 'unused-on-loopback', maxRetries: 0 });
        const first = await clientA.responses.create({
          model: 'gpt-wire',
          tools,
          input: 'Weather in Paris?',
        });
        const call = first.output.find((item) => item.type === 'function_call')!;
        expect(call).toMatchObject({ name: 'get_weather', caller: { type: 'program' } });
        await kill(a.serve);

        const b = await start(temp.configPath, env);
        const clientB = new OpenAI({ baseURL: `${b.url}/v1`, apiKey: 'unused-on-loopback', maxRetries: 0 });
        const second = await clientB.responses.create({
          model: 'gpt-wire',
          tools,
          input: [
            { role: 'user', content: 'Weather in Paris?' },
            ...(first.output as OpenAI.Responses.ResponseInputItem[]),
            { type: 'function_call_output', call_id: call.call_id, output: '{"temp": 21}' },
          ],
        });
        expect(second.output[0]).toMatchObject({
          type: 'program_output',
          status: 'completed',
          result: expect.stringMatching(/^stdout:\n\d+ members; Paris 21\n/),
        });
        expect(second.output_text).toBe('It is 21 degrees in Paris.');
        b.serve.child.kill('SIGTERM');
        await b.serve.exited;
      } finally {
        await pg.stop();
      }
    },
    300_000,
  );
});
