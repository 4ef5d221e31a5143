/**
 * Opening a history store (or an embedding cache) while another process holds a write lock on the
 * file SQLite's own busy timeout does not wait for: the open waits and succeeds once the lock is
 * gone, instead of failing at once with "database is locked" (two `codecall serve` nodes started
 * together on one state folder met that in CI). The other process is a real child process, so the
 * locks are real POSIX locks between processes.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteEmbeddingCache } from '../../../src/store/sqlite-embedding-cache.js';
import { SqliteHistoryStore } from '../../../src/store/sqlite-history-store.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-open-race-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A child process holding a write lock on a SQLite file until {@link Holder.release}. */
interface Holder {
  /** Commits the child's transaction (the lock goes) and resolves when the child has exited. */
  release(): Promise<void>;
  /** True once release() was called. */
  released: boolean;
}

/**
 * A child that opens `path` in rollback-journal mode, runs `setup`, then reads and writes in one
 * open transaction (holding SQLite's RESERVED lock) until told to commit on its stdin. A second
 * connection that has read the file and wants to write it then gets SQLITE_BUSY at once: SQLite
 * does not call the busy handler there.
 */
async function holdWriteLock(path: string, setup: string, write: string): Promise<Holder> {
  const source = `
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(${JSON.stringify(path)});
db.exec(${JSON.stringify(setup)});
db.exec('BEGIN');
db.prepare("SELECT name FROM sqlite_master").all();
db.exec(${JSON.stringify(write)});
process.stdin.once('data', () => { db.exec('COMMIT'); db.close(); process.exit(0); });
process.stdout.write('holding\\n');
`;
  const child = spawn(process.execPath, ['-e', source], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`holder exited ${code}`)))),
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`holder exited ${code} before holding the lock`)));
  });
  const holder: Holder = {
    released: false,
    release() {
      holder.released = true;
      child.stdin.end('commit\n');
      return exited;
    },
  };
  return holder;
}

/** A store's meta table at this schema, not yet in WAL mode: the open converts it (a write after a read). */
function holdHistoryLock(path: string): Promise<Holder> {
  return holdWriteLock(
    path,
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO meta VALUES ('schema_version', '6');",
    "INSERT OR REPLACE INTO meta VALUES ('sequences', '0')",
  );
}

/** Releases `holder` after `ms`, while the open under test is (or should be) waiting. */
async function releaseLater(holder: Holder, ms: number): Promise<void> {
  await sleep(ms);
  await holder.release();
}

describe('opening a SQLite file another process is writing', () => {
  it('the history store waits for a lock SQLite would refuse at once, then opens and works', async () => {
    const path = join(dir, 'history.sqlite');
    const holder = await holdHistoryLock(path);
    const released = releaseLater(holder, 300);
    const store = await SqliteHistoryStore.open({ path, writer: 'inline' });
    try {
      // It waited for the holder to let go rather than failing at once.
      expect(holder.released).toBe(true);
      await store.appendSequence(['a', 'b']);
      expect((await store.loadCounts()).transitions).toEqual([['a', 'b', 1]]);
    } finally {
      await store.close();
    }
    await released;
  }, 30_000);

  it('a lock that outlives the busy timeout still fails, naming the file', async () => {
    const path = join(dir, 'history-held.sqlite');
    const holder = await holdHistoryLock(path);
    await expect(SqliteHistoryStore.open({ path, writer: 'inline', busyTimeoutMs: 100 })).rejects.toThrow(
      /history-held\.sqlite: could not open it: database is locked/,
    );
    await holder.release();
  }, 30_000);

  it('the embedding cache waits the same way', async () => {
    const path = join(dir, 'vectors.sqlite');
    const holder = await holdWriteLock(
      path,
      'CREATE TABLE other (x INTEGER);',
      'INSERT INTO other VALUES (1)',
    );
    const released = releaseLater(holder, 300);
    const cache = await SqliteEmbeddingCache.open({ path, model: 'm' });
    try {
      expect(holder.released).toBe(true);
      await cache.set([['t', new Float32Array([1, 2])]]);
      expect((await cache.get(['t']))[0]).toEqual(new Float32Array([1, 2]));
    } finally {
      await cache.close();
    }
    await released;
  }, 30_000);
});
