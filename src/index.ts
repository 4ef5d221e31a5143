/**
 * @module
 * The public API of codecall. Every export is named here on purpose; adding one is an API
 * decision, guarded by test/architecture/exports.test.ts.
 */
export { CodecallError, isCodecallError } from './errors.js';
export type { CodecallErrorCode, CodecallErrorOptions } from './errors.js';
export type {
  ExecutionErrorCode,
  ExecutionResult,
  ExecutionStats,
  JsonSchema,
  JsonValue,
  SandboxToolBinding,
  ToolCallRecord,
  ToolCaller,
  ToolInvocation,
  ToolInvoker,
} from './types.js';
