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
