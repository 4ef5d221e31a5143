#!/usr/bin/env node
// A task that needs a chain of tools, found through search, driven the way a model drives
// `codecall serve`: an MCP client (the official SDK) spawns the server over stdio, then
//   1. search_tools finds the read tools (team members → budgets → expenses) and their declarations;
//   2. search_tools finds how to flag an expense: not callable from code, passed through for direct calls;
//   3. execute_code runs one script over the chain and prints only the expenses to flag;
//   4. each is flagged with a direct call;
//   5. the report runs again; search_tools again: the runs taught the tool graph the order these
//      tools are called in (a transition seen once is treated as noise).
// Run from the repository root after `npm run build`:  node examples/tool-chain/run.mjs
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const bin = fileURLToPath(new URL('../../bin/codecall.js', import.meta.url));
const config = fileURLToPath(new URL('./codecall.json', import.meta.url));
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [bin, 'serve', '--config', config],
  stderr: 'ignore',
});
const client = new Client({ name: 'tool-chain-example', version: '1.0.0' });
await client.connect(transport);

const text = (result) => result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
const hits = (searchText) =>
  [...searchText.matchAll(/^\d+\. (\S+): (.*)$/gm)].map((m) => ({ name: m[1], how: m[2] }));

try {
  const task = 'team members over their quarterly travel budget, with their expenses';
  const found = hits(text(await client.callTool({ name: 'search_tools', arguments: { query: task } })));
  console.log(`search_tools("${task}"):`);
  for (const hit of found) console.log(`  ${hit.name}`);
  const needed = ['expenses.get_team_members', 'expenses.get_budget_by_level', 'expenses.get_expenses'];
  const missing = needed.filter((name) => !found.some((hit) => hit.name === name));
  if (missing.length > 0) throw new Error(`search did not find ${missing.join(', ')}`);

  const flagQuery = 'flag an expense for review';
  const flag = hits(
    text(await client.callTool({ name: 'search_tools', arguments: { query: flagQuery } })),
  ).find((hit) => hit.name === 'expenses.flag_expense');
  const direct = flag && /call the tool "([^"]+)" directly/.exec(flag.how)?.[1];
  if (!direct) throw new Error('search did not say how to flag an expense');
  console.log(`search_tools("${flagQuery}"): expenses.flag_expense → call "${direct}" directly`);

  // What a model writes after reading the declarations: the chain in one script; only the
  // expenses to flag are printed (as JSON), not the 2,400 line items it reads.
  const code = `
    const QUARTER = 'Q3';
    const { members } = await tools.expenses.get_team_members();
    const levels = [...new Set(members.map((m) => m.level))];
    const budgets = Object.fromEntries(await Promise.all(levels.map(async (level) =>
      [level, (await tools.expenses.get_budget_by_level({ level, quarter: QUARTER })).budgets.travel])));
    const { items } = await tools.expenses.get_expenses({ quarter: QUARTER, category: 'travel', limit: 5000 });
    const toFlag = [];
    for (const member of members) {
      const mine = items.filter((i) => i.memberId === member.id && i.status !== 'rejected');
      const spent = mine.reduce((sum, i) => sum + i.amount, 0);
      if (spent <= budgets[member.level]) continue;
      const pending = mine.filter((i) => i.status === 'pending').sort((a, b) => b.amount - a.amount)[0];
      if (pending) toFlag.push({ expense_id: pending.id, member: member.name, amount: pending.amount,
        over: Math.round(spent - budgets[member.level]) });
    }
    console.log(JSON.stringify(toFlag));
  `;
  const run = await client.callTool({ name: 'execute_code', arguments: { code } });
  const output = text(run);
  if (run.isError) throw new Error(output);
  const toFlag = JSON.parse(/^stdout:\n(.*)$/m.exec(output)[1]);
  console.log(`execute_code: ${toFlag.length} over-budget members have a pending Q3 travel expense`);

  for (const item of toFlag) {
    const reason = `Q3 travel is $${item.over} over budget; largest pending item`;
    const flagged = await client.callTool({
      name: direct,
      arguments: { expense_id: item.expense_id, reason },
    });
    if (flagged.isError) throw new Error(text(flagged));
    console.log(`  flagged ${item.expense_id} (${item.member}, $${item.amount.toFixed(2)})`);
  }

  // The graph treats a transition seen once as noise (search.edgeDiscount, default 1): the next
  // run of the same chain (the same report, run again the next day) makes it evidence.
  const rerun = await client.callTool({ name: 'execute_code', arguments: { code } });
  if (rerun.isError) throw new Error(text(rerun));
  console.log('execute_code again (the next run of the same report)');

  const again = text(await client.callTool({ name: 'search_tools', arguments: { query: task } }));
  const chains = /Usually called in this order:\n((?:- .*\n?)+)/.exec(again)?.[1].trim().split('\n') ?? [];
  console.log('learned call order (from the tool graph):');
  for (const chain of chains) console.log(`  ${chain.slice(2)}`);
} finally {
  await client.close();
}
