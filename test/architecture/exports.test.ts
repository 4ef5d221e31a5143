/**
 * @module
 * The public surface is an API decision: this snapshot changes only on purpose. Runtime exports
 * are read from the loaded module; type exports (`export type {…}`, interfaces, type aliases)
 * exist only for the compiler, so they are read from the entry files with the TypeScript
 * compiler API.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as api from '../../src/index.js';
import * as aiSdk from '../../src/adapters/ai-sdk/index.js';
import * as openaiAgents from '../../src/adapters/openai-agents/index.js';
import * as jobs from '../../src/jobs/index.js';
import * as server from '../../src/server/index.js';
import * as testing from '../../src/testing/index.js';

const ENTRIES = {
  codecall: resolve(import.meta.dirname, '../../src/index.ts'),
  'codecall/testing': resolve(import.meta.dirname, '../../src/testing/index.ts'),
};

/** Every export of each entry file as the compiler sees it, split into values and types only. */
function compilerExports(): Record<keyof typeof ENTRIES, { values: string[]; types: string[] }> {
  const configPath = resolve(import.meta.dirname, '../../tsconfig.json');
  const config = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  )!;
  const program = ts.createProgram({ rootNames: Object.values(ENTRIES), options: config.options });
  const checker = program.getTypeChecker();
  const read = (file: string): { values: string[]; types: string[] } => {
    const source = program.getSourceFile(file);
    const moduleSymbol = source && checker.getSymbolAtLocation(source);
    if (!moduleSymbol) throw new Error(`The compiler found no module at ${file}.`);
    const values: string[] = [];
    const types: string[] = [];
    for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
      const typeOnly = (symbol.declarations ?? []).some(
        (declaration) => ts.isExportSpecifier(declaration) && ts.isTypeOnlyExportDeclaration(declaration),
      );
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      const isValue = !typeOnly && (target.flags & ts.SymbolFlags.Value) !== 0;
      (isValue ? values : types).push(symbol.name);
    }
    return { values: values.sort(), types: types.sort() };
  };
  return { codecall: read(ENTRIES.codecall), 'codecall/testing': read(ENTRIES['codecall/testing']) };
}

describe('public exports', () => {
  const fromCompiler = compilerExports();

  it('names every runtime export of codecall', () => {
    expect(Object.keys(api).sort()).toMatchSnapshot();
  });
  it('names every runtime export of codecall/testing', () => {
    expect(Object.keys(testing).sort()).toMatchSnapshot();
  });

  it('names every type export of codecall', () => {
    expect(fromCompiler.codecall.types.length).toBeGreaterThan(0);
    expect(fromCompiler.codecall.types).toMatchSnapshot();
  });
  it('names every type export of codecall/testing', () => {
    expect(fromCompiler['codecall/testing'].types.length).toBeGreaterThan(0);
    expect(fromCompiler['codecall/testing'].types).toMatchSnapshot();
  });

  it('the compiler and the runtime agree on the value exports', () => {
    expect(fromCompiler.codecall.values).toEqual(Object.keys(api).sort());
    expect(fromCompiler['codecall/testing'].values).toEqual(Object.keys(testing).sort());
  });
  it('names every runtime export of codecall/ai-sdk', () => {
    expect(Object.keys(aiSdk).sort()).toMatchSnapshot();
  });
  it('names every runtime export of codecall/openai-agents', () => {
    expect(Object.keys(openaiAgents).sort()).toMatchSnapshot();
  });
  it('names every runtime export of codecall/server', () => {
    expect(Object.keys(server).sort()).toMatchSnapshot();
  });
  it('names every runtime export of codecall/jobs', () => {
    expect(Object.keys(jobs).sort()).toMatchSnapshot();
  });

  it('the root leaves the server, jobs and testing entries to their subpaths', () => {
    const elsewhere = new Set([...Object.keys(server), ...Object.keys(jobs), ...Object.keys(testing)]);
    expect(Object.keys(api).filter((name) => elsewhere.has(name))).toEqual([]);
  });
  it('every subpath of package.json exports is an entry this test reads', () => {
    const pkg = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../package.json'), 'utf8')) as {
      exports: Record<string, { types: string; default: string }>;
    };
    expect(Object.keys(pkg.exports).sort()).toEqual(
      ['.', './ai-sdk', './jobs', './openai-agents', './server', './testing'].sort(),
    );
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      const source = target.default.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts');
      expect(existsSync(resolve(import.meta.dirname, '../..', source)), subpath).toBe(true);
      expect(target.types).toBe(target.default.replace(/\.js$/, '.d.ts'));
    }
  });
});
