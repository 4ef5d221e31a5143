/**
 * @module
 * Usage history for a fleet of workers, in the same PostgreSQL as the pg-boss queue: every
 * worker's runs feed one tool graph per configuration name. The tables live in a `codecall`
 * schema (created with the tables when missing): `codecall.history_runs` (runs per namespace),
 * `codecall.history_transitions` (one row per namespace and tool pair) and
 * `codecall.history_usages` (query feedback, the newest {@link DEFAULT_STORE_MAX_USAGES} per
 * namespace), `codecall.history_approvals` (the approval audit, the newest
 * {@link DEFAULT_APPROVALS_MAX_KEPT} per namespace) and `codecall.store_values` (script values).
 * Every write is one transaction, so a worker killed mid-write loses at most that write and never
 * leaves half of one. A worker loads the graph when it opens a configuration; runs of other
 * workers reach its search the next time it opens it. `pg` is imported when a store is opened,
 * never before.
 */
import type { Pool, PoolClient } from 'pg';
import {
  DEFAULT_APPROVALS_MAX_KEPT,
  DEFAULT_JOBS_HISTORY_MAX_TRANSITIONS,
  DEFAULT_JOBS_HISTORY_PG_POOL_SIZE,
  DEFAULT_RESULT_SHAPE_MAX_TOOLS,
  DEFAULT_STORE_MAX_USAGES,
} from '../config/defaults.js';
import { CodecallError, isCodecallError } from '../errors.js';
import { transitionsOf } from '../util/call-transitions.js';
import { connectionHost } from '../util/connection-host.js';
import { openPostgresPool } from './postgres-pool.js';
import {
  approvalFields,
  checkApprovalEntry,
  checkApprovalsLimit,
  checkSequence,
  checkSharedHistoryOptions,
  checkUsage,
  checkUsagesLimit,
  closedError,
  namespaceLimitError,
  parseUsage,
  storedBytes,
} from './checks.js';
import type { UsageHistoryStore } from './contracts.js';
import { checkShapeArgs, mergeWithRetry, parseShapeRow } from './shape-merge.js';
import type { ResultShape } from '../util/result-shape.js';
import type {
  ApprovalAuditEntry,
  GraphCounts,
  LearnedShape,
  ListApprovalsOptions,
  ListUsagesOptions,
  QueryUsage,
  StoreValueLimits,
} from './types.js';

/** Options of {@link PostgresHistoryStore.open}. */
export interface PostgresHistoryStoreOptions {
  /** `postgres://user:password@host:5432/db` */
  connection: string;
  /** Namespace of this history (e.g. the queue and configuration name); one graph per namespace. */
  namespace: string;
  /** @defaultValue {@link DEFAULT_JOBS_HISTORY_MAX_TRANSITIONS} */
  maxTransitions?: number;
  /** Query-feedback uses kept and loaded (the newest). @defaultValue {@link DEFAULT_STORE_MAX_USAGES} */
  maxUsages?: number;
  /** @defaultValue {@link DEFAULT_JOBS_HISTORY_PG_POOL_SIZE} */
  poolSize?: number;
}

/** The schema of the history tables. */
export const HISTORY_PG_SCHEMA = 'codecall';

/** Any fixed number: the advisory lock that serialises table creation across workers. */
const CREATE_LOCK_KEY = 0x636f6463;

const CREATE_SQL = `
CREATE SCHEMA IF NOT EXISTS ${HISTORY_PG_SCHEMA};
CREATE TABLE IF NOT EXISTS ${HISTORY_PG_SCHEMA}.history_runs (
  namespace text PRIMARY KEY,
  sequences bigint NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS ${HISTORY_PG_SCHEMA}.history_transitions (
  namespace text NOT NULL,
  from_tool text NOT NULL,
  to_tool text NOT NULL,
  count bigint NOT NULL,
  PRIMARY KEY (namespace, from_tool, to_tool)
);
CREATE TABLE IF NOT EXISTS ${HISTORY_PG_SCHEMA}.history_usages (
  id bigserial PRIMARY KEY,
  namespace text NOT NULL,
  query text NOT NULL,
  tools jsonb NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS history_usages_namespace_id ON ${HISTORY_PG_SCHEMA}.history_usages (namespace, id);
CREATE TABLE IF NOT EXISTS ${HISTORY_PG_SCHEMA}.history_approvals (
  id bigserial PRIMARY KEY,
  namespace text NOT NULL,
  entry jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS history_approvals_namespace_id ON ${HISTORY_PG_SCHEMA}.history_approvals (namespace, id);
CREATE TABLE IF NOT EXISTS ${HISTORY_PG_SCHEMA}.store_values (
  namespace text NOT NULL,
  value_namespace text NOT NULL,
  key text NOT NULL,
  value text NOT NULL,
  bytes bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, value_namespace, key)
);
CREATE TABLE IF NOT EXISTS ${HISTORY_PG_SCHEMA}.history_result_shapes (
  namespace text NOT NULL,
  tool text NOT NULL,
  shape text NOT NULL,
  version bigint NOT NULL,
  PRIMARY KEY (namespace, tool)
);
`;

/** PostgreSQL text cannot hold NUL; such a name is skipped like an over-long one. */
const hasNul = (value: string): boolean => value.includes('\u0000');
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function failed(action: string, error: unknown): CodecallError {
  return new CodecallError(
    'HISTORY_STORE_FAILED',
    `${action} in PostgreSQL failed: ${(error as Error)?.message ?? String(error)}.`,
    { details: { backend: 'postgres' }, cause: error },
  );
}

/** A {@link UsageHistoryStore} in PostgreSQL: counters in rows, updated in one transaction per run. */
export class PostgresHistoryStore implements UsageHistoryStore {
  readonly #pool: Pool;
  readonly #namespace: string;
  readonly #max: number;
  readonly #maxUses: number;
  #closed = false;

  private constructor(pool: Pool, namespace: string, max: number, maxUses: number) {
    this.#pool = pool;
    this.#namespace = namespace;
    this.#max = max;
    this.#maxUses = maxUses;
  }

  /**
   * Connects and creates the schema and tables when missing; throws `HISTORY_STORE_FAILED` when
   * PostgreSQL cannot be reached.
   */
  static async open(options: PostgresHistoryStoreOptions): Promise<PostgresHistoryStore> {
    const max = options.maxTransitions ?? DEFAULT_JOBS_HISTORY_MAX_TRANSITIONS;
    const maxUses = options.maxUsages ?? DEFAULT_STORE_MAX_USAGES;
    const size = options.poolSize ?? DEFAULT_JOBS_HISTORY_PG_POOL_SIZE;
    checkSharedHistoryOptions(options.namespace, { maxTransitions: max, maxUsages: maxUses, poolSize: size });
    let pool: Pool;
    try {
      pool = await openPostgresPool({
        connection: options.connection,
        poolSize: size,
        purpose: 'The PostgreSQL store',
        lockKey: CREATE_LOCK_KEY,
        createSql: CREATE_SQL,
      });
    } catch (error) {
      if (isCodecallError(error) && error.code === 'PACKAGE_MISSING') throw error;
      throw new CodecallError(
        'HISTORY_STORE_FAILED',
        `Cannot open the usage history in PostgreSQL at ${connectionHost(options.connection)}: ` +
          `${(error as Error)?.message ?? String(error)}. Start PostgreSQL, or fix the connection URL (--postgres).`,
        { details: { backend: 'postgres' }, cause: error },
      );
    }
    const store = new PostgresHistoryStore(pool, options.namespace, max, maxUses);
    return store;
  }

  async loadCounts(): Promise<GraphCounts> {
    this.#assertOpen();
    let runs: { sequences: string }[] = [];
    let edges: { from_tool: string; to_tool: string; count: string }[] = [];
    try {
      // One snapshot: the run count and the pairs agree even while other workers write.
      await this.#transaction(async (client) => {
        ({ rows: runs } = await client.query<{ sequences: string }>(
          `SELECT sequences FROM ${HISTORY_PG_SCHEMA}.history_runs WHERE namespace = $1`,
          [this.#namespace],
        ));
        ({ rows: edges } = await client.query<{ from_tool: string; to_tool: string; count: string }>(
          `SELECT from_tool, to_tool, count FROM ${HISTORY_PG_SCHEMA}.history_transitions
           WHERE namespace = $1 AND count > 0 ORDER BY count DESC, from_tool, to_tool LIMIT $2`,
          [this.#namespace, this.#max],
        ));
      }, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    } catch (error) {
      throw failed('Loading usage history', error);
    }
    const sequences = Number(runs[0]?.sequences ?? 0);
    const transitions: GraphCounts['transitions'] = [];
    for (const row of edges) {
      const count = Number(row.count);
      if (Number.isSafeInteger(count)) transitions.push([row.from_tool, row.to_tool, count]);
    }
    return { sequences: Number.isSafeInteger(sequences) ? sequences : 0, transitions };
  }

  async listUsages(options: ListUsagesOptions = {}): Promise<QueryUsage[]> {
    this.#assertOpen();
    const limit = checkUsagesLimit(options.limit);
    let rows: { query: string; tools: unknown }[];
    try {
      ({ rows } = await this.#pool.query<{ query: string; tools: unknown }>(
        `SELECT query, tools FROM ${HISTORY_PG_SCHEMA}.history_usages
         WHERE namespace = $1 ORDER BY id DESC LIMIT $2`,
        [this.#namespace, limit],
      ));
    } catch (error) {
      throw failed('Loading query feedback', error);
    }
    const out: QueryUsage[] = [];
    for (const row of rows) {
      const usage = parseUsage(row.query, row.tools);
      if (usage) out.push(usage);
    }
    return out;
  }

  async appendSequence(sequence: readonly string[]): Promise<void> {
    this.#assertOpen();
    const pairs = transitionsOf(checkSequence(sequence)).filter(([from, to]) => !hasNul(from) && !hasNul(to));
    const counts = new Map<string, [string, string, number]>();
    for (const [from, to] of pairs) {
      const key = JSON.stringify([from, to]);
      const entry = counts.get(key);
      if (entry) entry[2]++;
      else counts.set(key, [from, to, 1]);
    }
    // One lock order for every writer (the run row first, then the pairs sorted).
    const rows = [...counts.values()].sort((a, b) => (a[0] === b[0] ? cmp(a[1], b[1]) : cmp(a[0], b[0])));
    try {
      await this.#transaction(async (client) => {
        await client.query(
          `INSERT INTO ${HISTORY_PG_SCHEMA}.history_runs (namespace, sequences) VALUES ($1, 1)
           ON CONFLICT (namespace) DO UPDATE SET sequences = history_runs.sequences + 1`,
          [this.#namespace],
        );
        if (rows.length === 0) return;
        await client.query(
          `INSERT INTO ${HISTORY_PG_SCHEMA}.history_transitions (namespace, from_tool, to_tool, count)
           SELECT $1, f, t, c FROM unnest($2::text[], $3::text[], $4::bigint[]) AS u(f, t, c)
           ON CONFLICT (namespace, from_tool, to_tool)
           DO UPDATE SET count = history_transitions.count + excluded.count`,
          [this.#namespace, rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2])],
        );
      });
    } catch (error) {
      throw failed('Recording usage history', error);
    }
  }

  async appendUsage(usage: QueryUsage): Promise<void> {
    this.#assertOpen();
    const { query, tools } = checkUsage(usage);
    if (hasNul(query) || tools.some(hasNul)) return; // feedback is a ranking hint: skip what text cannot hold
    try {
      await this.#transaction(async (client) => {
        await client.query(
          `INSERT INTO ${HISTORY_PG_SCHEMA}.history_usages (namespace, query, tools) VALUES ($1, $2, $3::jsonb)`,
          [this.#namespace, query, JSON.stringify(tools)],
        );
        // Keep the newest uses of this namespace (ids are shared by every namespace).
        await client.query(
          `DELETE FROM ${HISTORY_PG_SCHEMA}.history_usages WHERE namespace = $1 AND id <
             (SELECT id FROM ${HISTORY_PG_SCHEMA}.history_usages WHERE namespace = $1
              ORDER BY id DESC OFFSET $2 LIMIT 1)`,
          [this.#namespace, this.#maxUses - 1],
        );
      });
    } catch (error) {
      throw failed('Recording query feedback', error);
    }
  }

  async appendApproval(entry: ApprovalAuditEntry): Promise<void> {
    this.#assertOpen();
    const checked = approvalFields(checkApprovalEntry(entry));
    // jsonb refuses NUL (JSON.stringify escapes it as \\u0000): the audit keeps U+FFFD instead.
    const json = JSON.stringify(checked).replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1\\ufffd');
    try {
      await this.#transaction(async (client) => {
        await client.query(
          `INSERT INTO ${HISTORY_PG_SCHEMA}.history_approvals (namespace, entry) VALUES ($1, $2::jsonb)`,
          [this.#namespace, json],
        );
        await client.query(
          `DELETE FROM ${HISTORY_PG_SCHEMA}.history_approvals WHERE namespace = $1 AND id <
             (SELECT id FROM ${HISTORY_PG_SCHEMA}.history_approvals WHERE namespace = $1
              ORDER BY id DESC OFFSET $2 LIMIT 1)`,
          [this.#namespace, DEFAULT_APPROVALS_MAX_KEPT - 1],
        );
      });
    } catch (error) {
      throw failed('Recording an approval', error);
    }
  }

  async listApprovals(options: ListApprovalsOptions = {}): Promise<ApprovalAuditEntry[]> {
    this.#assertOpen();
    const limit = checkApprovalsLimit(options.limit);
    let rows: { entry: unknown }[];
    try {
      ({ rows } = await this.#pool.query<{ entry: unknown }>(
        `SELECT entry FROM ${HISTORY_PG_SCHEMA}.history_approvals WHERE namespace = $1 ORDER BY id DESC LIMIT $2`,
        [this.#namespace, limit],
      ));
    } catch (error) {
      throw failed('Reading approvals', error);
    }
    const out: ApprovalAuditEntry[] = [];
    for (const row of rows) {
      try {
        out.push(approvalFields(checkApprovalEntry(row.entry)));
      } catch {
        // a row not written by this store: skip it
      }
    }
    return out;
  }

  async loadShapes(): Promise<LearnedShape[]> {
    this.#assertOpen();
    try {
      const { rows } = await this.#pool.query<{ tool: string; shape: string }>(
        `SELECT tool, shape FROM ${HISTORY_PG_SCHEMA}.history_result_shapes WHERE namespace = $1 ORDER BY tool LIMIT $2`,
        [this.#namespace, DEFAULT_RESULT_SHAPE_MAX_TOOLS],
      );
      return rows.flatMap((row) => parseShapeRow(row.tool, row.shape) ?? []);
    } catch (error) {
      throw failed('Reading learned shapes', error);
    }
  }

  /** Merges a learned shape: a compare-and-set on the row's version, retried (other workers merge too). */
  async mergeShape(tool: string, shape: ResultShape): Promise<void> {
    this.#assertOpen();
    const clean = checkShapeArgs(tool, shape);
    if (hasNul(tool)) return; // text cannot hold it: never stored
    const table = `${HISTORY_PG_SCHEMA}.history_result_shapes`;
    try {
      await mergeWithRetry(
        'postgres',
        tool,
        clean,
        async () => {
          const { rows } = await this.#pool.query<{ shape: string; version: string }>(
            `SELECT shape, version FROM ${table} WHERE namespace = $1 AND tool = $2`,
            [this.#namespace, tool],
          );
          const row = rows[0];
          return row === undefined
            ? { json: undefined, version: 0 }
            : { json: row.shape, version: Number(row.version) };
        },
        async (json, version) => {
          if (version > 0) {
            const { rowCount } = await this.#pool.query(
              `UPDATE ${table} SET shape = $3, version = version + 1 WHERE namespace = $1 AND tool = $2 AND version = $4`,
              [this.#namespace, tool, json, version],
            );
            return rowCount === 1 ? 'written' : 'conflict';
          }
          const { rowCount } = await this.#pool.query(
            `INSERT INTO ${table} (namespace, tool, shape, version)
             SELECT $1, $2, $3, 1 WHERE (SELECT count(*) FROM ${table} WHERE namespace = $1) < $4
             ON CONFLICT (namespace, tool) DO NOTHING`,
            [this.#namespace, tool, json, DEFAULT_RESULT_SHAPE_MAX_TOOLS],
          );
          if (rowCount === 1) return 'written';
          const { rows } = await this.#pool.query(
            `SELECT 1 FROM ${table} WHERE namespace = $1 AND tool = $2`,
            [this.#namespace, tool],
          );
          return rows.length > 0 ? 'conflict' : 'full';
        },
      );
    } catch (error) {
      throw isCodecallError(error) ? error : failed('Recording a learned shape', error);
    }
  }

  async getValue(namespace: string, key: string): Promise<string | undefined> {
    this.#assertOpen();
    if (hasNul(namespace) || hasNul(key)) return undefined; // text cannot hold it: never stored
    try {
      const { rows } = await this.#pool.query<{ value: string }>(
        `SELECT value FROM ${HISTORY_PG_SCHEMA}.store_values WHERE namespace = $1 AND value_namespace = $2 AND key = $3`,
        [this.#namespace, namespace, key],
      );
      return rows[0]?.value;
    } catch (error) {
      throw failed('Reading a stored value', error);
    }
  }

  async setValue(
    namespace: string,
    key: string,
    json: string | undefined,
    limits: StoreValueLimits,
  ): Promise<void> {
    this.#assertOpen();
    if (hasNul(namespace) || hasNul(key))
      throw new CodecallError('INVALID_ARGUMENT', 'A store key cannot hold the NUL character (\\u0000).', {
        details: { field: 'key' },
      });
    let refused: { used: number; adding: number } | undefined;
    try {
      await this.#transaction(async (client) => {
        // Writers of one namespace take turns, so the byte check and the write are one step.
        await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
          JSON.stringify([this.#namespace, namespace]),
        ]);
        const where = `namespace = $1 AND value_namespace = $2`;
        if (json === undefined) {
          await client.query(`DELETE FROM ${HISTORY_PG_SCHEMA}.store_values WHERE ${where} AND key = $3`, [
            this.#namespace,
            namespace,
            key,
          ]);
          return;
        }
        const { rows } = await client.query<{ used: string; old: string | null }>(
          `SELECT COALESCE(SUM(bytes), 0) AS used, MAX(bytes) FILTER (WHERE key = $3) AS old
           FROM ${HISTORY_PG_SCHEMA}.store_values WHERE ${where}`,
          [this.#namespace, namespace, key],
        );
        const used = Number(rows[0]?.used ?? 0);
        const bytes = storedBytes(key, json);
        const adding = bytes - Number(rows[0]?.old ?? 0);
        if (adding > 0 && used + adding > limits.maxNamespaceBytes) {
          refused = { used, adding };
          return;
        }
        await client.query(
          `INSERT INTO ${HISTORY_PG_SCHEMA}.store_values (namespace, value_namespace, key, value, bytes)
           VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (namespace, value_namespace, key)
           DO UPDATE SET value = excluded.value, bytes = excluded.bytes, updated_at = now()`,
          [this.#namespace, namespace, key, json, bytes],
        );
      });
    } catch (error) {
      throw failed('Storing a value', error);
    }
    if (refused) throw namespaceLimitError(key, refused.used, refused.adding, limits.maxNamespaceBytes);
  }

  /** Runs `work` in one transaction on one pooled connection; rolls back on any error. */
  async #transaction(work: (client: PoolClient) => Promise<void>, begin = 'BEGIN'): Promise<void> {
    const client = await this.#pool.connect();
    let broken = false;
    // A connection lost while checked out (server restart, terminated backend) emits 'error' on
    // the client, which would crash the worker unheard; the query in flight rejects anyway.
    const onError = (): void => {
      broken = true;
    };
    client.on('error', onError);
    try {
      await client.query(begin);
      await work(client);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {
        broken = true; // the connection is gone: drop it from the pool
      });
      throw error;
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }

  #assertOpen(): void {
    if (this.#closed) throw closedError();
  }

  /** Ends the pool; idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool.end().catch(() => {});
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
