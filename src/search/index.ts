/**
 * @module
 * Tool search: BM25F and regex over tool descriptors, the tool graph learned from executed call
 * sequences, beam search over it, and offline evaluation. Pure: it is fed the state it ranks with
 * (counts and query usages from `store/`, tool descriptors from `tools/`) and does no I/O of its
 * own; the exceptions are the embedders (the OpenAI-compatible one's HTTP calls, the ONNX one's
 * reads of its model files), which act only when a caller hands them to `createToolSearch`.
 */
export { createToolSearch, DEFAULT_MAX_QUERY_CHARS, DEFAULT_REGEX_SEARCH_BUDGET_MS } from './tool-search.js';
export type {
  CreateToolSearchOptions,
  GraphEdgesOptions,
  SearchableTool,
  SearchMode,
  SearchOptions,
  ToolChain,
  ToolGraphEdge,
  ToolSearch,
  ToolSearchHit,
  ToolSearchResult,
  ToolUsage,
} from './tool-search.js';
export {
  DEFAULT_BEAM_DEPTH,
  DEFAULT_BEAM_WIDTH,
  DEFAULT_CHAIN_LIMIT,
  DEFAULT_EDGE_DISCOUNT,
  DEFAULT_EVIDENCE_PRIOR,
  DEFAULT_EXPANSION_DOCS,
  DEFAULT_EXPANSION_FLAT_RANK,
  DEFAULT_EXPANSION_FLAT_SHARE,
  DEFAULT_EXPANSION_RERANK_DOCS,
  DEFAULT_EXPANSION_TERMS,
  DEFAULT_EXPANSION_WEIGHT,
  DEFAULT_EXPANSION_WHEN,
  DEFAULT_FEEDBACK_WEIGHT,
  DEFAULT_FIELD_WEIGHTS,
  DEFAULT_GRAPH_WEIGHT,
  DEFAULT_INFERRED_EDGE_SHARE,
  DEFAULT_LEXICAL_GUARD,
  DEFAULT_SEARCH_LIMIT,
} from './options.js';
export type { ExpansionPolicy, RankingOptions, SearchFieldWeights } from './options.js';
export type { ToolSearchState } from './tool-graph.js';
export { DEFAULT_FEEDBACK_HALF_LIFE_USES, DEFAULT_FEEDBACK_MIN_COUNT } from './query-feedback.js';
export { transitionsOf } from './tool-graph.js';
export { DEFAULT_MAX_REGEX_PATTERN_CHARS } from './regex-query.js';
export { evaluateSearch, learnFieldWeights } from './evaluate-search.js';
export { DEFAULT_STEMMING } from './tokenize.js';
export type { Stemming } from './tokenize.js';
export { DEFAULT_FUSION_DEPTH, DEFAULT_RRF_K } from './embeddings.js';
export type { EmbedFunction, EmbeddingCache } from './embeddings.js';
export { createOpenAIEmbedder } from './openai-embedder.js';
export type { OpenAIEmbedderOptions } from './openai-embedder.js';
export { createOnnxEmbedder, disableOnnxRuntimeTelemetry } from './onnx-embedder.js';
export type { OnnxEmbedderOptions, OnnxPooling } from './onnx-embedder.js';
export type {
  EvalIndexOptions,
  EvalQuery,
  EvaluateSearchOptions,
  EvaluateSearchResult,
  SearchMetrics,
} from './evaluate-search.js';
export { DEFAULT_MAX_SERIALIZED_USES } from './tool-search.js';
