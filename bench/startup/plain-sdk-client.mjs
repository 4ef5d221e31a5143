// The floor for `codecall exec examples/scripts/over-budget.ts`: a plain MCP SDK client doing the
// same job with no sandbox (spawn the expense server over stdio, make the same tool calls, sum in
// JS, print the same lines). bench/startup.bench.ts times it against codecall in the same run.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const QUARTER = 'Q3';
const client = new Client({ name: 'plain-sdk-client', version: '0.0.0' });
await client.connect(
  new StdioClientTransport({ command: process.execPath, args: ['examples/expense-server/server.mjs'] }),
);
const call = async (name, args = {}) => {
  const result = await client.callTool({ name, arguments: args });
  return result.structuredContent ?? JSON.parse(result.content[0].text);
};

const { members } = await call('get_team_members');
const levels = [...new Set(members.map((m) => m.level))];
const budgets = Object.fromEntries(
  await Promise.all(
    levels.map(async (level) => [
      level,
      (await call('get_budget_by_level', { level, quarter: QUARTER })).budgets.travel,
    ]),
  ),
);
const spent = new Map();
const byCategory = new Map();
let offset = 0;
let items = 0;
while (offset !== null) {
  const page = await call('get_expenses', { offset, limit: 1000 });
  for (const item of page.items) {
    if (item.status === 'rejected') continue;
    byCategory.set(item.category, (byCategory.get(item.category) ?? 0) + item.amount);
    if (item.quarter === QUARTER && item.category === 'travel') {
      spent.set(item.memberId, (spent.get(item.memberId) ?? 0) + item.amount);
    }
  }
  items += page.items.length;
  offset = page.nextOffset;
}
const over = members
  .map((m) => ({ ...m, spent: spent.get(m.id) ?? 0, budget: budgets[m.level] ?? 0 }))
  .filter((m) => m.spent > m.budget)
  .sort((a, b) => b.spent - b.budget - (a.spent - a.budget));
const total = [...byCategory.values()].reduce((sum, v) => sum + v, 0);
const top = [...byCategory].sort((a, b) => b[1] - a[1]).slice(0, 3);
console.log(
  `Scanned ${items} line items: $${total.toFixed(0)} spent this year; top categories:`,
  top.map(([c, v]) => `${c} $${v.toFixed(0)}`).join(', '),
);
console.log(`${over.length} of ${members.length} team members exceeded their ${QUARTER} travel budget:`);
for (const m of over) {
  console.log(
    `- ${m.name} (${m.level}): $${m.spent.toFixed(2)} of $${m.budget} (+$${(m.spent - m.budget).toFixed(2)})`,
  );
}
await client.close();
