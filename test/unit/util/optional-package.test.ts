/**
 * @module
 * isPackageMissing and explainImportError read the errors Node really throws: a Node child process
 * imports and requires from a folder of fake packages (one installed with a dependency missing,
 * one scoped, one without `exports`) and prints each error, so these tests see Node's own messages,
 * never hand-written copies.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { isCodecallError } from '../../../src/errors.js';
import { explainImportError, isPackageMissing } from '../../../src/util/optional-package.js';
import { tempDir } from '../../fixtures/temp-dir.js';

/** The fake packages: path under the folder → file text. */
const FILES: Record<string, string> = {
  // `ai` is installed, but its dependency `@ai-sdk/provider` is not.
  'node_modules/ai/package.json': JSON.stringify({
    name: 'ai',
    type: 'module',
    exports: { '.': { import: './index.js', require: './index.cjs' }, './broken': './lib/broken.js' },
  }),
  'node_modules/ai/index.js': "import '@ai-sdk/provider';\n",
  'node_modules/ai/index.cjs': "require('@ai-sdk/provider');\n",
  // A module of `ai` whose own file is absent (a broken install of `ai`).
  'node_modules/ai/lib/broken.js': "import './absent.js';\n",
  // `@scope/pkg` is installed, but its dependency `@other/dep` is not.
  'node_modules/@scope/pkg/package.json': JSON.stringify({
    name: '@scope/pkg',
    type: 'module',
    main: 'index.js',
  }),
  'node_modules/@scope/pkg/index.js': "import '@other/dep/deep/path.js';\n",
  // No `exports`: any subpath may be asked for, and a missing one is named by its path.
  'node_modules/noexp/package.json': JSON.stringify({ name: 'noexp', main: 'index.js' }),
  'node_modules/noexp/index.js': 'module.exports = 1;\n',
  'probe.mjs': `import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const errors = {};
for (const [label, load] of Object.entries({
  'import absent': () => import('absent'),
  'require absent': async () => require('absent'),
  'import openai/resources': () => import('openai/resources'),
  'require openai/resources': async () => require('openai/resources'),
  'import @scope/absent/a/b': () => import('@scope/absent/a/b'),
  'require @scope/absent/a/b': async () => require('@scope/absent/a/b'),
  'import js-tiktoken/ranks/o200k_base': () => import('js-tiktoken/ranks/o200k_base'),
  'require js-tiktoken/ranks/o200k_base': async () => require('js-tiktoken/ranks/o200k_base'),
  'import noexp/deep/x.js': () => import('noexp/deep/x.js'),
  'import ai': () => import('ai'),
  'require ai': async () => require('ai'),
  'import ai/broken': () => import('ai/broken'),
  'import @scope/pkg': () => import('@scope/pkg'),
})) {
  try {
    await load();
    errors[label] = null;
  } catch (error) {
    errors[label] = { code: error.code, message: error.message };
  }
}
console.log(JSON.stringify(errors));
`,
};

type Label =
  | 'import absent'
  | 'require absent'
  | 'import openai/resources'
  | 'require openai/resources'
  | 'import @scope/absent/a/b'
  | 'require @scope/absent/a/b'
  | 'import js-tiktoken/ranks/o200k_base'
  | 'require js-tiktoken/ranks/o200k_base'
  | 'import noexp/deep/x.js'
  | 'import ai'
  | 'require ai'
  | 'import ai/broken'
  | 'import @scope/pkg';

let folder = '';
let real: Record<Label, { code: string; message: string } | null>;

/** The error Node threw for `label`, rebuilt as the `{ code, message }` Error it was. */
function nodeError(label: Label): Error & { code: string } {
  const error = real[label];
  if (error === null) throw new Error(`${label} did not fail`);
  return Object.assign(new Error(error.message), { code: error.code });
}

beforeAll(() => {
  // Node names real paths (a symlinked temp folder would differ).
  folder = realpathSync(tempDir('codecall-optional-'));
  for (const [path, text] of Object.entries(FILES)) {
    mkdirSync(dirname(join(folder, path)), { recursive: true });
    writeFileSync(join(folder, path), text);
  }
  const probe = spawnSync(process.execPath, [join(folder, 'probe.mjs')], { cwd: folder, encoding: 'utf8' });
  expect(probe.stderr).toBe('');
  real = JSON.parse(probe.stdout) as typeof real;
});

describe('isPackageMissing', () => {
  it("reads Node's real messages for a package that is not installed (import and require)", () => {
    expect(real['import absent']).toEqual({
      code: 'ERR_MODULE_NOT_FOUND',
      message: `Cannot find package 'absent' imported from ${join(folder, 'probe.mjs')}`,
    });
    expect(real['require absent']).toEqual({
      code: 'MODULE_NOT_FOUND',
      message: `Cannot find module 'absent'\nRequire stack:\n- ${join(folder, 'probe.mjs')}`,
    });
    for (const label of ['import absent', 'require absent'] as const) {
      expect(isPackageMissing(nodeError(label), 'absent')).toBe(true);
      expect(isPackageMissing(nodeError(label), 'absen')).toBe(false);
    }
  });

  it("'ai' is not 'openai': a missing openai/… is not a missing ai", () => {
    for (const label of ['import openai/resources', 'require openai/resources'] as const) {
      expect(isPackageMissing(nodeError(label), 'openai')).toBe(true);
      expect(isPackageMissing(nodeError(label), 'ai')).toBe(false);
    }
    // A file of openai, named by its path.
    const path = Object.assign(
      new Error(`Cannot find module '/app/node_modules/openai/dist/x.js' imported from /app/dist/index.js`),
      { code: 'ERR_MODULE_NOT_FOUND' },
    );
    expect(isPackageMissing(path, 'ai')).toBe(false);
    expect(isPackageMissing(path, 'openai')).toBe(true);
    // pnpm's layout: the package is the one after the last node_modules.
    const pnpm = Object.assign(
      new Error(
        `Cannot find module '/app/node_modules/.pnpm/openai@5.0.0/node_modules/openai/dist/x.js' imported from /app/dist/index.js`,
      ),
      { code: 'ERR_MODULE_NOT_FOUND' },
    );
    expect(isPackageMissing(pnpm, 'openai')).toBe(true);
  });

  it('scoped packages: the scope and the name together, never the scope alone', () => {
    for (const label of ['import @scope/absent/a/b', 'require @scope/absent/a/b'] as const) {
      expect(isPackageMissing(nodeError(label), '@scope/absent')).toBe(true);
      expect(isPackageMissing(nodeError(label), '@scope')).toBe(false);
      expect(isPackageMissing(nodeError(label), '@scope/absent-other')).toBe(false);
    }
    const path = Object.assign(
      new Error(
        `Cannot find module '/app/node_modules/@scope/pkg/dist/sub.js' imported from /app/dist/index.js`,
      ),
      { code: 'ERR_MODULE_NOT_FOUND' },
    );
    expect(isPackageMissing(path, '@scope/pkg')).toBe(true);
    expect(isPackageMissing(path, '@scope')).toBe(false);
  });

  it('a deep subpath specifier is its package: absent, or a file absent from its folder', () => {
    expect(real['import js-tiktoken/ranks/o200k_base']?.message).toMatch(
      /^Cannot find package 'js-tiktoken' /,
    );
    expect(real['require js-tiktoken/ranks/o200k_base']?.message).toMatch(
      /^Cannot find module 'js-tiktoken\/ranks\/o200k_base'\n/,
    );
    for (const label of [
      'import js-tiktoken/ranks/o200k_base',
      'require js-tiktoken/ranks/o200k_base',
    ] as const) {
      expect(isPackageMissing(nodeError(label), 'js-tiktoken')).toBe(true);
      expect(isPackageMissing(nodeError(label), 'js-tiktoken/ranks/o200k_base')).toBe(false);
    }
    // Installed, but the subpath's file is not in its folder: Node names the path.
    expect(real['import noexp/deep/x.js']?.message).toBe(
      `Cannot find module '${join(folder, 'node_modules/noexp/deep/x.js')}' imported from ${join(folder, 'probe.mjs')}`,
    );
    expect(isPackageMissing(nodeError('import noexp/deep/x.js'), 'noexp')).toBe(true);
  });

  it('an installed package whose own dependency is missing is not the package missing', () => {
    // `ai` is installed; Node names the dependency it imports, and `ai`'s folder as the importer.
    expect(real['import ai']?.message).toBe(
      `Cannot find package '@ai-sdk/provider' imported from ${join(folder, 'node_modules/ai/index.js')}`,
    );
    expect(real['require ai']?.message).toMatch(
      /^Cannot find module '@ai-sdk\/provider'\nRequire stack:\n- .*\/node_modules\/ai\/index\.cjs\n/,
    );
    for (const label of ['import ai', 'require ai'] as const) {
      expect(isPackageMissing(nodeError(label), 'ai')).toBe(false);
      expect(isPackageMissing(nodeError(label), '@ai-sdk/provider')).toBe(true);
    }
    expect(isPackageMissing(nodeError('import @scope/pkg'), '@scope/pkg')).toBe(false);
    expect(isPackageMissing(nodeError('import @scope/pkg'), '@other/dep')).toBe(true);
  });

  it("a package's own file missing is that package (reinstalling it is the fix), not anyone else's", () => {
    expect(real['import ai/broken']?.message).toBe(
      `Cannot find module '${join(folder, 'node_modules/ai/lib/absent.js')}' imported from ${join(folder, 'node_modules/ai/lib/broken.js')}`,
    );
    expect(isPackageMissing(nodeError('import ai/broken'), 'ai')).toBe(true);
    // The same by require: a relative specifier, resolved against the importer of the stack.
    const required = Object.assign(
      new Error(
        "Cannot find module './absent.js'\nRequire stack:\n- /app/node_modules/ai/lib/broken.cjs\n- /app/x.cjs",
      ),
      { code: 'MODULE_NOT_FOUND' },
    );
    expect(isPackageMissing(required, 'ai')).toBe(true);
    expect(isPackageMissing(required, 'openai')).toBe(false);
  });

  it('any other error or message shape is not a missing package', () => {
    const shaped = (code: string, message: string): Error => Object.assign(new Error(message), { code });
    expect(
      isPackageMissing(
        shaped('ERR_PACKAGE_PATH_NOT_EXPORTED', "Cannot find package 'pg' imported from /x"),
        'pg',
      ),
    ).toBe(false);
    expect(isPackageMissing(shaped('ERR_MODULE_NOT_FOUND', 'Something about pg/ and "pg"'), 'pg')).toBe(
      false,
    );
    expect(
      isPackageMissing(
        shaped('ERR_MODULE_NOT_FOUND', "Cannot find module '/app/dist/pg.js' imported from /app/x.js"),
        'pg',
      ),
    ).toBe(false);
    expect(isPackageMissing(new SyntaxError("Cannot find package 'pg'"), 'pg')).toBe(false);
    expect(isPackageMissing(null, 'pg')).toBe(false);
  });
});

describe('explainImportError', () => {
  it('PACKAGE_MISSING naming the install command when the package is not installed', () => {
    const error = explainImportError(
      nodeError('import openai/resources'),
      'openai/resources',
      'The openai provider',
    );
    expect(isCodecallError(error) && error.code).toBe('PACKAGE_MISSING');
    expect((error as Error).message).toBe(
      'The openai provider needs the openai package, which is not installed: run `npm install openai`.',
    );
  });

  it('a missing dependency of an installed package: an error naming the dependency, not PACKAGE_MISSING', () => {
    for (const label of ['import ai', 'require ai'] as const) {
      const cause = nodeError(label);
      const error = explainImportError(cause, 'ai', 'The AI SDK adapter') as Error & { code?: unknown };
      expect(isCodecallError(error)).toBe(false);
      expect(error.code).toBe(cause.code);
      expect(error.cause).toBe(cause);
      expect(error.message).toMatch(
        /^The AI SDK adapter loads ai, which is installed, but ai cannot load: it imports @ai-sdk\/provider, which is not installed or is incomplete\. Run `npm install @ai-sdk\/provider`, or reinstall ai\. \(Cannot find (package|module) '@ai-sdk\/provider'/,
      );
    }
  });

  it('any other failure is returned as it is', () => {
    const syntax = new SyntaxError('Unexpected token');
    expect(explainImportError(syntax, 'pg', 'The PostgreSQL store')).toBe(syntax);
    const app = Object.assign(new Error("Cannot find module '/app/dist/x.js' imported from /app/y.js"), {
      code: 'ERR_MODULE_NOT_FOUND',
    });
    expect(explainImportError(app, 'pg', 'The PostgreSQL store')).toBe(app);
  });
});
