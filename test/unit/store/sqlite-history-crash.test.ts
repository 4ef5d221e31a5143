/**
 * @module
 * Atomicity of the SQLite history store under `kill -9`: a real child process appends runs in a
 * loop and is killed with SIGKILL at random moments; after each kill the store must open, pass
 * SQLite's integrity check, keep every run the child saw committed, and its aggregated counts
 * must equal the counts recomputed from the raw runs (no half-applied transaction).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteHistoryStore } from '../../../src/store/sqlite-history-store.js';
import { transitionsOf } from '../../../src/search/tool-graph.js';
import { loadState } from '../../contract/load-state.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-crash-'));
const child = join(dir, 'writer.mjs');
const KILLS = 8;

beforeAll(async () => {
  // The writer runs the real store code, bundled from src/ (no dependency on a dist/ build).
  await build({
    stdin: {
      contents: `
        import { SqliteHistoryStore } from ${JSON.stringify(resolve(import.meta.dirname, '../../../src/store/sqlite-history-store.ts'))};
        const store = await SqliteHistoryStore.open({ path: process.argv[2] });
        const seed = Number(process.argv[3]);
        for (let i = 0; ; i++) {
          const length = 2 + ((i * 7 + seed) % 300);
          const calls = Array.from({ length }, (_, j) => 'tool_' + ((i + j * (seed + 1)) % 23));
          await store.appendSequence(calls);
          process.stdout.write('committed\\n');
        }
      `,
      resolveDir: import.meta.dirname,
      loader: 'ts',
    },
    outfile: child,
    bundle: true,
    platform: 'node',
    format: 'esm',
    logLevel: 'warning',
  });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the writer until it has committed at least `minimum` runs plus a random delay, then SIGKILLs it. */
function writeThenKill(path: string, seed: number, minimum: number): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const proc = spawn(process.execPath, [child, path, String(seed)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let committed = 0;
    let armed = false;
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (chunk: string) => {
      committed += chunk.split('\n').length - 1;
      if (!armed && committed >= minimum) {
        armed = true;
        setTimeout(() => proc.kill('SIGKILL'), Math.floor(Math.random() * 40));
      }
    });
    proc.on('error', reject);
    proc.on('exit', (_code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`writer exited without being killed (${String(signal)})`));
      else resolvePromise(committed);
    });
  });
}

describe('SqliteHistoryStore under SIGKILL', () => {
  it('stays consistent and loses no committed run', async () => {
    const path = join(dir, 'history.sqlite');
    let seen = 0;
    for (let kill = 0; kill < KILLS; kill++) {
      seen += await writeThenKill(path, kill, 5);

      const raw = new DatabaseSync(path);
      const check = raw.prepare('PRAGMA integrity_check').get() as { integrity_check: string };
      expect(check.integrity_check).toBe('ok');
      const runs = raw.prepare('SELECT tools FROM runs').all() as Array<{ tools: string }>;
      const stored = raw.prepare('SELECT from_tool, to_tool, count FROM transitions').all() as Array<{
        from_tool: string;
        to_tool: string;
        count: number;
      }>;
      raw.close();

      // Every run the writer saw committed is there (plus at most the one in flight).
      expect(runs.length).toBeGreaterThanOrEqual(seen);
      expect(runs.length).toBeLessThanOrEqual(seen + 1);
      seen = runs.length;
      const expected = new Map<string, number>();
      for (const run of runs) {
        for (const [a, b] of transitionsOf(JSON.parse(run.tools) as string[])) {
          const key = `${a} ${b}`;
          expected.set(key, (expected.get(key) ?? 0) + 1);
        }
      }
      expect(new Map(stored.map((r) => [`${r.from_tool} ${r.to_tool}`, Number(r.count)]))).toEqual(expected);

      const store = await SqliteHistoryStore.open({ path });
      const state = await loadState(store);
      expect(state.sequences).toBe(runs.length);
      await store.close();
    }
  }, 120_000);
});
