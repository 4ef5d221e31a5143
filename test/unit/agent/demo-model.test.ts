/**
 * The demo model is a stateless script: search first, then a script built from the tool paths
 * the search returned, then the script's stdout as the answer; anything else is explained.
 */
import { describe, expect, it } from 'vitest';
import {
  DEMO_SEARCH_QUERY,
  DemoLanguageModel,
  demoQuestion,
  demoScript,
} from '../../../src/agent/demo-model.js';
import { compileScript } from '../../../src/compile/index.js';
import type { GenerateRequest, Message, ToolCallPart } from '../../../src/providers/language-model.js';

const META = [
  { name: 'search_tools', description: '', inputSchema: {} },
  { name: 'execute_code', description: '', inputSchema: {} },
];
const TASK = 'Which team members exceeded their Q2 lodging budget?';
const SEARCH_RESULT = [
  '3 tools for "…", best first:',
  '1. acme.get_team_members: in execute_code: await tools.acme.get_team_members(args)',
  '2. acme.get_expenses: in execute_code: await tools.acme.get_expenses(args)',
  '3. acme.get_budget_by_level: in execute_code: await tools.acme.get_budget_by_level(args)',
].join('\n');

function request(messages: Message[], tools = META): GenerateRequest {
  return { messages, tools };
}

function onlyCall(response: { content: { type: string }[] }): ToolCallPart {
  const call = response.content.find((p): p is ToolCallPart => p.type === 'tool_call');
  if (!call) throw new Error('no tool call');
  return call;
}

describe('DemoLanguageModel', () => {
  const model = new DemoLanguageModel();
  const user: Message = { role: 'user', content: TASK };

  it('searches first', async () => {
    const response = await model.generate(request([user]));
    expect(response.stopReason).toBe('tool_use');
    expect(onlyCall(response)).toMatchObject({ name: 'search_tools', input: { query: DEMO_SEARCH_QUERY } });
  });

  it('writes a script over the tool paths the search returned, for the quarter and category asked', async () => {
    const search = onlyCall(await model.generate(request([user])));
    const response = await model.generate(
      request([
        user,
        { role: 'assistant', content: [search] },
        { role: 'tool', results: [{ toolCallId: search.id, content: SEARCH_RESULT }] },
      ]),
    );
    const call = onlyCall(response);
    expect(call.name).toBe('execute_code');
    const code = (call.input as { code: string }).code;
    expect(code).toContain('await tools.acme.get_team_members()');
    expect(code).toContain('const QUARTER = "Q2"');
    expect(code).toContain('const CATEGORY = "lodging"');
    expect(compileScript(code).ok).toBe(true);
  });

  it('answers with the stdout of the script, or says why it cannot', async () => {
    const exec: ToolCallPart = { type: 'tool_call', id: 'e1', name: 'execute_code', input: { code: '' } };
    const answer = async (content: string, isError = false) =>
      (
        await model.generate(
          request([
            user,
            { role: 'assistant', content: [exec] },
            { role: 'tool', results: [{ toolCallId: 'e1', content, ...(isError ? { isError } : {}) }] },
          ]),
        )
      ).content[0];
    expect(await answer('stdout:\n2 of 20 over\n- Ada\n\nexit status: ok after 9 tool calls')).toEqual({
      type: 'text',
      text: '2 of 20 over\n- Ada',
    });
    expect(await answer('stdout: (empty)\n\nexit status: error (RUNTIME_ERROR)\nboom', true)).toMatchObject({
      text: expect.stringMatching(/^The script failed/),
    });
  });

  it('explains itself when the expense tools are missing or in direct mode', async () => {
    const search = onlyCall(await model.generate(request([user])));
    const missing = await model.generate(
      request([
        user,
        { role: 'assistant', content: [search] },
        { role: 'tool', results: [{ toolCallId: search.id, content: 'No tools match "…".' }] },
      ]),
    );
    expect(missing.stopReason).toBe('end_turn');
    expect(missing.content[0]).toMatchObject({ text: expect.stringMatching(/examples\/codecall\.json/) });
    const direct = await model.generate(request([user], []));
    expect(direct.content[0]).toMatchObject({ text: expect.stringMatching(/code mode/) });
  });

  it('rejects with ABORTED when the signal has fired', async () => {
    await expect(model.generate(request([user]), { signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: 'ABORTED',
    });
  });
});

describe('demoQuestion and demoScript', () => {
  it('reads the quarter and category, defaulting to Q3 travel', () => {
    expect(demoQuestion('who overspent on software in q4?')).toEqual({ quarter: 'Q4', category: 'software' });
    expect(demoQuestion('who is over budget?')).toEqual({ quarter: 'Q3', category: 'travel' });
  });

  it('produces a script that compiles', () => {
    const paths = {
      get_team_members: 'tools.x.get_team_members',
      get_budget_by_level: 'tools.x.get_budget_by_level',
      get_expenses: 'tools.x.get_expenses',
    };
    expect(compileScript(demoScript(paths, { quarter: 'Q1', category: 'meals' })).ok).toBe(true);
  });
});
