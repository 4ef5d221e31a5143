/**
 * One suite for every {@link JobStateStore}: memory, a real `redis-server` and a real PostgreSQL 15
 * (started for the run, stopped after). Append order, durability across a new connection (a new
 * store on the same server sees what the first wrote), approvals pending/decide/decision with one
 * winner between racing approvers, keys that do not see each other, and forget.
 */
import { DEFAULT_JOBS_MAX_LOG_LINES } from '../../src/config/defaults.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  answerLogKey,
  MemoryJobStateStore,
  type JobStateStore,
  type PendingApproval,
} from '../../src/store/job-state.js';
import { PostgresJobStateStore } from '../../src/store/job-state-postgres.js';
import { Redis } from 'ioredis';
import { RedisJobStateStore } from '../../src/store/job-state-redis.js';
import type { RunJournalEntry } from '../../src/store/run-journal.js';
import { hasRedisServer, startRedis, type RedisHandle } from '../integration/jobs/jobs-helpers.js';
import { postgresBinDir, startPostgres, type PostgresHandle } from '../integration/jobs/postgres-helpers.js';

const ON_CI = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';

interface Backend {
  name: string;
  skip: string | undefined;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** A new store; `fresh: false` on a durable backend is a new connection to the same data. */
  open(): Promise<JobStateStore>;
  durable: boolean;
}

let redis: RedisHandle | undefined;
let pg: PostgresHandle | undefined;
const memory = new MemoryJobStateStore();

const backends: Backend[] = [
  {
    name: 'memory',
    skip: undefined,
    durable: false,
    start: () => Promise.resolve(),
    stop: () => memory.close(),
    open: () => Promise.resolve(memory),
  },
  {
    name: 'redis (real redis-server)',
    // CI installs redis-server and PostgreSQL: there, a missing one fails instead of skipping.
    skip: hasRedisServer() || ON_CI ? undefined : 'redis-server not found',
    durable: true,
    async start() {
      redis = await startRedis();
    },
    async stop() {
      await redis?.stop();
    },
    open: () => RedisJobStateStore.open({ redis: redis!.url, prefix: 'test:codecall:' }),
  },
  {
    name: 'postgres (real PostgreSQL 15)',
    skip: postgresBinDir() === undefined && !ON_CI ? 'initdb/pg_ctl not found' : undefined,
    durable: true,
    async start() {
      pg = await startPostgres();
    },
    async stop() {
      await pg?.stop();
    },
    open: () => PostgresJobStateStore.open({ connection: pg!.url, scope: 'test-queue' }),
  },
];

const started = (index: number, at = 1): RunJournalEntry => ({
  type: 'started',
  index,
  name: 'probe.record',
  argsHash: `h${index}`,
  args: { key: `k${index}`, z: 1, a: 2 },
  at,
});
const finished = (index: number): RunJournalEntry => ({
  type: 'finished',
  index,
  name: 'probe.record',
  argsHash: `h${index}`,
  ok: true,
  // Key order is the tool's own: a replay must hand the script back the same JSON.
  result: { zeta: index, alpha: [1, { y: 2, b: 3 }] },
  at: 2,
});
const request = (callIndex: number): PendingApproval => ({
  tool: 'probe.delete',
  args: { id: callIndex },
  argsHash: `a${callIndex}`,
  callIndex,
  reason: 'requireApproval',
  requestedAt: 1,
  expiresAt: 2,
});

for (const backend of backends) {
  describe.skipIf(backend.skip !== undefined)(
    `JobStateStore contract: ${backend.name}${backend.skip ? ` (SKIP: ${backend.skip})` : ''}`,
    () => {
      const opened: JobStateStore[] = [];
      const open = async (): Promise<JobStateStore> => {
        const store = await backend.open();
        opened.push(store);
        return store;
      };
      let run = 0;
      /** A key of its own per test. */
      const key = (): string => `job-${++run}:${Date.now()}`;

      beforeAll(() => backend.start(), 120_000);
      afterAll(async () => {
        for (const store of opened.splice(0)) await store.close();
        await backend.stop();
      });

      it('keeps journal entries in append order, with JSON exactly as written', async () => {
        const store = await open();
        const journal = store.journal(key());
        expect(await journal.entries()).toEqual([]);
        const entries: RunJournalEntry[] = [{ type: 'run', codeHash: 'c', at: 0 }];
        for (let i = 0; i < 20; i++) entries.push(started(i), finished(i));
        // Sent without waiting in between, as parallel calls of a script do.
        await Promise.all(entries.map((entry) => journal.append(entry)));
        const read = await journal.entries();
        expect(read).toEqual(entries);
        expect(JSON.stringify(read)).toBe(JSON.stringify(entries));
      });

      // Only the durable backends have this case (memory forgets with its process): not a skip.
      const durableIt = backend.durable ? it : (): void => {};
      durableIt('is durable across a new connection once append resolves', async () => {
        const id = key();
        const first = await open();
        await first.journal(id).append(started(0));
        await first.journal(id).append(finished(0));
        await first.approvals(id).setPending(request(3));
        await first.close();
        const second = await open();
        expect(await second.journal(id).entries()).toEqual([started(0), finished(0)]);
        expect(await second.approvals(id).pending()).toEqual(request(3));
      });

      it('approvals: pending, decide once, decision by call index', async () => {
        const store = await open();
        const approvals = store.approvals(key());
        expect(await approvals.pending()).toBeUndefined();
        expect(await approvals.decide({ approved: true })).toBe(false);
        await approvals.setPending(request(2));
        expect(await approvals.pending()).toEqual(request(2));
        const decided = await approvals.decide({ approved: false, reason: 'not today' });
        expect(decided).toMatchObject({
          approved: false,
          reason: 'not today',
          callIndex: 2,
          tool: 'probe.delete',
          argsHash: 'a2',
        });
        expect(await approvals.pending()).toBeUndefined();
        expect(await approvals.decision(2)).toEqual(decided);
        expect(await approvals.decision(1)).toBeUndefined();
        expect(await approvals.decide({ approved: true })).toBe(false);
        // A later request of the same job keeps the earlier decision.
        await approvals.setPending(request(5));
        await approvals.decide({ approved: true });
        expect((await approvals.decision(2))?.approved).toBe(false);
        expect((await approvals.decision(5))?.approved).toBe(true);
      });

      it('approvals: of approvers racing on one request, one wins', async () => {
        const store = await open();
        const id = key();
        await store.approvals(id).setPending(request(0));
        const other = backend.durable ? await open() : store;
        // Eight approvers on two connections, all reading the request before any decides.
        const results = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            (i % 2 === 0 ? store : other).approvals(id).decide({ approved: i % 2 === 0 }),
          ),
        );
        expect(results.filter((result) => result !== false)).toHaveLength(1);
        const winner = results.find((result) => result !== false)!;
        expect((await store.approvals(id).decision(0))?.approved).toBe(winner.approved);
      });

      it('keeps jobs apart, and forget deletes one job only (with its answer log)', async () => {
        const store = await open();
        const [a, b] = [key(), key()];
        await store.journal(a).append(started(0));
        await store.journal(b).append(started(7));
        await store.approvals(a).setPending(request(0));
        await store.approvals(b).setPending(request(1));
        await store.approvals(b).decide({ approved: true });
        await store.journal(answerLogKey(a)).append(finished(0));
        await store.journal(answerLogKey(b)).append(finished(1));
        await store.forget(a);
        expect(await store.journal(a).entries()).toEqual([]);
        // The job's answer log goes with it; another job's stays.
        expect(await store.journal(answerLogKey(a)).entries()).toEqual([]);
        expect(await store.journal(answerLogKey(b)).entries()).toEqual([finished(1)]);
        expect(await store.approvals(a).pending()).toBeUndefined();
        expect(await store.journal(b).entries()).toEqual([started(7)]);
        expect((await store.approvals(b).decision(1))?.approved).toBe(true);
        await store.forget(b);
        expect(await store.approvals(b).decision(1)).toBeUndefined();
        await store.forget('never-written'); // no error
      });
    },
  );
}

describe.skipIf(!hasRedisServer() && !ON_CI)('RedisJobStateStore: a write Redis refuses rejects', () => {
  let server: RedisHandle;
  beforeAll(async () => {
    server = await startRedis();
  }, 120_000);
  afterAll(() => server?.stop());

  it('rejects append and setPending when a command of their transaction fails (WRONGTYPE)', async () => {
    const store = await RedisJobStateStore.open({ redis: server.url, prefix: 'wrongtype:' });
    const raw = new Redis(server.url);
    try {
      // The keys hold strings, so RPUSH / HSET inside MULTI fail while EXEC itself resolves.
      await raw.set('wrongtype:journal:job-1', 'not a list');
      await raw.set('wrongtype:approvals:job-1', 'not a hash');
      await expect(store.journal('job-1').append(started(0))).rejects.toThrow(/WRONGTYPE/);
      await expect(store.approvals('job-1').setPending(request(0))).rejects.toThrow(/WRONGTYPE/);
    } finally {
      raw.disconnect();
      await store.close();
    }
  });

  it("a journal's key expires with the jobs' retention age, set by its first entry and kept by the next ones", async () => {
    const ttlMs = 3_600_000;
    const store = await RedisJobStateStore.open({ redis: server.url, prefix: 'ttl:', ttlMs });
    const raw = new Redis(server.url);
    try {
      const journal = store.journal('job-1');
      await journal.append(started(0));
      const first = await raw.pttl(store.journalKey('job-1'));
      expect(first).toBeGreaterThan(ttlMs - 60_000);
      expect(first).toBeLessThanOrEqual(ttlMs);
      await journal.append(finished(0));
      expect(await raw.pttl(store.journalKey('job-1'))).toBeGreaterThan(ttlMs - 60_000);
      expect(await raw.llen(store.journalKey('job-1'))).toBe(2);
    } finally {
      raw.disconnect();
      await store.close();
    }
  });
});

describe.skipIf(postgresBinDir() === undefined && !ON_CI)('PostgresJobStateStore: job logs', () => {
  let server: PostgresHandle;
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterAll(() => server?.stop());

  it("keeps a job's lines in the order they were sent, and only the newest DEFAULT_JOBS_MAX_LOG_LINES", async () => {
    const store = await PostgresJobStateStore.open({ connection: server.url, scope: 'logs', poolSize: 4 });
    try {
      const total = DEFAULT_JOBS_MAX_LOG_LINES + 5;
      // Sent without waiting, as a running job logs: four connections could reorder them.
      await Promise.all(Array.from({ length: total }, (_, i) => store.appendLog('job-1', `line ${i}`)));
      await store.appendLog('job-2', 'other job');
      const lines = await store.logs('job-1', total);
      expect(lines).toHaveLength(DEFAULT_JOBS_MAX_LOG_LINES);
      expect(lines).toEqual(Array.from({ length: DEFAULT_JOBS_MAX_LOG_LINES }, (_, i) => `line ${i + 5}`));
      expect(await store.logs('job-2', 10)).toEqual(['other job']);
    } finally {
      await store.close();
    }
  });

  it('a journal view reads once, then adds its own appends; a first claim starts it empty unread', async () => {
    const store = await PostgresJobStateStore.open({ connection: server.url, scope: 'reads', poolSize: 2 });
    const other = await PostgresJobStateStore.open({ connection: server.url, scope: 'reads', poolSize: 1 });
    try {
      const run: RunJournalEntry = { type: 'run', codeHash: 'c', at: 0 };
      await other.journal('job-1').append(run);
      const view = store.journal('job-1');
      expect(await view.entries()).toEqual([run]);
      await view.append(started(0));
      // Another connection's write after the read is not seen: the view answers from what it read.
      await other.journal('job-1').append(finished(0));
      expect(await view.entries()).toEqual([run, started(0)]);
      expect(await store.journal('job-1').entries()).toEqual([run, started(0), finished(0)]);
      // Marked as a first claim: not read back (the row written by `other` is not there).
      await other.journal('job-2').append(run);
      store.firstClaim('job-2', true);
      const first = store.journal('job-2');
      expect(await first.entries()).toEqual([]);
      await first.append(started(0));
      expect(await first.entries()).toEqual([started(0)]);
      store.firstClaim('job-2', false);
      expect(await store.journal('job-2').entries()).toEqual([run, started(0)]);
    } finally {
      await Promise.all([store.close(), other.close()]);
    }
  });
});
