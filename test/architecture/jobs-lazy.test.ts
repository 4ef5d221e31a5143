/**
 * @module
 * BullMQ and its Redis client load only when a BullMQ client or worker is created: nothing that
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

describe('lazy BullMQ', () => {
  for (const entry of [
    'index.ts',
    'cli/commands/jobs.ts',
    'cli/commands/worker.ts',
    'cli/commands/serve.ts',
  ]) {
    it(`${entry} does not load bullmq or ioredis statically`, () => {
      const { packages, files } = staticPackages(resolve(SRC, entry));
      expect(files).toBeGreaterThan(20);
      expect(packages.has('zod')).toBe(true);
      expect(
        [...packages].filter(
          (p) =>
            p === 'bullmq' ||
            p === 'ioredis' ||
            p.startsWith('@bull-board/') ||
            p === 'express' ||
            p === 'pg-boss' ||
            p === 'pg',
        ),
      ).toEqual([]);
    });
  }

  it('sees a static bullmq import where there is one', () => {
    const { packages } = staticPackages(resolve(SRC, 'jobs/bullmq-worker.ts'));
    expect(packages.has('bullmq')).toBe(true);
    expect(packages.has('ioredis')).toBe(true);
  });
});
