/**
 * @module
 * The agent: the model loop over search and code execution, its meta-tools, token accounting
 * and the offline demo model. Curated exports only.
 */
export { createOrchestrator, cutToBytes, MODEL_ENV_VARIABLE, resolveLanguageModel } from './orchestrator.js';
export type {
  Orchestrator,
  OrchestratorOptions,
  PrepareStep,
  PrepareStepOptions,
  PrepareStepResult,
  RunHooks,
  RunInput,
  RunOptions,
} from './orchestrator.js';
export { hasToolCall, stepCountIs } from './runner/stop-condition.js';
export type { StopCondition, StopConditionOptions } from './runner/stop-condition.js';
export type { TelemetryOptions } from './runner/run-telemetry.js';
export type {
  AgentEvent,
  AgentExecution,
  AgentMode,
  AgentModelResponse,
  AgentRequestSummary,
  AgentStep,
  AgentToolCall,
  AgentToolCallKind,
  RunComparison,
  RunComparisonSide,
  RunResult,
  SavingsReport,
} from './types.js';
export { compareRuns } from './compare-runs.js';
export { ContextMeter } from './context-meter.js';
export type { ContextMeterOptions, RequestTokens, ScriptResultsCounter } from './context-meter.js';
export { DEMO_MODEL_NAME, DemoLanguageModel, demoQuestion, demoScript } from './demo-model.js';
export { CODE_MODE_SYSTEM_PROMPT, DIRECT_MODE_SYSTEM_PROMPT, systemPrompt } from './system-prompt.js';
export { assignDirectNames, directToolDefinition, renderSearchResult } from '../meta/index.js';
export type { RenderSearchResultOptions } from '../meta/index.js';
export {
  countMessageTokens,
  countTokens,
  countTokensOffThread,
  countToolDefinitionTokens,
  estimateTokens,
  tokenizerName,
} from './count-tokens.js';
export type { TokenizerName } from './count-tokens.js';
export {
  DEFAULT_SEARCH_TOOLS_LIMIT,
  EXECUTE_CODE_NAME,
  executeCodeDefinition,
  MAX_SEARCH_TOOLS_LIMIT,
  parseExecuteCodeInput,
  parseSearchToolsInput,
  SEARCH_TOOLS_NAME,
  searchToolsDefinition,
} from '../meta/index.js';
export type {
  ExecuteCodeInput,
  MetaToolDefinition,
  MetaToolLimits,
  SearchToolsInput,
} from '../meta/index.js';
