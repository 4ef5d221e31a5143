/**
 * @module
 * Job state in PostgreSQL (the pg-boss backend's), in the queue's database but in codecall's own
 * tables, created with the `codecall` schema when missing (under an advisory lock, so workers
 * starting together do not race):
 *
 * - `codecall.job_journal`: one row per run-journal entry, in append order (`id`);
 * - `codecall.job_approvals`: the pending request (`call_index` -1) and one row per decision;
 * - `codecall.job_logs`: the log lines of pg-boss jobs (pg-boss keeps none), which `forget` keeps
 *   (a finished job's log is read after its end); the retention age deletes them.
 *
 * Entries are kept as the JSON text the runtime wrote (not `jsonb`, which would reorder the keys of
 * a result a replay hands back to the script). Every write is its own statement, committed before
 * it resolves; a journal's appends are sent one after another, so their order is the script's.
 * A journal view reads its rows once and then adds its own committed appends (an attempt reads
 * twice before its first call); on a job's first claim it starts empty without a read.
 * Rows older than the retention age are deleted when a store opens (state a dead worker left).
 * `pg` is loaded when a store is opened, never before.
 */
import type { Pool } from 'pg';
import {
  DEFAULT_JOBS_KEEP_AGE_MS,
  DEFAULT_JOBS_MAX_LOG_LINES,
  DEFAULT_JOBS_STATE_PG_POOL_SIZE,
} from '../config/defaults.js';
import { CodecallError, isCodecallError } from '../errors.js';
import type { RunJournal, RunJournalEntry } from './run-journal.js';
import { connectionHost } from '../util/connection-host.js';
import { openPostgresPool } from './postgres-pool.js';
import {
  answerLogKey,
  toDecision,
  type JobApprovalDecision,
  type JobDecisionInput,
  type JobApprovalStore,
  type JobStateStore,
  type PendingApproval,
} from './job-state.js';

/** Options of {@link PostgresJobStateStore.open}. */
export interface PostgresJobStateStoreOptions {
  /** `postgres://user:password@host:5432/db` */
  connection: string;
  /** Whose jobs (the queue name): keys are unique within a scope. */
  scope: string;
  /** Age after which a job's state is deleted even if nobody forgot it. @defaultValue {@link DEFAULT_JOBS_KEEP_AGE_MS} */
  ttlMs?: number;
  /** @defaultValue {@link DEFAULT_JOBS_STATE_PG_POOL_SIZE} */
  poolSize?: number;
}

/** The schema of codecall's own tables. */
export const JOB_STATE_PG_SCHEMA = 'codecall';
/** `call_index` of the pending request's row. */
const PENDING = -1;
/** Any fixed number: the advisory lock that serialises table creation across workers. */
const CREATE_LOCK_KEY = 0x636f6a73;

const CREATE_SQL = `
CREATE SCHEMA IF NOT EXISTS ${JOB_STATE_PG_SCHEMA};
CREATE TABLE IF NOT EXISTS ${JOB_STATE_PG_SCHEMA}.job_journal (
  id bigserial PRIMARY KEY,
  scope text NOT NULL,
  job_key text NOT NULL,
  entry text NOT NULL,
  written_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS job_journal_job ON ${JOB_STATE_PG_SCHEMA}.job_journal (scope, job_key, id);
CREATE TABLE IF NOT EXISTS ${JOB_STATE_PG_SCHEMA}.job_logs (
  id bigserial PRIMARY KEY,
  scope text NOT NULL,
  job_key text NOT NULL,
  line text NOT NULL,
  written_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS job_logs_job ON ${JOB_STATE_PG_SCHEMA}.job_logs (scope, job_key, id);
CREATE TABLE IF NOT EXISTS ${JOB_STATE_PG_SCHEMA}.job_approvals (
  scope text NOT NULL,
  job_key text NOT NULL,
  call_index integer NOT NULL,
  body text NOT NULL,
  written_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, job_key, call_index)
);
`;

const T_JOURNAL = `${JOB_STATE_PG_SCHEMA}.job_journal`;
const T_APPROVALS = `${JOB_STATE_PG_SCHEMA}.job_approvals`;
const T_LOGS = `${JOB_STATE_PG_SCHEMA}.job_logs`;

/** Deletes the pending row if it is still `$3`, and records the decision in the same statement. */
const DECIDE_SQL = `
WITH cleared AS (
  DELETE FROM ${T_APPROVALS}
  WHERE scope = $1 AND job_key = $2 AND call_index = ${PENDING} AND body = $3
  RETURNING 1
)
INSERT INTO ${T_APPROVALS} (scope, job_key, call_index, body)
SELECT $1, $2, $4, $5 FROM cleared
ON CONFLICT (scope, job_key, call_index) DO UPDATE SET body = EXCLUDED.body, written_at = now()
RETURNING 1`;

class PostgresJobJournal implements RunJournal {
  /** The last append in flight: the next one is sent after it, so rows keep the script's order. */
  #tail: Promise<unknown> = Promise.resolve();
  /**
   * The journal's rows as this view knows them (read once, then its own appends added once they
   * are committed), or undefined until read or after an append failed (its row may or may not
   * have landed, so the next read asks the database). An attempt reads its journal twice before
   * its first call (the job runner, then the executor); the second is answered from here.
   */
  #known: string[] | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly scope: string,
    private readonly key: string,
    /** The job was never claimed before (its first attempt): the journal is empty, no read needed. */
    empty: boolean,
  ) {
    if (empty) this.#known = [];
  }

  append(entry: RunJournalEntry): Promise<void> {
    const text = JSON.stringify(entry);
    const write = this.#tail.then(() =>
      this.pool.query(`INSERT INTO ${T_JOURNAL} (scope, job_key, entry) VALUES ($1, $2, $3)`, [
        this.scope,
        this.key,
        text,
      ]),
    );
    this.#tail = write.then(
      () => this.#known?.push(text),
      () => {
        this.#known = undefined;
      },
    );
    return write.then(() => {});
  }

  async entries(): Promise<readonly RunJournalEntry[]> {
    await this.#tail;
    if (this.#known === undefined) {
      const { rows } = await this.pool.query<{ entry: string }>(
        `SELECT entry FROM ${T_JOURNAL} WHERE scope = $1 AND job_key = $2 ORDER BY id`,
        [this.scope, this.key],
      );
      this.#known = rows.map((row) => row.entry);
    }
    return this.#known.map((text) => JSON.parse(text) as RunJournalEntry);
  }
}

class PostgresJobApprovalStore implements JobApprovalStore {
  constructor(
    private readonly pool: Pool,
    private readonly scope: string,
    private readonly key: string,
  ) {}

  async #body(callIndex: number): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ body: string }>(
      `SELECT body FROM ${T_APPROVALS} WHERE scope = $1 AND job_key = $2 AND call_index = $3`,
      [this.scope, this.key, callIndex],
    );
    return rows[0]?.body;
  }

  async pending(): Promise<PendingApproval | undefined> {
    const body = await this.#body(PENDING);
    return body === undefined ? undefined : (JSON.parse(body) as PendingApproval);
  }

  async setPending(request: PendingApproval): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${T_APPROVALS} (scope, job_key, call_index, body) VALUES ($1, $2, ${PENDING}, $3)
       ON CONFLICT (scope, job_key, call_index) DO UPDATE SET body = EXCLUDED.body, written_at = now()`,
      [this.scope, this.key, JSON.stringify(request)],
    );
  }

  async decision(callIndex: number): Promise<JobApprovalDecision | undefined> {
    const body = await this.#body(callIndex);
    return body === undefined ? undefined : (JSON.parse(body) as JobApprovalDecision);
  }

  async decide(decision: JobDecisionInput): Promise<JobApprovalDecision | false> {
    const body = await this.#body(PENDING);
    if (body === undefined) return false;
    const recorded = toDecision(JSON.parse(body) as PendingApproval, decision);
    const { rowCount } = await this.pool.query(DECIDE_SQL, [
      this.scope,
      this.key,
      body,
      recorded.callIndex,
      JSON.stringify(recorded),
    ]);
    return rowCount === 1 ? recorded : false;
  }
}

/** Job state in PostgreSQL. */
export class PostgresJobStateStore implements JobStateStore {
  readonly #pool: Pool;
  readonly #scope: string;
  /** Per job, its last log write in flight: the next is sent after it, so lines keep their order. */
  readonly #logTails = new Map<string, Promise<unknown>>();
  /** Keys of jobs running their first claim in this process (see {@link firstClaim}). */
  readonly #firstClaims = new Set<string>();
  #closing: Promise<void> | undefined;

  private constructor(pool: Pool, scope: string) {
    this.#pool = pool;
    this.#scope = scope;
  }

  /**
   * Connects, creates the schema and tables when missing, and deletes state past the retention
   * age; throws `JOBS_BACKEND_UNAVAILABLE` when PostgreSQL cannot be reached.
   */
  static async open(options: PostgresJobStateStoreOptions): Promise<PostgresJobStateStore> {
    let pool: Pool | undefined;
    try {
      pool = await openPostgresPool({
        connection: options.connection,
        poolSize: options.poolSize ?? DEFAULT_JOBS_STATE_PG_POOL_SIZE,
        purpose: 'Job state in PostgreSQL (the pg-boss jobs backend)',
        lockKey: CREATE_LOCK_KEY,
        createSql: CREATE_SQL,
      });
      const ttlSeconds = Math.ceil((options.ttlMs ?? DEFAULT_JOBS_KEEP_AGE_MS) / 1_000);
      for (const table of [T_JOURNAL, T_APPROVALS, T_LOGS])
        await pool.query(
          `DELETE FROM ${table} WHERE scope = $1 AND written_at < now() - make_interval(secs => $2)`,
          [options.scope, ttlSeconds],
        );
    } catch (error) {
      if (isCodecallError(error) && error.code === 'PACKAGE_MISSING') throw error;
      await pool?.end().catch(() => {});
      throw new CodecallError(
        'JOBS_BACKEND_UNAVAILABLE',
        `Cannot open the job state in PostgreSQL at ${connectionHost(options.connection)}: ` +
          `${(error as Error)?.message ?? String(error)}. Start PostgreSQL, or fix the connection URL.`,
        { cause: error },
      );
    }
    return new PostgresJobStateStore(pool, options.scope);
  }

  /**
   * The run journal of the job under `key`. A job marked by {@link firstClaim} has an empty
   * journal (no worker ran it before, and keys are unique per submission): it is not read back.
   */
  journal(key: string): RunJournal {
    return new PostgresJobJournal(this.#pool, this.#scope, key, this.#firstClaims.has(key));
  }

  /**
   * Marks (`true`) or unmarks the job under `key` as claimed for the first time, for the
   * {@link journal} views opened while it runs; the worker unmarks it when the attempt ends.
   */
  firstClaim(key: string, first: boolean): void {
    if (first) this.#firstClaims.add(key);
    else this.#firstClaims.delete(key);
  }

  approvals(key: string): JobApprovalStore {
    return new PostgresJobApprovalStore(this.#pool, this.#scope, key);
  }

  /**
   * Appends a log line of a job (pg-boss keeps no logs of its own), after its previous line (one job's lines keep their order on a
   * pool of connections), keeping the newest {@link DEFAULT_JOBS_MAX_LOG_LINES} of the job, as
   * the BullMQ and embedded backends do.
   */
  appendLog(key: string, line: string): Promise<void> {
    const write = (this.#logTails.get(key) ?? Promise.resolve())
      .catch(() => {})
      .then(() =>
        this.#pool.query(
          `WITH added AS (INSERT INTO ${T_LOGS} (scope, job_key, line) VALUES ($1, $2, $3) RETURNING id)
DELETE FROM ${T_LOGS} WHERE scope = $1 AND job_key = $2 AND id <= (
  SELECT id FROM ${T_LOGS} WHERE scope = $1 AND job_key = $2 ORDER BY id DESC OFFSET $4 LIMIT 1)`,
          // The DELETE does not see the row it is added with: keep max - 1 older ones.
          [this.#scope, key, line, DEFAULT_JOBS_MAX_LOG_LINES - 1],
        ),
      );
    this.#logTails.set(key, write);
    const done = write.then(() => {});
    const forget = (): void => {
      if (this.#logTails.get(key) === write) this.#logTails.delete(key);
    };
    write.then(forget, forget);
    return done;
  }

  /** The job's log lines, oldest first, at most `limit`. */
  async logs(key: string, limit: number): Promise<string[]> {
    const { rows } = await this.#pool.query<{ line: string }>(
      `SELECT line FROM (SELECT id, line FROM ${T_LOGS} WHERE scope = $1 AND job_key = $2 ORDER BY id DESC LIMIT $3) t ORDER BY id`,
      [this.#scope, key, limit],
    );
    return rows.map((row) => row.line);
  }

  async forget(key: string): Promise<void> {
    await this.#pool.query(
      `WITH j AS (DELETE FROM ${T_JOURNAL} WHERE scope = $1 AND job_key IN ($2, $3))
       DELETE FROM ${T_APPROVALS} WHERE scope = $1 AND job_key = $2`,
      // The job's answer log is a journal of its own ($3).
      [this.#scope, key, answerLogKey(key)],
    );
  }

  close(): Promise<void> {
    this.#closing ??= this.#pool.end().catch(() => {});
    return this.#closing;
  }
}
