/**
 * @module
 * Configuration: the `mcpServers` JSON MCP clients already use plus codecall's own keys, loaded,
 * `${VAR}`-expanded, validated and resolved into a {@link CodecallConfig}.
 */
export {
  CONFIG_FILE_NAMES,
  configDocumentOf,
  loadConfig,
  parseConfig,
  readConfigBytes,
} from './load-config.js';
export type { ConfigIssue, LoadConfigOptions, ParseConfigOptions } from './load-config.js';
export {
  parseConfigFile,
  parseConfigText,
  type ConfigFormat,
  type ConfigTextResult,
} from './parse-config-text.js';
export type {
  AgentConfig,
  ApprovalRule,
  ApprovalsConfig,
  ClientPolicyMapping,
  ClientToolRule,
  RequireApproval,
  CodecallConfig,
  HistoryConfig,
  RemoteServerConfig,
  SandboxConfig,
  SandboxLimitsConfig,
  SearchConfig,
  SearchEmbeddingsConfig,
  SearchOnnxEmbeddingsConfig,
  ServeConfig,
  StoreConfig,
  StoreScope,
  ServeLearning,
  JobsConfig,
  ServerConfig,
  ServerMap,
  StdioServerConfig,
  ToolPolicyConfig,
} from './types.js';
export { toolPolicyOf } from './tool-policy.js';
