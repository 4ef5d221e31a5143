// The client's tools of the team-expenses example, over the example expense data (the tools
// Anthropic's and OpenAI's programmatic-tool-calling guides have the client own).
import { createExpenseData } from 'codecall/testing';

const data = createExpenseData();

/** Runs one tool by name; the answer is JSON text, as a client sends it back. */
export function runExpenseTool(name, input) {
  if (name === 'get_team_members')
    return JSON.stringify({ members: data.members.map(({ id, name, level }) => ({ id, name, level })) });
  if (name === 'get_budget_by_level') {
    const budget = data.budgets.find((b) => b.level === input.level && b.quarter === input.quarter);
    return JSON.stringify(budget ?? { error: `no budget for ${input.level} ${input.quarter}` });
  }
  if (name === 'get_expenses') {
    const offset = input.offset ?? 0;
    const limit = Math.min(input.limit ?? 1000, 1000);
    const items = data.expenses.slice(offset, offset + limit);
    const next = offset + limit < data.expenses.length ? offset + limit : null;
    return JSON.stringify({ items, total: data.expenses.length, nextOffset: next });
  }
  return JSON.stringify({ error: `unknown tool ${name}` });
}

/** The tools' JSON Schemas. */
export const EXPENSE_TOOLS = [
  {
    name: 'get_team_members',
    description: 'Every member of the team: { members: [{ id, name, level }] }.',
    schema: { type: 'object', properties: {} },
  },
  {
    name: 'get_budget_by_level',
    description: 'Budget of a level for a quarter: { budgets: { travel, lodging, … } }.',
    schema: {
      type: 'object',
      properties: { level: { type: 'string' }, quarter: { type: 'string', enum: ['Q1', 'Q2', 'Q3', 'Q4'] } },
      required: ['level', 'quarter'],
    },
  },
  {
    name: 'get_expenses',
    description: 'Expense line items of the year, a page at a time: { items, total, nextOffset }.',
    schema: {
      type: 'object',
      properties: { offset: { type: 'integer' }, limit: { type: 'integer', maximum: 1000 } },
    },
  },
];
