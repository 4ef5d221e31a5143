/**
 * The agent loop end to end: the scripted model (and the demo model) against the example
 * expense server over stdio, in code mode and direct mode, with every stop condition.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrchestrator, type AgentEvent, type Orchestrator } from '../../../src/agent/index.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { CodecallError, isCodecallError } from '../../../src/errors.js';
import type {
  GenerateRequest,
  GenerateResponse,
  LanguageModel,
  ToolMessage,
} from '../../../src/providers/language-model.js';
import { ScriptedLanguageModel, scriptedResponse, text, toolCall } from '../../../src/testing/index.js';
import { createExpenseData, overBudgetMembers } from '../../../src/testing/servers/index.js';
import { loadState } from '../../contract/load-state.js';

const CONFIG = resolve(import.meta.dirname, '../../../examples/codecall.json');
const expected = overBudgetMembers(createExpenseData(), 'Q3', 'travel');

/** The text of the last tool result of a request. */
function lastResult(request: GenerateRequest): { content: string; isError: boolean } {
  const last = request.messages.at(-1) as ToolMessage | undefined;
  const result = last?.role === 'tool' ? last.results.at(-1) : undefined;
  return { content: result?.content ?? '', isError: result?.isError === true };
}

let runtime: CodecallRuntime;
beforeAll(async () => {
  runtime = await CodecallRuntime.open({ load: { path: CONFIG }, history: false });
});
afterAll(async () => {
  await runtime.close();
});

async function agentWith(
  model: ScriptedLanguageModel | 'demo',
  options: Partial<Parameters<typeof createOrchestrator>[0]> = {},
): Promise<Orchestrator> {
  return createOrchestrator({ model, runtime, ...options });
}

describe('code mode over the example expense server', () => {
  it('demo model: search → code → answer, with the savings meter and the sequences that fed the graph', async () => {
    const agent = await agentWith('demo');
    const result = await agent.run('Which team members exceeded their Q3 travel budget?');
    await agent.close();

    expect(result.steps.map((s) => s.toolCalls.map((c) => c.kind))).toEqual([
      ['search_tools'],
      ['execute_code'],
      [],
    ]);
    const lines = result.answer.split('\n');
    expect(lines[0]).toMatch(/^Scanned 2400 line items/);
    expect(lines[1]).toBe(`${expected.length} of 20 team members exceeded their Q3 travel budget:`);
    expect(expected.length).toBeGreaterThan(0);
    for (const { member } of expected) expect(result.answer).toContain(`- ${member.name} (${member.level})`);

    const execution = result.steps[1]!.executions[0]!;
    expect(execution.result.status).toBe('ok');
    expect(execution.result.stats.toolResultBytes).toBeGreaterThan(400_000);
    // Only what the script printed entered the context.
    expect(result.steps[2]!.request.contextTokens).toBeLessThan(10_000);

    const { savings } = result;
    expect(savings.contextTokens).toBe(result.steps.reduce((sum, s) => sum + s.request.contextTokens, 0));
    // The script's half a megabyte of line items stayed out of the context, counted as tokens.
    expect(savings.toolResultBytesKeptOut).toBe(execution.result.stats.toolResultBytes);
    expect(savings.toolResultTokensKeptOut).toBeGreaterThan(100_000);
    expect(savings.toolDefinitionTokensDeferred).toBe(
      result.steps.reduce((sum, s) => sum + s.deferredDefinitionTokens, 0),
    );
    expect(result.steps[0]!.deferredDefinitionTokens).toBeGreaterThan(100);

    expect(result.toolSequences).toHaveLength(1);
    expect(result.toolSequences[0]![0]).toBe('expenses.get_team_members');
    expect(result.toolSequences[0]).toContain('expenses.get_budget_by_level');
    expect(result.toolSequences[0]!.at(-1)).toBe('expenses.get_expenses');

    // Query feedback: the search_tools query, paired with the tools the script then called,
    // reached search at once and the history store.
    const query = (result.steps[0]!.toolCalls[0]!.input as { query: string }).query;
    const [learned, used] = runtime.search.serialize().usages!.at(-1)!;
    expect(learned).toBe(query);
    expect(used).toEqual(expect.arrayContaining(['expenses.get_team_members', 'expenses.get_expenses']));
    await runtime.flush();
    expect((await loadState(runtime.history)).usages!.at(-1)).toEqual([query, used]);
    expect(result.model).toBe('demo:expense-demo');
  });

  it('keeps the tool list stable across steps and starts with the meta-tools only', async () => {
    const model = new ScriptedLanguageModel([
      toolCall('search_tools', { query: 'team members' }),
      toolCall('execute_code', {
        code: 'console.log((await tools.expenses.get_team_members()).members.length)',
      }),
      { expect: (r) => lastResult(r).content.includes('stdout:\n20'), response: text('20 members.') },
    ]);
    const agent = await agentWith(model);
    const result = await agent.run('How many team members are there?');
    model.assertComplete();
    expect(result.answer).toBe('20 members.');
    const lists = model.requests.map((r) => r.tools.map((t) => t.name));
    expect(lists[0]).toEqual(['search_tools', 'execute_code']);
    expect(lists[1]).toEqual(lists[0]);
    expect(lists[2]).toEqual(lists[0]);
    // The definitions are the same objects' content every step (prompt caches keep hitting).
    expect(JSON.stringify(model.requests[2]!.tools)).toBe(JSON.stringify(model.requests[0]!.tools));
    expect(model.requests[0]!.system).toBe(model.requests[2]!.system);
  });

  it('scripts of one run share a session: step 2 reads what step 1 fetched; the next run starts empty', async () => {
    const model = new ScriptedLanguageModel([
      toolCall('execute_code', {
        code: 'const { members } = await tools.expenses.get_team_members();\nfunction count() { return members.length; }\nconsole.log("kept");',
      }),
      {
        label: 'step 2 reuses members and count() without a tool call',
        expect: (r) => lastResult(r).content.includes('stdout:\nkept'),
        response: toolCall('execute_code', { code: 'console.log(count(), members[0].name.length > 0);' }),
      },
      { expect: (r) => lastResult(r).content.includes('stdout:\n20 true'), response: text('20') },
    ]);
    const agent = await agentWith(model);
    const result = await agent.run('Count the team members.');
    model.assertComplete();
    expect(result.steps[1]!.executions[0]!.result.toolCalls).toEqual([]);
    expect(result.steps[1]!.executions[0]!.result.stdout).toBe('20 true\n');
    expect(model.requests[0]!.system).toContain('share a session, like a REPL');

    const next = new ScriptedLanguageModel([
      toolCall('execute_code', { code: 'console.log(typeof members, typeof count);' }),
      { expect: (r) => lastResult(r).content.includes('undefined undefined'), response: text('fresh') },
    ]);
    const second = await agentWith(next);
    expect((await second.run('Again.')).answer).toBe('fresh');
    next.assertComplete();
    expect(runtime.sandbox.sessionCount).toBe(0);
  });

  it('a script error comes back as data and the model fixes it on the next step', async () => {
    const model = new ScriptedLanguageModel([
      toolCall('execute_code', {
        code: 'const { members } = await tools.expenses.get_team_members();\nconsole.log(memberz.length);',
      }),
      {
        label: 'sees the error',
        expect: (r) => {
          const result = lastResult(r);
          return (
            result.isError &&
            /memberz is not defined/.test(result.content) &&
            /RUNTIME_ERROR/.test(result.content)
          );
        },
        response: toolCall('execute_code', {
          code: 'const { members } = await tools.expenses.get_team_members();\nconsole.log(members.length);',
        }),
      },
      { expect: (r) => !lastResult(r).isError && lastResult(r).content.includes('20'), response: text('20') },
    ]);
    const agent = await agentWith(model);
    const result = await agent.run('Count the team members.');
    model.assertComplete();
    expect(result.answer).toBe('20');
    expect(result.steps[0]!.toolCalls[0]!.isError).toBe(true);
    expect(result.steps[0]!.executions[0]!.result.error?.code).toBe('RUNTIME_ERROR');
    expect(result.steps[1]!.toolCalls[0]!.isError).toBe(false);
  });

  it('a tool closed to code is refused in the script; search offers it for a direct call, which works', async () => {
    const model = new ScriptedLanguageModel([
      toolCall('execute_code', {
        code: "await tools.expenses.flag_expense({ expense_id: 'exp-00001', reason: 'duplicate' });",
      }),
      {
        label: 'refused',
        expect: (r) => lastResult(r).isError && /allowedCallers/.test(lastResult(r).content),
        response: toolCall('search_tools', { query: 'flag an expense for review' }),
      },
      {
        label: 'offered',
        expect: (r) =>
          /call the tool "expenses__flag_expense" directly/.test(lastResult(r).content) &&
          r.tools.some((t) => t.name === 'expenses__flag_expense'),
        response: toolCall('expenses__flag_expense', { expense_id: 'exp-00001', reason: 'duplicate' }),
      },
      {
        expect: (r) => !lastResult(r).isError && /"flagged":"exp-00001"/.test(lastResult(r).content),
        response: text('Flagged.'),
      },
    ]);
    const agent = await agentWith(model);
    const result = await agent.run('Flag exp-00001 as a duplicate.');
    model.assertComplete();
    expect(result.answer).toBe('Flagged.');
    expect(result.steps[2]!.toolCalls[0]).toMatchObject({
      kind: 'direct',
      tool: 'expenses.flag_expense',
      isError: false,
    });
    expect(result.toolSequences).toContainEqual(['expenses.flag_expense']);
    // The first two requests had the same tools; the third added the found direct-only tools at the end.
    expect(model.requests[1]!.tools.map((t) => t.name)).toEqual(['search_tools', 'execute_code']);
    const third = model.requests[2]!.tools.map((t) => t.name);
    expect(third.slice(0, 2)).toEqual(['search_tools', 'execute_code']);
    expect(third.slice(2)).toContain('expenses__flag_expense');
    expect(third.slice(2).every((name) => /^expenses__(flag|delete)_expense$/.test(name))).toBe(true);
  });

  it('unknown tools and malformed arguments get error results the model can act on', async () => {
    const model = new ScriptedLanguageModel([
      scriptedResponse([
        { type: 'tool_call', id: 'a', name: 'expenses__get_expenses', input: {} },
        { type: 'tool_call', id: 'b', name: 'execute_code', input: '{"code": "console.log(1)' },
        { type: 'tool_call', id: 'c', name: 'no_such_tool', input: {} },
        { type: 'tool_call', id: 'd', name: 'search_tools', input: { query: '' } },
      ]),
      {
        expect: (r) => {
          const message = r.messages.at(-1) as ToolMessage;
          const [a, b, c, d] = message.results;
          return (
            message.results.every((x) => x.isError === true) &&
            /tools\.expenses\.get_expenses/.test(a!.content) &&
            /not valid JSON/.test(b!.content) &&
            /Unknown tool "no_such_tool"\. Your tools are: search_tools, execute_code/.test(c!.content) &&
            /non-empty string/.test(d!.content)
          );
        },
        response: text('ok'),
      },
    ]);
    const agent = await agentWith(model);
    const result = await agent.run('Try things.');
    model.assertComplete();
    expect(result.steps[0]!.toolCalls.map((c) => c.kind)).toEqual([
      'invalid',
      'invalid',
      'invalid',
      'search_tools',
    ]);
  });

  it('stops at maxSteps with MAX_STEPS_EXCEEDED naming the option, and the partial run', async () => {
    const search = toolCall('search_tools', { query: 'expenses' });
    const model = new ScriptedLanguageModel([search, search]);
    const agent = await agentWith(model, { maxSteps: 2 });
    const error = await agent.run('Loop forever.').catch((e: unknown) => e);
    model.assertComplete();
    expect(isCodecallError(error) && error.code).toBe('MAX_STEPS_EXCEEDED');
    expect((error as Error).message).toMatch(/maxSteps/);
    const partial = (error as { details: { result: { steps: unknown[] } } }).details.result;
    expect(partial.steps).toHaveLength(2);
  });

  it('streams events in order, and run() returns what done carries', async () => {
    const model = new ScriptedLanguageModel([
      toolCall('execute_code', { code: 'console.log("hi")' }),
      text('said hi'),
    ]);
    const agent = await agentWith(model);
    const events: AgentEvent[] = [];
    for await (const event of agent.stream('Say hi.')) events.push(event);
    expect(events.map((e) => e.type)).toEqual([
      'run-start',
      'step-start',
      'model-response',
      'tool-call-start',
      'execution-start',
      'execution-end',
      'tool-call-end',
      'step-end',
      'step-start',
      'text-delta',
      'model-response',
      'step-end',
      'done',
    ]);
    const done = events.at(-1) as Extract<AgentEvent, { type: 'done' }>;
    expect(done.result.answer).toBe('said hi');
    expect(done.result.steps[0]!.executions[0]!.result.stdout).toBe('hi\n');
  });
});

describe('direct mode', () => {
  it("offers every tool up front, runs one step's calls in parallel, and measures what entered the context", async () => {
    const model = new ScriptedLanguageModel([
      {
        expect: (r) =>
          !r.tools.some((t) => t.name === 'search_tools' || t.name === 'execute_code') &&
          r.tools.some((t) => t.name === 'expenses__get_expenses'),
        response: toolCall('expenses__get_team_members', {}),
      },
      scriptedResponse([
        {
          type: 'tool_call',
          id: 'l1',
          name: 'expenses__get_budget_by_level',
          input: { level: 'L1', quarter: 'Q3' },
        },
        {
          type: 'tool_call',
          id: 'l2',
          name: 'expenses__get_budget_by_level',
          input: { level: 'L2', quarter: 'Q9' },
        },
      ]),
      {
        expect: (r) => {
          const [ok, bad] = (r.messages.at(-1) as ToolMessage).results;
          return (
            ok!.toolCallId === 'l1' &&
            /"travel"/.test(ok!.content) &&
            bad!.isError === true &&
            /quarter/.test(bad!.content)
          );
        },
        response: text('done'),
      },
    ]);
    const agent = await agentWith(model, { mode: 'direct' });
    const result = await agent.run('Budgets?');
    model.assertComplete();
    expect(result.mode).toBe('direct');
    expect(result.savings.toolResultTokensKeptOut).toBe(0);
    expect(result.savings.toolDefinitionTokensDeferred).toBe(0);
    expect(result.toolSequences).toEqual([['expenses.get_team_members', 'expenses.get_budget_by_level']]);
    // The member list (~900 tokens) entered the context of the two later requests.
    expect(result.steps[1]!.request.contextTokens - result.steps[0]!.request.contextTokens).toBeGreaterThan(
      800,
    );
  });

  it('arguments that are not one JSON object get an error result naming the problem', async () => {
    const model = new ScriptedLanguageModel([
      toolCall('expenses__get_team_members', [1, 2]),
      {
        expect: (r) =>
          lastResult(r).isError && /must be one JSON object; got an array/.test(lastResult(r).content),
        response: text('ok'),
      },
    ]);
    const agent = await agentWith(model, { mode: 'direct' });
    const result = await agent.run('Members?');
    model.assertComplete();
    expect(result.steps[0]!.toolCalls[0]).toMatchObject({
      kind: 'invalid',
      tool: 'expenses.get_team_members',
    });
    expect(result.toolSequences).toEqual([]);
  });
});

describe('bounds and cancellation', () => {
  it('aborting mid-script ends the run promptly with ABORTED; the sandbox and the server keep working', async () => {
    const model = new ScriptedLanguageModel([toolCall('execute_code', { code: 'while (true) {}' })]);
    const agent = await agentWith(model);
    const controller = new AbortController();
    const events: string[] = [];
    let caught: unknown;
    try {
      for await (const event of agent.stream('Spin.', { signal: controller.signal })) {
        events.push(event.type);
        if (event.type === 'execution-start') setTimeout(() => controller.abort(), 50);
        if (event.type === 'error') caught = event.error;
      }
    } catch (error) {
      caught = error;
    }
    expect(isCodecallError(caught) && caught.code).toBe('ABORTED');
    expect(events.at(-1)).toBe('error');
    const after = await agent.execute(
      'console.log((await tools.expenses.get_team_members()).members.length)',
    );
    expect(after.stdout).toBe('20\n');
  });

  it('aborting while the model request is in flight cancels it', async () => {
    // A model that only ends its request when the signal it was given fires: the run can end
    // by the orchestrator's own race, but the request itself is cancelled only if the signal
    // reaches the model.
    let requestSignal: AbortSignal | undefined;
    let requestStarted!: () => void;
    const started = new Promise<void>((resolve) => (requestStarted = resolve));
    let requestCancelled = false;
    const model: LanguageModel = {
      provider: 'test',
      modelId: 'hangs-until-aborted',
      generate: (_request, options) =>
        new Promise<GenerateResponse>((_resolve, reject) => {
          requestSignal = options?.signal;
          options?.signal?.addEventListener('abort', () => {
            requestCancelled = true;
            reject(new CodecallError('ABORTED', 'The model request was cancelled.'));
          });
          requestStarted();
        }),
    };
    const agent = await createOrchestrator({ model, runtime });
    const controller = new AbortController();
    const run = agent.run('Wait.', { signal: controller.signal }).catch((e: unknown) => e);
    await started;
    controller.abort();
    const error = await run;
    expect(isCodecallError(error) && error.code).toBe('ABORTED');
    expect(requestSignal?.aborted).toBe(true);
    expect(requestCancelled).toBe(true);
  });

  it('stops at maxRunTimeMs with RUN_TIMEOUT', async () => {
    const model = new ScriptedLanguageModel([toolCall('execute_code', { code: 'while (true) {}' })]);
    const agent = await agentWith(model, { maxRunTimeMs: 200 });
    const error = await agent.run('Spin.').catch((e: unknown) => e);
    expect(isCodecallError(error) && error.code).toBe('RUN_TIMEOUT');
    expect((error as Error).message).toMatch(/maxRunTimeMs/);
  });

  it('breaking out of the stream cancels the run', async () => {
    // One worker: if the spinning script were left running, the next script would queue behind
    // it until its CPU limit (30 s), far past the deadline below.
    await using single = await CodecallRuntime.open({
      load: { path: CONFIG },
      history: false,
      sandbox: { workers: 1 },
    });
    const model = new ScriptedLanguageModel([toolCall('execute_code', { code: 'while (true) {}' })]);
    const agent = await createOrchestrator({ model, runtime: single });
    const seen: string[] = [];
    for await (const event of agent.stream('Spin.')) {
      seen.push(event.type);
      if (event.type === 'execution-start') break;
    }
    expect(seen.at(-1)).toBe('execution-start');
    // A generous deadline (a queued run does not see its own signal while it waits for a worker).
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'still busy'>((resolve) => {
      timer = setTimeout(() => resolve('still busy'), 15_000);
    });
    const after = await Promise.race([agent.execute('console.log(1)'), deadline]).finally(() =>
      clearTimeout(timer),
    );
    expect(after, 'the spinning script still holds the only worker').not.toBe('still busy');
    expect(after).toMatchObject({ status: 'ok', stdout: '1\n' });
  });
});
