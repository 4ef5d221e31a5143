/**
 * @module
 * Execution: the one place that composes compile + isolate + tools. Curated exports only.
 */
export { createExecutor } from './executor.js';
export type { ExecuteOptions, Executor, ExecutorOptions, SequenceListener } from './executor.js';
export { ExecutionSession } from './execution-session.js';
export type { ExecutionSessionOptions } from './execution-session.js';
