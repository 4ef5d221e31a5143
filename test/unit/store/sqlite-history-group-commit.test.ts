/**
 * @module
 * Group commit in the SQLite history store, for both writers (`writer: 'thread'` and
 * `'inline'`): writes queued behind another process's write lock all commit once it is released,
 * in the order they were queued; a write the batch refuses (a `setValue` over its namespace
 * limit: `STORE_LIMIT`) is rolled back alone and the others of its transaction are kept.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { isCodecallError } from '../../../src/errors.js';
import { SqliteHistoryStore } from '../../../src/store/sqlite-history-store.js';
import { loadState } from '../../contract/load-state.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-group-commit-'));
const children = new Set<ChildProcess>();
const stores: SqliteHistoryStore[] = [];

afterEach(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
  await Promise.all(stores.splice(0).map((store) => store.close()));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The marker run the lock holder inserts in its transaction: what commits after it, came after. */
const HOLDER = 'lock-holder';

interface Lock {
  /** Commits the holder's transaction (with its marker run) and waits for it to exit. */
  release: () => Promise<void>;
  /** Resolves with the holder's `Date.now()` at its commit, once it has exited. */
  committedAt: Promise<number>;
}

/**
 * Another process takes `BEGIN EXCLUSIVE` on `path`, inserts the marker run, and commits on
 * `release()` or, with `releaseAfterMs`, on its own (an inline writer holds this thread while it
 * waits for the lock, so it could not ask).
 */
function holdLock(path: string, releaseAfterMs?: number): Promise<Lock> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const { DatabaseSync } = require('node:sqlite');
       const db = new DatabaseSync(${JSON.stringify(path)});
       db.exec('BEGIN EXCLUSIVE');
       db.prepare('INSERT INTO runs (recorded_at, tools, transitions) VALUES (0, ?, ?)').run(${JSON.stringify(JSON.stringify([HOLDER]))}, '[]');
       process.stdout.write('locked\\n');
       let done = false;
       const commit = () => {
         if (done) return;
         done = true;
         db.exec('COMMIT');
         db.close();
         process.stdout.write('committed ' + Date.now() + '\\n');
         process.exit(0);
       };
       process.stdin.on('end', commit);
       process.stdin.resume();
       ${releaseAfterMs === undefined ? '' : `setTimeout(commit, ${releaseAfterMs});`}`,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  children.add(child);
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const committedAt = exited.then((code) => {
    const match = /committed (\d+)/.exec(output);
    if (code !== 0 || !match) throw new Error(`the lock holder exited with ${code}: ${output}`);
    return Number(match[1]);
  });
  committedAt.catch(() => {});
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    void exited.then((code) => reject(new Error(`the lock holder exited with ${code} before locking`)));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text: string) => {
      output += text;
      if (output.includes('locked'))
        resolve({
          release: async () => {
            child.stdin.end();
            await committedAt;
          },
          committedAt,
        });
    });
  });
}

/** What a fresh connection reads from the file: runs in id order, kept values, query feedback. */
function readFile(path: string): { runs: string[][]; values: string[]; usages: string[] } {
  const db = new DatabaseSync(path);
  try {
    const runs = db.prepare('SELECT tools FROM runs ORDER BY id').all() as Array<{ tools: string }>;
    const values = db.prepare('SELECT key FROM store_values ORDER BY key').all() as Array<{ key: string }>;
    const usages = db.prepare('SELECT query FROM usages ORDER BY id').all() as Array<{ query: string }>;
    return {
      runs: runs.map((r) => JSON.parse(r.tools) as string[]),
      values: values.map((v) => v.key),
      usages: usages.map((u) => u.query),
    };
  } finally {
    db.close();
  }
}

const LIMITS = { maxNamespaceBytes: 40 };

/** Queues, in one turn: runs, a value that fits, a value over the limit, more runs and a query use. */
function queueWrites(store: SqliteHistoryStore): {
  writes: Array<Promise<void>>;
  settled: () => number;
  refused: number;
} {
  const writes = [
    store.appendSequence(['a', 'b']),
    store.setValue('ns', 'small', '"fits"', LIMITS),
    store.appendSequence(['b', 'c']),
    store.setValue('ns', 'big', JSON.stringify('x'.repeat(100)), LIMITS),
    store.appendSequence(['c', 'd']),
    store.appendUsage({ query: 'after the refused one', tools: ['d'] }),
    store.appendSequence(['d', 'e']),
  ];
  let count = 0;
  for (const write of writes)
    write.then(
      () => count++,
      () => count++,
    );
  return { writes, settled: () => count, refused: 3 };
}

/** Every write but the refused one committed, in order, after the lock holder's transaction. */
async function expectCommittedInOrder(path: string, writes: Array<Promise<void>>, refused: number) {
  const outcomes = await Promise.allSettled(writes);
  outcomes.forEach((outcome, index) => {
    if (index === refused) {
      expect(outcome.status).toBe('rejected');
      const reason = (outcome as PromiseRejectedResult).reason as unknown;
      expect(isCodecallError(reason) && reason.code, String(reason)).toBe('STORE_LIMIT');
    } else {
      expect(outcome, `write ${index}`).toEqual({ status: 'fulfilled', value: undefined });
    }
  });
  expect(readFile(path)).toEqual({
    runs: [[HOLDER], ['a', 'b'], ['b', 'c'], ['c', 'd'], ['d', 'e']],
    values: ['small'],
    usages: ['after the refused one'],
  });
}

describe('SqliteHistoryStore group commit', () => {
  it("writer 'thread': writes queued behind a foreign lock wait, then all commit in order; a refused one fails alone", async () => {
    const path = join(dir, 'thread.sqlite');
    const store = await SqliteHistoryStore.open({ path, writer: 'thread', busyTimeoutMs: 30_000 });
    stores.push(store);
    const lock = await holdLock(path);
    let queued: ReturnType<typeof queueWrites>;
    try {
      queued = queueWrites(store);
      // The writer thread waits for the lock; nothing is answered, nothing is in the file.
      await sleep(400);
      expect(queued.settled()).toBe(0);
      expect(readFile(path).runs).toEqual([]);
    } finally {
      await lock.release();
    }
    await expectCommittedInOrder(path, queued.writes, queued.refused);
    const state = await loadState(store);
    expect(state.usages).toEqual([['after the refused one', ['d']]]);
    expect(await store.getValue('ns', 'big')).toBeUndefined();
    expect(await store.getValue('ns', 'small')).toBe('"fits"');
  });

  it("writer 'inline': the writes of one turn, queued behind a foreign lock, commit together in order once it is released; a refused one fails alone", async () => {
    const path = join(dir, 'inline.sqlite');
    const store = await SqliteHistoryStore.open({ path, writer: 'inline', busyTimeoutMs: 30_000 });
    stores.push(store);
    // The inline writer holds this thread while it waits: the holder releases on its own.
    const lock = await holdLock(path, 500);
    const queuedAt = Date.now();
    const queued = queueWrites(store);
    expect(queued.settled()).toBe(0);
    await expectCommittedInOrder(path, queued.writes, queued.refused);
    // The lock was still held when the writes were queued: they waited behind it.
    expect(await lock.committedAt).toBeGreaterThanOrEqual(queuedAt);
    expect(await store.getValue('ns', 'big')).toBeUndefined();
    expect(await store.getValue('ns', 'small')).toBe('"fits"');
  });
});
