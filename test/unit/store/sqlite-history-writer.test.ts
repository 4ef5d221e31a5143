/**
 * The SQLite history store writes off the event loop and keeps bounded history: while another
 * process holds the file with BEGIN EXCLUSIVE, an append waits out the busy timeout on the writer
 * thread (the host's event loop stays responsive) and then rejects with HISTORY_STORE_FAILED;
 * past `maxRuns` the oldest runs are pruned and their transitions subtracted, so the counts are
 * exactly those of the retained runs; a full queue rejects at once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { holdExclusiveLock } from '../../fixtures/hold-sqlite-lock.js';
import { MemoryHistoryStore } from '../../../src/store/index.js';
import { SqliteHistoryStore } from '../../../src/store/sqlite-history-store.js';
import { loadState } from '../../contract/load-state.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-history-writer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SqliteHistoryStore writer', () => {
  it('a foreign exclusive lock does not stall the event loop; the failed append is reported', async () => {
    const path = join(dir, 'locked.sqlite');
    const busyTimeoutMs = 1_500;
    await using store = await SqliteHistoryStore.open({ path, busyTimeoutMs });
    const lock = await holdExclusiveLock(path);
    // When the loop turned: a timer every 10 ms runs only when the loop is free.
    const turns: number[] = [];
    const ticker = setInterval(() => turns.push(performance.now()), 10);
    const started = performance.now();
    let error: unknown;
    try {
      await store.appendSequence(['a', 'b']);
    } catch (caught) {
      error = caught;
    }
    const waitedMs = performance.now() - started;
    clearInterval(ticker);
    await lock.release();
    expect(error).toMatchObject({ code: 'HISTORY_STORE_FAILED', message: expect.stringMatching(/locked/) });
    // The writer waited out the busy timeout, and the loop kept turning meanwhile: a timer ran in
    // each third of the wait. A wait on this thread holds every timer until it ends (however
    // busy the machine, a free loop turns many times in half a second).
    expect(waitedMs).toBeGreaterThanOrEqual(busyTimeoutMs * 0.9);
    for (let third = 0; third < 3; third++) {
      const from = started + (third * waitedMs) / 3;
      const to = started + ((third + 1) * waitedMs) / 3;
      expect(
        turns.some((at) => at > from && at < to),
        `a turn of the loop between ${Math.round(from - started)} and ${Math.round(to - started)} ms`,
      ).toBe(true);
    }
    // Once the lock is gone, writes go through again.
    await store.appendSequence(['a', 'b']);
    expect(await loadState(store)).toMatchObject({ sequences: 1, transitions: [['a', 'b', 1]] });
  });

  it('writer "inline" commits on the calling thread: a foreign lock holds the loop, then writes go through', async () => {
    const path = join(dir, 'inline-locked.sqlite');
    const busyTimeoutMs = 600;
    await using store = await SqliteHistoryStore.open({ path, busyTimeoutMs, writer: 'inline' });
    await store.appendSequence(['a', 'b']);
    const lock = await holdExclusiveLock(path);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    while (delay.count < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    await expect(store.appendSequence(['a', 'b'])).rejects.toMatchObject({
      code: 'HISTORY_STORE_FAILED',
      message: expect.stringMatching(/locked/),
    });
    const samples = delay.count;
    while (delay.count <= samples) await new Promise((resolve) => setTimeout(resolve, 5));
    delay.disable();
    await lock.release();
    // The wait for the lock happened on this thread, not on a writer thread.
    expect(delay.max / 1e6).toBeGreaterThanOrEqual(busyTimeoutMs * 0.9);
    await store.appendSequence(['b', 'c']);
    expect(await loadState(store)).toMatchObject({ sequences: 2 });
    expect((await loadState(store)).transitions).toEqual(
      expect.arrayContaining([
        ['a', 'b', 1],
        ['b', 'c', 1],
      ]),
    );
  });

  it.each(['thread', 'inline'] as const)(
    'keeps the last maxRuns runs; the counts equal those of the retained runs (writer %s)',
    async (writer) => {
      const path = join(dir, `retention-${writer}.sqlite`);
      const runs = [
        ['a', 'b', 'c'],
        ['a', 'b'],
        ['b', 'c', 'd'],
        ['d', 'a'],
        ['a', 'b', 'd'],
      ];
      const store = await SqliteHistoryStore.open({ path, maxRuns: 3, writer });
      for (const run of runs) await store.appendSequence(run);
      const expected = new MemoryHistoryStore();
      for (const run of runs.slice(-3)) await expected.appendSequence(run);
      const sorted = (state: { sequences: number; transitions: [string, string, number][] }) => ({
        sequences: state.sequences,
        transitions: [...state.transitions].sort((x, y) =>
          `${x[0]} ${x[1]}`.localeCompare(`${y[0]} ${y[1]}`),
        ),
      });
      expect(sorted(await loadState(store))).toEqual(sorted(await loadState(expected)));
      await store.close();
      const db = new DatabaseSync(path);
      expect(
        db
          .prepare('SELECT tools FROM runs ORDER BY id')
          .all()
          .map((r) => r.tools),
      ).toEqual(runs.slice(-3).map((r) => JSON.stringify(r)));
      db.close();
      // Reopened, the counts are the same.
      await using again = await SqliteHistoryStore.open({ path, maxRuns: 3 });
      expect(sorted(await loadState(again))).toEqual(sorted(await loadState(expected)));
    },
  );

  it('rejects at once when maxQueuedRuns appends already wait, and says the run was not recorded', async () => {
    const path = join(dir, 'queue.sqlite');
    await using store = await SqliteHistoryStore.open({ path, maxQueuedRuns: 2, busyTimeoutMs: 2_000 });
    const lock = await holdExclusiveLock(path);
    const first = store.appendSequence(['a', 'b']).catch((error: unknown) => error);
    const second = store.appendSequence(['a', 'b']).catch((error: unknown) => error);
    await expect(store.appendSequence(['a', 'b'])).rejects.toMatchObject({
      code: 'HISTORY_STORE_FAILED',
      message: expect.stringMatching(/2 runs are already waiting.*not recorded/),
    });
    await lock.release();
    await Promise.all([first, second]);
  });

  it('migrates a schema-1 file: old runs get their transitions, so pruning them keeps the counts exact', async () => {
    const path = join(dir, 'schema-1.sqlite');
    const v1 = new DatabaseSync(path);
    v1.exec(`
      PRAGMA journal_mode = WAL;
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE runs (id INTEGER PRIMARY KEY, recorded_at INTEGER NOT NULL, tools TEXT NOT NULL);
      CREATE TABLE transitions (
        from_tool TEXT NOT NULL, to_tool TEXT NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (from_tool, to_tool)
      ) WITHOUT ROWID;
      INSERT INTO meta VALUES ('schema_version', '1'), ('sequences', '2');
      INSERT INTO runs (recorded_at, tools) VALUES (1, '["a","b","c"]'), (2, '["a","b"]');
      INSERT INTO transitions VALUES ('a', 'b', 2), ('b', 'c', 1);
    `);
    v1.close();
    const store = await SqliteHistoryStore.open({ path, maxRuns: 2 });
    await store.appendSequence(['c', 'd']);
    // The first run (a→b, b→c) was pruned: what remains is a→b once and c→d once.
    expect(await loadState(store)).toEqual({
      version: 1,
      sequences: 2,
      transitions: expect.arrayContaining([
        ['a', 'b', 1],
        ['c', 'd', 1],
      ]),
    });
    expect((await loadState(store)).transitions).toHaveLength(2);
    await store.close();
  });
});
