/**
 * @module
 * Enforces the dependency direction of DESIGN.md by reading import specifiers in src/.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

interface Import {
  file: string;
  specifier: string;
  /** Top-level area of the importing file: `errors.ts` → `errors`, `tools/x.ts` → `tools`. */
  from: string;
  /** Area of the imported file, for relative imports inside src/. */
  to?: string;
}

function area(path: string): string {
  const first = relative(SRC, path).split(sep)[0]!;
  return first.replace(/\.(ts|js)$/, '');
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function imports(): Import[] {
  return files(SRC).flatMap((file) => {
    const text = readFileSync(file, 'utf8');
    return [...text.matchAll(IMPORT)].map((match) => {
      const specifier = (match[1] ?? match[2])!;
      const result: Import = { file: relative(SRC, file), specifier, from: area(file) };
      if (specifier.startsWith('.')) result.to = area(resolve(dirname(file), specifier));
      return result;
    });
  });
}

const LEAVES = new Set(['errors', 'types', 'util']);
const SHARED = new Set(['errors', 'types', 'util', 'config']);
/** Which src/ areas each area may import (besides itself). */
const ALLOWED: Record<string, Set<string>> = {
  errors: new Set(),
  types: new Set(),
  util: new Set(),
  index: new Set(['*']),
  config: new Set(['errors', 'types', 'util']),
  compile: SHARED,
  isolate: SHARED,
  tools: SHARED,
  search: SHARED,
  providers: SHARED,
  execute: new Set([...SHARED, 'compile', 'isolate', 'tools', 'search']),
  // What every model-facing surface shares (meta-tools, search rendering, direct names).
  meta: new Set([...SHARED, 'execute', 'tools']),
  agent: new Set([...SHARED, 'meta', 'execute', 'providers', 'compile', 'search', 'tools']),
  // The MCP server answers from meta/, never from the agent loop.
  server: new Set([...SHARED, 'meta', 'execute', 'compile', 'search', 'tools']),
  // Framework adapters: thin mappings over the runtime (tools) and the agent (models).
  adapters: new Set([...SHARED, 'meta', 'execute', 'agent', 'providers', 'tools']),
  testing: new Set([...SHARED, 'providers', 'tools']),
  jobs: new Set([...SHARED, 'agent', 'execute', 'search']),
  cli: new Set(['*']),
};

/** Heavy packages and the only areas that may import them. */
const PACKAGE_HOMES: Record<string, string[]> = {
  'isolated-vm': ['isolate'],
  esbuild: ['compile'],
  '@anthropic-ai/sdk': ['providers'],
  openai: ['providers'],
  '@modelcontextprotocol/sdk': ['tools', 'server', 'testing'],
  ajv: ['tools'],
  'ajv-formats': ['tools'],
  'js-tiktoken': ['agent'],
  bullmq: ['jobs'],
  ioredis: ['jobs'],
  'pg-boss': ['jobs'],
  pg: ['jobs'],
  '@bull-board/api': ['jobs'],
  '@bull-board/express': ['jobs'],
  '@opentelemetry/api': ['agent'],
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

describe('layering', () => {
  const all = imports();

  it('finds the imports it checks', () => {
    expect(all.length).toBeGreaterThan(5);
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
      { file: 'server/y.ts', specifier: '../meta/index.js', from: 'server', to: 'meta' },
      { file: 'adapters/x.ts', specifier: '../agent/index.js', from: 'adapters', to: 'agent' },
    ];
    expect(areaOffenders(fixture)).toEqual([
      'server/x.ts → ../agent/orchestrator.js',
      'meta/x.ts → ../agent/index.js',
      'search/x.ts → ../tools/index.js',
    ]);
  });

  it('keeps leaves free of other src/ imports', () => {
    const offenders = all
      .filter((i) => LEAVES.has(i.from) && i.to !== undefined && i.to !== i.from)
      .map((i) => `${i.file} → ${i.specifier}`);
    expect(offenders).toEqual([]);
  });

  it('keeps each heavy dependency in its home folder', () => {
    const offenders = all
      .filter((i) => !i.specifier.startsWith('.') && !i.specifier.startsWith('node:'))
      .filter((i) => {
        const pkg = Object.keys(PACKAGE_HOMES).find(
          (p) => i.specifier === p || i.specifier.startsWith(`${p}/`),
        );
        return pkg !== undefined && !PACKAGE_HOMES[pkg]!.includes(i.from);
      })
      .map((i) => `${i.file} → ${i.specifier}`);
    expect(offenders).toEqual([]);
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
