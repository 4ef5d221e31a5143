/**
 * @module
 * Data-heavy runs (docs/data.md) against the example expense server, spawned over stdio: a large
 * `get_expenses` result arrives as a handle the script reduces on the host, `pages()` walks every
 * page without a hand-written loop, and after the run the declarations show `get_expenses` with
 * the result type learned from what the runtime saw (the server declares no `outputSchema`).
 *
 * Run from the repository root: `node --no-node-snapshot examples/library/data-heavy.ts`
 */
import { CodecallRuntime } from 'codecall';

await using runtime = await CodecallRuntime.open({
  load: { path: new URL('../codecall.json', import.meta.url).pathname },
  history: false,
  // A low threshold so the example's results become handles (the default is 16 MiB; in a
  // configuration file: "resultHandles": { "minBytes": 65536 }).
  resultHandles: { minBytes: 64 * 1024 },
});

/** The declaration of one tool, as the model reads it. */
const declarationOf = (member: string): string => {
  const text = runtime.declarations();
  const start = text.lastIndexOf('/**', text.indexOf(`    ${member}(`));
  return text.slice(start, text.indexOf('>;\n', start) + 2);
};
const before = declarationOf('get_expenses');
console.log(`before: get_expenses(…): ${before.slice(before.lastIndexOf('Promise<'))}`);

const result = await runtime.execute(`
const all = await tools.expenses.get_expenses({ quarter: 'Q3' });
console.log('handle:', all.isHandle, all.kind, 'rows at', all.rowsAt, all.length);
console.log('sum:', Math.round(await all.sum('amount')));
const byCategory = await all.groupBy('category', { sum: 'amount' });
console.log('travel:', byCategory.travel.count, 'items');
let paged = 0;
for await (const page of tools.expenses.get_expenses.pages({ quarter: 'Q3', limit: 100 }))
  for (const item of page.items) paged += item.amount;
console.log('pages sum:', Math.round(paged));
`);
if (result.status !== 'ok') throw new Error(result.error?.message);
console.log(result.stdout.trim());

await runtime.flush(); // the learned shape is merged after the run, off its path
console.log('after:');
console.log(declarationOf('get_expenses'));
