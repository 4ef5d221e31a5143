/**
 * @module
 * The sandbox's console formatter bounds its work and output whatever the value's shape: a DAG
 * of shared objects (every path would be expanded), a 10-million-item array or typed array (every
 * key would be listed), a Map of a million entries. Directly against `formatArgs`, and inside a
 * real isolate where the run's CPU budget would otherwise end the script.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { formatArgs } from '../../../sandbox/format.js';
import { SandboxPool } from '../../../src/isolate/index.js';
import { runScript } from './sandbox-helpers.js';

/** An object whose `width` keys all point at the same child, `depth` levels deep: width^depth paths. */
function dag(width: number, depth: number): unknown {
  let node: unknown = { leaf: 1 };
  for (let level = 0; level < depth; level++) {
    const next: Record<string, unknown> = {};
    for (let i = 0; i < width; i++) next[`k${i}`] = node;
    node = next;
  }
  return node;
}

describe('formatArgs bounds', () => {
  it('stops after maxValues values and says so', () => {
    // 10^6 paths: unbounded, this takes seconds and prints megabytes (30^6 would not end).
    const text = formatArgs([dag(10, 7)], { maxValues: 50, maxChars: 1_000_000 });
    expect(
      text.endsWith(
        '… output truncated: formatter visited 50 values (50 at most, about 1000000 characters) — print a smaller part of the value',
      ),
    ).toBe(true);
    expect(text.length).toBeLessThan(2_000);
  });

  it('stops after about maxChars characters of output and says so', () => {
    const text = formatArgs([Array.from({ length: 1_000 }, (_, i) => `${i}`.padEnd(1_000, 'x'))], {
      maxValues: 1_000_000,
      maxChars: 5_000,
    });
    expect(text).toContain('… output truncated: formatter visited 6 values');
    // Five 1,000-character items fit before the budget is spent; the rest are not visited.
    expect(text.length).toBeLessThan(6_000 + 200);
    expect(text).toContain(`'4${'x'.repeat(999)}'`);
    expect(text).not.toContain(`'5${'x'.repeat(999)}'`);
  });

  it('reads a huge array, typed array, Map and Set only up to the items shown', () => {
    const bounds = { maxValues: 20_000, maxChars: 1_000_000 };
    const array = new Array<number>(10_000_000).fill(1);
    (array as unknown as Record<string, unknown>).extra = 'not listed for a huge array';
    expect(formatArgs([array], bounds)).toMatch(/^\[\n {2}1,\n[\s\S]*\n {2}… 9999900 more items\n\]$/);
    expect(formatArgs([new Uint8Array(3)], bounds)).toBe('Uint8Array(3) [ 0, 0, 0 ]');
    expect(formatArgs([new Float64Array(5_000_000)], bounds)).toContain('… 4999900 more items');
    const map = new Map(Array.from({ length: 1_000 }, (_, i) => [i, i] as const));
    expect(formatArgs([map], bounds)).toMatch(/^Map\(1000\) \{\n {2}0 => 0,[\s\S]*… 900 more items\n\}$/);
    expect(formatArgs([new Set([1, 2])], bounds)).toBe('Set(2) { 1, 2 }');
    const holes = [1, 2, 3];
    delete holes[1];
    expect(formatArgs([holes], bounds)).toBe('[ 1, 3 ]');
    expect(formatArgs([Object.assign([1, 2], { name: 'x' })], bounds)).toBe("[ 1, 2, name: 'x' ]");
    expect(formatArgs([new String('abc')], bounds)).toBe("[String: 'abc']");
  });

  it('counts the keys of a huge object past the ones shown', () => {
    const wide: Record<string, number> = {};
    for (let i = 0; i < 200_000; i++) wide[`k${i}`] = i;
    const text = formatArgs([wide], { maxValues: 20_000, maxChars: 1_000_000 });
    expect(text.endsWith('… 199900 more keys\n}')).toBe(true);
  });
});

describe('console inside the isolate', () => {
  let pool: SandboxPool;
  beforeAll(async () => {
    pool = await SandboxPool.open({ mode: 'in-process', limits: { cpuTimeMs: 3_000, wallTimeMs: 20_000 } });
  });
  afterAll(async () => {
    await pool.close();
  });

  it('prints a DAG of shared objects within the CPU budget, with the marker', async () => {
    const result = await runScript(
      pool,
      `let node: any = { leaf: 1 };
       for (let depth = 0; depth < 8; depth++) {
         const next: any = {};
         for (let i = 0; i < 30; i++) next['k' + i] = node;
         node = next;
       }
       console.log(node);
       console.log('after');`,
    );
    expect(result.error).toBeUndefined();
    expect(result.stdout).toContain('output truncated: formatter visited');
    expect(result.stdout.endsWith('after\n')).toBe(true);
    expect(result.stdout.length).toBeLessThan(34_000);
  });

  it('prints a 10-million-item array and a 50-million-byte typed array', async () => {
    const result = await runScript(
      pool,
      `console.log(new Array(10_000_000).fill(1));
       console.log(new Uint8Array(50_000_000));`,
      { limits: { memoryMb: 256 } },
    );
    expect(result.error).toBeUndefined();
    expect(result.stdout).toContain('… 9999900 more items\n]\n');
    expect(result.stdout).toContain('Uint8Array(50000000) [\n  0,');
    expect(result.stdout).toContain('… 49999900 more items\n]\n');
  });

  it('honours maxFormattedValues from the run limits', async () => {
    const result = await runScript(pool, 'console.log(Array.from({ length: 50 }, (_, i) => ({ i })));', {
      limits: { maxFormattedValues: 10 },
    });
    expect(result.stdout).toContain('formatter visited 10 values (10 at most');
  });
});
