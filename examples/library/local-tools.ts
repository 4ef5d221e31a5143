/**
 * @module
 * A local tool beside an MCP server: `convert_currency`, a plain function with a zod schema,
 * served next to the example expense server and called from one script with it.
 *
 * Run from the repository root: `node --no-node-snapshot examples/library/local-tools.ts`
 */
import { CodecallRuntime, defineTool, localTools } from 'codecall';
import { z } from 'zod';

const RATES: Record<string, number> = { USD: 1, EUR: 0.92, GBP: 0.79 };

const convert = defineTool({
  name: 'convert_currency',
  description: 'Convert an amount of money from one currency to another (USD, EUR, GBP).',
  inputSchema: z.object({
    amount: z.number(),
    from: z.enum(['USD', 'EUR', 'GBP']),
    to: z.enum(['USD', 'EUR', 'GBP']),
  }),
  execute: ({ amount, from, to }) => ({
    amount: Math.round((amount / RATES[from]!) * RATES[to]! * 100) / 100,
    currency: to,
  }),
});

await using runtime = await CodecallRuntime.open({
  load: { path: new URL('../codecall.json', import.meta.url).pathname },
  history: false,
  tools: { transports: { finance: localTools([convert]) } },
});
console.log(`search: ${runtime.searchTools('convert money to euros').hits[0]?.tool.name}`);
const result = await runtime.execute(`
const { budgets } = await tools.expenses.get_budget_by_level({ level: 'L1', quarter: 'Q3' });
const eur = await tools.finance.convert_currency({ amount: budgets.travel, from: 'USD', to: 'EUR' });
console.log('L1 Q3 travel budget:', budgets.travel, 'USD =', eur.amount, eur.currency);
`);
console.log(result.stdout.trim());
