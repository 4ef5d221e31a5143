/**
 * @module
 * The default usage history store: one SQLite file through Node's built-in `node:sqlite`
 * (no native dependency to build, and SQLite's transactions give the atomicity the history
 * needs). Each run is written atomically: it appends the raw sequence with its transitions, bumps
 * the aggregated transition counts and prunes the oldest runs past `maxRuns` (subtracting their
 * transitions, so the counts always equal the retained runs'). The database runs in WAL mode with
 * `synchronous=FULL`, and a write's promise resolves only once its transaction has committed, so
 * `kill -9` (or a power cut) loses no write whose promise resolved, and the next open rolls a
 * partial transaction back.
 *
 * Writes run on a `worker_threads` writer with its own connection, in order: a foreign lock on
 * the file (another process's transaction, waited on for up to
 * {@link DEFAULT_HISTORY_BUSY_TIMEOUT_MS}) and the fsync of each commit never block the host's
 * event loop. Group commit: the writes queued while a commit is syncing share the next
 * `BEGIN IMMEDIATE … COMMIT` (up to {@link DEFAULT_HISTORY_MAX_BATCH_WRITES}), each in its own
 * savepoint, so one failed write is rolled back alone. At most `maxQueuedRuns` writes wait;
 * beyond that a write rejects at once.
 * Opening and reads stay on the calling thread. A one-shot process may ask
 * for `writer: 'inline'`: writes on the calling thread, with no thread to start.
 *
 * `node:sqlite` is loaded only when a store is opened; its one-time ExperimentalWarning (and
 * only that one) is silenced while the module loads.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import {
  DEFAULT_APPROVALS_MAX_KEPT,
  DEFAULT_HISTORY_MAX_BATCH_WRITES,
  DEFAULT_HISTORY_MAX_QUEUED_RUNS,
  DEFAULT_HISTORY_MAX_RUNS,
  DEFAULT_RESULT_SHAPE_MAX_TOOLS,
  DEFAULT_STORE_MAX_USAGES,
} from '../config/defaults.js';
import type * as Sqlite from 'node:sqlite';
import type { DatabaseSync } from 'node:sqlite';
import { CodecallError, isCodecallError } from '../errors.js';
import { DEFAULT_MAX_RECORDED_CALLS, transitionsOf } from '../util/call-transitions.js';
import {
  checkApprovalEntry,
  checkApprovalsLimit,
  checkSequence,
  checkUsage,
  checkUsagesLimit,
  closedError,
  namespaceLimitError,
  parseUsage,
  storedBytes,
} from './checks.js';
import type { UsageHistoryStore } from './contracts.js';
import { retryWhileBusy } from './sqlite-busy.js';
import { checkShapeArgs, mergeWithRetry, parseShapeRow, type ShapeWrite } from './shape-merge.js';
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

/** Time a writer waits for another process's transaction on the same file. */
export const DEFAULT_HISTORY_BUSY_TIMEOUT_MS = 5_000;
/**
 * Schema version written by this code (2: runs carry their transitions, for pruning; 3: a
 * `usages` table of search queries and the tools used after them, for query feedback; 4: an
 * `approvals` table, the audit trail of approval decisions; 5: approvals carry the script line
 * of the call, and a `store_values` table of the values scripts keep with `store.set`).
 */
const SCHEMA_VERSION = 6;
/** Learned result shapes, one row per tool; `version` is the compare-and-set of a merge (schema 6). */
const SHAPES_TABLE_SQL =
  'CREATE TABLE IF NOT EXISTS result_shapes (tool TEXT PRIMARY KEY, shape TEXT NOT NULL, version INTEGER NOT NULL) WITHOUT ROWID;';

/** Options of {@link SqliteHistoryStore.open}. */
export interface SqliteHistoryStoreOptions {
  /**
   * The database file (created with its folder when missing). Not `:memory:`: the writer thread
   * needs a file to share; use `MemoryHistoryStore` for history kept in memory.
   */
  path: string;
  /**
   * A store whose history a new `path` starts from (copied once, when `path` does not exist yet):
   * the shared store of the folder, from before history was kept per configuration.
   */
  migrateFrom?: string | undefined;
  /**
   * Time to wait for another writer.
   * @defaultValue {@link DEFAULT_HISTORY_BUSY_TIMEOUT_MS}
   */
  busyTimeoutMs?: number;
  /**
   * Runs kept; older ones are pruned and their transitions subtracted from the counts.
   * @defaultValue {@link DEFAULT_HISTORY_MAX_RUNS}
   */
  maxRuns?: number;
  /**
   * Uses of search kept (query feedback); older ones are pruned.
   * @defaultValue {@link DEFAULT_STORE_MAX_USAGES}
   */
  maxUsages?: number;
  /**
   * Appends that may wait for the writer; further ones reject with `HISTORY_STORE_FAILED`.
   * @defaultValue {@link DEFAULT_HISTORY_MAX_QUEUED_RUNS}
   */
  maxQueuedRuns?: number;
  /**
   * Where writes run. `'thread'`: on a writer thread with its own connection, so a foreign lock
   * and the fsync of each commit never block the event loop. `'inline'`: on the calling thread,
   * on the connection `load` reads with, the writes of one turn of the event loop committed
   * together at the next (setImmediate), in order: no thread to start, for a one-shot process that records a run or two and exits
   * (`codecall exec`); a foreign lock holds the event loop for up to `busyTimeoutMs`.
   * @defaultValue 'thread'
   */
  writer?: 'thread' | 'inline';
}

/**
 * Every write to the file, as plain JavaScript (no import of this package's files, so it works
 * the same from dist/, from a bundle and under a TypeScript test runner): `createWriter(db,
 * limits)` prepares the statements on `db` and returns `writeBatch(messages)`, which commits the
 * messages in one transaction (group commit: one fsync for the batch), each in its own savepoint,
 * so one message that fails or is refused is rolled back alone and answered with its `error` or
 * `refused`. When the transaction itself fails (a foreign lock past the busy timeout, a full
 * disk), nothing of the batch is written and `writeBatch` throws. Evaluated in the writer thread
 * ({@link WRITER_SOURCE}), or on the calling thread for `writer: 'inline'`.
 */
const WRITER_LOGIC = `
function createWriter(db, limits) {
const insertRun = db.prepare('INSERT INTO runs (recorded_at, tools, transitions) VALUES (?, ?, ?)');
const bump = db.prepare(
  'INSERT INTO transitions (from_tool, to_tool, count) VALUES (?, ?, 1) ' +
    'ON CONFLICT (from_tool, to_tool) DO UPDATE SET count = count + 1',
);
const drop = db.prepare('UPDATE transitions SET count = count - 1 WHERE from_tool = ? AND to_tool = ?');
const dropEmpty = db.prepare('DELETE FROM transitions WHERE count <= 0');
const addSequences = db.prepare("UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key = 'sequences'");
const oldest = db.prepare('SELECT id, transitions FROM runs WHERE id <= ? ORDER BY id');
const deleteRun = db.prepare('DELETE FROM runs WHERE id = ?');
function append(message) {
  const id = Number(insertRun.run(Date.now(), message.tools, JSON.stringify(message.transitions)).lastInsertRowid);
  for (const [from, to] of message.transitions) bump.run(from, to);
  let delta = 1;
  for (const row of oldest.all(id - limits.maxRuns)) {
    for (const [from, to] of JSON.parse(row.transitions ?? '[]')) drop.run(from, to);
    deleteRun.run(row.id);
    delta -= 1;
  }
  if (delta !== 1) dropEmpty.run();
  addSequences.run(delta);
}
const insertUsage = db.prepare('INSERT INTO usages (recorded_at, query, tools) VALUES (?, ?, ?)');
const pruneUsages = db.prepare('DELETE FROM usages WHERE id <= (SELECT MAX(id) FROM usages) - ?');
function appendUsage(message) {
  insertUsage.run(Date.now(), message.query, message.tools);
  pruneUsages.run(limits.maxUsages);
}
const insertApproval = db.prepare(
  'INSERT INTO approvals (decided_at, tool, args_sha256, outcome, decided_by, reason, caller, run_id, call_index, line) ' +
    'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
);
const pruneApprovals = db.prepare('DELETE FROM approvals WHERE id <= (SELECT MAX(id) FROM approvals) - ?');
function appendApproval(message) {
  const e = message.entry;
  insertApproval.run(e.at, e.tool, e.argsSha256, e.outcome, e.decidedBy, e.reason ?? null, e.caller, e.runId ?? null, e.callIndex ?? null, e.line ?? null);
  pruneApprovals.run(limits.maxApprovals);
}
const namespaceBytes = db.prepare('SELECT COALESCE(SUM(bytes), 0) AS used FROM store_values WHERE namespace = ?');
const valueBytes = db.prepare('SELECT bytes FROM store_values WHERE namespace = ? AND key = ?');
const putValue = db.prepare(
  'INSERT INTO store_values (namespace, key, value, bytes, updated_at) VALUES (?, ?, ?, ?, ?) ' +
    'ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, bytes = excluded.bytes, updated_at = excluded.updated_at',
);
const deleteValue = db.prepare('DELETE FROM store_values WHERE namespace = ? AND key = ?');
/** Keeps one value; answers { used, adding } instead when the namespace would go over its limit. */
function setValue(message) {
  if (message.value === undefined) {
    deleteValue.run(message.namespace, message.key);
    return undefined;
  }
  const used = Number(namespaceBytes.get(message.namespace).used);
  const old = valueBytes.get(message.namespace, message.key);
  const adding = message.bytes - (old === undefined ? 0 : Number(old.bytes));
  if (adding > 0 && used + adding > message.maxNamespaceBytes) return { used, adding };
  putValue.run(message.namespace, message.key, message.value, message.bytes, Date.now());
  return undefined;
}
const countShapes = db.prepare('SELECT COUNT(*) AS n FROM result_shapes');
const insertShape = db.prepare(
  'INSERT INTO result_shapes (tool, shape, version) VALUES (?, ?, 1) ON CONFLICT (tool) DO NOTHING',
);
const updateShape = db.prepare('UPDATE result_shapes SET shape = ?, version = version + 1 WHERE tool = ? AND version = ?');
/** A compare-and-set of one tool's shape: answers { shape: 'conflict' | 'full' } when not written. */
function putShape(message) {
  if (message.version === 0) {
    if (Number(countShapes.get().n) >= limits.maxShapeTools) return { shape: 'full' };
    return insertShape.run(message.tool, message.shape).changes === 1 ? undefined : { shape: 'conflict' };
  }
  return updateShape.run(message.shape, message.tool, message.version).changes === 1 ? undefined : { shape: 'conflict' };
}
/** Applies one message; returns why a refused set-value or shape was not written, else undefined. */
function writeOne(message) {
  if (message.type === 'usage') appendUsage(message);
  else if (message.type === 'shape') return putShape(message);
  else if (message.type === 'approval') appendApproval(message);
  else if (message.type === 'set-value') return setValue(message);
  else append(message);
  return undefined;
}
/** Commits the messages in one transaction; answers each with { refused } or { error }. */
return function writeBatch(messages) {
  const answers = [];
  db.exec('BEGIN IMMEDIATE');
  try {
    for (const message of messages) {
      db.exec('SAVEPOINT one_write');
      try {
        const refused = writeOne(message);
        if (refused !== undefined) db.exec('ROLLBACK TO one_write');
        db.exec('RELEASE one_write');
        answers.push(refused === undefined ? {} : { refused });
      } catch (error) {
        db.exec('ROLLBACK TO one_write');
        db.exec('RELEASE one_write');
        answers.push({ error: String((error && error.message) || error) });
      }
    }
    db.exec('COMMIT');
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
  return answers;
};
}
`;

/**
 * The writer thread: its own connection to the file. Messages are queued as they arrive and
 * written one batch per turn of its event loop, so the writes that arrived while the previous
 * batch was committing share the next transaction; each batch is answered with one reply, in
 * order. Plain JavaScript evaluated in the worker (no import of this package's files, so it works
 * the same from dist/, from a bundle and under a TypeScript test runner).
 */
const WRITER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const originalEmitWarning = process.emitWarning;
process.emitWarning = function (warning, ...rest) {
  const message = typeof warning === 'string' ? warning : warning && warning.message;
  if (/sqlite/i.test(String(message))) return;
  return originalEmitWarning.call(process, warning, ...rest);
};
const { DatabaseSync } = require('node:sqlite');
process.emitWarning = originalEmitWarning;
const db = new DatabaseSync(workerData.path, { timeout: workerData.busyTimeoutMs });
db.exec('PRAGMA synchronous = FULL');
${WRITER_LOGIC}
const writeBatch = createWriter(db, workerData);
const queue = [];
let scheduled = false;
function drain() {
  scheduled = false;
  while (queue.length > 0) {
    const batch = queue.splice(0, workerData.maxBatchWrites);
    let answers;
    try {
      answers = writeBatch(batch);
    } catch (error) {
      const failed = { error: String((error && error.message) || error) };
      answers = batch.map(() => failed);
    }
    parentPort.postMessage({ type: 'done', ids: batch.map((message) => message.id), answers });
  }
}
parentPort.on('message', (message) => {
  if (message.type === 'close') {
    drain();
    db.close();
    parentPort.postMessage({ type: 'closed' });
    return;
  }
  queue.push(message);
  if (!scheduled) {
    scheduled = true;
    setImmediate(drain);
  }
});
`;

/** What {@link WRITER_LOGIC}'s writer is given: the bounds of what the file keeps. */
interface WriterLimits {
  maxRuns: number;
  maxUsages: number;
  maxApprovals: number;
  /** Tools whose learned shapes are kept. */
  maxShapeTools: number;
  /** Messages one transaction commits at most. */
  maxBatchWrites: number;
}

/** How {@link WRITER_LOGIC} answers one message of a batch. */
interface WriteAnswer {
  /** Why the message was not written (it was rolled back alone). */
  error?: string;
  /** A `set-value` the namespace limit refused, or a shape's compare-and-set that lost. */
  refused?: Refusal;
}

/** Why the writer did not write a message: a namespace over its limit, or a shape's lost compare-and-set. */
type Refusal = { used: number; adding: number } | { shape: 'conflict' | 'full' };

/** The rejection of a shape write that was not made (a lost compare-and-set, or no room for a new tool). */
class ShapeNotWritten extends Error {
  readonly outcome: 'conflict' | 'full';
  constructor(outcome: 'conflict' | 'full') {
    super(`shape ${outcome}`);
    this.outcome = outcome;
  }
}

/** {@link WRITER_LOGIC}'s `writeBatch`: commits `messages` in one transaction; throws when it fails. */
type WriteBatch = (messages: Record<string, unknown>[]) => WriteAnswer[];

/** {@link WRITER_LOGIC} instantiated on the calling thread, for a store opened with `writer: 'inline'`. */
function inlineWriter(db: DatabaseSync, limits: WriterLimits): WriteBatch {
  // The same text the writer thread evaluates: one definition of every write.
  const createWriter = new Function(`${WRITER_LOGIC}\nreturn createWriter;`)() as (
    db: DatabaseSync,
    limits: WriterLimits,
  ) => WriteBatch;
  return createWriter(db, limits);
}

/** The writer thread's answer to one batch: the messages' ids and their answers, in order. */
interface WriterReply {
  type: 'done' | 'closed';
  ids?: number[];
  answers?: WriteAnswer[];
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
        { details: { backend: 'sqlite' }, cause: error },
      );
    } finally {
      process.emitWarning = original;
    }
  })();
  return sqliteModule;
}

/** SQLite `application_id` that marks a codecall usage history database ("cchs"). */
const HISTORY_APPLICATION_ID = 0x63_63_68_73;
/** Tables of a codecall history database (one from before the application_id marker has only these). */
const HISTORY_TABLES: ReadonlySet<string> = new Set([
  'meta',
  'runs',
  'transitions',
  'usages',
  'approvals',
  'store_values',
  'result_shapes',
]);

/**
 * Throws unless `db` is empty or a codecall history database (its `application_id`, or, for
 * stores made before the marker, only codecall's tables with a `schema_version`).
 */
function assertCodecallDatabase(db: DatabaseSync, path: string): void {
  if (path === ':memory:') return;
  const { application_id: id } = db.prepare('PRAGMA application_id').get() as { application_id: number };
  if (id === HISTORY_APPLICATION_ID) return;
  const names = (
    db.prepare("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name").all() as {
      name: string;
    }[]
  ).map((row) => row.name);
  const ours =
    id === 0 &&
    names.every((name) => HISTORY_TABLES.has(name)) &&
    (!names.includes('meta') ||
      db.prepare("SELECT 1 AS found FROM meta WHERE key = 'schema_version'").get() !== undefined);
  if (ours) return;
  const what =
    id !== 0
      ? `its application_id is ${id}`
      : `it holds ${names.slice(0, 5).join(', ')}${names.length > 5 ? ', …' : ''}`;
  throw new CodecallError(
    'HISTORY_STORE_FAILED',
    `${path} is not a codecall usage history database (${what}); codecall never writes into another ` +
      "application's database. Fix: point history.path (or CODECALL_HISTORY_PATH) at a new file, e.g. .codecall/history.sqlite.",
    { details: { backend: 'sqlite', path } },
  );
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
      details: { backend: 'sqlite', path },
      cause: error,
    },
  );
}

/**
 * The newest `limit` recorded uses, newest first. A damaged row is skipped: feedback is a ranking
 * hint, never worth failing a load over.
 */
function readUsages(db: DatabaseSync, limit: number): QueryUsage[] {
  const rows = db.prepare('SELECT query, tools FROM usages ORDER BY id DESC LIMIT ?').all(limit) as Array<{
    query: string;
    tools: string;
  }>;
  const out: QueryUsage[] = [];
  for (const row of rows) {
    const usage = parseUsage(row.query, row.tools);
    if (usage) out.push(usage);
  }
  return out;
}

/**
 * Copies the codecall store at `from` into the new file `to` (`VACUUM INTO`: a consistent
 * snapshot, WAL included, while other processes may still use `from`).
 */
function copyHistory(
  DatabaseSync: typeof Sqlite.DatabaseSync,
  from: string,
  to: string,
  busyTimeoutMs: number,
): void {
  const source = new DatabaseSync(from, { readOnly: true, timeout: busyTimeoutMs });
  try {
    assertCodecallDatabase(source, from);
    source.prepare('VACUUM INTO ?').run(to);
  } finally {
    source.close();
  }
}

/**
 * Opens the file and brings it to this schema (creating it when new); closes it again when any
 * step fails, so {@link retryWhileBusy} can run it once more.
 */
function prepareDatabase(
  DatabaseSync: typeof Sqlite.DatabaseSync,
  path: string,
  busyTimeoutMs: number,
): DatabaseSync {
  const db = new DatabaseSync(path, { timeout: busyTimeoutMs });
  try {
    // Before anything writes (WAL mode converts the file): only ever codecall's own database.
    assertCodecallDatabase(db, path);
    // A store already at this schema opens with reads only: another process's write lock on the
    // file does not hold up opening (WAL readers never wait for writers).
    const current = schemaVersion(db) === SCHEMA_VERSION;
    if (!current) db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = FULL');
    if (!current) {
      db.exec('BEGIN IMMEDIATE');
      db.exec(`
          CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
          CREATE TABLE IF NOT EXISTS runs (
            id INTEGER PRIMARY KEY, recorded_at INTEGER NOT NULL, tools TEXT NOT NULL, transitions TEXT
          );
          CREATE TABLE IF NOT EXISTS transitions (
            from_tool TEXT NOT NULL, to_tool TEXT NOT NULL, count INTEGER NOT NULL,
            PRIMARY KEY (from_tool, to_tool)
          ) WITHOUT ROWID;
          CREATE TABLE IF NOT EXISTS usages (
            id INTEGER PRIMARY KEY, recorded_at INTEGER NOT NULL, query TEXT NOT NULL, tools TEXT NOT NULL
          );
          CREATE TABLE IF NOT EXISTS approvals (
            id INTEGER PRIMARY KEY, decided_at INTEGER NOT NULL, tool TEXT NOT NULL, args_sha256 TEXT NOT NULL,
            outcome TEXT NOT NULL, decided_by TEXT NOT NULL, reason TEXT, caller TEXT NOT NULL,
            run_id TEXT, call_index INTEGER, line INTEGER
          );
          CREATE TABLE IF NOT EXISTS store_values (
            namespace TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, bytes INTEGER NOT NULL,
            updated_at INTEGER NOT NULL, PRIMARY KEY (namespace, key)
          ) WITHOUT ROWID;
          ${SHAPES_TABLE_SQL}
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
          { details: { backend: 'sqlite', path } },
        );
      }
      if (Number(row.value) < SCHEMA_VERSION) migrate(db);
      db.exec('COMMIT');
      db.exec(`PRAGMA application_id = ${HISTORY_APPLICATION_ID}`);
    }
    return db;
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    db.close();
    throw error;
  }
}

/** The schema version in the file, or undefined for a new (or foreign) file. */
function schemaVersion(db: DatabaseSync): number | undefined {
  try {
    const row = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as
      { value: string } | undefined;
    const journal = db.prepare('PRAGMA journal_mode').get() as { journal_mode: string } | undefined;
    return row === undefined || journal?.journal_mode !== 'wal' ? undefined : Number(row.value);
  } catch {
    return undefined;
  }
}

/**
 * Schema 1 → 2: runs get their transitions (computed from their tools), so pruning can subtract
 * them. 4 → 5: approvals get the script line of the call.
 */
function migrate(db: DatabaseSync): void {
  db.exec(SHAPES_TABLE_SQL);
  const approvalColumns = db.prepare('PRAGMA table_info(approvals)').all() as Array<{ name: string }>;
  if (!approvalColumns.some((c) => c.name === 'line'))
    db.exec('ALTER TABLE approvals ADD COLUMN line INTEGER');
  const columns = db.prepare('PRAGMA table_info(runs)').all() as Array<{ name: string }>;
  if (!columns.some((c) => c.name === 'transitions')) db.exec('ALTER TABLE runs ADD COLUMN transitions TEXT');
  const update = db.prepare('UPDATE runs SET transitions = ? WHERE id = ?');
  for (const row of db.prepare('SELECT id, tools FROM runs WHERE transitions IS NULL').iterate() as Iterable<{
    id: number;
    tools: string;
  }>) {
    let calls: unknown;
    try {
      calls = JSON.parse(row.tools);
    } catch {
      calls = [];
    }
    update.run(JSON.stringify(Array.isArray(calls) ? transitionsOf(calls as string[]) : []), row.id);
  }
  db.exec(`UPDATE meta SET value = '${SCHEMA_VERSION}' WHERE key = 'schema_version'`);
}

/**
 * A {@link UsageHistoryStore} in one SQLite file.
 *
 * @example
 * ```ts
 * await using store = await SqliteHistoryStore.open({ path: '.codecall/history.sqlite' });
 * await store.appendSequence(['get_team_members', 'get_expenses']);
 * const counts = await store.loadCounts(); // { sequences: 1, transitions: [[…, …, 1]] }
 * ```
 */
export class SqliteHistoryStore implements UsageHistoryStore {
  readonly path: string;
  #db: DatabaseSync | undefined;
  /** The writer thread (`writer: 'thread'`), or the calling thread's writer (`'inline'`). */
  readonly #writer: Worker | WriteBatch;
  readonly #maxQueuedRuns: number;
  /** The messages an `'inline'` writer commits at its next turn. */
  #inlineQueue: Record<string, unknown>[] = [];
  /** Every write not answered yet, by message id. */
  readonly #pending = new Map<
    number,
    {
      resolve: () => void;
      reject: (error: Error) => void;
      /** The error of a write the writer refused (a store namespace over its limit). */
      refuse?: (refused: Refusal) => Error;
    }
  >();
  /** The appends not yet settled, awaited by close. */
  readonly #queued = new Set<Promise<void>>();
  #nextId = 0;
  #writerFailure: Error | undefined;
  #closing: Promise<void> | undefined;

  private constructor(path: string, db: DatabaseSync, writer: Worker | WriteBatch, maxQueuedRuns: number) {
    this.path = path;
    this.#db = db;
    this.#writer = writer;
    this.#maxQueuedRuns = maxQueuedRuns;
    if (typeof writer === 'function') return;
    writer.unref();
    writer.on('message', (reply: WriterReply) => {
      if (reply.type !== 'done' || reply.ids === undefined) return;
      reply.ids.forEach((id, index) => this.#answer(id, reply.answers?.[index] ?? {}));
      if (this.#pending.size === 0) writer.unref();
    });
    const fail = (error: Error): void => {
      this.#writerFailure = failed(this.path, 'record runs (the writer thread stopped)', error);
      for (const waiter of this.#pending.values()) waiter.reject(this.#writerFailure);
      this.#pending.clear();
    };
    writer.on('error', fail);
    writer.on('exit', (code) => {
      if (this.#pending.size > 0) fail(new Error(`exit code ${code}`));
    });
  }

  /** Settles the write `id` with the writer's answer. */
  #answer(id: number, answer: WriteAnswer): void {
    const waiter = this.#pending.get(id);
    this.#pending.delete(id);
    if (answer.refused !== undefined && waiter?.refuse) waiter.reject(waiter.refuse(answer.refused));
    else if (answer.error === undefined) waiter?.resolve();
    else waiter?.reject(failed(this.path, 'record a run', new Error(answer.error)));
  }

  /** Opens (creating when missing) the store at `options.path`. */
  static async open(options: SqliteHistoryStoreOptions): Promise<SqliteHistoryStore> {
    const path = options?.path;
    if (typeof path !== 'string' || path === '' || path === ':memory:') {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        'SqliteHistoryStore.open needs { path }, a file path (for history kept in memory, use MemoryHistoryStore).',
        {
          details: { field: 'path' },
        },
      );
    }
    const { DatabaseSync } = await loadSqlite();
    const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_HISTORY_BUSY_TIMEOUT_MS;
    let db: DatabaseSync | undefined;
    try {
      mkdirSync(dirname(path), { recursive: true });
      if (options.migrateFrom !== undefined && !existsSync(path) && existsSync(options.migrateFrom)) {
        copyHistory(DatabaseSync, options.migrateFrom, path, busyTimeoutMs);
      }
      // Another process may be creating or upgrading the same file right now (two serve nodes
      // started together): a lock SQLite will not wait for retries the whole preparation.
      db = await retryWhileBusy(() => prepareDatabase(DatabaseSync, path, busyTimeoutMs), busyTimeoutMs);
      const maxRuns = options.maxRuns ?? DEFAULT_HISTORY_MAX_RUNS;
      const maxUsages = options.maxUsages ?? DEFAULT_STORE_MAX_USAGES;
      for (const [field, value] of Object.entries({ maxRuns, maxUsages }))
        if (!Number.isSafeInteger(value) || value < 1)
          throw new CodecallError(
            'INVALID_ARGUMENT',
            `history ${field} must be a positive integer; got ${value}.`,
            { details: { field } },
          );
      const limits: WriterLimits = {
        maxRuns,
        maxUsages,
        maxApprovals: DEFAULT_APPROVALS_MAX_KEPT,
        maxShapeTools: DEFAULT_RESULT_SHAPE_MAX_TOOLS,
        maxBatchWrites: DEFAULT_HISTORY_MAX_BATCH_WRITES,
      };
      const writer =
        options.writer === 'inline'
          ? inlineWriter(db, limits)
          : new Worker(WRITER_SOURCE, {
              eval: true,
              workerData: {
                path,
                busyTimeoutMs: options.busyTimeoutMs ?? DEFAULT_HISTORY_BUSY_TIMEOUT_MS,
                ...limits,
              },
            });
      return new SqliteHistoryStore(
        path,
        db,
        writer,
        options.maxQueuedRuns ?? DEFAULT_HISTORY_MAX_QUEUED_RUNS,
      );
    } catch (error) {
      db?.close();
      if (isCodecallError(error)) throw error;
      throw failed(path, 'open it', error);
    }
  }

  #open(): DatabaseSync {
    if (!this.#db) throw closedError();
    return this.#db;
  }

  /** The aggregated counts of the retained runs (committed, also by other processes). */
  loadCounts(): Promise<GraphCounts> {
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
      return Promise.resolve({
        sequences: Number(sequences.value),
        transitions: rows.map((r) => [r.from_tool, r.to_tool, Number(r.count)]),
      });
    } catch (error) {
      return Promise.reject(isCodecallError(error) ? error : failed(this.path, 'read it', error));
    }
  }

  /** The newest uses of search (committed, also by other processes), newest first. */
  listUsages(options: ListUsagesOptions = {}): Promise<QueryUsage[]> {
    try {
      return Promise.resolve(readUsages(this.#open(), checkUsagesLimit(options.limit)));
    } catch (error) {
      return Promise.reject(isCodecallError(error) ? error : failed(this.path, 'read queries', error));
    }
  }

  /**
   * Queues one run for the writer thread; resolves once it is committed. Rejects with
   * `HISTORY_STORE_FAILED` when the write fails (e.g. another process held the file locked
   * longer than the busy timeout) or when `maxQueuedRuns` appends already wait.
   */
  appendSequence(sequence: readonly string[]): Promise<void> {
    try {
      this.#checkWritable();
      const calls = checkSequence(sequence).slice(0, DEFAULT_MAX_RECORDED_CALLS);
      return this.#enqueue({ tools: JSON.stringify(calls), transitions: transitionsOf(calls) });
    } catch (error) {
      return Promise.reject(isCodecallError(error) ? error : failed(this.path, 'record a run', error));
    }
  }

  /** Throws when the store is closed, its writer failed, or `maxQueuedRuns` writes already wait. */
  #checkWritable(): void {
    this.#open();
    if (this.#closing) throw closedError();
    if (this.#writerFailure) throw this.#writerFailure;
    if (this.#pending.size >= this.#maxQueuedRuns) {
      throw new CodecallError(
        'HISTORY_STORE_FAILED',
        `Usage history store ${this.path}: ${this.#pending.size} runs are already waiting to be written (maxQueuedRuns); this run was not recorded.`,
        { details: { backend: 'sqlite', path: this.path } },
      );
    }
  }

  /**
   * Queues one use of search (query feedback) for the writer thread, which keeps the newest
   * {@link DEFAULT_STORE_MAX_USAGES}. Fails like {@link appendSequence}.
   */
  appendUsage(usage: QueryUsage): Promise<void> {
    try {
      this.#checkWritable();
      const { query, tools } = checkUsage(usage);
      return this.#enqueue({ type: 'usage', query, tools: JSON.stringify(tools) });
    } catch (error) {
      return Promise.reject(isCodecallError(error) ? error : failed(this.path, 'record a query', error));
    }
  }

  /**
   * Queues one approval decision for the writer thread, which keeps the newest
   * {@link DEFAULT_APPROVALS_MAX_KEPT}. Fails like {@link appendSequence}.
   */
  appendApproval(entry: ApprovalAuditEntry): Promise<void> {
    try {
      this.#checkWritable();
      const checked = checkApprovalEntry(entry);
      return this.#enqueue({ type: 'approval', entry: { ...checked } });
    } catch (error) {
      return Promise.reject(isCodecallError(error) ? error : failed(this.path, 'record an approval', error));
    }
  }

  /** The newest approval decisions, newest first (committed ones, also those of other processes). */
  listApprovals(options: ListApprovalsOptions = {}): Promise<ApprovalAuditEntry[]> {
    try {
      const limit = checkApprovalsLimit(options.limit);
      const rows = this.#open()
        .prepare(
          'SELECT decided_at, tool, args_sha256, outcome, decided_by, reason, caller, run_id, call_index, line ' +
            'FROM approvals ORDER BY id DESC LIMIT ?',
        )
        .all(limit) as Array<{
        decided_at: number;
        tool: string;
        args_sha256: string;
        outcome: string;
        decided_by: string;
        reason: string | null;
        caller: string;
        run_id: string | null;
        call_index: number | null;
        line: number | null;
      }>;
      return Promise.resolve(
        rows.map((row) => ({
          tool: row.tool,
          argsSha256: row.args_sha256,
          outcome: row.outcome,
          decidedBy: row.decided_by,
          ...(row.reason !== null ? { reason: row.reason } : {}),
          caller: row.caller,
          at: Number(row.decided_at),
          ...(row.run_id !== null ? { runId: row.run_id } : {}),
          ...(row.call_index !== null ? { callIndex: Number(row.call_index) } : {}),
          ...(row.line !== null ? { line: Number(row.line) } : {}),
        })),
      );
    } catch (error) {
      return Promise.reject(isCodecallError(error) ? error : failed(this.path, 'read approvals', error));
    }
  }

  /** The JSON of a kept value (committed, also by other processes), or undefined. */
  getValue(namespace: string, key: string): Promise<string | undefined> {
    try {
      const row = this.#open()
        .prepare('SELECT value FROM store_values WHERE namespace = ? AND key = ?')
        .get(namespace, key) as { value: string } | undefined;
      return Promise.resolve(row?.value);
    } catch (error) {
      return Promise.reject(isCodecallError(error) ? error : failed(this.path, 'read a stored value', error));
    }
  }

  /**
   * Queues one value (`json` undefined: its removal) for the writer thread, which checks the
   * namespace's bytes in the same transaction. Rejects with `STORE_LIMIT` when it would go over.
   */
  setValue(
    namespace: string,
    key: string,
    json: string | undefined,
    limits: StoreValueLimits,
  ): Promise<void> {
    try {
      this.#checkWritable();
      const message: Record<string, unknown> = {
        type: 'set-value',
        namespace,
        key,
        maxNamespaceBytes: limits.maxNamespaceBytes,
      };
      if (json !== undefined) {
        message.value = json;
        message.bytes = storedBytes(key, json);
      }
      return this.#enqueue(message, (refused) =>
        'used' in refused
          ? namespaceLimitError(key, refused.used, refused.adding, limits.maxNamespaceBytes)
          : new ShapeNotWritten(refused.shape),
      );
    } catch (error) {
      return Promise.reject(isCodecallError(error) ? error : failed(this.path, 'store a value', error));
    }
  }

  /** The kept learned shapes (committed, also by other processes); a damaged row is skipped. */
  loadShapes(): Promise<LearnedShape[]> {
    try {
      const rows = this.#open().prepare('SELECT tool, shape FROM result_shapes').all() as Array<{
        tool: string;
        shape: string;
      }>;
      return Promise.resolve(rows.flatMap((row) => parseShapeRow(row.tool, row.shape) ?? []));
    } catch (error) {
      return Promise.reject(isCodecallError(error) ? error : failed(this.path, 'read shapes', error));
    }
  }

  /**
   * Merges a learned shape into the tool's kept one: read here, written by the writer thread
   * only when the row's version is unchanged (another process may merge the same tool).
   */
  async mergeShape(tool: string, shape: ResultShape): Promise<void> {
    try {
      this.#checkWritable();
      const clean = checkShapeArgs(tool, shape);
      const read = this.#open().prepare('SELECT shape, version FROM result_shapes WHERE tool = ?');
      await mergeWithRetry(
        'sqlite',
        tool,
        clean,
        () => {
          const row = read.get(tool) as { shape: string; version: number } | undefined;
          return Promise.resolve(
            row === undefined
              ? { json: undefined, version: 0 }
              : { json: row.shape, version: Number(row.version) },
          );
        },
        async (json, version): Promise<ShapeWrite> => {
          try {
            await this.#enqueue({ type: 'shape', tool, shape: json, version }, (refused) =>
              'shape' in refused ? new ShapeNotWritten(refused.shape) : new Error('shape refused'),
            );
            return 'written';
          } catch (error) {
            if (error instanceof ShapeNotWritten) return error.outcome;
            throw error;
          }
        },
      );
    } catch (error) {
      throw isCodecallError(error) ? error : failed(this.path, 'record a shape', error);
    }
  }

  /**
   * Queues one message for the writer; resolves when the transaction that holds it commits.
   * Messages queued while the writer is busy share its next transaction (group commit).
   */
  #enqueue(message: Record<string, unknown>, refuse?: (refused: Refusal) => Error): Promise<void> {
    const writer = this.#writer;
    const id = this.#nextId++;
    const done = new Promise<void>((resolve, reject) =>
      this.#pending.set(id, refuse ? { resolve, reject, refuse } : { resolve, reject }),
    );
    if (typeof writer === 'function') {
      // Inline: the writes queued in this turn of the event loop commit together at the next.
      this.#inlineQueue.push({ ...message, id });
      if (this.#inlineQueue.length === 1) setImmediate(() => this.#drainInline(writer));
    } else {
      writer.ref();
      writer.postMessage({ ...message, id });
    }
    const settled = done.then(
      () => undefined,
      () => undefined,
    );
    this.#queued.add(settled);
    void settled.then(() => this.#queued.delete(settled));
    return done;
  }

  /** Commits the inline queue, {@link DEFAULT_HISTORY_MAX_BATCH_WRITES} messages a transaction. */
  #drainInline(writeBatch: WriteBatch): void {
    const queue = this.#inlineQueue;
    this.#inlineQueue = [];
    for (let start = 0; start < queue.length; start += DEFAULT_HISTORY_MAX_BATCH_WRITES) {
      const batch = queue.slice(start, start + DEFAULT_HISTORY_MAX_BATCH_WRITES);
      let answers: WriteAnswer[];
      try {
        answers = writeBatch(batch);
      } catch (error) {
        const failure = { error: (error as Error)?.message ?? String(error) };
        answers = batch.map(() => failure);
      }
      batch.forEach((message, index) => this.#answer(message.id as number, answers[index] ?? {}));
    }
  }

  /** Waits for the queued appends, then closes the writer and the connection. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.allSettled([...this.#queued]);
      if (typeof this.#writer !== 'function') await this.#writer.terminate();
      const db = this.#db;
      this.#db = undefined;
      try {
        db?.close();
      } catch {
        // Closing after a failed open is not an error.
      }
    })();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
