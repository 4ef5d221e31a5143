/**
 * @module
 * An MCP server over the seeded expense data (`expense-data.ts`): team members, thousands of
 * expense line items, budgets by level. The data-heavy domain of the examples, tests and
 * benchmarks ("which team members exceeded their Q3 travel budget?").
 *
 * Tools: `get_team_members`, `get_expenses`, `get_budget_by_level` (read-only, with
 * `outputSchema` and `structuredContent` where noted), `flag_expense` (writes, not destructive)
 * and `delete_expense` (destructive: by default not callable from code).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import {
  CATEGORIES,
  createExpenseData,
  LEVELS,
  QUARTERS,
  type ExpenseDataOptions,
  type ExpenseItem,
} from './expense-data.js';

/** Options of {@link createExpenseServer}. */
export interface ExpenseServerOptions extends ExpenseDataOptions {
  /** @defaultValue `"expenses"` */
  name?: string;
}

/** Most line items `get_expenses` returns in one page. */
export const MAX_EXPENSES_PAGE = 5_000;

const memberShape = z.object({
  id: z.string(),
  name: z.string(),
  email: z.string(),
  level: z.enum(LEVELS),
  department: z.string(),
  role: z.string(),
  location: z.string(),
  managerId: z.string().nullable(),
});

/**
 * A fresh MCP server over the expense data. Each call makes a new server (one per connection);
 * the data is shared and immutable except for flags and deletions, which are per server.
 *
 * @example
 * ```ts
 * const server = createExpenseServer();
 * await server.connect(new StdioServerTransport());
 * ```
 */
export function createExpenseServer(options: ExpenseServerOptions = {}): McpServer {
  const data = createExpenseData(options);
  const deleted = new Set<string>();
  const flags = new Map<string, string>();
  const server = new McpServer({ name: options.name ?? 'expenses', version: '1.0.0' });

  server.registerTool(
    'get_team_members',
    {
      title: 'Team members',
      description:
        'List the team members with their id, name, level (L1–L5), department, role, location and manager. ' +
        'Filter by department or level.',
      inputSchema: {
        department: z.string().optional().describe('Only members of this department, e.g. "Engineering".'),
        level: z.enum(LEVELS).optional().describe('Only members at this level.'),
      },
      outputSchema: { members: z.array(memberShape) },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ department, level }) => {
      const members = data.members.filter(
        (m) =>
          (department === undefined || m.department === department) &&
          (level === undefined || m.level === level),
      );
      const structuredContent = { members };
      return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent };
    },
  );

  server.registerTool(
    'get_expenses',
    {
      title: 'Expense line items',
      description:
        'Expense line items (id, memberId, date, quarter, category, amount in USD, merchant, status). ' +
        'Filter by member, quarter and category; results are paginated with offset/limit and return ' +
        '{ items, total, nextOffset } (nextOffset is null on the last page).',
      inputSchema: {
        member_id: z.string().optional().describe('Only this member\'s expenses, e.g. "emp-007".'),
        quarter: z.enum(QUARTERS).optional().describe('Only this quarter of the fiscal year.'),
        category: z.enum(CATEGORIES).optional().describe('Only this category.'),
        status: z.enum(['approved', 'pending', 'rejected']).optional().describe('Only this status.'),
        offset: z.number().int().min(0).optional().describe('Skip this many matching items (default 0).'),
        limit: z
          .number()
          .int()
          .min(1)
          .max(MAX_EXPENSES_PAGE)
          .optional()
          .describe(`Items per page (default and maximum ${MAX_EXPENSES_PAGE}).`),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ member_id, quarter, category, status, offset = 0, limit = MAX_EXPENSES_PAGE }) => {
      const matching: ExpenseItem[] = data.expenses.filter(
        (e) =>
          !deleted.has(e.id) &&
          (member_id === undefined || e.memberId === member_id) &&
          (quarter === undefined || e.quarter === quarter) &&
          (category === undefined || e.category === category) &&
          (status === undefined || e.status === status),
      );
      const items = matching
        .slice(offset, offset + limit)
        .map((e) => (flags.has(e.id) ? { ...e, flag: flags.get(e.id) } : e));
      const end = offset + items.length;
      const page = { items, total: matching.length, nextOffset: end < matching.length ? end : null };
      return { content: [{ type: 'text', text: JSON.stringify(page) }] };
    },
  );

  server.registerTool(
    'get_budget_by_level',
    {
      title: 'Budget by level',
      description:
        'The quarterly budget (USD) of one level, by category (travel, lodging, meals, software, equipment, training). ' +
        'Budgets apply per team member.',
      inputSchema: {
        level: z.enum(LEVELS).describe('The level, L1 (junior) to L5 (director).'),
        quarter: z.enum(QUARTERS).describe('The quarter.'),
      },
      outputSchema: {
        level: z.enum(LEVELS),
        quarter: z.enum(QUARTERS),
        year: z.number(),
        budgets: z.object(
          Object.fromEntries(CATEGORIES.map((c) => [c, z.number()])) as Record<
            (typeof CATEGORIES)[number],
            z.ZodNumber
          >,
        ),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ level, quarter }) => {
      const budget = data.budgets.find((b) => b.level === level && b.quarter === quarter)!;
      const structuredContent = { ...budget, budgets: { ...budget.budgets } };
      return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent };
    },
  );

  server.registerTool(
    'flag_expense',
    {
      title: 'Flag an expense',
      description:
        'Flag an expense line item for review by finance, with a reason. Reversible; does not change amounts.',
      inputSchema: {
        expense_id: z.string().describe('The expense id, e.g. "exp-00042".'),
        reason: z.string().min(3).max(500).describe('Why it needs review.'),
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    ({ expense_id, reason }) => {
      if (!data.expenses.some((e) => e.id === expense_id))
        return { isError: true, content: [{ type: 'text', text: `No expense ${expense_id}.` }] };
      flags.set(expense_id, reason);
      return { content: [{ type: 'text', text: JSON.stringify({ flagged: expense_id, reason }) }] };
    },
  );

  server.registerTool(
    'delete_expense',
    {
      title: 'Delete an expense',
      description: 'Permanently delete an expense line item.',
      inputSchema: { expense_id: z.string().describe('The expense id.') },
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
    },
    ({ expense_id }) => {
      if (!data.expenses.some((e) => e.id === expense_id) || deleted.has(expense_id))
        return { isError: true, content: [{ type: 'text', text: `No expense ${expense_id}.` }] };
      deleted.add(expense_id);
      return { content: [{ type: 'text', text: JSON.stringify({ deleted: expense_id }) }] };
    },
  );

  return server;
}
