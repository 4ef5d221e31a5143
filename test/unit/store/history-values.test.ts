/**
 * Values scripts keep (`store.set`) in both history stores: namespaces apart, a replaced value
 * counts only its difference, removal frees its bytes, and a write over the namespace's limit
 * is refused with `STORE_LIMIT` and writes nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryHistoryStore, type UsageHistoryStore } from '../../../src/store/index.js';
import { SqliteHistoryStore } from '../../../src/store/sqlite-history-store.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-history-values-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const stores: Array<[string, () => Promise<UsageHistoryStore>]> = [
  ['memory', () => Promise.resolve(new MemoryHistoryStore())],
  ['SQLite', () => SqliteHistoryStore.open({ path: join(dir, 'values.sqlite') })],
  [
    'SQLite (inline writes)',
    () => SqliteHistoryStore.open({ path: join(dir, 'values-inline.sqlite'), writer: 'inline' }),
  ],
];

describe.each(stores)('kept values in the %s history store', (_name, open) => {
  it('keeps namespaces apart and bounds each by its bytes', async () => {
    const store = await open();
    try {
      const limits = { maxNamespaceBytes: 20 };
      // key "k" (1 byte) + '"0123456789"' (12 bytes) = 13 bytes
      await store.setValue!('a', 'k', '"0123456789"', limits);
      expect(await store.getValue!('a', 'k')).toBe('"0123456789"');
      expect(await store.getValue!('b', 'k')).toBeUndefined();
      // The other namespace has its own 20 bytes.
      await store.setValue!('b', 'k', '"0123456789"', limits);
      // 13 + 1 + 8 = 22 > 20: refused, nothing written.
      await expect(store.setValue!('a', 'j', '"abcdef"', limits)).rejects.toMatchObject({
        code: 'STORE_LIMIT',
        details: { key: 'j', limit: 20, used: 13, adding: 9 },
      });
      expect(await store.getValue!('a', 'j')).toBeUndefined();
      // Replacing counts the difference: 13 → 17 bytes.
      await store.setValue!('a', 'k', '"0123456789abcd"', limits);
      // Removing frees the bytes.
      await store.setValue!('a', 'k', undefined, limits);
      expect(await store.getValue!('a', 'k')).toBeUndefined();
      await store.setValue!('a', 'j', '"abcdef"', limits);
      expect(await store.getValue!('a', 'j')).toBe('"abcdef"');
    } finally {
      await store.close();
    }
  });
});
