/**
 * @module
 * `npm run bench -- search` without its data: the bench says SKIP and measures nothing (a bench
 * that cannot run never counts as met), wherever it runs from; `CODECALL_DATA_DIR` picks the data.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { BENCH_SKIP_EXIT_CODE } from '../../bench/harness.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-bench-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('bench/search.bench.ts without data', () => {
  it('prints SKIP, no PASS and no figure, and exits with the skip code (never counted as met)', async () => {
    const outfile = join(dir, 'search.bench.mjs');
    await build({
      entryPoints: [resolve('bench/search.bench.ts')],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      // Packages bundled in: the bundle lives in a temp folder, away from node_modules.
      logLevel: 'error',
    });
    const missing = join(dir, 'no-data-here');
    const result = spawnSync(process.execPath, [outfile], {
      cwd: dir,
      env: { ...process.env, CODECALL_DATA_DIR: missing },
      encoding: 'utf8',
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(BENCH_SKIP_EXIT_CODE);
    expect(result.stdout).toContain(`SKIP: ${join(missing, 'seal-tools', 'tools.jsonl')} is missing`);
    expect(result.stdout).not.toMatch(/PASS|FAIL|µs|ms\b/);
  });
});
