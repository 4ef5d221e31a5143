/**
 * @module
 * Enforces the dependency direction of DESIGN.md and docs/architecture.md. Imports are read with
 * the TypeScript compiler, so every way a module can load another counts: static imports and
 * `export … from`, side-effect imports (`import './x.js'`), `import type` and `typeof import()`,
 * dynamic `import()` (a template literal counts by its static prefix), `require()` and
 * `createRequire(…)(…)` loads (and calls of a name bound to `createRequire(…)`), and
 * `importOptional('pkg', …)` (src/util/optional-package.ts). The allowed graph below is the one
 * docs/architecture.md shows: a test parses the doc's table and compares the two.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');
const SANDBOX = join(ROOT, 'sandbox');
const ARCHITECTURE_DOC = join(ROOT, 'docs', 'architecture.md');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** How a module is loaded. */
type ImportKind = 'static' | 'export' | 'side-effect' | 'type' | 'dynamic' | 'require' | 'optional';

interface Import {
  file: string;
  specifier: string;
  kind?: ImportKind;
  /** Top-level area of the importing file: `errors.ts` → `errors`, `tools/x.ts` → `tools`. */
  from: string;
  /** Area of the imported file, for relative imports inside src/. */
  to?: string;
}

function area(path: string): string {
  const first = relative(SRC, path).split(sep)[0]!;
  return first.replace(/\.(ts|js)$/, '');
}

/** The text of a string literal, or the static prefix of a template literal (`../x/${y}` → `../x/`). */
function literalText(node: ts.Node | undefined): string | undefined {
  if (node === undefined) return undefined;
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) return node.head.text === '' ? undefined : node.head.text;
  return undefined;
}

function calleeName(expression: ts.Expression): string | undefined {
  if (ts.isIdentifier(expression)) return expression.text;
  if (ts.isPropertyAccessExpression(expression) && ts.isIdentifier(expression.name))
    return expression.name.text;
  return undefined;
}

/** Every module specifier `text` (a TypeScript source) loads, with how. */
export function readImports(fileName: string, text: string): Array<{ specifier: string; kind: ImportKind }> {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: Array<{ specifier: string; kind: ImportKind }> = [];
  /** Names bound to `createRequire(…)` in this file: calling them loads a module. */
  const requireNames = new Set(['require']);
  const isCreateRequire = (node: ts.Node): boolean =>
    ts.isCallExpression(node) && calleeName(node.expression) === 'createRequire';
  const add = (node: ts.Node | undefined, kind: ImportKind): void => {
    const specifier = literalText(node);
    if (specifier !== undefined) found.push({ specifier, kind });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      add(
        node.moduleSpecifier,
        node.importClause === undefined ? 'side-effect' : node.importClause.isTypeOnly ? 'type' : 'static',
      );
    } else if (ts.isExportDeclaration(node)) {
      add(node.moduleSpecifier, 'export');
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, 'require');
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal, 'type');
    } else if (
      ts.isVariableDeclaration(node) &&
      ts.isIdentifier(node.name) &&
      node.initializer &&
      isCreateRequire(node.initializer)
    ) {
      requireNames.add(node.name.text);
    } else if (ts.isCallExpression(node)) {
      const [first] = node.arguments;
      if (node.expression.kind === ts.SyntaxKind.ImportKeyword) add(first, 'dynamic');
      else if (isCreateRequire(node.expression)) add(first, 'require');
      else if (ts.isIdentifier(node.expression) && requireNames.has(node.expression.text))
        add(first, 'require');
      else if (calleeName(node.expression) === 'importOptional') add(first, 'optional');
    }
    ts.forEachChild(node, visit);
  };
  // Names bound to createRequire anywhere in the file count before their first call is visited.
  const collect = (node: ts.Node): void => {
    if (
      ts.isVariableDeclaration(node) &&
      ts.isIdentifier(node.name) &&
      node.initializer &&
      isCreateRequire(node.initializer)
    )
      requireNames.add(node.name.text);
    ts.forEachChild(node, collect);
  };
  collect(source);
  visit(source);
  return found;
}

/** The imports of `file` (a path under src/), with the areas they cross. */
function importsOfFile(file: string, text = readFileSync(file, 'utf8')): Import[] {
  return readImports(file, text).map(({ specifier, kind }) => {
    const result: Import = { file: relative(SRC, file), specifier, kind, from: area(file) };
    if (specifier.startsWith('.')) result.to = area(resolve(dirname(file), specifier));
    return result;
  });
}

function imports(): Import[] {
  return files(SRC).flatMap((file) => importsOfFile(file));
}

const LEAVES = new Set(['errors', 'types', 'util']);
const SHARED = new Set(['errors', 'types', 'util', 'config']);
/** Which src/ areas each area may import (besides itself). */
const ALLOWED: Record<string, Set<string>> = {
  errors: new Set(),
  types: new Set(),
  // util's only src/ import: errors.ts (a leaf), for the PACKAGE_MISSING of importOptional.
  util: new Set(['errors']),
  index: new Set(['*']),
  config: new Set(['errors', 'types', 'util']),
  compile: SHARED,
  isolate: SHARED,
  tools: SHARED,
  search: SHARED,
  // Persistence: every durable thing, behind narrow contracts; fed plain data, imports no capability.
  store: SHARED,
  providers: SHARED,
  execute: new Set([...SHARED, 'compile', 'isolate', 'tools', 'search', 'store']),
  // What every model-facing surface shares (meta-tools, search rendering, direct names).
  meta: new Set([...SHARED, 'execute', 'tools']),
  agent: new Set([...SHARED, 'meta', 'execute', 'providers', 'compile', 'search', 'tools', 'store']),
  // The MCP server answers from meta/, never from the agent loop.
  server: new Set([...SHARED, 'meta', 'execute', 'compile', 'search', 'tools', 'store']),
  // Framework adapters: thin mappings over the runtime (tools) and the agent (models).
  adapters: new Set([...SHARED, 'meta', 'execute', 'agent', 'providers', 'tools']),
  testing: new Set([...SHARED, 'providers', 'tools']),
  // Vendor PTC endpoints (Anthropic Messages, OpenAI Responses): a model loop of their own over the runtime.
  'vendor-api': new Set([
    ...SHARED,
    'meta',
    'execute',
    'agent',
    'providers',
    'compile',
    'search',
    'store',
    'tools',
  ]),
  // tools: the one rendering of a call waiting for approval, shown by the approvals page.
  jobs: new Set([...SHARED, 'agent', 'execute', 'search', 'store', 'tools']),
  cli: new Set(['*']),
};

/** Heavy packages and the only areas that may import them. */
const PACKAGE_HOMES: Record<string, string[]> = {
  'isolated-vm': ['isolate'],
  esbuild: ['compile'],
  '@anthropic-ai/sdk': ['providers'],
  openai: ['providers'],
  '@modelcontextprotocol/sdk': ['tools', 'server', 'testing'],
  // testing: the 2026-07-28 conformance fixture (not re-exported by codecall/testing's index).
  '@modelcontextprotocol/server': ['server', 'testing'],
  ajv: ['tools'],
  'ajv-formats': ['tools'],
  'js-tiktoken': ['agent'],
  'onnxruntime-node': ['search'],
  '@huggingface/tokenizers': ['search'],
  bullmq: ['jobs'],
  ioredis: ['jobs', 'store'],
  'pg-boss': ['jobs'],
  pg: ['jobs', 'store'],
  'node:sqlite': ['store'],
  '@bull-board/api': ['jobs'],
  '@bull-board/express': ['jobs'],
  '@opentelemetry/api': ['agent', 'server'],
  ai: ['adapters'],
  '@ai-sdk/provider': ['adapters'],
  '@openai/agents': ['adapters'],
  '@openai/agents-core': ['adapters'],
};

/** Imports that cross into an area their own area may not use. */
function areaOffenders(list: readonly Import[]): string[] {
  return list
    .filter((i) => i.to !== undefined && i.to !== i.from)
    .filter((i) => {
      const allowed = ALLOWED[i.from];
      if (!allowed) return true;
      return !allowed.has('*') && !allowed.has(i.to!);
    })
    .map((i) => `${i.file} → ${i.specifier}`);
}

/** Files under src/ the sandbox prelude may bundle (they must load nothing at run time). */
const SANDBOX_MAY_LOAD = new Set(['src/isolate/limit-table.js']);

/** Imports of a heavy package from outside its home areas. */
function packageOffenders(list: readonly Import[]): string[] {
  return list
    .filter((i) => !i.specifier.startsWith('.'))
    .filter((i) => {
      const pkg = Object.keys(PACKAGE_HOMES).find(
        (p) => i.specifier === p || i.specifier.startsWith(`${p}/`),
      );
      return pkg !== undefined && !PACKAGE_HOMES[pkg]!.includes(i.from);
    })
    .map((i) => `${i.file} → ${i.specifier}`);
}

/**
 * The table in docs/architecture.md's fenced block whose info string is `text allowed-imports`:
 * one line per area, `area: a, b, c` (`-` for none, `*` for anything).
 */
function readAllowedTable(markdown: string): Record<string, string[]> {
  const block = /```text allowed-imports\n([\s\S]*?)```/.exec(markdown);
  if (!block) throw new Error('docs/architecture.md has no ```text allowed-imports block');
  const table: Record<string, string[]> = {};
  for (const line of block[1]!.split('\n')) {
    const row = /^\s*([a-z][a-z-]*)\s*:\s*(.*?)\s*$/.exec(line);
    if (!row) continue;
    const targets = row[2] === '-' ? [] : row[2]!.split(/\s*,\s*/).filter((target) => target !== '');
    table[row[1]!] = targets.sort();
  }
  return table;
}

describe('layering', () => {
  const all = imports();

  it('finds the imports it checks', () => {
    expect(all.length).toBeGreaterThan(5);
  });

  it('reads every way a module loads another (compiler-parsed, not a regex)', () => {
    const text = [
      "import { a } from './static.js';",
      "import type { B } from './type-only.js';",
      "import './side-effect.js';",
      "export { c } from './re-export.js';",
      "export * as d from './namespace.js';",
      "import e = require('./import-equals.js');",
      "type F = typeof import('./type-import.js');",
      "const g = await import('./dynamic.js');",
      'const h = await import(`../agent/${name}.js`);',
      'const skipped = await import(name);',
      "const i = createRequire(import.meta.url)('./create-require.js');",
      'const load = createRequire(import.meta.url);',
      "const j = load('./bound-require.js');",
      "const k = require('./plain-require.js');",
      "const l = await importOptional<typeof import('pkg')>('optional-pkg', 'a feature');",
      "const m = this.#require('not-a-module');",
      "// import './commented-out.js';",
      'const n = "import \'./in-a-string.js\'";',
    ].join('\n');
    expect(readImports('x.ts', text)).toEqual([
      { specifier: './static.js', kind: 'static' },
      { specifier: './type-only.js', kind: 'type' },
      { specifier: './side-effect.js', kind: 'side-effect' },
      { specifier: './re-export.js', kind: 'export' },
      { specifier: './namespace.js', kind: 'export' },
      { specifier: './import-equals.js', kind: 'require' },
      { specifier: './type-import.js', kind: 'type' },
      { specifier: './dynamic.js', kind: 'dynamic' },
      { specifier: '../agent/', kind: 'dynamic' },
      { specifier: './create-require.js', kind: 'require' },
      { specifier: './bound-require.js', kind: 'require' },
      { specifier: './plain-require.js', kind: 'require' },
      { specifier: 'optional-pkg', kind: 'optional' },
      { specifier: 'pkg', kind: 'type' },
    ]);
  });

  it('counts a side-effect, template or createRequire load that breaks layering (negative fixture)', () => {
    const file = join(SRC, 'search', 'x.ts');
    for (const text of [
      "import '../agent/index.js';",
      'await import(`../agent/${name}.js`);',
      "createRequire(import.meta.url)('../tools/index.js');",
    ]) {
      expect(areaOffenders(importsOfFile(file, text)), text).toHaveLength(1);
    }
    const heavy = importsOfFile(file, "await importOptional('bullmq', 'queues');");
    expect(packageOffenders(heavy)).toEqual(['search/x.ts → bullmq']);
  });

  it('keeps every area to its allowed dependencies', () => {
    expect(areaOffenders(all)).toEqual([]);
  });

  it('flags what the rules forbid (negative fixture)', () => {
    const fixture: Import[] = [
      // The MCP server answers from meta/, never from the agent loop.
      { file: 'server/x.ts', specifier: '../agent/orchestrator.js', from: 'server', to: 'agent' },
      // meta/ is shared by the surfaces; it never reaches up into them.
      { file: 'meta/x.ts', specifier: '../agent/index.js', from: 'meta', to: 'agent' },
      // Capability folders never import each other.
      { file: 'search/x.ts', specifier: '../tools/index.js', from: 'search', to: 'tools' },
      // Persistence is fed plain data: it never imports search (or any other capability).
      { file: 'store/x.ts', specifier: '../search/index.js', from: 'store', to: 'search' },
      { file: 'search/y.ts', specifier: '../store/index.js', from: 'search', to: 'store' },
      { file: 'server/y.ts', specifier: '../meta/index.js', from: 'server', to: 'meta' },
      { file: 'adapters/x.ts', specifier: '../agent/index.js', from: 'adapters', to: 'agent' },
    ];
    expect(areaOffenders(fixture)).toEqual([
      'server/x.ts → ../agent/orchestrator.js',
      'meta/x.ts → ../agent/index.js',
      'search/x.ts → ../tools/index.js',
      'store/x.ts → ../search/index.js',
      'search/y.ts → ../store/index.js',
    ]);
  });

  it('keeps leaves free of other src/ imports', () => {
    const offenders = all
      .filter(
        (i) => LEAVES.has(i.from) && i.to !== undefined && i.to !== i.from && !ALLOWED[i.from]!.has(i.to),
      )
      .map((i) => `${i.file} → ${i.specifier}`);
    expect(offenders).toEqual([]);
  });

  it('keeps each heavy dependency in its home folder', () => {
    expect(packageOffenders(all)).toEqual([]);
  });

  it('agrees with the allowed-imports table of docs/architecture.md', () => {
    expect(existsSync(ARCHITECTURE_DOC)).toBe(true);
    const documented = readAllowedTable(readFileSync(ARCHITECTURE_DOC, 'utf8'));
    const tested = Object.fromEntries(
      Object.entries(ALLOWED).map(([name, allowed]) => [name, [...allowed].sort()]),
    );
    expect(documented).toEqual(tested);
  });

  it('has a rule for every folder and top-level file of src/', () => {
    const areas = readdirSync(SRC)
      .filter((entry) => statSync(join(SRC, entry)).isDirectory() || entry.endsWith('.ts'))
      .map((entry) => entry.replace(/\.ts$/, ''))
      .sort();
    expect(areas).toEqual(Object.keys(ALLOWED).sort());
  });

  it('keeps sandbox/ free of Node and of the host: it loads only sandbox/ and the limit table', () => {
    const offenders: string[] = [];
    for (const file of files(SANDBOX)) {
      for (const { specifier } of readImports(file, readFileSync(file, 'utf8'))) {
        const target = resolve(dirname(file), specifier);
        const inside = specifier.startsWith('.') && !relative(SANDBOX, target).startsWith('..');
        if (!inside && !SANDBOX_MAY_LOAD.has(relative(ROOT, target)))
          offenders.push(`${relative(ROOT, file)} → ${specifier}`);
      }
    }
    expect(offenders).toEqual([]);
    // What the prelude bundles from src/ loads nothing at run time (type imports are erased).
    for (const shared of SANDBOX_MAY_LOAD) {
      const path = join(ROOT, shared.replace(/\.js$/, '.ts'));
      const loads = readImports(path, readFileSync(path, 'utf8')).filter((i) => i.kind !== 'type');
      expect(loads, shared).toEqual([]);
    }
  });

  it('calls process.exit only in cli/', () => {
    const offenders = files(SRC)
      .filter((file) => area(file) !== 'cli')
      .filter((file) => /process\.exit\(/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SRC, file));
    expect(offenders).toEqual([]);
  });

  it('never uses export *', () => {
    const offenders = files(SRC)
      .filter((file) => /^\s*export\s+\*/m.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SRC, file));
    expect(offenders).toEqual([]);
  });
});
