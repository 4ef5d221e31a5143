/**
 * @module
 * The TypeScript examples of docs/providers.md, and the token-streaming example of
 * docs/agent.md, type-check against today's API: each block is compiled as its own module with
 * the project's compiler options (in memory: nothing is written), `codecall` and
 * `codecall/testing` resolving to the sources. An option renamed or removed fails here.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');

/** The ```ts blocks of a Markdown file. */
function tsBlocks(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
}

/** Blocks of docs/agent.md this test covers, with what they use and do not import. */
const AGENT_PREAMBLE = "import type { Orchestrator } from 'codecall';\ndeclare const agent: Orchestrator;\n";

/** Type errors of each block, compiled as modules next to the tests (virtually). */
function diagnosticsOf(blocks: string[]): string[][] {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (parsed === undefined) throw new Error('tsconfig.json did not parse');
  const files = new Map(
    blocks.map((block, index) => [
      join(ROOT, 'test', 'docs-examples', `block-${index}.ts`),
      `${block
        .replaceAll("from 'codecall/testing'", "from '../../src/testing/index.js'")
        .replaceAll("from 'codecall'", "from '../../src/index.js'")}\nexport {};\n`,
    ]),
  );
  const host = ts.createCompilerHost({ ...parsed.options, noEmit: true });
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, onError, fresh) => {
    const virtual = files.get(resolve(name));
    return virtual === undefined
      ? getSourceFile(name, language, onError, fresh)
      : ts.createSourceFile(name, virtual, language, true);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => files.has(resolve(name)) || fileExists(name);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => files.get(resolve(name)) ?? readFile(name);
  const program = ts.createProgram([...files.keys()], { ...parsed.options, noEmit: true }, host);
  return [...files.keys()].map((name) =>
    ts
      .getPreEmitDiagnostics(program, program.getSourceFile(name))
      .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')),
  );
}

describe('docs examples compile', () => {
  it('every TypeScript block of docs/providers.md and the streaming block of docs/agent.md', () => {
    const providers = tsBlocks('docs/providers.md');
    const streaming = tsBlocks('docs/agent.md').filter((block) => block.includes("'text-delta'"));
    expect(providers.length).toBeGreaterThanOrEqual(5);
    expect(streaming).toHaveLength(1);
    const blocks = [...providers, ...streaming.map((block) => AGENT_PREAMBLE + block)];
    const diagnostics = diagnosticsOf(blocks);
    expect(
      blocks.map((block, index) => ({
        block: block.split('\n').slice(0, 3).join('\n'),
        errors: diagnostics[index],
      })),
    ).toEqual(blocks.map((block) => ({ block: block.split('\n').slice(0, 3).join('\n'), errors: [] })));
  }, 120_000);
});
