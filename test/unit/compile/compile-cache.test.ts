/**
 * @module
 * compileScript keeps compiled scripts by source (bounded), so a worker running the same job
 * script again skips esbuild: a repeat calls esbuild no more, gives the same result, and callers
 * cannot change what the next caller gets. esbuild's `transformSync` is wrapped to count its
 * calls (a count, not a time: a loaded machine changes times, not counts).
 */
import * as esbuild from 'esbuild';
import { describe, expect, it, vi } from 'vitest';
import { compileScript } from '../../../src/compile/index.js';

type Esbuild = typeof esbuild;

vi.mock('esbuild', async (importOriginal) => {
  const actual = await importOriginal<Esbuild>();
  return { ...actual, transformSync: vi.fn(actual.transformSync) };
});

/** A large, unique script (esbuild needs tens of milliseconds for it). */
function bigScript(tag: string): string {
  const lines = [`const tag: string = ${JSON.stringify(tag)};`];
  for (let i = 0; i < 2_500; i++)
    lines.push(`const v${i}: number = ${i} * 2; if (v${i} < 0) console.log(tag, v${i});`);
  lines.push('console.log(tag);');
  return lines.join('\n');
}

describe('compile cache', () => {
  it('compiles a repeated script once: the repeat calls esbuild no more, and is equal', () => {
    const transforms = vi.mocked(esbuild.transformSync);
    const source = bigScript(`cache-${Date.now()}-${Math.random()}`);
    const before = transforms.mock.calls.length;
    const first = compileScript(source);
    expect(first.ok).toBe(true);
    const compiles = transforms.mock.calls.length - before;
    expect(compiles).toBeGreaterThan(0);
    for (const _ of [1, 2, 3]) expect(compileScript(source)).toEqual(first);
    expect(transforms.mock.calls.length - before).toBe(compiles);
  });

  it('hands out copies: a caller changing its result does not change the next one', () => {
    const source = 'console.log("copy " + 1)';
    const a = compileScript(source);
    expect(a.ok).toBe(true);
    if (a.ok) a.code = 'tampered';
    const b = compileScript(source);
    expect(b.ok && b.code).toContain('copy');
  });

  it('keys by the code bound too, and caches syntax errors as they were', () => {
    const source = 'console.log("bounded")';
    expect(compileScript(source).ok).toBe(true);
    const bounded = compileScript(source, { maxCodeBytes: 5 });
    expect(bounded.ok).toBe(false);
    const broken = 'const = 1';
    const e1 = compileScript(broken);
    expect(e1.ok).toBe(false);
    expect(compileScript(broken)).toEqual(e1);
  });
});
