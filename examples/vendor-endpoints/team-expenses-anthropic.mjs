#!/usr/bin/env node
// Anthropic's programmatic-tool-calling example (team expenses) against codecall's Messages endpoint:
//   codecall serve --http --config examples/codecall.json          (in another terminal)
//   node examples/vendor-endpoints/team-expenses-anthropic.mjs [--stream] [--regex]
// Only the base URL (CODECALL_URL, default http://127.0.0.1:3737) and the model ("demo", or a name
// from serve.models) differ from a client of Anthropic's API. The client owns the tools, deferred
// behind a tool search (BM25, or the regex variant with --regex): the model loads them with a search
// (answered server-side, tool_reference blocks in the response), then its script calls them from
// code, and each call comes back here as a tool_use to answer.
import Anthropic from '@anthropic-ai/sdk';
import { EXPENSE_TOOLS, runExpenseTool } from './expense-tools.mjs';

const client = new Anthropic({
  baseURL: process.env.CODECALL_URL ?? 'http://127.0.0.1:3737',
  apiKey: process.env.CODECALL_TOKEN ?? 'unused-on-loopback',
});
const stream = process.argv.includes('--stream');
const search = process.argv.includes('--regex')
  ? { type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' }
  : { type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' };
const tools = [
  { type: 'code_execution_20250825', name: 'code_execution' },
  search,
  ...EXPENSE_TOOLS.map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: t.schema,
    allowed_callers: ['code_execution_20250825'],
    defer_loading: true,
  })),
];
const messages = [{ role: 'user', content: 'Which team members exceeded their Q3 travel budget?' }];
const ask = (container) => {
  const params = {
    model: process.env.CODECALL_MODEL ?? 'demo',
    max_tokens: 4096,
    tools,
    messages,
    ...(container ? { container } : {}),
  };
  return stream ? client.messages.stream(params).finalMessage() : client.messages.create(params);
};

const loaded = new Set();
const noteSearches = (content) => {
  for (const block of content)
    if (block.type === 'tool_search_tool_result' && block.content.type === 'tool_search_tool_search_result')
      for (const ref of block.content.tool_references) loaded.add(ref.tool_name);
};
let response = await ask();
let roundTrips = 0;
noteSearches(response.content);
while (response.stop_reason === 'tool_use') {
  roundTrips++;
  messages.push({ role: 'assistant', content: response.content });
  const results = response.content
    .filter((block) => block.type === 'tool_use')
    .map((block) => ({
      type: 'tool_result',
      tool_use_id: block.id,
      content: runExpenseTool(block.name, block.input),
    }));
  messages.push({ role: 'user', content: results });
  response = await ask(response.container?.id);
  noteSearches(response.content);
}
const text = response.content.filter((block) => block.type === 'text').at(-1)?.text ?? '';
console.log(text);
console.error(`(tool search loaded: ${[...loaded].sort().join(', ') || 'none'})`);
console.error(`(${roundTrips} client round trips, ${response.usage.input_tokens} input tokens)`);
