/**
 * Conversations (a run continues from `result.messages`), hooks (`onToolCall`, `onExecution`,
 * `onStepFinish`), stop conditions (`stopWhen`), `prepareStep`, and OpenTelemetry spans, with the
 * scripted model against the example expense server over stdio.
 */
import { resolve } from 'node:path';
import { trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createOrchestrator,
  hasToolCall,
  stepCountIs,
  type AgentExecution,
  type AgentStep,
  type AgentToolCall,
  type Orchestrator,
} from '../../../src/agent/index.js';
import { CodecallError } from '../../../src/errors.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import type { GenerateRequest } from '../../../src/providers/language-model.js';
import { ScriptedLanguageModel, text, toolCall } from '../../../src/testing/index.js';

const CONFIG = resolve(import.meta.dirname, '../../../examples/codecall.json');
const COUNT_MEMBERS =
  'const { members } = await tools.expenses.get_team_members();\nconsole.log(members.length);';

let runtime: CodecallRuntime;
beforeAll(async () => {
  runtime = await CodecallRuntime.open({ load: { path: CONFIG }, history: false });
});
afterAll(async () => {
  await runtime.close();
});

async function agentWith(
  model: ScriptedLanguageModel,
  options: Partial<Parameters<typeof createOrchestrator>[0]> = {},
): Promise<Orchestrator> {
  return createOrchestrator({ model, runtime, ...options });
}

/** The user turns and the model's text answers a request carries, in order. */
function turns(request: GenerateRequest): string[] {
  return request.messages.flatMap((message) => {
    if (message.role === 'user') return [`user: ${message.content}`];
    if (message.role === 'assistant') {
      const said = message.content.flatMap((part) =>
        part.type === 'text' && part.text !== '' ? [part.text] : [],
      );
      return said.map((line) => `assistant: ${line}`);
    }
    return [];
  });
}

describe('conversations', () => {
  it('three turns keep their context: each request carries the earlier turns and their tool results', async () => {
    const model = new ScriptedLanguageModel([
      toolCall('execute_code', { code: COUNT_MEMBERS }),
      text('There are 20 team members.'),
      {
        label: 'turn 2 sees turn 1',
        expect: (request) => {
          expect(turns(request)).toEqual([
            'user: How many team members are there?',
            'assistant: There are 20 team members.',
            'user: And how many is that minus three?',
          ]);
          // The script's output from turn 1 is still in the context.
          const toolResults = request.messages.flatMap((m) => (m.role === 'tool' ? m.results : []));
          expect(toolResults).toHaveLength(1);
          expect(toolResults[0]!.content).toMatch(/\b20\b/);
        },
        response: text('17.'),
      },
      {
        label: 'turn 3 sees turns 1 and 2',
        expect: (request) => {
          expect(turns(request)).toEqual([
            'user: How many team members are there?',
            'assistant: There are 20 team members.',
            'user: And how many is that minus three?',
            'assistant: 17.',
            'user: What was my first question?',
          ]);
        },
        response: text('You asked how many team members there are.'),
      },
    ]);
    const agent = await agentWith(model);
    const first = await agent.run('How many team members are there?');
    expect(first.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    const second = await agent.run([
      ...first.messages,
      { role: 'user', content: 'And how many is that minus three?' },
    ]);
    expect(second.answer).toBe('17.');
    const third = await agent.run([
      ...second.messages,
      { role: 'user', content: 'What was my first question?' },
    ]);
    await agent.close();
    model.assertComplete();
    expect(third.answer).toBe('You asked how many team members there are.');
    expect(third.messages).toHaveLength(8);
    expect(third.messages.at(-1)).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'You asked how many team members there are.' }],
    });
    // The caller's history is copied, not mutated.
    expect(first.messages).toHaveLength(4);
  });

  it('refuses a malformed history, naming the message and field at fault', async () => {
    const agent = await agentWith(new ScriptedLanguageModel([]));
    const bad = [
      { role: 'user', content: 'hi' },
      { role: 'robot', content: 'x' },
      { role: 'user', content: 'ok' },
    ];
    await expect(agent.stream(bad as never).next()).rejects.toThrow(
      /messages\[1\]\.role must be "user", "assistant" or "tool"/,
    );
    const caught = await agent
      .run([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [] },
      ])
      .catch((error: unknown) => error);
    expect(CodecallError.isInstance(caught, 'INVALID_ARGUMENT') && caught.details.field).toBe(
      'messages[1].role',
    );
    await expect(agent.run([])).rejects.toThrow(/non-empty array of messages/);
    await agent.close();
  });
});

describe('hooks and stop conditions', () => {
  it('onToolCall, onExecution and onStepFinish hear every call, script and step, in order', async () => {
    const heard: string[] = [];
    const model = new ScriptedLanguageModel([
      toolCall('search_tools', { query: 'team members' }),
      toolCall('execute_code', { code: COUNT_MEMBERS }),
      text('20'),
    ]);
    const agent = await agentWith(model, {
      onToolCall: (call: AgentToolCall) =>
        void heard.push(`call ${call.name} ${call.isError ? 'error' : 'ok'}`),
      onExecution: (execution: AgentExecution) =>
        void heard.push(`execution ${execution.result.stdout.trim()}`),
    });
    const result = await agent.run('Count the team members.', {
      // Run-level hooks join the orchestrator's; an async hook is awaited before the run goes on.
      onStepFinish: async (step: AgentStep) => {
        await new Promise((resolve) => setImmediate(resolve));
        heard.push(`step ${step.index} ${step.toolCalls.length}`);
      },
    });
    await agent.close();
    model.assertComplete();
    expect(result.answer).toBe('20');
    expect(heard).toEqual([
      'call search_tools ok',
      'step 1 1',
      'execution 20',
      'call execute_code ok',
      'step 2 1',
      'step 3 0',
    ]);
  });

  it('stopWhen hasToolCall ends the run after that step, without asking the model again', async () => {
    const model = new ScriptedLanguageModel([
      toolCall('search_tools', { query: 'team members' }),
      toolCall('execute_code', { code: COUNT_MEMBERS }, { text: 'Counting.' }),
    ]);
    const agent = await agentWith(model, { stopWhen: hasToolCall('execute_code') });
    const result = await agent.run('Count the team members.');
    await agent.close();
    model.assertComplete();
    expect(result.steps).toHaveLength(2);
    expect(result.answer).toBe('Counting.');
    expect(result.steps[1]!.executions[0]!.result.stdout).toBe('20\n');
    // The conversation ends with the tool results: the next run can continue from it.
    expect(result.messages.at(-1)?.role).toBe('tool');
  });

  it('stopWhen takes step counts and predicates; any one that holds stops the run', async () => {
    const looping = (): ScriptedLanguageModel =>
      new ScriptedLanguageModel([
        toolCall('execute_code', { code: 'console.log(1)' }),
        toolCall('execute_code', { code: 'console.log(2)' }),
        toolCall('execute_code', { code: 'console.log(3)' }),
      ]);
    const byCount = looping();
    const counted = await (await agentWith(byCount, { stopWhen: stepCountIs(2) })).run('Loop.');
    expect(counted.steps).toHaveLength(2);
    expect(byCount.remaining).toBe(1);

    const byPredicate = looping();
    const agent = await agentWith(byPredicate);
    const predicated = await agent.run('Loop.', {
      stopWhen: [stepCountIs(10), ({ steps }) => steps.at(-1)?.executions[0]?.result.stdout === '1\n'],
    });
    expect(predicated.steps).toHaveLength(1);
    expect(byPredicate.remaining).toBe(2);
  });

  it('prepareStep changes the model, the system prompt and the tools of one step', async () => {
    const first = new ScriptedLanguageModel([toolCall('search_tools', { query: 'team members' })]);
    const second = new ScriptedLanguageModel([
      {
        label: 'step 2 on the second model',
        expect: (request) => {
          expect(request.system).toBe('Only run code now.');
          expect(request.tools.map((tool) => tool.name)).toEqual(['execute_code']);
        },
        // search_tools is not offered this step, so calling it is refused.
        response: toolCall('search_tools', { query: 'again' }),
      },
      text('done'),
    ]);
    const seen: string[] = [];
    const agent = await agentWith(first, {
      prepareStep: ({ stepNumber, tools, model }) => {
        seen.push(`${stepNumber} ${model.modelId} ${tools.map((tool) => tool.name).join(',')}`);
        if (stepNumber === 1) return undefined;
        return { model: second, system: 'Only run code now.', activeTools: ['execute_code'] };
      },
    });
    const result = await agent.run('Count the team members.');
    await agent.close();
    first.assertComplete();
    second.assertComplete();
    expect(seen[0]).toBe('1 scripted search_tools,execute_code');
    const refused = result.steps[1]!.toolCalls[0]!;
    expect(refused.kind).toBe('invalid');
    expect(refused.content).toMatch(/Unknown tool "search_tools"\. Your tools are: execute_code\./);
  });
});

describe('tracing', () => {
  it('emits invoke_agent → chat / execute_tool → MCP call spans with GenAI attributes, usage and savings', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const usage = { inputTokens: 100, outputTokens: 10, cacheReadTokens: 40, cacheWriteTokens: 0 };
    const model = new ScriptedLanguageModel([
      toolCall('search_tools', { query: 'team members' }, { usage }),
      toolCall(
        'execute_code',
        {
          code:
            'const { members } = await tools.expenses.get_team_members();\n' +
            'const budgets = await tools.expenses.get_budget_by_level({ level: members[0].level });\n' +
            'console.log(members.length, typeof budgets);',
        },
        { usage },
      ),
      text('20', { usage }),
    ]);
    const agent = await agentWith(model, { telemetry: { tracer: provider.getTracer('test') } });
    const result = await agent.run('Count the team members.');
    await agent.close();
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();
    const byName = (name: string) => spans.filter((span) => span.name === name);

    const [run] = byName('invoke_agent codecall');
    expect(run).toBeDefined();
    expect(run!.parentSpanContext).toBeUndefined();
    expect(run!.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'scripted',
      'gen_ai.usage.input_tokens': 300,
      'gen_ai.usage.output_tokens': 30,
      'gen_ai.usage.cache_read.input_tokens': 120,
      'codecall.steps': 3,
      'codecall.savings.context_tokens': result.savings.contextTokens,
      'codecall.savings.tool_result_bytes_kept_out': result.savings.toolResultBytesKeptOut,
    });
    expect(result.savings.toolResultBytesKeptOut).toBeGreaterThan(0);
    const runId = run!.spanContext().spanId;

    const chats = byName('chat scripted');
    expect(chats).toHaveLength(3);
    expect(chats.map((span) => span.parentSpanContext?.spanId)).toEqual([runId, runId, runId]);
    expect(chats[0]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.usage.input_tokens': 100,
      'gen_ai.response.finish_reasons': ['tool_use'],
    });

    const [search] = byName('execute_tool search_tools');
    const [execute] = byName('execute_tool execute_code');
    expect(search!.parentSpanContext?.spanId).toBe(runId);
    expect(execute!.parentSpanContext?.spanId).toBe(runId);
    expect(execute!.attributes).toMatchObject({
      'gen_ai.tool.name': 'execute_code',
      'gen_ai.tool.call.id': expect.any(String),
    });

    const mcp = spans.filter((span) => span.attributes['mcp.method.name'] === 'tools/call');
    expect(mcp.map((span) => span.name)).toEqual([
      'execute_tool expenses.get_team_members',
      'execute_tool expenses.get_budget_by_level',
    ]);
    const executeId = execute!.spanContext().spanId;
    expect(mcp.map((span) => span.parentSpanContext?.spanId)).toEqual([executeId, executeId]);
    expect(mcp[0]!.attributes['codecall.tool.result_bytes']).toBeGreaterThan(100);
  });

  it('telemetry: true uses the global tracer; a run that stops marks its span with the error code', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    trace.setGlobalTracerProvider(provider);
    try {
      const model = new ScriptedLanguageModel([toolCall('execute_code', { code: 'console.log(1)' })]);
      const agent = await agentWith(model, { telemetry: true, maxSteps: 1 });
      await expect(agent.run('Loop.')).rejects.toThrow(/did not finish within 1 steps/);
      await agent.close();
      await provider.forceFlush();
      const [run] = exporter.getFinishedSpans().filter((span) => span.name === 'invoke_agent codecall');
      expect(run!.attributes['error.type']).toBe('MAX_STEPS_EXCEEDED');
      expect(run!.status.code).toBe(2);
      expect(run!.attributes['codecall.steps']).toBe(1);
    } finally {
      trace.disable();
    }
  });
});
