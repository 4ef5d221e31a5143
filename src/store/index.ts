/**
 * @module
 * Persistence: every durable thing of codecall behind narrow contracts. Graph counts, query
 * usages, the approval audit, script values and learned result shapes ({@link UsageHistoryStore}) in memory, SQLite,
 * Redis or PostgreSQL; tool search's vector cache in SQLite; run journals in a file or in memory.
 * Imports no other capability: search is fed what the store loads, by execute/.
 */
export { checkHistoryStore } from './contracts.js';
export type {
  ApprovalAuditStore,
  ClosableStore,
  GraphCountStore,
  QueryUsageStore,
  ResultShapeStore,
  ScriptValueStore,
  UsageHistoryStore,
  VectorCache,
} from './contracts.js';
export type {
  ApprovalAuditEntry,
  GraphCounts,
  LearnedShape,
  ListApprovalsOptions,
  ListUsagesOptions,
  QueryUsage,
  StoreValueLimits,
} from './types.js';
export { checkSequence, checkUsage } from './checks.js';
export { SHAPE_BOUNDS } from './shape-merge.js';
export { MemoryHistoryStore } from './memory-history-store.js';
export type { MemoryHistoryStoreOptions } from './memory-history-store.js';
export { DEFAULT_HISTORY_BUSY_TIMEOUT_MS, SqliteHistoryStore } from './sqlite-history-store.js';
export type { SqliteHistoryStoreOptions } from './sqlite-history-store.js';
export { REDIS_STORE_KEY_PREFIX, RedisHistoryStore } from './redis-history-store.js';
export type { RedisHistoryStoreOptions } from './redis-history-store.js';
export { HISTORY_PG_SCHEMA, PostgresHistoryStore } from './postgres-history-store.js';
export type { PostgresHistoryStoreOptions } from './postgres-history-store.js';
export { DEFAULT_EMBEDDING_CACHE_MAX_ENTRIES, SqliteEmbeddingCache } from './sqlite-embedding-cache.js';
export type { SqliteEmbeddingCacheOptions } from './sqlite-embedding-cache.js';
export {
  CallsInFlight,
  FileRunJournal,
  hashArgs,
  hashCode,
  InputAnswers,
  MemoryRunJournal,
} from './run-journal.js';
export type {
  FileRunJournalOptions,
  RunJournal,
  RunJournalEntry,
  RunJournalFinished,
  RunJournalHeader,
  RunJournalStarted,
} from './run-journal.js';
export type { OpenedRunJournal, OpenPausedRunOptions, PausedRunStore } from './paused-run-store.js';
