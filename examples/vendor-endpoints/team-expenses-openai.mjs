#!/usr/bin/env node
// OpenAI's programmatic-tool-calling flow (Responses API) on the team-expenses example, against
// codecall's Responses endpoint:
//   codecall serve --http --config examples/codecall.json          (in another terminal)
//   node examples/vendor-endpoints/team-expenses-openai.mjs [--stream] [--client-search]
// Only the base URL (CODECALL_URL + /v1) and the model ("demo", or a name from serve.models) differ
// from a client of OpenAI's API. The functions are deferred (defer_loading) behind tool_search:
// executed by the server (codecall's ranking; tool_search_call + tool_search_output come back), or
// with --client-search by this client (the tool_search_call comes here; a tool_search_output with
// the functions found goes back). The program's function calls come back here to answer; the
// program item (with its fingerprint) goes back with the outputs.
import OpenAI from 'openai';
import { EXPENSE_TOOLS, runExpenseTool } from './expense-tools.mjs';

const client = new OpenAI({
  baseURL: `${process.env.CODECALL_URL ?? 'http://127.0.0.1:3737'}/v1`,
  apiKey: process.env.CODECALL_TOKEN ?? 'unused-on-loopback',
});
const stream = process.argv.includes('--stream');
const clientSearch = process.argv.includes('--client-search');
const functions = EXPENSE_TOOLS.map((t) => ({
  type: 'function',
  name: t.name,
  description: t.description,
  parameters: t.schema,
  strict: false,
  allowed_callers: ['programmatic'],
  defer_loading: true,
}));
const tools = [
  { type: 'programmatic_tool_calling' },
  { type: 'tool_search', execution: clientSearch ? 'client' : 'server' },
  ...functions,
];
/** This client's own tool search (--client-search): functions sharing a word with the query. */
const searchFunctions = ({ query = '' }) => {
  const words = new Set(query.toLowerCase().match(/[a-z]+/g) ?? []);
  return functions.filter((f) =>
    `${f.name} ${f.description}`
      .toLowerCase()
      .match(/[a-z]+/g)
      .some((w) => words.has(w)),
  );
};
const input = [{ role: 'user', content: 'Which team members exceeded their Q3 travel budget?' }];
const ask = () => {
  const params = { model: process.env.CODECALL_MODEL ?? 'demo', tools, input };
  return stream ? client.responses.stream(params).finalResponse() : client.responses.create(params);
};

const loaded = new Set();
let clientSearches = 0;
let response = await ask();
let roundTrips = 0;
for (;;) {
  for (const item of response.output)
    if (item.type === 'tool_search_output') for (const tool of item.tools) loaded.add(tool.name);
  const calls = response.output.filter((item) => item.type === 'function_call');
  const searches = response.output.filter(
    (item) => item.type === 'tool_search_call' && item.execution === 'client',
  );
  if (calls.length === 0 && searches.length === 0) break;
  roundTrips++;
  input.push(...response.output);
  for (const search of searches) {
    clientSearches++;
    const found = searchFunctions(search.arguments);
    for (const tool of found) loaded.add(tool.name);
    input.push({ type: 'tool_search_output', call_id: search.call_id, execution: 'client', tools: found });
  }
  for (const call of calls)
    input.push({
      type: 'function_call_output',
      call_id: call.call_id,
      output: runExpenseTool(call.name, JSON.parse(call.arguments)),
    });
  response = await ask();
}
console.log(response.output_text);
console.error(
  `(tool search loaded: ${[...loaded].sort().join(', ') || 'none'}; ${clientSearches} searched here)`,
);
console.error(`(${roundTrips} client round trips, ${response.usage.input_tokens} input tokens)`);
