/**
 * @module
 * The README's library example (examples/library/quick-start.ts) runs as a user would run it,
 * importing the built package by name, and prints the right answer.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createExpenseData, overBudgetMembers } from '../../src/testing/index.js';

const ROOT = resolve(import.meta.dirname, '../..');

describe('library example', () => {
  it('answers the budget question, reports savings, searches and executes', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--no-node-snapshot', 'examples/library/quick-start.ts'],
      { cwd: ROOT, timeout: 60_000 },
    );
    const expected = overBudgetMembers(createExpenseData(), 'Q3', 'travel');
    expect(stdout).toContain(`${expected.length} of 20 team members exceeded their Q3 travel budget`);
    expect(expected.length).toBeGreaterThan(0);
    for (const { member } of expected) expect(stdout).toContain(member.name);
    const meter = /^context: (\d+) tokens; kept out: (\d+) tokens of tool results \((\d+) bytes\)$/m.exec(
      stdout,
    );
    expect(Number(meter?.[1])).toBeGreaterThan(0);
    expect(Number(meter?.[2])).toBeGreaterThan(10 * Number(meter?.[1]));
    expect(Number(meter?.[3])).toBeGreaterThan(400_000);
    expect(stdout).toMatch(/top hit: expenses\.get_budget_by_level/);
    expect(stdout).toMatch(/ok 20 members/);
  });
});
