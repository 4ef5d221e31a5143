/**
 * Opening a PostgreSQL pool for one of codecall's stores: `pg` loaded lazily (an optional peer),
 * a bounded pool, and the store's tables created when missing under a transaction-scoped advisory
 * lock, so processes opening the same database at once do not race on `CREATE … IF NOT EXISTS`.
 * The caller words the error (each store has its own code and fix); the pool is closed before the
 * error leaves.
 */

import type PgModule from 'pg';
import type { Pool } from 'pg';
import { DEFAULT_JOBS_CONNECT_TIMEOUT_MS } from '../config/defaults.js';
import { importOptional } from '../util/optional-package.js';

export interface OpenPostgresPoolOptions {
  /** The connection URL. */
  connection: string;
  /** Most connections the pool holds. */
  poolSize: number;
  /** What needs `pg`, for the `PACKAGE_MISSING` message (e.g. "The PostgreSQL store"). */
  purpose: string;
  /** The store's own advisory-lock key: any fixed 32-bit number, one per store. */
  lockKey: number;
  /** `CREATE SCHEMA/TABLE/INDEX … IF NOT EXISTS` statements, run under the lock in one transaction. */
  createSql: string;
}

/**
 * A connected pool whose tables exist. Throws `PACKAGE_MISSING` without `pg`, and otherwise the
 * driver's own error (unreachable server, refused login, SQL) for the caller to word.
 */
export async function openPostgresPool(options: OpenPostgresPoolOptions): Promise<Pool> {
  const { default: pg } = await importOptional<{ default: typeof PgModule }>('pg', options.purpose);
  const pool = new pg.Pool({
    connectionString: options.connection,
    max: options.poolSize,
    connectionTimeoutMillis: DEFAULT_JOBS_CONNECT_TIMEOUT_MS,
  });
  pool.on('error', () => {}); // an idle client's lost connection: the next query reconnects
  try {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [options.lockKey]);
      await client.query(options.createSql);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
  return pool;
}
