/**
 * The agent loop with real parts around it: the Anthropic SDK model against a loopback wire
 * server (a 529 is retried inside one step), a server from the npm registry over stdio
 * (`@modelcontextprotocol/server-memory`), and cancellation reaching an MCP tool call in flight.
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createOrchestrator } from '../../../src/agent/index.js';
import { parseConfig } from '../../../src/config/index.js';
import { isCodecallError } from '../../../src/errors.js';
import { createLanguageModel } from '../../../src/providers/create-language-model.js';
import type { ToolMessage } from '../../../src/providers/language-model.js';
import { ScriptedLanguageModel, text, toolCall } from '../../../src/testing/index.js';
import {
  createExpenseServer,
  createMisbehavingServer,
  inMemoryTransport,
} from '../../../src/testing/servers/index.js';
import { anthropicError, anthropicMessage, WireServer } from '../providers/wire-server.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const dir = mkdtempSync(join(tmpdir(), 'codecall-agent-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const inline = (json: unknown) => parseConfig(json, { file: join(dir, 'codecall.json'), env: {} });

describe('a provider 529 inside a run', () => {
  let wire: WireServer;
  beforeEach(async () => {
    wire = await WireServer.open();
  });
  afterEach(async () => {
    await wire.close();
  });

  it('is retried by the real Anthropic SDK model and the run completes', async () => {
    const PATH = '/v1/messages';
    wire.enqueue(
      PATH,
      anthropicError(529, 'overloaded_error', 'Overloaded'),
      {
        body: anthropicMessage({
          content: [
            { type: 'text', text: 'Counting.' },
            {
              type: 'tool_use',
              id: 'toolu_01',
              name: 'execute_code',
              input: { code: 'console.log((await tools.expenses.get_team_members()).members.length)' },
            },
          ],
          stopReason: 'tool_use',
          usage: { input: 900, output: 40 },
        }),
      },
      {
        body: anthropicMessage({
          content: [{ type: 'text', text: 'There are 20 team members.' }],
          stopReason: 'end_turn',
          usage: { input: 1000, output: 10, cacheRead: 800 },
        }),
      },
    );
    const retries: number[] = [];
    const model = createLanguageModel('anthropic:claude-sonnet-4-6', {
      apiKey: 'sk-ant-test-key',
      baseURL: wire.origin,
      env: {},
      initialRetryDelayMs: 1,
      maxRetryDelayMs: 20,
      onRetry: (event) => retries.push(event.failure.status ?? 0),
    });
    const agent = await createOrchestrator({
      model,
      config: inline({}),
      runtimeOptions: {
        history: false,
        tools: { transports: { expenses: inMemoryTransport(() => createExpenseServer()) } },
        sandbox: { workers: 1 },
      },
    });
    try {
      const result = await agent.run('How many team members are there?');
      expect(result.answer).toBe('There are 20 team members.');
      expect(retries).toEqual([529]);
      expect(result.steps).toHaveLength(2);
      // inputTokens counts cached input too (Anthropic: input + cache read + cache write).
      expect(result.usage).toEqual({
        inputTokens: 900 + 1000 + 800,
        outputTokens: 50,
        cacheReadTokens: 800,
        cacheWriteTokens: 0,
      });
      const requests = wire.requestsTo(PATH);
      expect(requests).toHaveLength(3);
      // The retried request is the same request; the tools are the meta-tools in both steps.
      expect(requests[1]!.body).toEqual(requests[0]!.body);
      const toolNames = (body: Record<string, unknown>) =>
        (body.tools as { name: string }[]).map((t) => t.name);
      expect(toolNames(requests[0]!.body)).toEqual(['search_tools', 'execute_code']);
      expect(toolNames(requests[2]!.body)).toEqual(['search_tools', 'execute_code']);
      expect(JSON.stringify(requests[2]!.body.messages)).toMatch(/stdout:\\n20/);
    } finally {
      await agent.close();
    }
  });
});

describe('a server from the npm registry (@modelcontextprotocol/server-memory over stdio)', () => {
  it('search → code → answer', async () => {
    const bin = realpathSync(join(ROOT, 'node_modules', '.bin', 'mcp-server-memory'));
    const memoryFile = join(dir, 'memory.jsonl');
    const model = new ScriptedLanguageModel([
      toolCall('search_tools', { query: 'create entities in the knowledge graph and read the graph' }),
      {
        label: 'declarations',
        expect: (r) => {
          const result = (r.messages.at(-1) as ToolMessage).results[0]!.content;
          return (
            /tools\.memory\.create_entities\(/.test(result) && /tools\.memory\.read_graph\(/.test(result)
          );
        },
        response: toolCall('execute_code', {
          code: `
            await tools.memory.create_entities({ entities: [
              { name: 'Ada', entityType: 'person', observations: ['wrote the first program'] },
              { name: 'Analytical Engine', entityType: 'machine', observations: [] },
            ] });
            await tools.memory.create_relations({ relations: [{ from: 'Ada', to: 'Analytical Engine', relationType: 'programmed' }] });
            const graph = await tools.memory.read_graph();
            console.log(graph.entities.length, 'entities,', graph.relations.length, 'relation:', graph.relations[0].relationType);
          `,
        }),
      },
      {
        expect: (r) =>
          /stdout:\n2 entities, 1 relation: programmed/.test(
            (r.messages.at(-1) as ToolMessage).results[0]!.content,
          ),
        response: text('Ada programmed the Analytical Engine.'),
      },
    ]);
    const agent = await createOrchestrator({
      model,
      config: inline({
        mcpServers: {
          memory: { command: process.execPath, args: [bin], env: { MEMORY_FILE_PATH: memoryFile } },
        },
      }),
      runtimeOptions: { history: false, sandbox: { workers: 1 } },
    });
    try {
      const result = await agent.run('Remember that Ada programmed the Analytical Engine.');
      model.assertComplete();
      expect(result.answer).toBe('Ada programmed the Analytical Engine.');
      expect(result.toolSequences).toEqual([
        ['memory.create_entities', 'memory.create_relations', 'memory.read_graph'],
      ]);
      expect(readFileSync(memoryFile, 'utf8')).toMatch(/Analytical Engine/);
    } finally {
      await agent.close();
    }
  });
});

describe('cancellation reaches MCP tool calls in flight', () => {
  async function misbehavingAgent(model: ScriptedLanguageModel, mode: 'code' | 'direct') {
    const { server, probe } = createMisbehavingServer();
    const agent = await createOrchestrator({
      model,
      mode,
      config: inline({}),
      runtimeOptions: {
        history: false,
        tools: { transports: { misbehaving: async () => inMemoryTransport(() => server)() } },
        sandbox: { workers: 1 },
      },
    });
    return { agent, probe };
  }

  it('a direct call: the run ends with ABORTED and the server sees the cancellation', async () => {
    const model = new ScriptedLanguageModel([
      toolCall('misbehaving__slow', { ms: 600_000, label: 'direct' }),
    ]);
    const { agent, probe } = await misbehavingAgent(model, 'direct');
    const controller = new AbortController();
    try {
      let error: unknown;
      for await (const event of agent.stream('Wait.', { signal: controller.signal })) {
        if (event.type === 'tool-call-start') {
          // Abort once the call is in flight on the server.
          await vi.waitFor(() => expect(probe.started).toContain('direct'), { timeout: 10_000 });
          controller.abort();
        }
        if (event.type === 'error') error = event.error;
      }
      expect(isCodecallError(error) && error.code).toBe('ABORTED');
      await vi.waitFor(() => expect(probe.cancelled).toContain('direct'));
      expect(probe.completed).toEqual([]);
    } finally {
      await agent.close();
    }
  });

  it('a call made by a script: the run ends with ABORTED and the server sees the cancellation', async () => {
    const model = new ScriptedLanguageModel([
      toolCall('execute_code', { code: "await tools.misbehaving.slow({ ms: 600000, label: 'script' })" }),
    ]);
    const { agent, probe } = await misbehavingAgent(model, 'code');
    const controller = new AbortController();
    try {
      const run = agent.run('Wait.', { signal: controller.signal }).catch((e: unknown) => e);
      await vi.waitFor(() => expect(probe.started).toContain('script'), { timeout: 10_000 });
      controller.abort();
      const error = await run;
      expect(isCodecallError(error) && error.code).toBe('ABORTED');
      const partial = (error as { details: { result: { steps: { toolCalls: unknown[] }[] } } }).details
        .result;
      expect(partial.steps).toHaveLength(1);
      await vi.waitFor(() => expect(probe.cancelled).toContain('script'));
    } finally {
      await agent.close();
    }
  });
});
