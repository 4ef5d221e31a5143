/**
 * @module
 * codecall in an OpenAI Agents SDK app: an `Agent` with codecall's `search_tools` and
 * `execute_code` over the example expense server, run by the SDK's `run()`. The model here is
 * the SDK's own `ScriptedModel`, playing a model that searches, runs the budget script
 * (examples/scripts/over-budget.ts) and answers with what it printed; use `model: 'gpt-4.1'`
 * (with OPENAI_API_KEY) and drop the script.
 *
 * Run from the repository root: `node --no-node-snapshot examples/openai-agents/budget.ts`
 */
import { readFileSync } from 'node:fs';
import { Agent, run, setTracingDisabled, type AgentInputItem } from '@openai/agents';
import { assistantMessage, functionCall, modelResponder, ScriptedModel } from '@openai/agents-core/testing';
import { CodecallRuntime } from 'codecall';
import { createCodecallAgentTools } from 'codecall/openai-agents';

const SCRIPT = readFileSync(new URL('../scripts/over-budget.ts', import.meta.url), 'utf8');

/** The output text of the latest tool result among the request's items. */
function lastOutput(input: string | AgentInputItem[]): string {
  const items = typeof input === 'string' ? [] : input;
  const result = items.findLast((item) => item.type === 'function_call_result');
  if (result?.type !== 'function_call_result') return '';
  const output = result.output;
  return typeof output === 'string'
    ? output
    : !Array.isArray(output) && output.type === 'text'
      ? output.text
      : '';
}

// The example runs offline: no traces go to OpenAI.
setTracingDisabled(true);
const model = new ScriptedModel([
  [
    functionCall(
      'search_tools',
      { query: 'team members, expenses and budgets by level' },
      { callId: 'call_1' },
    ),
  ],
  [functionCall('execute_code', { code: SCRIPT }, { callId: 'call_2' })],
  modelResponder(({ request }) => {
    const text = lastOutput(request.input);
    return [assistantMessage(/^stdout:\n([\s\S]*?)\n\nexit status/.exec(text)?.[1] ?? text)];
  }),
]);

const runtime = await CodecallRuntime.open({
  load: { path: new URL('../codecall.json', import.meta.url).pathname },
  history: false,
});
try {
  const agent = new Agent({
    name: 'expense analyst',
    instructions: 'Find tools with search_tools, compute in execute_code, answer with what it printed.',
    model,
    tools: createCodecallAgentTools(runtime),
  });
  const result = await run(agent, 'Which team members exceeded their Q3 travel budget?');
  console.log(result.finalOutput);
} finally {
  await runtime.close();
}
