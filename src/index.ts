/**
 * @module
 * The public API of codecall: what a newcomer needs to run scripts against MCP tools, search
 * them, and run an agent. Every export is named here on purpose; adding one is an API decision,
 * guarded by test/architecture/exports.test.ts. More lives behind subpaths: `codecall/server`
 * (codecall as an MCP server), `codecall/jobs` (background jobs), `codecall/testing` (test
 * doubles and test MCP servers), `codecall/ai-sdk` and `codecall/openai-agents` (framework
 * adapters). Importing this entry loads no optional package (provider SDKs, tokenizer, job
 * queues, databases): test/e2e/lazy-load.test.ts checks it.
 */
export { CodecallError, isCodecallError } from './errors.js';
export type { CodecallErrorCode, CodecallErrorOptions } from './errors.js';
export type {
  AnyCodecallError,
  CodecallErrorDetails,
  CodecallErrorDetailsMap,
  CodecallErrorFacts,
  CodecallErrorIssue,
  RunStopDetails,
} from './errors.js';
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

// Configuration
export { loadConfig, parseConfig } from './config/index.js';
export type {
  AgentConfig,
  ApprovalRule,
  ApprovalsConfig,
  CodecallConfig,
  ConfigIssue,
  HistoryConfig,
  LoadConfigOptions,
  ParseConfigOptions,
  RemoteServerConfig,
  SandboxConfig,
  SandboxLimitsConfig,
  SearchConfig,
  ServerConfig,
  ServerMap,
  RequireApproval,
  StdioServerConfig,
  ToolPolicyConfig,
} from './config/index.js';

// Compilation and declarations
export { compileScript } from './compile/index.js';
export type { CompileError, CompileResult, CompileScriptOptions } from './compile/index.js';

// Sandbox
export { SandboxPool } from './isolate/index.js';
export type { SandboxLimits, SandboxMode, SandboxPoolOptions, SandboxRunOptions } from './isolate/index.js';

// MCP tools
export { ToolPool } from './tools/index.js';
export { defineTool, localTools } from './tools/index.js';
export type { LocalTool, LocalToolDefinition } from './tools/index.js';
export { openApiTools } from './tools/index.js';
export type { OpenApiOperationInfo, OpenApiToolsOptions } from './tools/index.js';
export type {
  CatalogTool,
  ServerErrorEvent,
  ServerStatus,
  ToolCallOptions,
  ToolPoolOptions,
} from './tools/index.js';
// Approvals (requireApproval): who decides, what is asked, what is recorded
export type {
  ApprovalDecider,
  ApprovalDecision,
  ApprovalOutcome,
  ApprovalRecord,
  ApprovalRequest,
  Approver,
  RequireApprovalSource,
} from './tools/index.js';

// Execution
export { CodecallRuntime } from './execute/index.js';
export type {
  CodecallRuntimeOptions,
  ExecuteOptions,
  Executor,
  ExecutorOptions,
  RuntimeCallOptions,
  RuntimeExecuteOptions,
  RuntimeParts,
  RuntimeSearchHit,
  RuntimeSearchOptions,
  RuntimeSearchResult,
  SequenceListener,
} from './execute/index.js';
// Run journal (durable replay)
export { FileRunJournal, MemoryRunJournal } from './store/index.js';
export type { ReplayInDoubtPolicy } from './execute/index.js';
export type {
  FileRunJournalOptions,
  RunJournal,
  RunJournalEntry,
  RunJournalFinished,
  RunJournalHeader,
  RunJournalStarted,
} from './store/index.js';

// Tool search and usage history
export { createOnnxEmbedder, createOpenAIEmbedder, createToolSearch } from './search/index.js';
export { openEmbeddings } from './execute/index.js';
export type { EmbeddingsConfig, OnnxEmbeddingsConfig } from './execute/index.js';
export { MemoryHistoryStore, SqliteEmbeddingCache, SqliteHistoryStore } from './store/index.js';
export type {
  ApprovalAuditEntry,
  LearnedShape,
  ListApprovalsOptions,
  ResultShapeStore,
  SqliteEmbeddingCacheOptions,
  SqliteHistoryStoreOptions,
  UsageHistoryStore,
} from './store/index.js';
export type { ResultShape, ShapeType } from './util/result-shape.js';
export type {
  CreateToolSearchOptions,
  EmbedFunction,
  EmbeddingCache,
  GraphEdgesOptions,
  OnnxEmbedderOptions,
  OnnxPooling,
  OpenAIEmbedderOptions,
  RankingOptions,
  SearchableTool,
  SearchFieldWeights,
  SearchMode,
  SearchOptions,
  Stemming,
  ToolChain,
  ToolGraphEdge,
  ToolSearch,
  ToolSearchHit,
  ToolSearchResult,
  ToolSearchState,
} from './search/index.js';

// Language models
export { createLanguageModel } from './providers/create-language-model.js';
export type {
  CreateLanguageModelOptions,
  ModelSpec,
  ProviderName,
} from './providers/create-language-model.js';
export type { BedrockCredentials } from './providers/bedrock/bedrock-model.js';
export type { ProviderRetryEvent } from './providers/retry-provider-call.js';
export type {
  AssistantMessage,
  ContentPart,
  GenerateOptions,
  GenerateRequest,
  GenerateResponse,
  LanguageModel,
  Message,
  StopReason,
  StreamOptions,
  TextPart,
  TokenUsage,
  ToolCallPart,
  ToolDefinition,
  ToolMessage,
  ToolResult,
  UserMessage,
} from './providers/language-model.js';

// Agent loop
export { compareRuns, createOrchestrator, hasToolCall, stepCountIs } from './agent/index.js';
export type {
  PrepareStep,
  PrepareStepOptions,
  PrepareStepResult,
  RunHooks,
  RunInput,
  StopCondition,
  StopConditionOptions,
  TelemetryOptions,
} from './agent/index.js';
export type {
  AgentEvent,
  AgentExecution,
  AgentMode,
  AgentModelResponse,
  AgentRequestSummary,
  AgentStep,
  AgentToolCall,
  AgentToolCallKind,
  MetaToolDefinition,
  Orchestrator,
  OrchestratorOptions,
  RunComparison,
  RunComparisonSide,
  RunOptions,
  RunResult,
  SavingsReport,
  TokenizerName,
} from './agent/index.js';
