/**
 * @module
 * Execution: the one place that composes compile + isolate + tools. Curated exports only.
 */
export { createExecutor } from './executor.js';
export type {
  ExecuteOptions,
  Executor,
  ExecutorOptions,
  ExtraTools,
  SequenceListener,
  ToolResultEvent,
  ToolResultListener,
} from './executor.js';
export type { ReplayInDoubtPolicy } from './journaled-invoker.js';
export { createScriptStore } from './script-store.js';
export type { ScriptStore, ScriptStoreOptions } from './script-store.js';
export { CodecallRuntime, DEFAULT_RUNTIME_SEARCH_LIMIT } from './codecall-runtime.js';
export type {
  CodecallRuntimeOptions,
  RuntimeParts,
  RuntimeCallOptions,
  RuntimeExecuteOptions,
  RuntimeSearchHit,
  RuntimeSearchOptions,
  RuntimeSearchResult,
} from './codecall-runtime.js';
export { formatResultForModel } from '../isolate/index.js';
export { openEmbeddings } from './open-embeddings.js';
export type { EmbeddingsConfig, OnnxEmbeddingsConfig, OpenedEmbeddings } from './open-embeddings.js';
