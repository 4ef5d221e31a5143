/**
 * @module
 * The narrow contracts of durable state. Each is small and every method is required: a backend
 * that cannot keep one of them does not implement it, and passing it where it is needed is a type
 * error (or, from JavaScript, a refusal naming the backend: {@link checkHistoryStore}), never a
 * write that silently goes nowhere. Every write resolves only once it is durable (as durable as
 * the backend is: committed for SQLite and PostgreSQL, acknowledged for Redis).
 */
import { CodecallError } from '../errors.js';
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

/** The tool graph's counts: runs' call sequences, aggregated into transition counts. */
export interface GraphCountStore {
  /** The aggregated counts of every retained run. */
  loadCounts(): Promise<GraphCounts>;
  /** Records one run's tool calls, in dispatch order; atomic (all of the run or nothing). */
  appendSequence(sequence: readonly string[]): Promise<void>;
}

/** Query feedback: the newest uses of search, bounded. */
export interface QueryUsageStore {
  /** Records one use; the oldest uses past the store's bound are dropped. */
  appendUsage(usage: QueryUsage): Promise<void>;
  /** The kept uses, newest first. */
  listUsages(options?: ListUsagesOptions): Promise<QueryUsage[]>;
}

/** The audit trail of approval decisions, bounded. */
export interface ApprovalAuditStore {
  /** Records one decision (checked first: `INVALID_ARGUMENT` for a malformed entry). */
  appendApproval(entry: ApprovalAuditEntry): Promise<void>;
  /** The newest decisions, newest first. */
  listApprovals(options?: ListApprovalsOptions): Promise<ApprovalAuditEntry[]>;
}

/** The JSON values scripts keep with `store.set`, per namespace, bounded in bytes. */
export interface ScriptValueStore {
  /** The JSON of a kept value, or undefined. */
  getValue(namespace: string, key: string): Promise<string | undefined>;
  /**
   * Keeps the JSON of a value (`undefined`: removes the key). Rejects with `STORE_LIMIT` when the
   * namespace would hold more than `limits.maxNamespaceBytes` (checked atomically with the
   * write, also against other processes); the caller checks the value's own size.
   */
  setValue(namespace: string, key: string, json: string | undefined, limits: StoreValueLimits): Promise<void>;
}

/**
 * Learned result shapes, one per tool, bounded (`DEFAULT_RESULT_SHAPE_*`): the output types of
 * tools without an `outputSchema`. Shared by a fleet like the graph: a merge is atomic per tool
 * against every writer of the same history (a compare-and-set, retried).
 */
export interface ResultShapeStore {
  /** Every kept shape (checked and bounded as read: a damaged row is skipped). */
  loadShapes(): Promise<LearnedShape[]>;
  /**
   * Merges `shape` into the tool's kept one (widening it: see `mergeShapes`). Rejects with
   * `INVALID_ARGUMENT` for a malformed shape; a new tool past `DEFAULT_RESULT_SHAPE_MAX_TOOLS` is
   * not kept (no error: learning is best effort).
   */
  mergeShape(tool: string, shape: ResultShape): Promise<void>;
}

/** A resource owner: `close` releases it and is idempotent; a closed store rejects with `CLOSED`. */
export interface ClosableStore extends AsyncDisposable {
  close(): Promise<void>;
}

/**
 * Everything a runtime keeps about its usage: graph counts, query feedback, the approval audit,
 * script values and learned result shapes. Memory, SQLite, Redis and PostgreSQL implement all of it.
 *
 * @example
 * ```ts
 * await using store = await SqliteHistoryStore.open({ path: '.codecall/history.sqlite' });
 * await store.appendSequence(['get_team_members', 'get_expenses']);
 * const counts = await store.loadCounts(); // { sequences: 1, transitions: [[…, …, 1]] }
 * ```
 */
export interface UsageHistoryStore
  extends
    GraphCountStore,
    QueryUsageStore,
    ApprovalAuditStore,
    ScriptValueStore,
    ResultShapeStore,
    ClosableStore {}

/** A store of vectors keyed by text hash (the embedding cache of tool search). */
export interface VectorCache extends ClosableStore {
  /** Vectors for `keys`, in order; `undefined` where absent. */
  get(keys: readonly string[]): Promise<Array<Float32Array | undefined>>;
  /** Stores vectors (the cache may evict old ones to stay within its bound). */
  set(entries: ReadonlyArray<readonly [string, Float32Array]>): Promise<void>;
}

const HISTORY_METHODS = [
  'loadCounts',
  'appendSequence',
  'appendUsage',
  'listUsages',
  'appendApproval',
  'listApprovals',
  'getValue',
  'setValue',
  'loadShapes',
  'mergeShape',
  'close',
] as const;

/**
 * Refuses a history store (from JavaScript, or built by hand) that lacks part of
 * {@link UsageHistoryStore}, naming the backend and what it lacks.
 */
export function checkHistoryStore(store: unknown): UsageHistoryStore {
  const candidate = store as Record<string, unknown> | null;
  const missing =
    typeof candidate === 'object' && candidate !== null
      ? HISTORY_METHODS.filter((name) => typeof candidate[name] !== 'function')
      : [...HISTORY_METHODS];
  if (missing.length > 0) {
    const backend =
      typeof candidate === 'object' && candidate !== null
        ? ((candidate.constructor as { name?: string } | undefined)?.name ?? 'Object')
        : String(candidate);
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `The history store ${backend} lacks ${missing.join(', ')}: a usage history store keeps graph counts, query usages, the approval audit, script values and learned result shapes. Implement them, or use MemoryHistoryStore, SqliteHistoryStore, RedisHistoryStore or PostgresHistoryStore.`,
      { details: { field: 'history', backend, missing } },
    );
  }
  return store as UsageHistoryStore;
}
