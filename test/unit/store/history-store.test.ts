import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isCodecallError } from '../../../src/errors.js';
import { MemoryHistoryStore, type UsageHistoryStore } from '../../../src/store/index.js';
import { SqliteHistoryStore } from '../../../src/store/sqlite-history-store.js';
import { createToolSearch } from '../../../src/search/tool-search.js';
import { CATALOG } from '../search/catalog.js';
import { loadState } from '../../contract/load-state.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-history-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    return isCodecallError(error) ? error.code : `not a CodecallError: ${String(error)}`;
  }
  return undefined;
}

const stores: Array<[string, () => Promise<UsageHistoryStore>]> = [
  ['SqliteHistoryStore', () => SqliteHistoryStore.open({ path: join(dir, `s-${Math.random()}.sqlite`) })],
  ['MemoryHistoryStore', () => Promise.resolve(new MemoryHistoryStore())],
];

describe.each(stores)('%s', (_name, open) => {
  it('aggregates appended runs into the state createToolSearch restores', async () => {
    const store = await open();
    await store.appendSequence(['chat.list_channels', 'chat.send_message']);
    await store.appendSequence([
      'chat.list_channels',
      'chat.send_message',
      'chat.send_message',
      'files.write_file',
    ]);
    await store.appendSequence([]);
    const state = await loadState(store);
    expect(state.sequences).toBe(3);
    expect(state.transitions.sort()).toEqual([
      ['chat.list_channels', 'chat.send_message', 2],
      ['chat.send_message', 'files.write_file', 1],
    ]);
    const search = createToolSearch({ tools: CATALOG, state });
    expect(search.graphEdges().length).toBe(2);
    await store.close();
  });

  it('rejects bad sequences and use after close; close is idempotent', async () => {
    const store = await open();
    expect(await codeOf(store.appendSequence('a,b' as never))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(store.appendSequence(['a', 1 as never]))).toBe('INVALID_ARGUMENT');
    await store.close();
    await store.close();
    expect(await codeOf(store.appendSequence(['a']))).toBe('CLOSED');
    expect(await codeOf(loadState(store))).toBe('CLOSED');
  });
});

describe('SqliteHistoryStore', () => {
  it('persists across reopen and shares one file between two stores', async () => {
    const path = join(dir, 'nested', 'folder', 'history.sqlite');
    const a = await SqliteHistoryStore.open({ path });
    const b = await SqliteHistoryStore.open({ path });
    await a.appendSequence(['x', 'y']);
    await b.appendSequence(['x', 'y']);
    await a.close();
    await b.close();
    await using reopened = await SqliteHistoryStore.open({ path });
    expect(await loadState(reopened)).toEqual({ version: 1, sequences: 2, transitions: [['x', 'y', 2]] });
  });

  it('says what to do with a file that is not a history database', async () => {
    const path = join(dir, 'not-a-db.sqlite');
    writeFileSync(path, 'hello, I am a text file that is long enough to have a header '.repeat(20));
    try {
      await SqliteHistoryStore.open({ path });
      expect.unreachable();
    } catch (error) {
      expect(isCodecallError(error) && error.code).toBe('HISTORY_STORE_FAILED');
      expect((error as Error).message).toMatch(/not a codecall history database.*history\.path/);
    }
  });

  it('needs a path', async () => {
    expect(await codeOf(SqliteHistoryStore.open({ path: '' }))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(SqliteHistoryStore.open({ path: ':memory:' }))).toBe('INVALID_ARGUMENT');
  });

  it('bounds one recorded run', async () => {
    await using store = await SqliteHistoryStore.open({ path: join(dir, 'bounded.sqlite') });
    await store.appendSequence(Array.from({ length: 5_000 }, (_, i) => `t${i}`));
    expect((await loadState(store)).transitions.length).toBe(999);
  });
});
