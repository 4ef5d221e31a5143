/**
 * One suite for every store of paused vendor scripts ({@link PausedRunStore}): memory, a folder,
 * a real `redis-server` and a real PostgreSQL 15 (started on free loopback ports, stopped after).
 * Entries kept in order, a second store on the same server resumes what the first paused (two
 * serve processes), missing and dropped runs are gone, the count bound removes the oldest, an
 * expired run is gone (and its data deleted), and one process at a time holds a run.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { PausedRunStore } from '../../src/store/paused-run-store.js';
import { PAUSED_RUNS_PG_TABLE, PostgresPausedRunStore } from '../../src/store/paused-run-store-postgres.js';
import { RedisPausedRunStore } from '../../src/store/paused-run-store-redis.js';
import type { RunJournalEntry } from '../../src/store/run-journal.js';
import { newRunId } from '../../src/vendor-api/container-token.js';
import { FilePausedRuns, MemoryPausedRuns } from '../../src/vendor-api/paused-runs.js';
import { hasRedisServer, startRedis, type RedisHandle } from '../integration/jobs/jobs-helpers.js';
import { postgresBinDir, startPostgres, type PostgresHandle } from '../integration/jobs/postgres-helpers.js';

const ON_CI = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
/** The TTL of the expiry case: short, and the wait after it generous (a busy machine). */
const SHORT_TTL_MS = 300;

interface Backend {
  name: string;
  skip: string | undefined;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** A new store on the same data (a second serve process), with these bounds. */
  open(options: { maxRuns?: number; ttlMs?: number }): Promise<PausedRunStore>;
  /** Another process holding a run is refused (memory has one process). */
  shared: boolean;
  /** Whether the backend still holds data of `runId` (file, key, row); undefined for memory. */
  holds(runId: string): Promise<boolean | undefined>;
}

let redis: RedisHandle | undefined;
let pgServer: PostgresHandle | undefined;
let dir = '';
let memory: MemoryPausedRuns | undefined;

const backends: Backend[] = [
  {
    name: 'memory',
    skip: undefined,
    shared: false,
    start: () => Promise.resolve(),
    stop: () => Promise.resolve(),
    // One process: every "open" is the same store, rebuilt only when bounds are asked for.
    open: ({ maxRuns }) =>
      Promise.resolve(
        maxRuns === undefined ? (memory ??= new MemoryPausedRuns()) : new MemoryPausedRuns(maxRuns),
      ),
    holds: () => Promise.resolve(undefined),
  },
  {
    name: 'folder (serve.vendorJournalDir)',
    skip: undefined,
    shared: true,
    start() {
      dir = mkdtempSync(join(tmpdir(), 'codecall-paused-contract-'));
      return Promise.resolve();
    },
    stop() {
      rmSync(dir, { recursive: true, force: true });
      return Promise.resolve();
    },
    open: ({ maxRuns, ttlMs }) =>
      Promise.resolve(
        new FilePausedRuns(dir, {
          sweepMs: 0,
          ...(maxRuns !== undefined ? { maxRuns } : {}),
          ...(ttlMs !== undefined ? { ttlMs } : {}),
        }),
      ),
    holds: (runId) => Promise.resolve(readdirSync(dir).includes(`${runId}.jsonl`)),
  },
  {
    name: 'redis (real redis-server)',
    skip: hasRedisServer() || ON_CI ? undefined : 'redis-server not found',
    shared: true,
    async start() {
      redis = await startRedis();
    },
    async stop() {
      await redis?.stop();
    },
    open: ({ maxRuns }) =>
      RedisPausedRunStore.open({ redis: redis!.url, ...(maxRuns !== undefined ? { maxRuns } : {}) }),
    async holds(runId) {
      const client = new Redis(redis!.url);
      try {
        const [list, indexed] = await Promise.all([
          client.exists(`codecall:{vendor-paused}:run:${runId}`),
          client.zscore('codecall:{vendor-paused}:runs', runId),
        ]);
        return list === 1 || indexed !== null;
      } finally {
        client.disconnect();
      }
    },
  },
  {
    name: 'postgres (real PostgreSQL 15)',
    skip: postgresBinDir() === undefined && !ON_CI ? 'initdb/pg_ctl not found' : undefined,
    shared: true,
    async start() {
      pgServer = await startPostgres();
    },
    async stop() {
      await pgServer?.stop();
    },
    open: ({ maxRuns }) =>
      PostgresPausedRunStore.open({
        connection: pgServer!.url,
        sweepMs: 0,
        ...(maxRuns !== undefined ? { maxRuns } : {}),
      }),
    async holds(runId) {
      const client = new pg.Client({ connectionString: pgServer!.url });
      await client.connect();
      try {
        const { rows } = await client.query(`SELECT 1 FROM ${PAUSED_RUNS_PG_TABLE} WHERE run_id = $1`, [
          runId,
        ]);
        return rows.length > 0;
      } finally {
        await client.end();
      }
    },
  },
];

const HEADER: RunJournalEntry = { type: 'run', codeHash: 'c0de', at: 1 };
const started = (index: number): RunJournalEntry => ({
  type: 'started',
  index,
  name: 'client.get_weather',
  argsHash: `h${index}`,
  args: { zeta: index, alpha: 'Paris' },
  at: 2,
});
const later = (ms = 60_000): number => Date.now() + ms;

for (const backend of backends) {
  describe.skipIf(backend.skip !== undefined)(
    `PausedRunStore contract: ${backend.name}${backend.skip ? ` (SKIP: ${backend.skip})` : ''}`,
    () => {
      const opened: PausedRunStore[] = [];
      const open = async (options: { maxRuns?: number; ttlMs?: number } = {}): Promise<PausedRunStore> => {
        const store = await backend.open(options);
        opened.push(store);
        return store;
      };
      /** Pauses a new run with a header and `calls` started calls. */
      const pause = async (store: PausedRunStore, runId: string, expiresAt = later()): Promise<void> => {
        const run = await store.open(runId, { create: true, expiresAt });
        await run!.journal.append(HEADER);
        await run!.journal.append(started(0));
        await run!.release();
      };

      beforeAll(() => backend.start(), 120_000);
      afterAll(async () => {
        for (const store of opened.splice(0)) await store.close();
        await backend.stop();
      });

      it('resumes a paused run from a second store (another process), entries in order and exact', async () => {
        const runId = newRunId();
        const first = await open();
        await pause(first, runId);
        const second = await open();
        const run = await second.open(runId, { create: false, expiresAt: later() });
        expect(run).toBeDefined();
        expect(await run!.journal.entries()).toEqual([HEADER, started(0)]);
        expect(JSON.stringify(await run!.journal.entries())).toBe(JSON.stringify([HEADER, started(0)]));
        await run!.journal.append(started(1));
        expect(await run!.journal.entries()).toEqual([HEADER, started(0), started(1)]);
        await run!.release();
      });

      it('says a run it never had, or a dropped one, is gone', async () => {
        const store = await open();
        expect(await store.open(newRunId(), { create: false, expiresAt: later() })).toBeUndefined();
        const runId = newRunId();
        await pause(store, runId);
        await store.drop(runId);
        expect(await (await open()).open(runId, { create: false, expiresAt: later() })).toBeUndefined();
      });

      it('keeps at most maxRuns: a new run past it removes the oldest', async () => {
        const store = await open({ maxRuns: 3 });
        const ids = [newRunId(), newRunId(), newRunId(), newRunId(), newRunId()];
        // Later runs expire later, as runs paused one after another do.
        for (const [i, id] of ids.entries()) await pause(store, id, later(600_000 + i * 1_000));
        const gone = await store.open(ids[0]!, { create: false, expiresAt: later() });
        expect(gone).toBeUndefined();
        const kept = await store.open(ids[4]!, { create: false, expiresAt: later() });
        expect(await kept!.journal.entries()).toEqual([HEADER, started(0)]);
        await kept!.release();
        const holds = await Promise.all(ids.map((id) => backend.holds(id)));
        if (backend.holds !== backends[0]!.holds) expect(holds).toEqual([false, false, true, true, true]);
      });

      it('forgets a run past its expiry, and deletes its data', async () => {
        const store = await open({ ttlMs: SHORT_TTL_MS });
        const runId = newRunId();
        await pause(store, runId, Date.now() + SHORT_TTL_MS);
        await new Promise((resolve) => setTimeout(resolve, SHORT_TTL_MS * 4));
        // A new run sweeps (folder, PostgreSQL); Redis expires the list itself.
        await pause(store, newRunId());
        expect(await store.open(runId, { create: false, expiresAt: later() })).toBeUndefined();
        if (backend.shared) expect(await backend.holds(runId)).toBe(false);
      });

      const sharedIt = backend.shared ? it : it.skip;
      sharedIt(
        'lets one process at a time hold a run (JOURNAL_LOCKED for another), then the next',
        async () => {
          const runId = newRunId();
          const first = await open();
          await pause(first, runId);
          const held = await first.open(runId, { create: false, expiresAt: later() });
          const other = await open();
          await expect(other.open(runId, { create: false, expiresAt: later() })).rejects.toMatchObject({
            code: 'JOURNAL_LOCKED',
          });
          await held!.release();
          const next = await other.open(runId, { create: false, expiresAt: later() });
          expect(await next!.journal.entries()).toEqual([HEADER, started(0)]);
          await next!.release();
        },
      );
    },
  );
}
