/**
 * @module
 * compileScript with `persistTopLevel`: top-level declarations of one script are globals that
 * the next script run in the same context sees (the REPL behaviour of sessions), while nested
 * declarations stay local and error positions still point at the model's lines.
 */
import { createContext, runInContext, type Context } from 'node:vm';

import { describe, expect, it } from 'vitest';

import { compileScript } from '../../../src/compile/index.js';

function compiled(source: string, persistTopLevel = true): string {
  const result = compileScript(source, { persistTopLevel });
  if (!result.ok) expect.fail(result.error.message);
  return result.code;
}

/** Runs compiled code in `context` (a plain node:vm context stands in for the isolate). */
async function run(context: Context, code: string): Promise<unknown> {
  const main = runInContext(code, context) as () => Promise<unknown>;
  return main();
}

describe('compileScript persistTopLevel', () => {
  it('keeps const, let, var, destructured names, functions, classes and enums for the next script', async () => {
    const context = createContext({});
    await run(
      context,
      compiled(
        [
          'const rows: number[] = await Promise.resolve([1, 2, 3]);',
          'let { a, b: [c, ...rest] } = { a: 1, b: [2, 3, 4] }, untouched;',
          'var v = 7;',
          'function total(list: number[]) { return list.reduce((s, n) => s + n, 0) + helper(); }',
          'function helper() { return 0; }',
          'class Box { constructor(public n: number) {} }',
          'enum Color { Red = 1 }',
          'for (const inner of [1]) { const blockLocal = inner; }',
          'return total(rows);',
        ].join('\n'),
      ),
    );
    const second = await run(
      context,
      compiled(
        'return [total(rows), a, c, rest, untouched, v, new Box(5).n, Color.Red, typeof inner, typeof blockLocal];',
      ),
    );
    expect(second).toEqual([6, 1, 2, [3, 4], undefined, 7, 5, 1, 'undefined', 'undefined']);
  });

  it('lets a later script declare the same names again (no redeclaration error)', async () => {
    const context = createContext({});
    await run(context, compiled('const n = 1; class K {} function f() { return 1; }'));
    await expect(
      run(context, compiled('const n = 2; class K {} function f() { return n; } return f();')),
    ).resolves.toBe(2);
  });

  it('hoists function declarations as before (call above the declaration)', async () => {
    const context = createContext({});
    await expect(run(context, compiled('return early();\nfunction early() { return "ok"; }'))).resolves.toBe(
      'ok',
    );
  });

  it('persists nothing without the option', async () => {
    const context = createContext({});
    await run(context, compiled('const kept = 1; function g() {}', false));
    await expect(run(context, compiled('return [typeof kept, typeof g];', false))).resolves.toEqual([
      'undefined',
      'undefined',
    ]);
  });

  it('keeps the position table pointing at the model line and column after the rewrite', () => {
    // `let u` gains ` = void 0`: the call to boom() after it moves right on the same line.
    const source = 'const x = 1;\nlet u, w = boom();';
    const plain = compileScript(source);
    const persisted = compileScript(source, { persistTopLevel: true });
    if (!plain.ok || !persisted.ok) expect.fail('must compile');
    const table = (code: string) =>
      JSON.parse(code.slice(code.lastIndexOf('//# codecall-map=') + 17)) as number[][];
    const locate = (code: string, needle: string): number[] => {
      const lines = code.split('\n');
      const line = lines.findIndex((text) => text.includes(needle));
      const column = lines[line]!.indexOf(needle);
      const flat = table(code)[line]!;
      for (let index = 0; index < flat.length; index += 3) {
        if (flat[index] === column) return [flat[index + 1]!, flat[index + 2]!];
      }
      return expect.fail(`no segment at ${needle}`);
    };
    expect(persisted.code).toContain('u = void 0, w = boom()');
    expect(locate(persisted.code, 'boom')).toEqual(locate(plain.code, 'boom'));
    expect(locate(persisted.code, 'boom')).toEqual([2, 11]);
  });
});
