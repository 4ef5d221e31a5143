/**
 * `npm run bench` bookkeeping: a bench that cannot run part of itself says SKIP, exits with the
 * skip code (not 0), and the final tally counts it apart from the benches that met their targets.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BENCH_SKIP_EXIT_CODE as HARNESS_SKIP_CODE } from '../../../bench/harness.js';
// @ts-expect-error -- plain ESM without declarations, run by bench/run.mjs
import { BENCH_SKIP_EXIT_CODE, tallyBenches } from '../../../bench/tally.mjs';

const HARNESS = pathToFileURL(resolve(import.meta.dirname, '../../../bench/harness.ts')).href;
const dir = mkdtempSync(join(tmpdir(), 'codecall-bench-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs a bench body (ESM, with the harness functions in scope) in its own Node process. */
function runBench(body: string): Promise<{ status: number | null; stdout: string }> {
  const file = join(dir, `bench-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(
    file,
    `import { figure, finish, hasBuild, skip } from ${JSON.stringify(HARNESS)};\n${body}\n`,
  );
  return new Promise((resolvePromise) => {
    execFile(process.execPath, [file], (error, stdout) => {
      resolvePromise({ status: error ? (error.code as number | null) : 0, stdout });
    });
  });
}

describe('bench harness', () => {
  it('run.mjs and the harness agree on the skip exit code', () => {
    expect(BENCH_SKIP_EXIT_CODE).toBe(HARNESS_SKIP_CODE);
    expect(BENCH_SKIP_EXIT_CODE).not.toBe(0);
    expect(BENCH_SKIP_EXIT_CODE).not.toBe(1);
  });

  it('a bench that skips a part prints SKIP and exits with the skip code, even when its other figures pass', async () => {
    const result = await runBench(
      "figure('fast thing', 1, 'ms', { max: 2 }); skip('data set X is missing'); finish();",
    );
    expect(result.stdout).toMatch(/fast thing .* PASS/);
    expect(result.stdout).toContain('SKIP: data set X is missing');
    expect(result.status).toBe(BENCH_SKIP_EXIT_CODE);
  });

  it('a missing build is a SKIP naming the file and the fix', async () => {
    const result = await runBench(
      `if (!hasBuild(${JSON.stringify(dir)}, ['cli/main.js'])) { finish(); } else { console.log('ran'); }`,
    );
    expect(result.stdout).toContain('SKIP: dist/cli/main.js is missing: run `npm run build` first');
    expect(result.stdout).not.toContain('ran');
    expect(result.status).toBe(BENCH_SKIP_EXIT_CODE);
  });

  it('a miss outranks a skip; a bench with every figure measured and met exits 0', async () => {
    const missed = await runBench("figure('slow thing', 3, 'ms', { max: 2 }); skip('part two'); finish();");
    expect(missed.stdout).toMatch(/slow thing .* FAIL/);
    expect(missed.status).toBe(1);
    const met = await runBench("figure('fast thing', 1, 'ms', { max: 2 }); finish();");
    expect(met.stdout).not.toContain('SKIP');
    expect(met.status).toBe(0);
  });
});

describe('tallyBenches', () => {
  it('counts SKIP apart from met, and a crash as missed', () => {
    const tally = tallyBenches([
      { file: 'a.bench.ts', status: 0 },
      { file: 'b.bench.ts', status: BENCH_SKIP_EXIT_CODE },
      { file: 'c.bench.ts', status: 1 },
      { file: 'd.bench.ts', status: null },
    ]);
    expect(tally.line).toBe(
      'bench: 1 of 4 benches met their targets; 2 missed (c.bench.ts, d.bench.ts); 1 SKIP, not met (b.bench.ts)',
    );
    expect(tally.exitCode).toBe(1);
  });

  it('exits non-zero when benches were skipped, and 0 only when every bench met its targets', () => {
    const skipped = tallyBenches([
      { file: 'a.bench.ts', status: 0 },
      { file: 'b.bench.ts', status: BENCH_SKIP_EXIT_CODE },
    ]);
    expect(skipped.line).toBe('bench: 1 of 2 benches met their targets; 1 SKIP, not met (b.bench.ts)');
    expect(skipped.exitCode).toBe(BENCH_SKIP_EXIT_CODE);
    const met = tallyBenches([{ file: 'a.bench.ts', status: 0 }]);
    expect(met).toMatchObject({ line: 'bench: 1 of 1 benches met their targets', exitCode: 0 });
  });
});
