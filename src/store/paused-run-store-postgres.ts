/**
 * @module
 * Paused runs in PostgreSQL, shared by every serve process on that database: one row per run in
 * `codecall.vendor_paused_runs` (created when missing, under an advisory lock) holding its
 * journal entries as the JSON text the runtime wrote (a `text[]`, appended in order), its expiry
 * (`expires_at`, epoch milliseconds) and the lease of the process running a turn of it. Expired
 * rows are deleted by an indexed `DELETE` at most once per sweep interval per process (and never
 * read: an expired row is gone to `open`); a new run past the count bound deletes the rows that
 * expire first. `pg` is loaded when the store opens.
 */
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import {
  DEFAULT_JOBS_STATE_PG_POOL_SIZE,
  DEFAULT_VENDOR_MAX_PAUSED_RUNS,
  DEFAULT_VENDOR_PAUSED_LEASE_MS,
  DEFAULT_VENDOR_PAUSED_SWEEP_MS,
} from '../config/defaults.js';
import { CodecallError, isCodecallError } from '../errors.js';
import { connectionHost } from '../util/connection-host.js';
import { openPostgresPool } from './postgres-pool.js';
import type { OpenedRunJournal, OpenPausedRunOptions, PausedRunStore } from './paused-run-store.js';
import type { RunJournal, RunJournalEntry } from './run-journal.js';

/** Options of {@link PostgresPausedRunStore.open}. */
export interface PostgresPausedRunStoreOptions {
  /** `postgres://user:password@host:5432/db` */
  connection: string;
  /** Whose runs (processes sharing a scope resume each other's runs). @defaultValue `"vendor"` */
  scope?: string;
  /** @defaultValue {@link DEFAULT_VENDOR_MAX_PAUSED_RUNS} */
  maxRuns?: number;
  /** @defaultValue {@link DEFAULT_VENDOR_PAUSED_LEASE_MS} */
  leaseMs?: number;
  /** @defaultValue {@link DEFAULT_VENDOR_PAUSED_SWEEP_MS} */
  sweepMs?: number;
  /** @defaultValue {@link DEFAULT_JOBS_STATE_PG_POOL_SIZE} */
  poolSize?: number;
}

/** The table of paused runs. */
export const PAUSED_RUNS_PG_TABLE = 'codecall.vendor_paused_runs';
/** Any fixed number: the advisory lock that serialises table creation across processes. */
const CREATE_LOCK_KEY = 0x636f7670;

const CREATE_SQL = `
CREATE SCHEMA IF NOT EXISTS codecall;
CREATE TABLE IF NOT EXISTS ${PAUSED_RUNS_PG_TABLE} (
  scope text NOT NULL,
  run_id text NOT NULL,
  entries text[] NOT NULL DEFAULT '{}',
  expires_at bigint NOT NULL,
  lease text,
  leased_until bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (scope, run_id)
);
CREATE INDEX IF NOT EXISTS vendor_paused_runs_expiry ON ${PAUSED_RUNS_PG_TABLE} (scope, expires_at);
`;

class PostgresPausedJournal implements RunJournal {
  #tail: Promise<unknown> = Promise.resolve();
  readonly #known: string[];

  constructor(
    private readonly pool: Pool,
    private readonly scope: string,
    private readonly runId: string,
    private readonly lease: string,
    known: string[],
  ) {
    this.#known = known;
  }

  append(entry: RunJournalEntry): Promise<void> {
    const text = JSON.stringify(entry);
    const write = this.#tail.then(async () => {
      const { rowCount } = await this.pool.query(
        `UPDATE ${PAUSED_RUNS_PG_TABLE} SET entries = array_append(entries, $4)
         WHERE scope = $1 AND run_id = $2 AND lease = $3`,
        [this.scope, this.runId, this.lease, text],
      );
      if (rowCount !== 1)
        throw new Error(
          `The paused run ${this.runId} was removed while it ran (expired, or pushed out by the count of paused runs).`,
        );
      this.#known.push(text);
    });
    this.#tail = write.catch(() => {});
    return write;
  }

  async entries(): Promise<readonly RunJournalEntry[]> {
    await this.#tail;
    return this.#known.map((text) => JSON.parse(text) as RunJournalEntry);
  }
}

/** Paused runs in PostgreSQL. */
export class PostgresPausedRunStore implements PausedRunStore {
  readonly #pool: Pool;
  readonly #scope: string;
  readonly #max: number;
  readonly #leaseMs: number;
  readonly #sweepMs: number;
  #sweptAt = Number.NEGATIVE_INFINITY;
  #closing: Promise<void> | undefined;

  private constructor(pool: Pool, options: PostgresPausedRunStoreOptions) {
    this.#pool = pool;
    this.#scope = options.scope ?? 'vendor';
    this.#max = options.maxRuns ?? DEFAULT_VENDOR_MAX_PAUSED_RUNS;
    this.#leaseMs = options.leaseMs ?? DEFAULT_VENDOR_PAUSED_LEASE_MS;
    this.#sweepMs = options.sweepMs ?? DEFAULT_VENDOR_PAUSED_SWEEP_MS;
  }

  /** Connects and creates the table when missing; throws `JOBS_BACKEND_UNAVAILABLE` when PostgreSQL cannot be reached. */
  static async open(options: PostgresPausedRunStoreOptions): Promise<PostgresPausedRunStore> {
    let pool: Pool;
    try {
      pool = await openPostgresPool({
        connection: options.connection,
        poolSize: options.poolSize ?? DEFAULT_JOBS_STATE_PG_POOL_SIZE,
        purpose: 'Paused vendor scripts in PostgreSQL (jobs.backend "postgres")',
        lockKey: CREATE_LOCK_KEY,
        createSql: CREATE_SQL,
      });
    } catch (error) {
      if (isCodecallError(error) && error.code === 'PACKAGE_MISSING') throw error;
      throw new CodecallError(
        'JOBS_BACKEND_UNAVAILABLE',
        `Cannot open the paused vendor scripts in PostgreSQL at ${connectionHost(options.connection)}: ` +
          `${(error as Error)?.message ?? String(error)}. Start PostgreSQL, or fix jobs.connection.`,
        { cause: error },
      );
    }
    return new PostgresPausedRunStore(pool, options);
  }

  async #maybeSweep(now: number): Promise<void> {
    if (now - this.#sweptAt < this.#sweepMs) return;
    this.#sweptAt = now;
    await this.#pool.query(
      `DELETE FROM ${PAUSED_RUNS_PG_TABLE} WHERE scope = $1 AND expires_at <= $2 AND leased_until <= $2`,
      [this.#scope, now],
    );
  }

  async open(runId: string, options: OpenPausedRunOptions): Promise<OpenedRunJournal | undefined> {
    const now = Date.now();
    await this.#maybeSweep(now);
    const lease = randomUUID();
    const leasedUntil = now + this.#leaseMs;
    let entries: string[];
    if (options.create) {
      const { rows } = await this.#pool.query<{ entries: string[] }>(
        `INSERT INTO ${PAUSED_RUNS_PG_TABLE} (scope, run_id, expires_at, lease, leased_until)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (scope, run_id) DO UPDATE
           SET expires_at = GREATEST(${PAUSED_RUNS_PG_TABLE}.expires_at, EXCLUDED.expires_at),
               lease = EXCLUDED.lease, leased_until = EXCLUDED.leased_until
           WHERE ${PAUSED_RUNS_PG_TABLE}.leased_until <= $6
         RETURNING entries`,
        [this.#scope, runId, options.expiresAt, lease, leasedUntil, now],
      );
      if (rows[0] === undefined) throw this.#locked(runId);
      entries = rows[0].entries;
      // The runs that expire first, past the bound (never one a process is running a turn of).
      await this.#pool.query(
        `DELETE FROM ${PAUSED_RUNS_PG_TABLE} WHERE scope = $1 AND run_id IN (
           SELECT run_id FROM ${PAUSED_RUNS_PG_TABLE} WHERE scope = $1 AND run_id <> $2
           ORDER BY expires_at DESC OFFSET $3) AND leased_until <= $4`,
        [this.#scope, runId, this.#max - 1, now],
      );
    } else {
      const { rows } = await this.#pool.query<{ entries: string[]; leased_until: string; taken: boolean }>(
        `UPDATE ${PAUSED_RUNS_PG_TABLE} SET
           expires_at = GREATEST(expires_at, $3),
           lease = CASE WHEN leased_until <= $5 THEN $4 ELSE lease END,
           leased_until = CASE WHEN leased_until <= $5 THEN $6 ELSE leased_until END
         WHERE scope = $1 AND run_id = $2 AND expires_at > $5
         RETURNING entries, lease = $4 AS taken`,
        [this.#scope, runId, options.expiresAt, lease, now, leasedUntil],
      );
      const row = rows[0];
      if (row === undefined) return undefined;
      if (!row.taken) throw this.#locked(runId);
      if (row.entries.length === 0) {
        await this.drop(runId);
        return undefined;
      }
      entries = row.entries;
    }
    return {
      journal: new PostgresPausedJournal(this.#pool, this.#scope, runId, lease, [...entries]),
      release: async () => {
        await this.#pool.query(
          `UPDATE ${PAUSED_RUNS_PG_TABLE} SET lease = NULL, leased_until = 0
           WHERE scope = $1 AND run_id = $2 AND lease = $3`,
          [this.#scope, runId, lease],
        );
      },
    };
  }

  #locked(runId: string): CodecallError {
    return new CodecallError(
      'JOURNAL_LOCKED',
      `The paused run ${runId} is in use by another serve process (a turn of it is running there); send the continuation again once that turn has answered.`,
      {
        details: {
          path: `${PAUSED_RUNS_PG_TABLE} ${runId}`,
          lockPath: `${PAUSED_RUNS_PG_TABLE} ${runId} lease`,
        },
      },
    );
  }

  async drop(runId: string): Promise<void> {
    await this.#pool.query(`DELETE FROM ${PAUSED_RUNS_PG_TABLE} WHERE scope = $1 AND run_id = $2`, [
      this.#scope,
      runId,
    ]);
  }

  close(): Promise<void> {
    this.#closing ??= this.#pool.end().catch(() => {});
    return this.#closing;
  }
}
