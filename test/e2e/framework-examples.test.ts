/**
 * The framework examples run from the repository root as their headers say: an AI SDK app and
 * an OpenAI Agents app each run the budget task through codecall with a mock model, and their
 * answers are checked against the data (computed here independently).
 */
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createExpenseData, overBudgetMembers } from '../../src/testing/servers/index.js';

const ROOT = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);
// The example configuration starts "node": make it this Node (22+), whatever the machine's default is.
const ENV = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` };

function checkBudgetAnswer(stdout: string): void {
  const expected = overBudgetMembers(createExpenseData(), 'Q3', 'travel');
  const lines = stdout.trim().split('\n');
  expect(lines[0]).toMatch(/^Scanned 2400 line items: \$\d+ spent this year; top categories:/);
  expect(lines[1]).toBe(`${expected.length} of 20 team members exceeded their Q3 travel budget:`);
  expect(lines.slice(2).map((l) => l.slice(2, l.indexOf(' (')))).toEqual(
    [...expected].sort((a, b) => b.spent - b.budget - (a.spent - a.budget)).map((e) => e.member.name),
  );
}

describe('framework examples', () => {
  it('library: node examples/library/conversation-and-hooks.ts', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--no-node-snapshot', 'examples/library/conversation-and-hooks.ts'],
      { cwd: ROOT, env: ENV },
    );
    const data = createExpenseData();
    const expected = overBudgetMembers(data, 'Q3', 'travel');
    // The demo script: the members, one budget call per level, the line items 1,000 per page.
    const mcpCalls =
      1 + new Set(data.members.map((m) => m.level)).size + Math.ceil(data.expenses.length / 1000);
    const lines = stdout.trim().split('\n');
    // Hooks, in order, for the first run: search, its step, the script, its call, its step, the answer's step.
    expect(lines.slice(0, 6).map((line) => line.replace(/\d+ context tokens/, 'N context tokens'))).toEqual([
      'tool call: search_tools (ok)',
      'step 1: N context tokens',
      `script: ${mcpCalls} MCP calls`,
      'tool call: execute_code (ok)',
      'step 2: N context tokens',
      'step 3: N context tokens',
    ]);
    expect(lines[6]).toBe(`${expected.length} of 20 team members exceeded their Q3 travel budget:`);
    // Turn 2 carries turn 1: 4 messages of turn 1, the new question, and this turn's 4 more.
    expect(lines).toContain('conversation: 12 messages');
    expect(lines).toContain('stopped after 2 steps');
    expect(lines.at(-1)).toBe(
      'spans: chat expense-demo, execute_tool execute_code, execute_tool expenses.get_budget_by_level, ' +
        'execute_tool expenses.get_expenses, execute_tool expenses.get_team_members, execute_tool search_tools, ' +
        'invoke_agent codecall',
    );
  });

  it('library: node examples/library/local-tools.ts', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--no-node-snapshot', 'examples/library/local-tools.ts'],
      {
        cwd: ROOT,
        env: ENV,
      },
    );
    const budget = createExpenseData().budgets.find((b) => b.level === 'L1' && b.quarter === 'Q3')!.budgets
      .travel;
    expect(stdout.trim().split('\n')).toEqual([
      'search: finance.convert_currency',
      `L1 Q3 travel budget: ${budget} USD = ${Math.round(budget * 0.92 * 100) / 100} EUR`,
    ]);
  });

  it('library: node examples/library/openapi-tools.ts', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--no-node-snapshot', 'examples/library/openapi-tools.ts'],
      {
        cwd: ROOT,
        env: ENV,
      },
    );
    expect(stdout.trim().split('\n')).toEqual([
      'ordered 2 apple',
      'pear is out of stock',
      'plum -> inventory.getItem returned an error: GET /items/{name} failed: HTTP 404 Not Found: ' +
        '{"error":"no such item or route: /v1/items/plum"}',
    ]);
  });

  it('AI SDK: node examples/ai-sdk/budget.ts', async () => {
    const { stdout } = await run(process.execPath, ['--no-node-snapshot', 'examples/ai-sdk/budget.ts'], {
      cwd: ROOT,
      env: ENV,
    });
    checkBudgetAnswer(stdout);
  });

  it('OpenAI Agents SDK: node examples/openai-agents/budget.ts', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--no-node-snapshot', 'examples/openai-agents/budget.ts'],
      {
        cwd: ROOT,
        env: ENV,
      },
    );
    checkBudgetAnswer(stdout);
  });
});
