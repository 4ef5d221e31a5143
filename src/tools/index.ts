/**
 * @module
 * The MCP client side: the server pool, the tool catalog, caller policy, input validation and
 * result normalization.
 */
export { diffCatalogs, ToolPool } from './tool-pool.js';
export type {
  CatalogChange,
  CatalogListener,
  CatalogTool,
  ServerStatus,
  ToolCallOptions,
  ToolPoolOptions,
  UpstreamAsker,
  UpstreamAskContext,
  UpstreamNotificationListener,
  UpstreamRequestOptions,
  UpstreamServer,
  UpstreamToolResult,
} from './tool-pool.js';
export type {
  ReconnectOptions,
  ServerErrorEvent,
  ServerState,
  TransportFactory,
  UpstreamNotification,
  UpstreamRequest,
} from './server-connection.js';
export type { RelayedInputRequired, RelayedInputRound } from './modern-connection.js';
export { assignIdentifiers, qualifiedName, toIdentifier } from './names.js';
export {
  assertCallerAllowed,
  DEFAULT_ALLOWED_CALLERS,
  DESTRUCTIVE_ALLOWED_CALLERS,
  resolveAllowedCallers,
} from './policy.js';
export type {
  AllowedCallersSource,
  PolicyTarget,
  ResolveAllowedCallersOptions,
  ToolAnnotations,
} from './policy.js';
export {
  approvalConfigKey,
  awaitApproval,
  hashArguments,
  needsApproval,
  resolveRequireApproval,
} from './approval.js';
export type {
  ApprovalDecider,
  ApprovalDecision,
  ApprovalOutcome,
  ApprovalRecord,
  ApprovalRequest,
  ApprovalTarget,
  Approver,
  RequireApprovalSource,
} from './approval.js';
export { compileInputValidator, INPUT_VALIDATION_DIALECTS, warmInputValidation } from './validate-input.js';
export type { InputValidator } from './validate-input.js';
export { normalizeToolResult, normalizeToolResultText, toolErrorText } from './normalize-result.js';
export type { BinaryDescriptor, RawToolResult } from './normalize-result.js';
export { defineTool, localTools } from './local-tools.js';
export {
  readUpstreamTask,
  relayedTaskResult,
  TASKS_EXTENSION_ID,
  upstreamTaskOf,
} from './upstream-tasks-2026.js';
export type { UpstreamTask, UpstreamTaskMode, UpstreamTaskStatus } from './upstream-tasks-2026.js';
export type { LocalTool, LocalToolDefinition } from './local-tools.js';
export { openApiTools } from './openapi-tools.js';
export type { OpenApiOperationInfo, OpenApiToolsOptions } from './openapi-tools.js';
export { prespawnStdioServers, stopPrespawned, type PrespawnedServer } from './prespawn.js';
export {
  primitiveToString,
  scanParamHeaders,
  valueAtPath,
  type ParamHeaderDeclaration,
} from './mcp-param-headers.js';
