/**
 * @module
 * One suite for every {@link UsageHistoryStore}: graph counts, query usages, the approval audit,
 * script values and learned result shapes behave the same in memory, SQLite, Redis and PostgreSQL, so the backends
 * cannot drift. `test/contract/stores.test.ts` runs it against each with real servers.
 */
import { describe, expect, it } from 'vitest';
import { SHAPE_BOUNDS, type ApprovalAuditEntry, type UsageHistoryStore } from '../../src/store/index.js';
import { inferShape, shapeToSchema } from '../../src/util/result-shape.js';

/** What a backend gives the suite. */
export interface StoreBackend {
  /** Opens a store on a fresh, empty history (a new file, a new namespace) keeping at most `maxUsages` uses. */
  open(options: { maxUsages: number }): Promise<OpenedStore>;
}

/** A store under test, and (for a durable backend) another handle on the same history. */
export interface OpenedStore {
  store: UsageHistoryStore;
  /** Opens a second store on the same history (another connection, as another process would); absent for memory. */
  twin?: () => Promise<UsageHistoryStore>;
}

/** Uses a store keeps in this suite: small, so the bound is reached. */
const MAX_USAGES = 3;

function entry(tool: string, at: number, extra: Partial<ApprovalAuditEntry> = {}): ApprovalAuditEntry {
  return {
    tool,
    argsSha256: 'a'.repeat(64),
    outcome: 'approved',
    decidedBy: 'callback',
    caller: 'code_execution',
    at,
    ...extra,
  };
}

/** Sorted transitions, for comparing counts without depending on a backend's order. */
function sorted(transitions: Array<[string, string, number]>): Array<[string, string, number]> {
  return [...transitions].sort((a, b) => (a[0] + '\n' + a[1] < b[0] + '\n' + b[1] ? -1 : 1));
}

/**
 * Declares the contract tests of one backend. `backend` is called inside each test, so it may
 * depend on a server started in the caller's `beforeAll`.
 */
export function describeUsageHistoryStore(name: string, backend: () => StoreBackend): void {
  describe(`UsageHistoryStore contract: ${name}`, () => {
    /** Runs `test` on a fresh store (and its twins), closing every store after. */
    async function withStore(
      test: (opened: OpenedStore, twins: UsageHistoryStore[]) => Promise<void>,
    ): Promise<void> {
      const opened = await backend().open({ maxUsages: MAX_USAGES });
      const twins: UsageHistoryStore[] = [];
      const twin = opened.twin;
      const tracked: OpenedStore = twin
        ? {
            store: opened.store,
            twin: async () => {
              const store = await twin();
              twins.push(store);
              return store;
            },
          }
        : { store: opened.store };
      try {
        await test(tracked, twins);
      } finally {
        await Promise.allSettled([opened.store.close(), ...twins.map((store) => store.close())]);
      }
    }

    it('graph counts: a run adds its distinct transitions once, runs add up, bad input is refused', () =>
      withStore(async ({ store, twin }) => {
        expect(await store.loadCounts()).toEqual({ sequences: 0, transitions: [] });
        await store.appendSequence([
          's.members',
          's.expenses',
          's.expenses',
          's.budget',
          's.members',
          's.expenses',
        ]);
        await store.appendSequence(['s.members', 's.expenses']);
        await store.appendSequence([]);
        const counts = await store.loadCounts();
        expect(counts.sequences).toBe(3);
        expect(sorted(counts.transitions)).toEqual([
          ['s.budget', 's.members', 1],
          ['s.expenses', 's.budget', 1],
          ['s.members', 's.expenses', 2],
        ]);
        await expect(store.appendSequence('s.members' as never)).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
        });
        await expect(store.appendSequence([1] as never)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        expect((await store.loadCounts()).sequences).toBe(3);
        if (twin) {
          // Another handle (another process) sees the same counts, and its runs add to them.
          const other = await twin();
          await other.appendSequence(['s.members', 's.expenses']);
          expect(sorted((await store.loadCounts()).transitions)).toContainEqual([
            's.members',
            's.expenses',
            3,
          ]);
          expect((await other.loadCounts()).sequences).toBe(4);
        }
      }));

    it('query usages: newest first, bounded to the newest maxUsages, a limit, bad input refused', () =>
      withStore(async ({ store, twin }) => {
        expect(await store.listUsages()).toEqual([]);
        for (const [i, query] of ['first', 'second', 'third', 'fourth'].entries())
          await store.appendUsage({ query, tools: [`s.t${i}`, 's.common'] });
        expect(await store.listUsages()).toEqual([
          { query: 'fourth', tools: ['s.t3', 's.common'] },
          { query: 'third', tools: ['s.t2', 's.common'] },
          { query: 'second', tools: ['s.t1', 's.common'] },
        ]);
        expect(await store.listUsages({ limit: 1 })).toEqual([
          { query: 'fourth', tools: ['s.t3', 's.common'] },
        ]);
        // The bound is what the store keeps, not only what it returns.
        expect(await store.listUsages({ limit: 100 })).toHaveLength(MAX_USAGES);
        await store.appendUsage({ query: 'no tools', tools: [] });
        expect((await store.listUsages()).map((usage) => usage.query)).toEqual([
          'no tools',
          'fourth',
          'third',
        ]);
        await expect(store.appendUsage({ query: 1, tools: [] } as never)).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
        });
        await expect(store.appendUsage({ query: 'q', tools: 'x' } as never)).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
        });
        await expect(store.listUsages({ limit: 0 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        if (twin) {
          const other = await twin();
          expect((await other.listUsages()).map((usage) => usage.query)).toEqual([
            'no tools',
            'fourth',
            'third',
          ]);
        }
      }));

    it('approval audit: newest first, a limit, every field kept, malformed entries refused', () =>
      withStore(async ({ store, twin }) => {
        expect(await store.listApprovals()).toEqual([]);
        const full = entry('s.delete', 3, { reason: 'looks fine', runId: 'run-1', callIndex: 2, line: 7 });
        await store.appendApproval(entry('s.read', 1));
        await store.appendApproval(entry('s.write', 2, { outcome: 'denied', decidedBy: 'tty' }));
        await store.appendApproval(full);
        expect(await store.listApprovals()).toEqual([
          full,
          entry('s.write', 2, { outcome: 'denied', decidedBy: 'tty' }),
          entry('s.read', 1),
        ]);
        expect((await store.listApprovals({ limit: 2 })).map((e) => e.tool)).toEqual(['s.delete', 's.write']);
        await expect(store.appendApproval({ tool: 's.x' } as never)).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
        });
        await expect(store.appendApproval(entry('s.x', Number.NaN))).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
        });
        await expect(store.listApprovals({ limit: -1 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        expect(await store.listApprovals()).toHaveLength(3);
        if (twin) expect((await (await twin()).listApprovals({ limit: 1 }))[0]).toEqual(full);
      }));

    it('script values: set, get, replace, delete, one namespace never sees another', () =>
      withStore(async ({ store, twin }) => {
        const limits = { maxNamespaceBytes: 1_000 };
        expect(await store.getValue('ns', 'k')).toBeUndefined();
        await store.setValue('ns', 'k', '{"a":1}', limits);
        await store.setValue('ns', 'ünï', '"ç"', limits);
        expect(await store.getValue('ns', 'k')).toBe('{"a":1}');
        expect(await store.getValue('ns', 'ünï')).toBe('"ç"');
        expect(await store.getValue('other', 'k')).toBeUndefined();
        await store.setValue('ns', 'k', '[2]', limits);
        expect(await store.getValue('ns', 'k')).toBe('[2]');
        await store.setValue('ns', 'k', undefined, limits);
        await store.setValue('ns', 'never-set', undefined, limits);
        expect(await store.getValue('ns', 'k')).toBeUndefined();
        if (twin) expect(await (await twin()).getValue('ns', 'ünï')).toBe('"ç"');
      }));

    it('script values: the namespace byte limit counts UTF-8 of keys and values, and frees on delete', () =>
      withStore(async ({ store }) => {
        const limits = { maxNamespaceBytes: 20 };
        await store.setValue('ns', 'a', '"12345678"', limits); // 1 + 10 bytes
        await expect(store.setValue('ns', 'b', '"é"', { maxNamespaceBytes: 14 })).rejects.toMatchObject({
          code: 'STORE_LIMIT', // 11 used + 1 + 4 ('"é"' is 4 bytes) = 16 > 14
          details: { key: 'b', used: 11, adding: 5, limit: 14 },
        });
        expect(await store.getValue('ns', 'b')).toBeUndefined();
        await store.setValue('ns', 'b', '"é"', { maxNamespaceBytes: 16 }); // exactly at the limit
        // Replacing with a smaller value is always allowed, even at the limit.
        await store.setValue('ns', 'a', '1', { maxNamespaceBytes: 1 });
        await store.setValue('ns', 'c', '"123456789"', limits); // 7 + 12 = 19
        await expect(store.setValue('ns', 'd', '1', limits)).rejects.toMatchObject({ code: 'STORE_LIMIT' }); // 21
        // Another namespace has its own budget.
        await store.setValue('elsewhere', 'd', '1', limits);
        await store.setValue('ns', 'c', undefined, limits);
        await store.setValue('ns', 'd', '1', limits);
        expect(await store.getValue('ns', 'd')).toBe('1');
      }));

    it('script values: the limit holds under concurrent writes (also from another handle)', () =>
      withStore(async ({ store, twin }) => {
        const other = twin ? await twin() : store;
        const limits = { maxNamespaceBytes: 100 };
        // 30 writers of 10 bytes each ('kNN' + '"val"' padded): at most 10 fit.
        const writes = Array.from({ length: 30 }, (_, i) => {
          const key = `k${String(i).padStart(2, '0')}`;
          const target = i % 2 === 0 ? store : other;
          return target.setValue('race', key, '"12345"', limits).then(
            () => key,
            (error: { code?: string }) => {
              expect(error.code).toBe('STORE_LIMIT');
              return undefined;
            },
          );
        });
        const kept = (await Promise.all(writes)).filter((key) => key !== undefined);
        expect(kept).toHaveLength(10);
        for (const key of kept) expect(await store.getValue('race', key!)).toBe('"12345"');
        await expect(store.setValue('race', 'zz', '1', limits)).rejects.toMatchObject({
          code: 'STORE_LIMIT',
        });
      }));

    it('learned shapes: a merge widens the kept shape (types, optional keys), kept for another handle', () =>
      withStore(async ({ store, twin }) => {
        expect(await store.loadShapes()).toEqual([]);
        const first = inferShape({ items: [{ amount: 3, status: 'approved' }], total: 1 }, SHAPE_BOUNDS)!;
        const second = inferShape(
          { items: [{ amount: 'n/a', status: 'approved' }], total: 2, nextOffset: 20 },
          SHAPE_BOUNDS,
        )!;
        await store.mergeShape('exp.get_expenses', first);
        await store.mergeShape('exp.get_expenses', second);
        await store.mergeShape('exp.other', inferShape([1, 2], SHAPE_BOUNDS)!);
        const reader = twin ? await twin() : store;
        const shapes = await reader.loadShapes();
        expect(shapes.map((s) => s.tool).sort()).toEqual(['exp.get_expenses', 'exp.other']);
        const kept = shapes.find((s) => s.tool === 'exp.get_expenses')!.shape;
        expect(kept.seen).toBe(2);
        expect(shapeToSchema(kept, SHAPE_BOUNDS)).toEqual({
          type: 'object',
          properties: {
            items: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  amount: { anyOf: [{ type: 'number' }, { type: 'string' }] },
                  status: { type: 'string', enum: ['approved'] },
                },
                required: ['amount', 'status'],
              },
            },
            total: { type: 'number' },
            nextOffset: { type: 'number' },
          },
          required: ['items', 'total'],
        });
        await expect(store.mergeShape('exp.x', { seen: 'many' } as never)).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
        });
        await expect(store.mergeShape('', first)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      }));

    it('learned shapes: merges from two handles at once all count (compare-and-set), keys like __proto__ stay data', () =>
      withStore(async ({ store, twin }) => {
        const other = twin ? await twin() : store;
        const one = inferShape(JSON.parse('{"__proto__": {"polluted": 1}, "n": 1}'), SHAPE_BOUNDS)!;
        await Promise.all(
          Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? store : other).mergeShape('race.tool', one)),
        );
        const [kept] = await store.loadShapes();
        expect(kept?.shape.seen).toBe(6);
        expect(Object.keys(kept!.shape.properties!).sort()).toEqual(['__proto__', 'n']);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }));

    it('close is idempotent, and a closed store refuses with CLOSED', () =>
      withStore(async ({ store }) => {
        await store.appendSequence(['s.a', 's.b']);
        await store.close();
        await store.close();
        await store[Symbol.asyncDispose]();
        await expect(store.loadCounts()).rejects.toMatchObject({ code: 'CLOSED' });
        await expect(store.appendSequence(['s.a'])).rejects.toMatchObject({ code: 'CLOSED' });
        await expect(store.listUsages()).rejects.toMatchObject({ code: 'CLOSED' });
        await expect(store.appendApproval(entry('s.a', 1))).rejects.toMatchObject({ code: 'CLOSED' });
        await expect(store.getValue('ns', 'k')).rejects.toMatchObject({ code: 'CLOSED' });
        await expect(store.loadShapes()).rejects.toMatchObject({ code: 'CLOSED' });
        await expect(store.mergeShape('s.a', { seen: 1, types: ['number'] })).rejects.toMatchObject({
          code: 'CLOSED',
        });
      }));
  });
}
