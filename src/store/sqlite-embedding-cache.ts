/**
 * @module
 * Tool vectors on disk: one SQLite file (Node's built-in `node:sqlite`), keyed by the embedding
 * model and a hash of the embedded text, bounded in entries (the least recently written go
 * first). A restart, or another process on the same catalog, embeds nothing it already has.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { CodecallError } from '../errors.js';
import type { VectorCache } from './contracts.js';
import { DEFAULT_HISTORY_BUSY_TIMEOUT_MS, loadSqlite } from './sqlite-history-store.js';
import { retryWhileBusy } from './sqlite-busy.js';
import { DEFAULT_EMBEDDING_CACHE_MAX_ENTRIES } from '../config/defaults.js';
export { DEFAULT_EMBEDDING_CACHE_MAX_ENTRIES };

/** Options of {@link SqliteEmbeddingCache.open}. */
export interface SqliteEmbeddingCacheOptions {
  /** The database file (created with its folder when missing), or `:memory:`. */
  path: string;
  /** The embedding model: part of every key, so two models never share a vector. */
  model: string;
  /**
   * Vectors kept.
   * @defaultValue {@link DEFAULT_EMBEDDING_CACHE_MAX_ENTRIES}
   */
  maxEntries?: number;
}

function failed(path: string, action: string, error: unknown): CodecallError {
  return new CodecallError(
    'SEARCH_EMBEDDING_FAILED',
    `Embedding cache ${path}: could not ${action}: ${(error as Error)?.message ?? String(error)}. ` +
      'Delete the file (it only holds vectors that can be recomputed) or point the cache elsewhere.',
    { details: { path }, cause: error },
  );
}

/**
 * A {@link VectorCache} in one SQLite file: tool search's embedding cache.
 *
 * @example
 * ```ts
 * await using cache = await SqliteEmbeddingCache.open({ path: '.codecall/embeddings.sqlite', model: 'nomic-embed-text' });
 * const search = createToolSearch({ tools, embed, embeddingCache: cache });
 * ```
 */
export class SqliteEmbeddingCache implements VectorCache {
  readonly path: string;
  readonly #model: string;
  readonly #maxEntries: number;
  #db: DatabaseSync | undefined;
  readonly #select: StatementSync;
  readonly #upsert: StatementSync;
  readonly #count: StatementSync;
  readonly #evict: StatementSync;
  #clock: number;

  private constructor(path: string, model: string, maxEntries: number, db: DatabaseSync) {
    this.path = path;
    this.#model = model;
    this.#maxEntries = maxEntries;
    this.#db = db;
    this.#select = db.prepare('SELECT vector FROM vectors WHERE model = ? AND hash = ?');
    this.#upsert = db.prepare(
      'INSERT INTO vectors (model, hash, vector, written) VALUES (?, ?, ?, ?) ' +
        'ON CONFLICT (model, hash) DO UPDATE SET vector = excluded.vector, written = excluded.written',
    );
    this.#count = db.prepare('SELECT COUNT(*) AS n FROM vectors');
    this.#evict = db.prepare(
      'DELETE FROM vectors WHERE rowid IN (SELECT rowid FROM vectors ORDER BY written LIMIT ?)',
    );
    const row = db.prepare('SELECT MAX(written) AS w FROM vectors').get() as { w: number | null };
    this.#clock = row.w ?? 0;
  }

  /** Opens (creating when missing) the cache at `options.path`. */
  static async open(options: SqliteEmbeddingCacheOptions): Promise<SqliteEmbeddingCache> {
    const path = options?.path;
    if (typeof path !== 'string' || path === '') {
      throw new CodecallError('INVALID_ARGUMENT', 'SqliteEmbeddingCache.open needs { path, model }.', {
        details: { field: 'path' },
      });
    }
    if (typeof options.model !== 'string' || options.model === '') {
      throw new CodecallError('INVALID_ARGUMENT', 'SqliteEmbeddingCache.open needs a non-empty "model".', {
        details: { field: 'model' },
      });
    }
    const maxEntries = options.maxEntries ?? DEFAULT_EMBEDDING_CACHE_MAX_ENTRIES;
    if (!Number.isInteger(maxEntries) || maxEntries < 1) {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        'Embedding cache "maxEntries" must be a positive integer.',
        {
          details: { field: 'maxEntries' },
        },
      );
    }
    let sqlite: Awaited<ReturnType<typeof loadSqlite>>;
    try {
      sqlite = await loadSqlite();
    } catch (error) {
      throw failed(path, 'load node:sqlite (Node 22.13 or newer has it)', error);
    }
    let db: DatabaseSync | undefined;
    try {
      if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
      // Several processes may create the file at once: a lock SQLite will not wait for (see
      // sqlite-busy.ts) retries the whole preparation.
      db = await retryWhileBusy(() => {
        const opened = new sqlite.DatabaseSync(path, { timeout: DEFAULT_HISTORY_BUSY_TIMEOUT_MS });
        try {
          opened.exec('PRAGMA journal_mode = WAL');
          opened.exec(
            'CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, hash TEXT NOT NULL, vector BLOB NOT NULL, ' +
              'written INTEGER NOT NULL, PRIMARY KEY (model, hash))',
          );
          opened.exec('CREATE INDEX IF NOT EXISTS vectors_written ON vectors (written)');
          return opened;
        } catch (error) {
          opened.close();
          throw error;
        }
      }, DEFAULT_HISTORY_BUSY_TIMEOUT_MS);
      return new SqliteEmbeddingCache(path, options.model, maxEntries, db);
    } catch (error) {
      db?.close();
      throw failed(path, 'open it', error);
    }
  }

  #open(): DatabaseSync {
    if (!this.#db) {
      throw new CodecallError('CLOSED', `Embedding cache ${this.path} is closed.`, {
        details: { path: this.path },
      });
    }
    return this.#db;
  }

  get(keys: readonly string[]): Promise<Array<Float32Array | undefined>> {
    this.#open();
    return Promise.resolve(
      keys.map((key) => {
        const row = this.#select.get(this.#model, key) as { vector: Uint8Array } | undefined;
        if (!row || row.vector.byteLength === 0 || row.vector.byteLength % 4 !== 0) return undefined;
        // Copy into an aligned buffer (the blob's offset need not be a multiple of 4).
        return new Float32Array(new Uint8Array(row.vector).buffer);
      }),
    );
  }

  set(entries: ReadonlyArray<readonly [string, Float32Array]>): Promise<void> {
    const db = this.#open();
    if (entries.length === 0) return Promise.resolve();
    try {
      db.exec('BEGIN IMMEDIATE');
      try {
        for (const [key, vector] of entries) {
          this.#upsert.run(
            this.#model,
            key,
            new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength),
            ++this.#clock,
          );
        }
        const { n } = this.#count.get() as { n: number };
        if (n > this.#maxEntries) this.#evict.run(n - this.#maxEntries);
        db.exec('COMMIT');
      } catch (error) {
        db.exec('ROLLBACK');
        throw error;
      }
    } catch (error) {
      return Promise.reject(failed(this.path, 'store vectors', error));
    }
    return Promise.resolve();
  }

  /** Entries in the file (all models). */
  size(): number {
    return (this.#count.get() as { n: number }).n;
  }

  /** Closes the file; idempotent. */
  close(): Promise<void> {
    this.#db?.close();
    this.#db = undefined;
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
