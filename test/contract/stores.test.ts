/**
 * @module
 * The store contracts run against every backend: memory, SQLite (a temp file, with its writer
 * thread and inline), a real `redis-server` and a real PostgreSQL. Redis and PostgreSQL are found
 * like the jobs tests find them; on CI (which installs both) a missing server fails the suite
 * instead of skipping it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { CodecallRuntime } from '../../src/execute/index.js';
import {
  checkHistoryStore,
  MemoryHistoryStore,
  PostgresHistoryStore,
  RedisHistoryStore,
  SqliteHistoryStore,
  type UsageHistoryStore,
} from '../../src/store/index.js';
import { hasRedisServer, startRedis, type RedisHandle } from '../integration/jobs/jobs-helpers.js';
import { postgresBinDir, startPostgres, type PostgresHandle } from '../integration/jobs/postgres-helpers.js';
import { describeUsageHistoryStore } from './usage-store.contract.js';

/** CI installs redis-server and PostgreSQL: there, a missing one is a failure, not a skip. */
const ON_CI = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
let unique = 0;
const fresh = (): string => `contract-${process.pid}-${++unique}`;

describeUsageHistoryStore('memory', () => ({
  open: ({ maxUsages }) => Promise.resolve({ store: new MemoryHistoryStore({ maxUsages }) }),
}));

describe('SQLite backends', () => {
  const dir = mkdtempSync(join(tmpdir(), 'codecall-contract-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  for (const writer of ['thread', 'inline'] as const)
    describeUsageHistoryStore(`SQLite (${writer} writer)`, () => ({
      async open({ maxUsages }) {
        const path = join(dir, `${fresh()}.sqlite`);
        const store = await SqliteHistoryStore.open({ path, maxUsages, writer });
        return { store, twin: () => SqliteHistoryStore.open({ path, maxUsages, writer }) };
      },
    }));
});

describe.skipIf(!hasRedisServer() && !ON_CI)('Redis backend (real redis-server)', () => {
  let redis: RedisHandle | undefined;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  describeUsageHistoryStore('Redis', () => ({
    async open({ maxUsages }) {
      const namespace = fresh();
      const options = { connection: redis!.url, namespace, maxUsages };
      return { store: await RedisHistoryStore.open(options), twin: () => RedisHistoryStore.open(options) };
    },
  }));
});

describe.skipIf(postgresBinDir() === undefined && !ON_CI)('PostgreSQL backend (real PostgreSQL)', () => {
  let server: PostgresHandle | undefined;
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });
  describeUsageHistoryStore('PostgreSQL', () => ({
    async open({ maxUsages }) {
      const namespace = fresh();
      const options = { connection: server!.url, namespace, maxUsages };
      return {
        store: await PostgresHistoryStore.open(options),
        twin: () => PostgresHistoryStore.open(options),
      };
    },
  }));
});

describe('a store lacking a capability', () => {
  /** A store from before the contracts: counts only, no usages, audit or values. */
  class CountsOnlyStore {
    loadCounts(): Promise<{ sequences: number; transitions: [] }> {
      return Promise.resolve({ sequences: 0, transitions: [] });
    }
    appendSequence(): Promise<void> {
      return Promise.resolve();
    }
    close(): Promise<void> {
      return Promise.resolve();
    }
  }

  it('is a type error where a UsageHistoryStore is needed', () => {
    // @ts-expect-error -- no listUsages, appendUsage, approvals or values: it is not a UsageHistoryStore
    const store: UsageHistoryStore = new CountsOnlyStore();
    expect(store).toBeInstanceOf(CountsOnlyStore);
  });

  it('is refused, naming the backend and what it lacks, never used as a silent no-op', async () => {
    expect(() => checkHistoryStore(new CountsOnlyStore())).toThrow(
      /CountsOnlyStore lacks appendUsage, listUsages, appendApproval, listApprovals, getValue, setValue/,
    );
    expect(() => checkHistoryStore(undefined)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect(checkHistoryStore(new MemoryHistoryStore())).toBeInstanceOf(MemoryHistoryStore);
    const config = parseConfig({ mcpServers: {}, history: { enabled: false } }, { file: '<contract>' });
    await expect(
      CodecallRuntime.open({
        config,
        history: new CountsOnlyStore() as never,
        parts: { servers: false, sandbox: 'lazy' },
      }),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { backend: 'CountsOnlyStore', missing: expect.arrayContaining(['appendUsage', 'setValue']) },
    });
  });
});
