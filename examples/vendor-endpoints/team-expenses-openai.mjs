#!/usr/bin/env node
// OpenAI's programmatic-tool-calling flow (Responses API) on the team-expenses example, against
// codecall's Responses endpoint:
//   codecall serve --http --config examples/codecall.json          (in another terminal)
//   node examples/vendor-endpoints/team-expenses-openai.mjs [--stream]
// Only the base URL (CODECALL_URL + /v1) and the model ("demo", or a name from serve.models) differ
// from a client of OpenAI's API. The program's function calls come back here to answer; the
// program item (with its fingerprint) goes back with the outputs.
import OpenAI from 'openai';
import { EXPENSE_TOOLS, runExpenseTool } from './expense-tools.mjs';

const client = new OpenAI({
  baseURL: `${process.env.CODECALL_URL ?? 'http://127.0.0.1:3737'}/v1`,
  apiKey: process.env.CODECALL_TOKEN ?? 'unused-on-loopback',
});
const stream = process.argv.includes('--stream');
const tools = [
  { type: 'programmatic_tool_calling' },
  ...EXPENSE_TOOLS.map((t) => ({
    type: 'function',
    name: t.name,
    description: t.description,
    parameters: t.schema,
    strict: false,
    allowed_callers: ['programmatic'],
  })),
];
const input = [{ role: 'user', content: 'Which team members exceeded their Q3 travel budget?' }];
const ask = () => {
  const params = { model: process.env.CODECALL_MODEL ?? 'demo', tools, input };
  return stream ? client.responses.stream(params).finalResponse() : client.responses.create(params);
};

let response = await ask();
let roundTrips = 0;
for (;;) {
  const calls = response.output.filter((item) => item.type === 'function_call');
  if (calls.length === 0) break;
  roundTrips++;
  input.push(...response.output);
  for (const call of calls)
    input.push({
      type: 'function_call_output',
      call_id: call.call_id,
      output: runExpenseTool(call.name, JSON.parse(call.arguments)),
    });
  response = await ask();
}
console.log(response.output_text);
console.error(`(${roundTrips} client round trips, ${response.usage.input_tokens} input tokens)`);
