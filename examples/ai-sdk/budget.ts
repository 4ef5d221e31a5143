/**
 * @module
 * codecall in a Vercel AI SDK app: `generateText` with codecall's `search_tools` and
 * `execute_code` over the example expense server. The model here is the AI SDK's own
 * `MockLanguageModelV4`, playing a model that searches, runs the budget script
 * (examples/scripts/over-budget.ts) and answers with what it printed; swap in any provider model
 * (`openai('gpt-4.1')`, `anthropic('claude-sonnet-4-6')`…) and drop the mock.
 *
 * Run from the repository root: `node --no-node-snapshot examples/ai-sdk/budget.ts`
 */
import { readFileSync } from 'node:fs';
import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { CodecallRuntime } from 'codecall';
import { createCodecallTools } from 'codecall/ai-sdk';

const SCRIPT = readFileSync(new URL('../scripts/over-budget.ts', import.meta.url), 'utf8');
const usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};

/** The text of the latest tool result in the prompt, with its tool's name. */
function lastToolResult(options: LanguageModelV4CallOptions): { tool: string; text: string } | undefined {
  const message = options.prompt.findLast((m) => m.role === 'tool');
  const part = message?.role === 'tool' ? message.content.at(-1) : undefined;
  if (part?.type !== 'tool-result' || part.output.type !== 'text') return undefined;
  return { tool: part.toolName, text: part.output.value };
}

/** A stand-in model: search first, then run the script, then answer with its output. */
const model = new MockLanguageModelV4({
  doGenerate: async (options): Promise<LanguageModelV4GenerateResult> => {
    const last = lastToolResult(options);
    const call = (toolName: string, input: unknown): LanguageModelV4GenerateResult => ({
      content: [
        { type: 'tool-call', toolCallId: `call_${toolName}`, toolName, input: JSON.stringify(input) },
      ],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage,
      warnings: [],
    });
    if (last === undefined)
      return call('search_tools', { query: 'team members, expenses and budgets by level' });
    if (last.tool === 'search_tools') return call('execute_code', { code: SCRIPT });
    const printed = /^stdout:\n([\s\S]*?)\n\nexit status/.exec(last.text)?.[1] ?? last.text;
    return {
      content: [{ type: 'text', text: printed }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage,
      warnings: [],
    };
  },
});

const runtime = await CodecallRuntime.open({
  load: { path: new URL('../codecall.json', import.meta.url).pathname },
  history: false,
});
try {
  const result = await generateText({
    model,
    tools: createCodecallTools(runtime),
    stopWhen: stepCountIs(5),
    prompt: 'Which team members exceeded their Q3 travel budget?',
  });
  console.log(result.text);
} finally {
  await runtime.close();
}
