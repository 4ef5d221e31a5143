// Which team members exceeded their Q3 travel budget? And where did the year's money go?
//   codecall exec examples/scripts/over-budget.ts --config examples/codecall.json [--json]
// Reads every expense line item of the year (2,400 rows, about half a megabyte of tool results)
// inside the sandbox and prints a few lines: only those come back to the model.

interface LineItem {
  memberId: string;
  quarter: string;
  category: string;
  amount: number;
  status: 'approved' | 'pending' | 'rejected';
}
interface Page {
  items: LineItem[];
  total: number;
  nextOffset: number | null;
}

const QUARTER = 'Q3';
const { members } = await tools.expenses.get_team_members();

// Budgets depend only on the level: one call per distinct level, in parallel.
const levels = [...new Set(members.map((m) => m.level))];
const budgets = Object.fromEntries(
  await Promise.all(
    levels.map(
      async (level) =>
        [
          level,
          (await tools.expenses.get_budget_by_level({ level, quarter: QUARTER })).budgets.travel,
        ] as const,
    ),
  ),
);

// Every line item of the year, 1,000 per page.
const spent = new Map<string, number>();
const byCategory = new Map<string, number>();
let offset: number | null = 0;
let items = 0;
while (offset !== null) {
  const page = (await tools.expenses.get_expenses({ offset, limit: 1000 })) as Page;
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

export {};
