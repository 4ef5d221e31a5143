/**
 * @module
 * The public API of codecall. Every export is named here on purpose; adding one is an API
 * decision, guarded by test/architecture/exports.test.ts.
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
export { CONFIG_FILE_NAMES, loadConfig, parseConfig } from './config/index.js';
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
export { compileScript, renderDeclarations } from './compile/index.js';
export type {
  CompileError,
  CompileResult,
  CompileScriptOptions,
  DeclarableTool,
  RenderDeclarationsOptions,
} from './compile/index.js';

// Sandbox
export { formatResultForModel, resolveSandboxLimits, SandboxPool } from './isolate/index.js';
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
export { CodecallRuntime, createExecutor, ExecutionSession } from './execute/index.js';
export type {
  CodecallRuntimeOptions,
  ExecuteOptions,
  ExecutionSessionOptions,
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
export { FileRunJournal, MemoryRunJournal } from './execute/index.js';
export type {
  FileRunJournalOptions,
  ReplayInDoubtPolicy,
  RunJournal,
  RunJournalEntry,
  RunJournalFinished,
  RunJournalHeader,
  RunJournalStarted,
} from './execute/index.js';

// Tool search and usage history
export {
  createOpenAIEmbedder,
  createToolSearch,
  DEFAULT_BEAM_DEPTH,
  DEFAULT_BEAM_WIDTH,
  DEFAULT_GRAPH_WEIGHT,
  DEFAULT_SEARCH_LIMIT,
  evaluateSearch,
  MemoryHistoryStore,
  openEmbeddings,
  SqliteEmbeddingCache,
  SqliteHistoryStore,
} from './search/index.js';
export type {
  CreateToolSearchOptions,
  EmbedFunction,
  EmbeddingCache,
  EmbeddingsConfig,
  EvalQuery,
  EvaluateSearchOptions,
  EvaluateSearchResult,
  GraphEdgesOptions,
  OpenAIEmbedderOptions,
  RankingOptions,
  SearchableTool,
  SearchFieldWeights,
  SearchMetrics,
  SearchMode,
  SearchOptions,
  SqliteEmbeddingCacheOptions,
  SqliteHistoryStoreOptions,
  Stemming,
  ToolChain,
  ToolGraphEdge,
  ToolSearch,
  ToolSearchHit,
  ToolSearchResult,
  ToolSearchState,
  UsageHistoryStore,
  ApprovalAuditEntry,
  ListApprovalsOptions,
} from './search/index.js';

// Language models
export { createLanguageModel, KNOWN_PROVIDERS, parseModelSpec } from './providers/create-language-model.js';
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
export {
  compareRuns,
  countMessageTokens,
  countTokens,
  createOrchestrator,
  DEMO_MODEL_NAME,
  DemoLanguageModel,
  EXECUTE_CODE_NAME,
  executeCodeDefinition,
  MODEL_ENV_VARIABLE,
  resolveLanguageModel,
  SEARCH_TOOLS_NAME,
  searchToolsDefinition,
} from './agent/index.js';
export { hasToolCall, renderSearchResult, stepCountIs } from './agent/index.js';
export type {
  PrepareStep,
  PrepareStepOptions,
  PrepareStepResult,
  RenderSearchResultOptions,
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
} from './agent/index.js';

// codecall as an MCP server
export {
  CODECALL_SERVER_INSTRUCTIONS,
  createCodecallServer,
  MCP_HTTP_PATH,
  RunLimiter,
  startHttpServer,
  startStdioServer,
} from './server/index.js';
export type {
  CodecallServerOptions,
  ExecuteCodeEvent,
  HttpRoutes,
  HttpServerHandle,
  HttpServerOptions,
  RunLimiterOptions,
  RunRefusal,
  StdioServerHandle,
  StdioServerOptions,
} from './server/index.js';

// Server-side jobs (BullMQ loads only when a BullMQ client or worker is created)
export {
  createJobClient,
  createJobRoutes,
  createLocalJobBackend,
  createPgJobClient,
  JOBS_HTTP_PATH,
  parseJobSpec,
  RuntimeRegistry,
  startPgWorker,
  startWorker,
} from './jobs/index.js';
export type {
  JobApprovalDecision,
  JobBackend,
  JobClientOptions,
  JobEvent,
  JobMessage,
  JobProgress,
  JobRecord,
  JobResult,
  JobSpec,
  JobSpecInput,
  JobState,
  JobStatus,
  JobSubmission,
  JobWorkerHandle,
  JobWorkerOptions,
  ListJobsOptions,
  LocalJobBackendOptions,
  PgJobConnectionOptions,
  PendingApproval,
  PgJobWorkerOptions,
  RuntimeRegistryOptions,
  WaitJobOptions,
} from './jobs/index.js';

// Named defaults
export {
  DEFAULT_AGENT_MAX_RUN_TIME_MS,
  DEFAULT_AGENT_MAX_STEPS,
  DEFAULT_CPU_TIME_MS,
  DEFAULT_MAX_CONCURRENT_TOOL_CALLS,
  DEFAULT_MAX_STDOUT_BYTES,
  DEFAULT_MAX_TOOL_CALLS,
  DEFAULT_MAX_TOOL_RESULT_BYTES,
  DEFAULT_MEMORY_MB,
  DEFAULT_WALL_TIME_MS,
} from './config/defaults.js';
