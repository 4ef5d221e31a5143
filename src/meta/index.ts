/**
 * @module
 * What every surface that puts codecall in front of a model shares: the meta-tools
 * (`search_tools`, `execute_code`) with their descriptions and input parsers, the text the model
 * reads from a search, provider-safe direct names of MCP tools, and the byte bound of a result.
 * The agent loop, `codecall serve` and the framework adapters all answer from here, so every
 * client sees the same contract. Curated exports only.
 */
export { cutToBytes } from './cut-to-bytes.js';
export { assignDirectNames, directToolDefinition } from './direct-tools.js';
export {
  DEFAULT_SEARCH_TOOLS_LIMIT,
  EXECUTE_CODE_NAME,
  executeCodeDefinition,
  MAX_SEARCH_TOOLS_LIMIT,
  parseExecuteCodeInput,
  parseSearchToolsInput,
  SEARCH_TOOLS_NAME,
  searchToolsDefinition,
} from './meta-tools.js';
export type { ExecuteCodeInput, MetaToolDefinition, MetaToolLimits, SearchToolsInput } from './meta-tools.js';
export { renderSearchResult } from './render-search-result.js';
export type { RenderSearchResultOptions } from './render-search-result.js';
export { answerExecuteCode, answerSearchTools } from './answer-meta-tools.js';
export type { AnswerMetaToolOptions, MetaToolAnswer } from './answer-meta-tools.js';
