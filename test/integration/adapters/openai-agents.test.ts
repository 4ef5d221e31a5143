/**
 * `codecall/openai-agents` end to end: the tools inside an Agents SDK `Agent`, run by its own
 * `run()` and driven by its own `ScriptedModel` test double, over the example expense server.
 */
import { resolve } from 'node:path';
import { Agent, run, setTracingDisabled, type AgentInputItem } from '@openai/agents';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents-core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCodecallAgentTools } from '../../../src/adapters/openai-agents/index.js';
import { demoScript } from '../../../src/agent/index.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { executeCodeDefinition, renderSearchResult, searchToolsDefinition } from '../../../src/meta/index.js';
import { createExpenseData, overBudgetMembers } from '../../../src/testing/servers/index.js';

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
  // The SDK would otherwise export traces to OpenAI.
  setTracingDisabled(true);
  runtime = await CodecallRuntime.open({ load: { path: CONFIG }, history: false });
});
afterAll(async () => {
  await runtime.close();
});

/** The output text of the function call `callId` among a request's input items. */
function outputOf(input: string | AgentInputItem[], callId: string): string {
  if (typeof input === 'string') throw new Error('no items');
  for (const item of input) {
    if (item.type === 'function_call_result' && item.callId === callId) {
      const output = item.output;
      if (typeof output === 'string') return output;
      if (!Array.isArray(output) && output.type === 'text') return output.text;
    }
  }
  throw new Error(`no result for ${callId}`);
}

describe('createCodecallAgentTools in an Agents SDK run', () => {
  it('runs the budget task: the same descriptions, search text and script output as the agent loop', async () => {
    const searchText = renderSearchResult(runtime.searchTools(QUERY), { query: QUERY });
    const model = new ScriptedModel([
      [functionCall('search_tools', { query: QUERY }, { callId: 'call_s' })],
      [functionCall('execute_code', { code: SCRIPT }, { callId: 'call_e' })],
      [assistantMessage(`${expected.length} members are over budget.`)],
    ]);
    const statuses: string[] = [];
    const agent = new Agent({
      name: 'analyst',
      instructions: 'Answer with code.',
      model,
      tools: createCodecallAgentTools(runtime, { onExecution: (result) => statuses.push(result.status) }),
    });
    const result = await run(agent, 'Which team members exceeded their Q3 travel budget?');
    model.assertComplete();
    expect(result.finalOutput).toBe(`${expected.length} members are over budget.`);
    expect(statuses).toEqual(['ok']);

    const [first, second, third] = model.calls;
    const offered = first!.request.tools.map((tool) =>
      tool.type === 'function' ? [tool.name, tool.description] : [],
    );
    expect(offered).toEqual([
      ['search_tools', searchToolsDefinition().description],
      ['execute_code', executeCodeDefinition({ ...runtime.config.sandbox.limits, store: true }).description],
    ]);
    expect(outputOf(second!.request.input, 'call_s')).toBe(searchText);
    const output = outputOf(third!.request.input, 'call_e');
    expect(output).toContain(`${expected.length} of 20 team members exceeded their Q3 travel budget:`);
    for (const { member } of expected) expect(output).toContain(`- ${member.name} (${member.level})`);
    expect(Buffer.byteLength(output)).toBeLessThan(4_000);
  });

  it('answers bad input with a message the model can act on, and cuts at maxToolResultBytes', async () => {
    const model = new ScriptedModel([
      [functionCall('execute_code', { source: 'console.log(1)' }, { callId: 'call_bad' })],
      [functionCall('search_tools', { query: QUERY }, { callId: 'call_big' })],
      [assistantMessage('ok')],
    ]);
    const agent = new Agent({
      name: 'analyst',
      model,
      tools: createCodecallAgentTools(runtime, { maxToolResultBytes: 256 }),
    });
    await run(agent, 'Try.');
    model.assertComplete();
    expect(outputOf(model.calls[1]!.request.input, 'call_bad')).toBe(
      'execute_code expects {"code": "<JavaScript or TypeScript>"}.',
    );
    expect(outputOf(model.calls[2]!.request.input, 'call_big')).toMatch(/only the first 256 are shown/);
  });

  it('answers search_tools the way the agent loop does: through findTools (the search worker when asked)', async () => {
    const onWorker = await CodecallRuntime.open({
      load: { path: CONFIG },
      history: false,
      searchWorker: true,
    });
    try {
      const model = new ScriptedModel([
        [functionCall('search_tools', { query: QUERY }, { callId: 'call_search' })],
        [assistantMessage('ok')],
      ]);
      await run(new Agent({ name: 'analyst', model, tools: createCodecallAgentTools(onWorker) }), 'Find.');
      model.assertComplete();
      expect(outputOf(model.calls[1]!.request.input, 'call_search')).toContain('get_expenses');
      expect(onWorker.searchOnWorker).toBe(true);
    } finally {
      await onWorker.close();
    }
  });
});
