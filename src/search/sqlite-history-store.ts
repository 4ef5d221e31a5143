/**
 * @module
 * The default usage history store: one SQLite file through Node's built-in `node:sqlite`
 * (no native dependency to build, and SQLite's transactions give the atomicity the history
 * needs). Each run is one `BEGIN IMMEDIATE … COMMIT` transaction that appends the raw sequence
 * and bumps the aggregated transition counts; the database runs in WAL mode with
 * `synchronous=FULL`, so `kill -9` (or a power cut) mid-write loses at most the run in flight and
 * the next open rolls the partial transaction back. Several processes may share one file
 * (writers wait up to {@link DEFAULT_HISTORY_BUSY_TIMEOUT_MS}).
 *
 * `node:sqlite` is loaded only when a store is opened. Node 22.5–22.12 needs
 * `--experimental-sqlite`; where it prints its one-time ExperimentalWarning, that warning (and
 * only that one) is silenced while the module loads.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type * as Sqlite from 'node:sqlite';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { CodecallError } from '../errors.js';
import { checkSequence, checkUsage, closedError, type UsageHistoryStore } from './history-store.js';
import { DEFAULT_MAX_RECORDED_CALLS, transitionsOf, type ToolSearchState } from './tool-graph.js';
import { DEFAULT_MAX_SERIALIZED_USES, type ToolUsage } from './tool-search.js';

/** Time a writer waits for another process's transaction on the same file. */
export const DEFAULT_HISTORY_BUSY_TIMEOUT_MS = 5_000;
/** Schema version written by this code. */
const SCHEMA_VERSION = 1;

/** Options of {@link SqliteHistoryStore.open}. */
export interface SqliteHistoryStoreOptions {
  /** The database file (created with its folder when missing), or `:memory:`. */
  path: string;
  /**
   * Time to wait for another writer.
   * @defaultValue {@link DEFAULT_HISTORY_BUSY_TIMEOUT_MS}
   */
  busyTimeoutMs?: number;
}

type SqliteModule = typeof Sqlite;

let sqliteModule: Promise<SqliteModule> | undefined;

/** Loads `node:sqlite`, silencing only its own ExperimentalWarning. */
export function loadSqlite(): Promise<SqliteModule> {
  sqliteModule ??= (async () => {
    const original = process.emitWarning;
    process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]): void {
      const message = typeof warning === 'string' ? warning : warning.message;
      const kind = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
      const name = typeof warning === 'string' ? kind : warning.name;
      if ((kind === 'ExperimentalWarning' || name === 'ExperimentalWarning') && /sqlite/i.test(message))
        return;
      (original as (...args: unknown[]) => void).call(process, warning, ...rest);
    } as typeof process.emitWarning;
    try {
      return await import('node:sqlite');
    } catch (error) {
      sqliteModule = undefined;
      throw new CodecallError(
        'HISTORY_STORE_FAILED',
        `The usage history store needs node:sqlite, which Node ${process.version} does not provide. ` +
          'Use Node 22.13 or newer (22.5–22.12: run node with --experimental-sqlite), or pass another UsageHistoryStore.',
        { cause: error },
      );
    } finally {
      process.emitWarning = original;
    }
  })();
  return sqliteModule;
}

function failed(path: string, action: string, error: unknown): CodecallError {
  const reason = (error as Error)?.message ?? String(error);
  const hint = /not a database|malformed|file is encrypted/i.test(reason)
    ? ` The file is not a codecall history database: move it away, or point history.path elsewhere.`
    : '';
  return new CodecallError(
    'HISTORY_STORE_FAILED',
    `Usage history store ${path}: could not ${action}: ${reason}.${hint}`,
    {
      details: { path },
      cause: error,
    },
  );
}

/** The newest recorded uses, oldest first; rows that are not `[query, string[]]` are skipped. */
function readUsages(db: DatabaseSync): Array<[string, string[]]> {
  const rows = db
    .prepare(
      'SELECT query, tools FROM (SELECT id, query, tools FROM usages ORDER BY id DESC LIMIT ?) ORDER BY id',
    )
    .all(DEFAULT_MAX_SERIALIZED_USES) as Array<{ query: string; tools: string }>;
  const out: Array<[string, string[]]> = [];
  for (const row of rows) {
    try {
      const tools = JSON.parse(row.tools) as unknown;
      if (Array.isArray(tools) && tools.every((t) => typeof t === 'string')) out.push([row.query, tools]);
    } catch {
      // A damaged row is skipped: feedback is a ranking hint, never worth failing a load over.
    }
  }
  return out;
}

/**
 * A {@link UsageHistoryStore} in one SQLite file.
 *
 * @example
 * ```ts
 * await using store = await SqliteHistoryStore.open({ path: '.codecall/history.sqlite' });
 * await store.append(['get_team_members', 'get_expenses']);
 * const state = await store.load(); // { version: 1, sequences: 1, transitions: [[…, …, 1]] }
 * ```
 */
export class SqliteHistoryStore implements UsageHistoryStore {
  readonly path: string;
  #db: DatabaseSync | undefined;
  readonly #insertRun: StatementSync;
  readonly #bump: StatementSync;
  readonly #countRun: StatementSync;

  private constructor(path: string, db: DatabaseSync) {
    this.path = path;
    this.#db = db;
    this.#insertRun = db.prepare('INSERT INTO runs (recorded_at, tools) VALUES (?, ?)');
    this.#bump = db.prepare(
      'INSERT INTO transitions (from_tool, to_tool, count) VALUES (?, ?, 1) ' +
        'ON CONFLICT (from_tool, to_tool) DO UPDATE SET count = count + 1',
    );
    this.#countRun = db.prepare("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'sequences'");
  }

  /** Opens (creating when missing) the store at `options.path`. */
  static async open(options: SqliteHistoryStoreOptions): Promise<SqliteHistoryStore> {
    const path = options?.path;
    if (typeof path !== 'string' || path === '') {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        'SqliteHistoryStore.open needs { path } (a file path or ":memory:").',
        {
          details: { field: 'path' },
        },
      );
    }
    const { DatabaseSync } = await loadSqlite();
    let db: DatabaseSync | undefined;
    try {
      if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
      db = new DatabaseSync(path, { timeout: options.busyTimeoutMs ?? DEFAULT_HISTORY_BUSY_TIMEOUT_MS });
      db.exec('PRAGMA journal_mode = WAL');
      db.exec('PRAGMA synchronous = FULL');
      db.exec('BEGIN IMMEDIATE');
      try {
        db.exec(`
          CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
          CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY, recorded_at INTEGER NOT NULL, tools TEXT NOT NULL);
          CREATE TABLE IF NOT EXISTS transitions (
            from_tool TEXT NOT NULL, to_tool TEXT NOT NULL, count INTEGER NOT NULL,
            PRIMARY KEY (from_tool, to_tool)
          ) WITHOUT ROWID;
          CREATE TABLE IF NOT EXISTS usages (id INTEGER PRIMARY KEY, recorded_at INTEGER NOT NULL, query TEXT NOT NULL, tools TEXT NOT NULL);
          INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', '${SCHEMA_VERSION}');
          INSERT OR IGNORE INTO meta (key, value) VALUES ('sequences', '0');
        `);
        const row = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as {
          value: string;
        };
        if (Number(row.value) > SCHEMA_VERSION) {
          throw new CodecallError(
            'HISTORY_STORE_FAILED',
            `Usage history store ${path} was written by a newer codecall (schema ${row.value}); upgrade codecall or use another history.path.`,
            { details: { path } },
          );
        }
        db.exec('COMMIT');
      } catch (error) {
        if (db.isTransaction) db.exec('ROLLBACK');
        throw error;
      }
      return new SqliteHistoryStore(path, db);
    } catch (error) {
      db?.close();
      if (error instanceof CodecallError) throw error;
      throw failed(path, 'open it', error);
    }
  }

  #open(): DatabaseSync {
    if (!this.#db) throw closedError();
    return this.#db;
  }

  load(): Promise<ToolSearchState> {
    try {
      const db = this.#open();
      const sequences = db.prepare("SELECT value FROM meta WHERE key = 'sequences'").get() as {
        value: string;
      };
      const rows = db.prepare('SELECT from_tool, to_tool, count FROM transitions').all() as Array<{
        from_tool: string;
        to_tool: string;
        count: number;
      }>;
      const state: ToolSearchState = {
        version: 1,
        sequences: Number(sequences.value),
        transitions: rows.map((r) => [r.from_tool, r.to_tool, Number(r.count)]),
      };
      const usages = readUsages(db);
      if (usages.length > 0) state.usages = usages;
      return Promise.resolve(state);
    } catch (error) {
      return Promise.reject(error instanceof CodecallError ? error : failed(this.path, 'read it', error));
    }
  }

  append(sequence: readonly string[]): Promise<void> {
    try {
      const db = this.#open();
      const calls = checkSequence(sequence).slice(0, DEFAULT_MAX_RECORDED_CALLS);
      db.exec('BEGIN IMMEDIATE');
      try {
        this.#insertRun.run(Date.now(), JSON.stringify(calls));
        for (const [from, to] of transitionsOf(calls)) this.#bump.run(from, to);
        this.#countRun.run();
        db.exec('COMMIT');
      } catch (error) {
        if (db.isTransaction) db.exec('ROLLBACK');
        throw error;
      }
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(
        error instanceof CodecallError ? error : failed(this.path, 'record a run', error),
      );
    }
  }

  /** Records one use of search (query feedback); keeps the newest {@link DEFAULT_MAX_SERIALIZED_USES}. */
  appendUsage(usage: ToolUsage): Promise<void> {
    try {
      const db = this.#open();
      const { query, tools } = checkUsage(usage);
      db.prepare('INSERT INTO usages (recorded_at, query, tools) VALUES (?, ?, ?)').run(
        Date.now(),
        query,
        JSON.stringify(tools),
      );
      db.prepare('DELETE FROM usages WHERE id <= (SELECT MAX(id) FROM usages) - ?').run(
        DEFAULT_MAX_SERIALIZED_USES,
      );
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(
        error instanceof CodecallError ? error : failed(this.path, 'record a query', error),
      );
    }
  }

  close(): Promise<void> {
    const db = this.#db;
    this.#db = undefined;
    try {
      db?.close();
    } catch {
      // Closing twice or after a failed open is not an error.
    }
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
