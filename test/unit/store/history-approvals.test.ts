/**
 * The audit trail of approvals in the history stores: SQLite (written by the writer thread, read
 * back newest first, a schema-3 file migrated in place) and in memory; bad entries and limits are
 * refused with the field named.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryHistoryStore, type ApprovalAuditEntry } from '../../../src/store/index.js';
import { SqliteHistoryStore } from '../../../src/store/sqlite-history-store.js';
import { loadState } from '../../contract/load-state.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-history-approvals-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const entry = (at: number, outcome: string): ApprovalAuditEntry => ({
  tool: 'files.remove',
  argsSha256: 'a'.repeat(64),
  outcome,
  decidedBy: 'callback',
  caller: 'code_execution',
  at,
  runId: 'run-1',
  callIndex: at,
});

describe('approvals in the history store', () => {
  it('SQLite: a schema-3 file gains the approvals table; entries come back newest first, limited', async () => {
    const path = join(dir, 'migrated.sqlite');
    await (await SqliteHistoryStore.open({ path })).close();
    // Make it a schema-3 store, as written before approvals existed.
    const db = new DatabaseSync(path);
    db.exec("DROP TABLE approvals; UPDATE meta SET value = '3' WHERE key = 'schema_version'");
    db.close();
    const store = await SqliteHistoryStore.open({ path });
    try {
      await store.appendApproval(entry(1, 'approved'));
      await store.appendApproval({ ...entry(2, 'denied'), reason: 'no' });
      await store.appendSequence(['files.list', 'files.remove']);
      expect(await store.listApprovals({ limit: 1 })).toEqual([{ ...entry(2, 'denied'), reason: 'no' }]);
      expect((await store.listApprovals()).map((e) => e.outcome)).toEqual(['denied', 'approved']);
      expect((await loadState(store)).sequences).toBe(1);
      await expect(store.listApprovals({ limit: 0 })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        details: { field: 'limit' },
      });
      await expect(store.appendApproval({ ...entry(3, 'approved'), at: Number.NaN })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        details: { field: 'entry' },
      });
    } finally {
      await store.close();
    }
    const check = new DatabaseSync(path);
    const version = check.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as {
      value: string;
    };
    check.close();
    expect(version.value).toBe('6');
  });

  it('SQLite: a schema-4 file keeps its approvals and gains their script line', async () => {
    const path = join(dir, 'schema-4.sqlite');
    const first = await SqliteHistoryStore.open({ path });
    await first.appendApproval(entry(1, 'approved'));
    await first.close();
    // Make it a schema-4 store, as written before approvals carried the line.
    const db = new DatabaseSync(path);
    db.exec(
      "ALTER TABLE approvals DROP COLUMN line; UPDATE meta SET value = '4' WHERE key = 'schema_version'",
    );
    db.close();
    const store = await SqliteHistoryStore.open({ path });
    try {
      await store.appendApproval({ ...entry(2, 'denied'), line: 12 });
      expect(await store.listApprovals()).toEqual([
        { ...entry(2, 'denied'), line: 12 },
        entry(1, 'approved'),
      ]);
      await expect(store.appendApproval({ ...entry(3, 'approved'), line: 1.5 })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        details: { field: 'entry' },
      });
    } finally {
      await store.close();
    }
  });

  it('memory: the same contract', async () => {
    const store = new MemoryHistoryStore();
    await store.appendApproval(entry(1, 'approved'));
    await store.appendApproval(entry(2, 'timeout'));
    expect((await store.listApprovals({ limit: 5 })).map((e) => e.outcome)).toEqual(['timeout', 'approved']);
    await expect(store.appendApproval({ ...entry(3, 'x'), tool: 42 } as never)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });
});
