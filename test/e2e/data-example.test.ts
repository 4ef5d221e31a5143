/**
 * @module
 * The data-heavy example (examples/library/data-heavy.ts) runs as a user would run it, importing
 * the built package by name against the example expense server spawned over stdio: a handle's
 * host-side sum and the pages() walk agree with the data, and the declarations show the learned
 * result type of get_expenses after the run (docs/data.md).
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createExpenseData } from '../../src/testing/index.js';

const ROOT = resolve(import.meta.dirname, '../..');

describe('data-heavy example', () => {
  it('reduces a handle on the host, walks pages(), and declares the learned type of get_expenses', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--no-node-snapshot', 'examples/library/data-heavy.ts'],
      { cwd: ROOT, timeout: 120_000 },
    );
    const q3 = createExpenseData().expenses.filter((e) => e.quarter === 'Q3');
    const sum = Math.round(q3.reduce((total, e) => total + e.amount, 0));
    expect(stdout).toContain('before: get_expenses(…): Promise<unknown>;');
    expect(stdout).toContain(`handle: true object rows at /items ${q3.length}`);
    expect(stdout).toContain(`sum: ${sum}`);
    expect(stdout).toContain(`pages sum: ${sum}`);
    expect(stdout).toContain(`travel: ${q3.filter((e) => e.category === 'travel').length} items`);
    const after = stdout.slice(stdout.indexOf('after:'));
    expect(after).toMatch(/Result type inferred from \d+ results \(the server declares none\)/);
    expect(after).toContain('amount: number;');
    expect(after).toContain('nextOffset: number | null;');
  });
});
