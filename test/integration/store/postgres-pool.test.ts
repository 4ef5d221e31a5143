/**
 * `openPostgresPool`, the one way codecall's PostgreSQL stores open their database: tables are
 * created under an advisory lock, so many processes opening a fresh database at once all succeed
 * (without the lock, concurrent `CREATE TABLE IF NOT EXISTS` of one table races on the catalog and
 * one of them fails with a unique violation); an unreachable server gives the driver's error.
 */

import { createServer } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresPool } from '../../../src/store/postgres-pool.js';
import { postgresBinDir, startPostgres, type PostgresHandle } from '../jobs/postgres-helpers.js';

const ON_CI = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';

const CREATE_SQL = `
CREATE SCHEMA IF NOT EXISTS pool_test;
CREATE TABLE IF NOT EXISTS pool_test.items (id bigint PRIMARY KEY, body text NOT NULL);
CREATE INDEX IF NOT EXISTS pool_test_items_body ON pool_test.items (body);
`;

describe.skipIf(postgresBinDir() === undefined && !ON_CI)('openPostgresPool (real PostgreSQL 15)', () => {
  let server: PostgresHandle | undefined;
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  }, 60_000);

  it('creates the tables once while 12 opens race on a fresh database, and every pool works', async () => {
    // A database of its own, so the tables surely do not exist yet.
    const admin = new pg.Client({ connectionString: server!.url });
    await admin.connect();
    await admin.query('CREATE DATABASE pool_race');
    await admin.end();
    const url = server!.url.replace(/\/postgres$/u, '/pool_race');
    const opens = Array.from({ length: 12 }, () =>
      openPostgresPool({
        connection: url,
        poolSize: 2,
        purpose: 'test',
        lockKey: 0x706f6f6c,
        createSql: CREATE_SQL,
      }),
    );
    const settled = await Promise.allSettled(opens);
    const failures = settled.filter((result) => result.status === 'rejected');
    expect(failures.map((failure) => String((failure as PromiseRejectedResult).reason))).toEqual([]);
    const pools = settled.map((result) => (result as PromiseFulfilledResult<pg.Pool>).value);
    try {
      await pools[0]!.query('INSERT INTO pool_test.items (id, body) VALUES (1, $1)', ['one']);
      const { rows } = await pools[11]!.query<{ body: string }>(
        'SELECT body FROM pool_test.items WHERE id = 1',
      );
      expect(rows).toEqual([{ body: 'one' }]);
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  }, 120_000);

  it("an unreachable server: the driver's own error leaves, for the store to word", async () => {
    // A port that accepts nothing: bound, then closed.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: bound } = probe.address() as { port: number };
        probe.close(() => resolve(bound));
      });
    });
    const opening = openPostgresPool({
      connection: `postgres://postgres@127.0.0.1:${port}/postgres`,
      poolSize: 1,
      purpose: 'test',
      lockKey: 1,
      createSql: CREATE_SQL,
    });
    await expect(opening).rejects.toThrow(/ECONNREFUSED/u);
  }, 60_000);
});
