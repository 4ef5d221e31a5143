/**
 * @module
 * BullMQ and its Redis client (and every other optional peer dependency: Postgres, the provider
 * SDKs, the tokenizer) load only when used: nothing that
 * `import 'codecall'` or a CLI command loads statically imports them (the CLI entry imports
 * each command on use; test/e2e/lazy-load.test.ts checks what it loads) (type-only imports and
 * dynamic `import()` do not count).
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');
/** Static runtime imports and re-exports (not `import type` / `export type`). */
const STATIC = /(?:^|\n)\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s*)?['"]([^'"]+)['"]/g;

function staticPackages(entry: string): { packages: Set<string>; files: number } {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(STATIC)) {
      const specifier = match[1]!;
      if (specifier.startsWith('.')) queue.push(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
      else packages.add(specifier);
    }
  }
  return { packages, files: seen.size };
}

/** The optional peer dependencies (package.json `peerDependenciesMeta`) and Express, by package name prefix. */
const OPTIONAL = [
  'bullmq',
  'ioredis',
  '@bull-board/',
  'express',
  'pg-boss',
  'pg',
  'openai',
  '@anthropic-ai/sdk',
  'js-tiktoken',
  '@google/genai',
  '@aws-sdk/client-bedrock-runtime',
];
const isOptional = (specifier: string): boolean =>
  OPTIONAL.some((name) => specifier === name || specifier.startsWith(name.endsWith('/') ? name : `${name}/`));

describe('lazy BullMQ', () => {
  for (const entry of [
    'index.ts',
    'server/index.ts',
    'jobs/index.ts',
    'cli/commands/run.ts',
    'cli/commands/exec.ts',
    'cli/commands/search.ts',
    'cli/commands/jobs.ts',
    'cli/commands/worker.ts',
    'cli/commands/serve.ts',
  ]) {
    it(`${entry} loads no optional package statically (bullmq, ioredis, pg, provider SDKs, tokenizer…)`, () => {
      const { packages, files } = staticPackages(resolve(SRC, entry));
      expect(files).toBeGreaterThan(20);
      expect(packages.has('zod')).toBe(true);
      expect([...packages].filter(isOptional)).toEqual([]);
    });
  }

  it('sees a static bullmq import where there is one', () => {
    const { packages } = staticPackages(resolve(SRC, 'jobs/bullmq-worker.ts'));
    expect(packages.has('bullmq')).toBe(true);
    expect(packages.has('ioredis')).toBe(true);
    expect([...packages].filter(isOptional)).toContain('bullmq');
  });
});
