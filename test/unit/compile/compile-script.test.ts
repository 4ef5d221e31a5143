/**
 * @module
 * compileScript: what models actually write (JS or TS, fences, top-level await and return,
 * imports of nothing) compiles; syntax errors come back as data positioned in the model's text.
 */
import { describe, expect, it } from 'vitest';

import { compileScript, compileScriptAsync } from '../../../src/compile/index.js';

/** Evaluates compiled code's function with stub globals, outside any sandbox (pure JS check). */
async function evaluate(code: string): Promise<unknown> {
  const main = (0, eval)(code) as () => Promise<unknown>;
  return main();
}

function compiled(source: string): string {
  const result = compileScript(source);
  if (!result.ok) expect.fail(result.error.message);
  return result.code;
}

describe('compileScript', () => {
  it('strips TypeScript types and supports top-level await and return', async () => {
    const code = compiled(
      'interface P { n: number }\nconst p: P = { n: await Promise.resolve(20) };\nenum E { A = 1 }\nreturn p.n + (E.A as number) * 2 satisfies number;',
    );
    expect(code).toMatch(/^\(async function\s*\(\)/);
    await expect(evaluate(code)).resolves.toBe(22);
  });

  it('accepts plain JavaScript', async () => {
    await expect(
      evaluate(compiled('let a = 1, b = 2;\nconst f = (x) => x * 2;\nreturn a < b && f(b) > a;')),
    ).resolves.toBe(true);
  });

  it('takes code out of Markdown fences, including prose around them', async () => {
    const source =
      'Here is the script:\n\n```typescript\nconst x: number = 5;\nreturn x * 2;\n```\n\nThat prints 10.';
    await expect(evaluate(compiled(source))).resolves.toBe(10);
    await expect(evaluate(compiled('```\nreturn 3\n```'))).resolves.toBe(3);
    await expect(evaluate(compiled('```js\nreturn 4'))).resolves.toBe(4);
    const two = '```json\n{"a":1}\n```\n```ts\nreturn 7;\n```';
    await expect(evaluate(compiled(two))).resolves.toBe(7);
  });

  it('drops imports that bind nothing at runtime and export modifiers', async () => {
    const source =
      "import type { Issue } from 'github';\nimport { unused } from 'x';\nexport const n: number = 3;\nexport function twice(v: number) { return v * 2; }\nexport {};\nreturn twice(n);";
    await expect(evaluate(compiled(source))).resolves.toBe(6);
  });

  it('reports a used import as an error at its line, saying what to do instead', () => {
    const result = compileScript(
      "const a = 1;\nimport fs from 'node:fs'; console.log(fs.readFileSync('x'));",
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.line).toBe(2);
    expect(result.error.message).toContain("`import … from 'node:fs'` is not available");
    expect(result.error.message).toContain('tools.<server>.<tool>');
  });

  it('returns syntax errors as data with line and column in the model text (fences counted)', () => {
    const result = compileScript('Try this:\n```ts\nconst a = 1;\nconst b = a +* 2;\n```');
    expect(result).toEqual({
      ok: false,
      error: {
        code: 'SYNTAX_ERROR',
        line: 4,
        column: 14,
        message:
          'SyntaxError at line 4, column 14: Unexpected "*"\n4 | const b = a +* 2;\n  |              ^',
      },
    });
  });

  it('points unclosed constructs at the end of the script', () => {
    const result = compileScript('function f() {\n  return [1, 2;\n');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.line).toBe(2);
    const open = compileScript('if (true) {\n  console.log(1);\n');
    expect(open.ok).toBe(false);
    if (open.ok) return;
    expect(open.error.message).toContain('check brackets and quotes');
  });

  it('rejects empty and oversized scripts with actionable messages', () => {
    const empty = compileScript('```ts\n\n```');
    expect(empty.ok || empty.error.message).toBe(
      'The script is empty. Send JavaScript or TypeScript code to run.',
    );
    const big = compileScript('x'.repeat(2_000), { maxCodeBytes: 1_000 });
    expect(big.ok || big.error.message).toBe(
      'The script is 2000 bytes; the limit is 1000 bytes. Send a shorter script (load data with tool calls instead of inlining it).',
    );
  });

  it('appends a position table mapping generated lines to the model lines', () => {
    const code = compiled(
      '```ts\n// comment\nconst x: { a: number } = {\n  a: 1,\n};\nthrow new Error(String(x.a));\n```',
    );
    const table = JSON.parse(
      code.slice(code.lastIndexOf('//# codecall-map=') + '//# codecall-map='.length),
    ) as number[][];
    const generated = code.split('\n');
    const throwLine = generated.findIndex((line) => line.includes('throw new Error'));
    expect(table[throwLine]![1]).toBe(6);
  });
});

describe('compileScriptAsync', () => {
  it('gives what compileScript gives: code, syntax errors, imports, limits', async () => {
    const sources: [string, { maxCodeBytes?: number }?][] = [
      ['const n: number = await tools.math.add({ a: 1, b: 2 });\nconsole.log(n);\nreturn n;'],
      // Read by the TypeScript loader as a call with a type argument.
      ['const f = (a) => a < 1 > (0);\nreturn f(2);'],
      ['Try this:\n```ts\nconst a = 1;\nconst b = a +* 2;\n```'],
      ["import fs from 'node:fs';\nconsole.log(fs.readFileSync('/etc/passwd'));"],
      ['module.exports = 1;'],
      ['```ts\n\n```'],
      ['x'.repeat(2_000), { maxCodeBytes: 1_000 }],
    ];
    for (const [source, options] of sources) {
      const sync = compileScript(source, options);
      const async = await compileScriptAsync(source, options);
      expect(async).toEqual(sync);
    }
    // The list covers both outcomes.
    const outcomes = await Promise.all(
      sources.map(([source, options]) => compileScriptAsync(source, options)),
    );
    expect(outcomes.map((r) => r.ok)).toEqual([true, true, false, false, false, false, false]);
  });
});
