/**
 * @module
 * compileScript keeps compiled scripts by source (bounded), so a worker running the same job
 * script again skips esbuild: a repeat is far cheaper than the first compile, gives the same
 * result, and callers cannot change what the next caller gets.
 */
import { describe, expect, it } from 'vitest';
import { compileScript } from '../../../src/compile/index.js';

/** A large, unique script (esbuild needs tens of milliseconds for it). */
function bigScript(tag: string): string {
  const lines = [`const tag: string = ${JSON.stringify(tag)};`];
  for (let i = 0; i < 2_500; i++)
    lines.push(`const v${i}: number = ${i} * 2; if (v${i} < 0) console.log(tag, v${i});`);
  lines.push('console.log(tag);');
  return lines.join('\n');
}

function timeMs(fn: () => void): number {
  const started = performance.now();
  fn();
  return performance.now() - started;
}

describe('compile cache', () => {
  it('compiles a repeated script once: the repeat is much cheaper and equal', () => {
    const source = bigScript(`cache-${Date.now()}-${Math.random()}`);
    let first: ReturnType<typeof compileScript> | undefined;
    const cold = timeMs(() => (first = compileScript(source)));
    expect(first?.ok).toBe(true);
    // Best of three: a loaded machine can stall any one call.
    const repeats: number[] = [];
    for (const _ of [1, 2, 3]) repeats.push(timeMs(() => expect(compileScript(source)).toEqual(first)));
    expect(Math.min(...repeats)).toBeLessThan(cold / 5);
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
