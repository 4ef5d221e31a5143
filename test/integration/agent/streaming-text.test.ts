/**
 * @module
 * Token streaming through the agent: `stream()` with the real Anthropic SDK model against a
 * loopback server speaking server-sent events yields `text-delta` events as the model writes
 * (before the step's `model-response`, and while the server still holds the response open);
 * `run()` asks without streaming; a model without a `stream` method reports each step's text in
 * one piece.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOrchestrator, type AgentEvent } from '../../../src/agent/index.js';
import { parseConfig } from '../../../src/config/index.js';
import { createLanguageModel } from '../../../src/providers/create-language-model.js';
import type { LanguageModel } from '../../../src/providers/language-model.js';
import { ScriptedLanguageModel, text, toolCall } from '../../../src/testing/index.js';
import { createExpenseServer, inMemoryTransport } from '../../../src/testing/servers/index.js';
import { anthropicEvents, anthropicMessage, WireServer } from '../providers/wire-server.js';

const PATH = '/v1/messages';
const dir = mkdtempSync(join(tmpdir(), 'codecall-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CODE = 'console.log((await tools.expenses.get_team_members()).members.length)';

function streamed(step: number, deltas: string[], toolUse?: { id: string; code: string }) {
  const events: Record<string, unknown>[] = [
    {
      type: 'message_start',
      message: {
        id: `msg_0${step}`,
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-6',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: 100,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: 1,
        },
      },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    ...deltas.map((delta) => ({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: delta },
    })),
    { type: 'content_block_stop', index: 0 },
  ];
  if (toolUse !== undefined) {
    events.push(
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: toolUse.id, name: 'execute_code', input: {} },
      },
      {
        type: 'content_block_delta',
        index: 1,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify({ code: toolUse.code }) },
      },
      { type: 'content_block_stop', index: 1 },
    );
  }
  events.push(
    {
      type: 'message_delta',
      delta: { stop_reason: toolUse === undefined ? 'end_turn' : 'tool_use', stop_sequence: null },
      usage: { output_tokens: 20 },
    },
    { type: 'message_stop' },
  );
  return anthropicEvents(events);
}

let wire: WireServer;
beforeEach(async () => {
  wire = await WireServer.open();
});
afterEach(async () => {
  await wire.close();
});

async function agentWith(model: LanguageModel) {
  return createOrchestrator({
    model,
    config: parseConfig({}, { file: join(dir, 'codecall.json'), env: {} }),
    runtimeOptions: {
      history: false,
      tools: { transports: { expenses: inMemoryTransport(() => createExpenseServer()) } },
      sandbox: { workers: 1 },
    },
  });
}

function claude() {
  return createLanguageModel('anthropic:claude-sonnet-4-6', {
    apiKey: 'sk-ant-test-key',
    baseURL: wire.origin,
    env: {},
  });
}

describe('token streaming in the agent', () => {
  it('stream() yields text-delta events as the model writes, before each step’s model-response', async () => {
    wire.enqueue(
      PATH,
      { sse: streamed(1, ['Counting ', 'the team.'], { id: 'toolu_01', code: CODE }) },
      { sse: streamed(2, ['There are ', '20 team ', 'members.']) },
    );
    await using agent = await agentWith(claude());
    const events: AgentEvent[] = [];
    for await (const event of agent.stream('How many team members are there?')) events.push(event);

    const done = events.at(-1);
    expect(done?.type).toBe('done');
    const trace = events
      .filter((event) => event.type === 'text-delta' || event.type === 'model-response')
      .map((event) =>
        event.type === 'text-delta' ? `${event.step}:${event.text}` : `${event.step}:response`,
      );
    expect(trace).toEqual([
      '1:Counting ',
      '1:the team.',
      '1:response',
      '2:There are ',
      '2:20 team ',
      '2:members.',
      '2:response',
    ]);
    if (done?.type !== 'done') throw new Error('no result');
    expect(done.result.answer).toBe('There are 20 team members.');
    expect(done.result.steps[0]!.response.text).toBe('Counting the team.');
    expect(done.result.steps[0]!.executions[0]!.result.stdout).toBe('20\n');
    for (const request of wire.requestsTo(PATH)) expect(request.body['stream']).toBe(true);
  });

  it('yields the first delta while the server still holds the response open', async () => {
    wire.enqueue(PATH, { sse: streamed(1, ['Thinking about it']).slice(0, 3), stall: true });
    await using agent = await agentWith(claude());
    const seen: string[] = [];
    for await (const event of agent.stream('How many team members are there?')) {
      seen.push(event.type);
      // Leaving early cancels the run (and the held request).
      if (event.type === 'text-delta') break;
    }
    expect(seen).toEqual(['run-start', 'step-start', 'text-delta']);
  });

  it('run() asks without streaming', async () => {
    wire.enqueue(PATH, {
      body: anthropicMessage({ content: [{ type: 'text', text: 'Twenty.' }], stopReason: 'end_turn' }),
    });
    await using agent = await agentWith(claude());
    const result = await agent.run('How many team members are there?');
    expect(result.answer).toBe('Twenty.');
    const [request] = wire.requestsTo(PATH);
    expect(request!.body['stream']).toBeUndefined();
  });

  it('a model without stream() reports each step’s text in one piece', async () => {
    const model = new ScriptedLanguageModel([
      toolCall('execute_code', { code: CODE }, { text: 'Counting.' }),
      text('There are 20 team members.'),
    ]);
    await using agent = await agentWith(model);
    const deltas: string[] = [];
    for await (const event of agent.stream('How many team members are there?')) {
      if (event.type === 'text-delta') deltas.push(`${event.step}:${event.text}`);
    }
    expect(deltas).toEqual(['1:Counting.', '2:There are 20 team members.']);
    model.assertComplete();
  });
});
