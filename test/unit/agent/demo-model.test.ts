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
  isDemoTask,
} from '../../../src/agent/demo-model.js';
import { compileScript } from '../../../src/compile/index.js';
import type { GenerateRequest, Message, ToolCallPart } from '../../../src/providers/language-model.js';

const META = [
  { name: 'search_tools', description: '', inputSchema: {} },
  { name: 'execute_code', description: '', inputSchema: {} },
];
const TASK = 'Which team members exceeded their Q2 lodging budget?';
const DIRECT = ['get_team_members', 'get_budget_by_level', 'get_expenses', 'flag_expense'].map((name) => ({
  name: `acme__${name}`,
  description: '',
  inputSchema: {},
}));
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

  it('refuses with a clear PROVIDER_REQUEST_FAILED when search finds no expense tools', async () => {
    const search = onlyCall(await model.generate(request([user])));
    const missing = model.generate(
      request([
        user,
        { role: 'assistant', content: [search] },
        { role: 'tool', results: [{ toolCallId: search.id, content: 'No tools match "…".' }] },
      ]),
    );
    await expect(missing).rejects.toMatchObject({
      code: 'PROVIDER_REQUEST_FAILED',
      details: { provider: 'demo', reason: 'tools-missing' },
      message: expect.stringMatching(/examples\/codecall\.json/),
    });
  });

  it('refuses any other task, in either mode, saying it is a demo that knows one task', async () => {
    for (const tools of [META, DIRECT]) {
      const refused = model.generate(
        request([{ role: 'user', content: 'What is the weather in Oslo?' }], tools),
      );
      await expect(refused).rejects.toMatchObject({
        code: 'PROVIDER_REQUEST_FAILED',
        details: { provider: 'demo', reason: 'unknown-task' },
        message: expect.stringMatching(/cannot answer "What is the weather in Oslo\?".*only knows the task/),
      });
    }
    expect(isDemoTask(TASK)).toBe(true);
    expect(isDemoTask('Who went over budget in Q1?')).toBe(true);
    expect(isDemoTask('List the budgets')).toBe(false);
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

describe('DemoLanguageModel in direct mode', () => {
  const model = new DemoLanguageModel();
  const user: Message = { role: 'user', content: 'Which team members exceeded their Q2 lodging budget?' };
  const members = [
    { id: 'emp-1', name: 'Ada', level: 'L1' },
    { id: 'emp-2', name: 'Bo', level: 'L2' },
    { id: 'emp-3', name: 'Cy', level: 'L1' },
  ];
  const budgets = { L1: 100, L2: 500 };
  /** The server's answers, by tool and arguments; emp-1's expenses come in two pages. */
  function answer(call: ToolCallPart): string {
    const input = call.input as Record<string, unknown>;
    if (call.name === 'acme__get_team_members') return JSON.stringify({ members });
    if (call.name === 'acme__get_budget_by_level') {
      const level = input.level as keyof typeof budgets;
      return JSON.stringify({
        level,
        quarter: input.quarter,
        budgets: { lodging: budgets[level], travel: 1 },
      });
    }
    const pages: Record<
      string,
      { items: { memberId: string; amount: number; status: string }[]; next: number | null }[]
    > = {
      'emp-1': [
        { items: [{ memberId: 'emp-1', amount: 70, status: 'approved' }], next: 1 },
        { items: [{ memberId: 'emp-1', amount: 60, status: 'approved' }], next: null },
      ],
      'emp-2': [{ items: [{ memberId: 'emp-2', amount: 900, status: 'rejected' }], next: null }],
      'emp-3': [{ items: [{ memberId: 'emp-3', amount: 150, status: 'pending' }], next: null }],
    };
    const page = pages[input.member_id as string]![(input.offset as number | undefined) ?? 0]!;
    return JSON.stringify({ items: page.items, total: 2, nextOffset: page.next });
  }

  it('calls the tools with every filter they offer, follows pages, and answers from the results', async () => {
    const messages: Message[] = [user];
    const asked: ToolCallPart[][] = [];
    let response = await model.generate(request(messages, DIRECT));
    while (response.stopReason === 'tool_use') {
      const calls = response.content.filter((p): p is ToolCallPart => p.type === 'tool_call');
      asked.push(calls);
      messages.push({ role: 'assistant', content: response.content });
      messages.push({ role: 'tool', results: calls.map((c) => ({ toolCallId: c.id, content: answer(c) })) });
      expect(asked.length).toBeLessThan(5);
      response = await model.generate(request(messages, DIRECT));
    }
    expect(asked.map((calls) => calls.map((c) => `${c.name} ${JSON.stringify(c.input)}`))).toEqual([
      ['acme__get_team_members {}'],
      [
        'acme__get_budget_by_level {"level":"L1","quarter":"Q2"}',
        'acme__get_budget_by_level {"level":"L2","quarter":"Q2"}',
        'acme__get_expenses {"member_id":"emp-1","quarter":"Q2","category":"lodging"}',
        'acme__get_expenses {"member_id":"emp-2","quarter":"Q2","category":"lodging"}',
        'acme__get_expenses {"member_id":"emp-3","quarter":"Q2","category":"lodging"}',
      ],
      ['acme__get_expenses {"member_id":"emp-1","quarter":"Q2","category":"lodging","offset":1}'],
    ]);
    expect(response.content).toEqual([
      {
        type: 'text',
        text: [
          '2 of 3 team members exceeded their Q2 lodging budget:',
          '- Cy (L1): $150.00 of $100 (+$50.00)',
          '- Ada (L1): $130.00 of $100 (+$30.00)',
        ].join('\n'),
      },
    ]);
  });

  it('says so when a tool call failed, and refuses without the expense tools', async () => {
    const first = await model.generate(request([user], DIRECT));
    const call = first.content.find((p): p is ToolCallPart => p.type === 'tool_call')!;
    const failed = await model.generate(
      request(
        [
          user,
          { role: 'assistant', content: first.content },
          { role: 'tool', results: [{ toolCallId: call.id, content: 'server down', isError: true }] },
        ],
        DIRECT,
      ),
    );
    expect(failed.content[0]).toMatchObject({
      text: expect.stringMatching(/^A tool call failed.*\nserver down$/s),
    });
    await expect(model.generate(request([user], DIRECT.slice(0, 1)))).rejects.toMatchObject({
      details: { reason: 'tools-missing' },
    });
  });
});
