/**
 * The SQLite history store writes only into its own database: another application's SQLite file
 * is refused before anything is written (no WAL conversion, no tables added); an empty file and
 * a store made before the application_id marker are codecall's.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { isCodecallError, type CodecallError } from '../../../src/errors.js';
import { SqliteHistoryStore } from '../../../src/store/sqlite-history-store.js';
import { loadState } from '../../contract/load-state.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-foreign-db-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function rejected(promise: Promise<unknown>): Promise<CodecallError> {
  try {
    await promise;
  } catch (error) {
    if (isCodecallError(error)) return error;
    throw error;
  }
  throw new Error('expected a CodecallError');
}

function tables(path: string): string[] {
  const db = new DatabaseSync(path);
  try {
    return (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
        name: string;
      }[]
    ).map((r) => r.name);
  } finally {
    db.close();
  }
}

describe('SqliteHistoryStore and foreign databases', () => {
  it("refuses another application's database and leaves it untouched", async () => {
    const path = join(dir, 'browser-cookies.sqlite');
    const other = new DatabaseSync(path);
    other.exec("CREATE TABLE cookies (host TEXT, value TEXT); INSERT INTO cookies VALUES ('a', 'b');");
    other.close();
    const before = readFileSync(path);
    const error = await rejected(SqliteHistoryStore.open({ path }));
    expect(error.code).toBe('HISTORY_STORE_FAILED');
    expect(error.message).toContain('is not a codecall usage history database (it holds cookies)');
    expect(error.message).toContain('history.path');
    expect(tables(path)).toEqual(['cookies']);
    expect(readFileSync(path).equals(before)).toBe(true);
    // Still a rollback-journal database: not converted to WAL.
    const check = new DatabaseSync(path);
    expect((check.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode).toBe(
      'delete',
    );
    check.close();
  });

  it('refuses a database marked with another application_id, even if its tables look like ours', async () => {
    const path = join(dir, 'lookalike.sqlite');
    const other = new DatabaseSync(path);
    other.exec(
      "PRAGMA application_id = 42; CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO meta VALUES ('schema_version', '1');",
    );
    other.close();
    const error = await rejected(SqliteHistoryStore.open({ path }));
    expect(error.message).toContain('its application_id is 42');
  });

  it('creates and reopens its own store, marking it', async () => {
    const path = join(dir, 'own.sqlite');
    const store = await SqliteHistoryStore.open({ path });
    await store.appendSequence(['a.x', 'b.y']);
    await store.close();
    const db = new DatabaseSync(path);
    expect((db.prepare('PRAGMA application_id').get() as { application_id: number }).application_id).not.toBe(
      0,
    );
    // A store from before the marker: codecall's tables, no application_id.
    db.exec('PRAGMA application_id = 0');
    db.close();
    const reopened = await SqliteHistoryStore.open({ path });
    expect((await loadState(reopened)).sequences).toBe(1);
    await reopened.close();
  });
});
