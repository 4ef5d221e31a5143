/**
 * @module
 * countTokens without a working js-tiktoken, through Node's own module resolution (a resolve hook
 * in this process): not installed, the counts are the length estimate; installed but missing its
 * own dependency, loading it fails with an error that names that dependency, never a silent estimate.
 */
import { registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type * as CountTokens from '../../../src/agent/count-tokens.js';

let hooks: { deregister(): void } | undefined;
afterEach(() => {
  hooks?.deregister();
  hooks = undefined;
});

/** A fresh count-tokens module (its encoder and install check are per module instance). */
async function freshCountTokens(): Promise<typeof CountTokens> {
  vi.resetModules();
  return import('../../../src/agent/count-tokens.js');
}

describe('countTokens without js-tiktoken', () => {
  it('not installed: tokenizerName() is estimate and countTokens counts by length', async () => {
    hooks = registerHooks({
      resolve(specifier, context, next) {
        if (specifier !== 'js-tiktoken' && !specifier.startsWith('js-tiktoken/'))
          return next(specifier, context);
        // What require() throws for a package that is not installed (test/unit/util/optional-package.test.ts
        // checks this shape against Node's own).
        const parent = fileURLToPath(context.parentURL ?? import.meta.url);
        throw Object.assign(new Error(`Cannot find module '${specifier}'\nRequire stack:\n- ${parent}`), {
          code: 'MODULE_NOT_FOUND',
          requireStack: [parent],
        });
      },
    });
    const { countTokens, estimateTokens, tokenizerName } = await freshCountTokens();
    expect(tokenizerName()).toBe('estimate');
    expect(countTokens('Hello, world! '.repeat(10))).toBe(estimateTokens('Hello, world! '.repeat(10)));
  });

  it('installed but missing its own dependency: an error naming the dependency, not an estimate', async () => {
    // Node itself fails to find the dependency: js-tiktoken asks for base64-js, Node looks for an
    // absent package, and its message names js-tiktoken's file in the require stack.
    hooks = registerHooks({
      resolve: (specifier, context, next) =>
        next(specifier === 'base64-js' ? 'codecall-absent-base64-js' : specifier, context),
    });
    const { countTokens, tokenizerName } = await freshCountTokens();
    expect(tokenizerName()).toBe('o200k_base');
    let thrown: unknown;
    try {
      countTokens('Hello, world!');
    } catch (error) {
      thrown = error;
    }
    const error = thrown as Error & { code?: unknown; cause?: { message?: unknown } };
    expect(error.code).toBe('MODULE_NOT_FOUND');
    expect(String(error.cause?.message)).toMatch(
      /^Cannot find module 'codecall-absent-base64-js'\nRequire stack:\n- .*\/node_modules\/js-tiktoken\/dist\/lite\.cjs\n/,
    );
    expect(error.message).toMatch(
      /^Token counting \(o200k_base\) loads js-tiktoken, which is installed, but js-tiktoken cannot load: it imports codecall-absent-base64-js, which is not installed or is incomplete\. Run `npm install codecall-absent-base64-js`, or reinstall js-tiktoken\./,
    );
  });
});
