/**
 * `codecall/ai-sdk` end to end: the tools inside the AI SDK's own `generateText` (driven by its
 * `MockLanguageModelV4`), and a real AI SDK provider (`@ai-sdk/openai`) against a loopback
 * Chat Completions server driving `createOrchestrator` — both over the example expense server.
 */
import { resolve } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCodecallTools, fromAiSdkModel } from '../../../src/adapters/ai-sdk/index.js';
import { createOrchestrator, demoScript } from '../../../src/agent/index.js';
import { CodecallError } from '../../../src/errors.js';
import { CodecallRuntime, formatResultForModel } from '../../../src/execute/index.js';
import { executeCodeDefinition, renderSearchResult, searchToolsDefinition } from '../../../src/meta/index.js';
import { createExpenseData, overBudgetMembers } from '../../../src/testing/servers/index.js';
import { openaiCompletion, openaiError, WireServer } from '../providers/wire-server.js';

const CONFIG = resolve(import.meta.dirname, '../../../examples/codecall.json');
const QUERY = 'team members, expenses and budgets by level';
const SCRIPT = demoScript(
  {
    get_team_members: 'tools.expenses.get_team_members',
    get_budget_by_level: 'tools.expenses.get_budget_by_level',
    get_expenses: 'tools.expenses.get_expenses',
  },
  { quarter: 'Q3', category: 'travel' },
);
const expected = overBudgetMembers(createExpenseData(), 'Q3', 'travel');

let runtime: CodecallRuntime;
beforeAll(async () => {
  runtime = await CodecallRuntime.open({ load: { path: CONFIG }, history: false });
});
afterAll(async () => {
  await runtime.close();
});

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

function toolCallResult(toolName: string, input: unknown): LanguageModelV4GenerateResult {
  return {
    content: [{ type: 'tool-call', toolCallId: `call_${toolName}`, toolName, input: JSON.stringify(input) }],
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage,
    warnings: [],
  };
}

/** The text of the tool result for `toolName` in a prompt. */
function toolOutput(options: LanguageModelV4CallOptions, toolName: string): string {
  for (const message of options.prompt) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type === 'tool-result' && part.toolName === toolName && part.output.type === 'text') {
        return part.output.value;
      }
    }
  }
  throw new Error(`no ${toolName} result in the prompt`);
}

describe('createCodecallTools in generateText', () => {
  it('runs the budget task: the same descriptions, search text and script output as the agent loop', async () => {
    const model = new MockLanguageModelV4({
      doGenerate: [
        toolCallResult('search_tools', { query: QUERY }),
        toolCallResult('execute_code', { code: SCRIPT }),
        {
          content: [{ type: 'text', text: `${expected.length} members are over budget.` }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage,
          warnings: [],
        },
      ],
    });
    // What the agent loop's search_tools would answer now (before the run teaches the graph).
    const searchText = renderSearchResult(runtime.searchTools(QUERY), { query: QUERY });
    const executions: string[] = [];
    const result = await generateText({
      model,
      tools: createCodecallTools(runtime, { onExecution: (execution) => executions.push(execution.status) }),
      stopWhen: stepCountIs(5),
      prompt: 'Which team members exceeded their Q3 travel budget?',
    });
    expect(result.text).toBe(`${expected.length} members are over budget.`);
    expect(executions).toEqual(['ok']);

    const [first, second, third] = model.doGenerateCalls;
    const offered = (first!.tools ?? []).map((tool) =>
      tool.type === 'function' ? [tool.name, tool.description] : [],
    );
    expect(offered).toEqual([
      ['search_tools', searchToolsDefinition().description],
      ['execute_code', executeCodeDefinition({ ...runtime.config.sandbox.limits, store: true }).description],
    ]);
    expect(toolOutput(second!, 'search_tools')).toBe(searchText);
    const output = toolOutput(third!, 'execute_code');
    expect(output).toContain(`${expected.length} of 20 team members exceeded their Q3 travel budget:`);
    for (const { member } of expected) expect(output).toContain(`- ${member.name} (${member.level})`);
    // Only the printed lines came back, not the half megabyte of line items the script read.
    expect(Buffer.byteLength(output)).toBeLessThan(4_000);
  });

  it('cuts an answer at maxToolResultBytes and turns bad input into a message for the model', async () => {
    const tools = createCodecallTools(runtime, { maxToolResultBytes: 300 });
    const options = { toolCallId: 'c1', messages: [], context: {} } as never;
    const searched = (await tools.search_tools.execute!({ query: QUERY }, options)) as string;
    expect(Buffer.byteLength(searched)).toBeLessThan(300 + 200);
    expect(searched).toMatch(/\[cut: this result is \d+ bytes; only the first 300 are shown/);
    const bad = (await tools.execute_code.execute!({ code: '   ' }, options)) as string;
    expect(bad).toBe('execute_code got empty code; send the script to run.');
    const failed = (await tools.execute_code.execute!(
      { code: 'throw new Error("boom")' },
      options,
    )) as string;
    expect(failed).toBe(
      formatResultForModel(await runtime.execute('throw new Error("boom")')).slice(
        0,
        Buffer.byteLength(failed),
      ),
    );
    expect(failed).toMatch(/boom/);
    expect(() => createCodecallTools(runtime, { maxToolResultBytes: 0 })).toThrow(
      /maxToolResultBytes must be a positive integer/,
    );
  });
});

describe('fromAiSdkModel: an AI SDK provider drives createOrchestrator', () => {
  const PATH = '/v1/chat/completions';
  let server: WireServer;
  beforeAll(async () => {
    server = await WireServer.open();
  });
  afterAll(async () => {
    await server.close();
  });

  function provider() {
    return createOpenAI({ baseURL: `${server.origin}/v1`, apiKey: 'sk-test' });
  }

  it('runs the budget task over the Chat Completions wire format, with usage and tool results mapped', async () => {
    server.enqueue(
      PATH,
      {
        body: openaiCompletion({
          content: null,
          toolCalls: [{ id: 'call_s', name: 'search_tools', arguments: JSON.stringify({ query: QUERY }) }],
          finishReason: 'tool_calls',
          usage: { prompt: 900, completion: 20, cached: 512 },
        }),
      },
      {
        body: openaiCompletion({
          content: null,
          toolCalls: [{ id: 'call_e', name: 'execute_code', arguments: JSON.stringify({ code: SCRIPT }) }],
          finishReason: 'tool_calls',
        }),
      },
      { body: openaiCompletion({ content: 'Done: see the list.', finishReason: 'stop' }) },
    );
    const agent = await createOrchestrator({
      model: fromAiSdkModel(provider().chat('gpt-4.1'), { maxRetries: 0 }),
      runtime,
    });
    const result = await agent.run('Which team members exceeded their Q3 travel budget?');
    await agent.close();

    expect(result.answer).toBe('Done: see the list.');
    expect(result.model).toBe('openai.chat:gpt-4.1');
    expect(result.steps[0]!.usage).toEqual({
      inputTokens: 900,
      outputTokens: 20,
      cacheReadTokens: 512,
      cacheWriteTokens: 0,
    });
    expect(result.steps[1]!.executions[0]!.result.status).toBe('ok');

    const sent = server.requestsTo(PATH).slice(-3);
    const firstBody = sent[0]!.body as {
      messages: { role: string; content: unknown }[];
      tools: { function: { name: string } }[];
    };
    expect(firstBody.messages[0]).toEqual({
      role: 'system',
      content: expect.stringContaining('search_tools finds the tools'),
    });
    expect(firstBody.tools.map((tool) => tool.function.name)).toEqual(['search_tools', 'execute_code']);
    const lastBody = sent[2]!.body as {
      messages: { role: string; tool_call_id?: string; content: string }[];
    };
    const toolMessages = lastBody.messages.filter((message) => message.role === 'tool');
    expect(toolMessages.map((message) => message.tool_call_id)).toEqual(['call_s', 'call_e']);
    expect(toolMessages[1]!.content).toContain(
      `${expected.length} of 20 team members exceeded their Q3 travel budget:`,
    );
  });

  it('retries a transient failure, and reports rejected credentials as PROVIDER_AUTH', async () => {
    server.enqueue(PATH, openaiError(503, 'server_error', null, 'The server is overloaded.'), {
      body: openaiCompletion({ content: 'ok', finishReason: 'stop' }),
    });
    const retries: number[] = [];
    const model = fromAiSdkModel(provider().chat('gpt-4.1'), {
      maxRetries: 1,
      initialRetryDelayMs: 1,
      onRetry: (event) => retries.push(event.retry),
    });
    const response = await model.generate({ messages: [{ role: 'user', content: 'hi' }], tools: [] });
    expect(response.content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(response.stopReason).toBe('end_turn');
    expect(retries).toEqual([1]);

    server.enqueue(
      PATH,
      openaiError(401, 'invalid_request_error', 'invalid_api_key', 'Incorrect API key provided.'),
    );
    const error = await model
      .generate({ messages: [{ role: 'user', content: 'hi' }], tools: [] })
      .catch((e: unknown) => e);
    expect(CodecallError.isInstance(error, 'PROVIDER_AUTH')).toBe(true);
    expect(() =>
      fromAiSdkModel({ specificationVersion: 'v2', doGenerate: () => undefined } as never),
    ).toThrow(/specification v4; this one is v2/);
  });

  it('answers search_tools the way the agent loop does: through findTools (the search worker when asked)', async () => {
    const onWorker = await CodecallRuntime.open({
      load: { path: CONFIG },
      history: false,
      searchWorker: true,
    });
    try {
      const tools = createCodecallTools(onWorker);
      const options = { toolCallId: 'c1', messages: [], context: {} } as never;
      const searched = (await tools.search_tools.execute!({ query: QUERY }, options)) as string;
      expect(searched).toContain('get_expenses');
      expect(onWorker.searchOnWorker).toBe(true);
    } finally {
      await onWorker.close();
    }
  });
});
