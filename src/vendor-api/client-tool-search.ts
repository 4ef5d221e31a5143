/**
 * @module
 * Tool search over the client's deferred tools, for the vendor endpoints' search tools
 * (Anthropic's `tool_search_tool_bm25_*` / `tool_search_tool_regex_*`, OpenAI's `tool_search`
 * with `execution: "server"`). It is codecall's own search (`src/search`): BM25 plus the tool
 * graph (edges learned from earlier runs' calls to `client.<name>` tools, and edges inferred from
 * the schemas), or the linear-time regex search with the semantics of Anthropic's regex variant.
 * Queries come from the model behind: their length and the hits are bounded by named defaults,
 * and a bad query is an answer (`invalid_tool_input`), never a failed request.
 */
import {
  DEFAULT_VENDOR_TOOL_SEARCH_MAX_QUERY_CHARS,
  DEFAULT_VENDOR_TOOL_SEARCH_MAX_RESULTS,
} from '../config/defaults.js';
import { isCodecallError } from '../errors.js';
import type { CodecallRuntime } from '../execute/index.js';
import { createToolSearch, DEFAULT_MAX_REGEX_PATTERN_CHARS, type ToolSearchState } from '../search/index.js';
import type { JsonSchema } from '../types.js';
import { clientQualifiedName, type ClientTool } from './script-turn.js';

/** How the search tool reads its query: words (BM25 + graph) or a regex pattern. */
export type ClientSearchMode = 'hybrid' | 'regex';

/** What one search answered: the client's names of the tools found, or why the query was refused. */
export type ClientSearchAnswer =
  { ok: true; names: string[] } | { ok: false; code: 'invalid_tool_input'; message: string };

/** Options of {@link searchClientTools}. */
export interface SearchClientToolsOptions {
  runtime: CodecallRuntime;
  /** The tools searched (the request's deferred tools). */
  tools: readonly ClientTool[];
  /** The search tool's input, as the model wrote it (`{query}`). */
  input: unknown;
  mode: ClientSearchMode;
  /** @defaultValue {@link DEFAULT_VENDOR_TOOL_SEARCH_MAX_RESULTS} */
  maxResults?: number;
  /** @defaultValue {@link DEFAULT_VENDOR_TOOL_SEARCH_MAX_QUERY_CHARS} (regex: {@link DEFAULT_MAX_REGEX_PATTERN_CHARS}) */
  maxQueryChars?: number;
}

/**
 * The learned graph of the runtime's search, or none when it cannot be read. Read only once the
 * runtime's index is built: building it here would index the whole MCP catalog on the request's
 * event-loop turn.
 */
function learnedState(runtime: CodecallRuntime): ToolSearchState | undefined {
  if (!runtime.started().searchIndex) return undefined;
  try {
    return runtime.search.serialize();
  } catch {
    return undefined;
  }
}

/** Searches the client's tools for the model's query. */
export function searchClientTools(options: SearchClientToolsOptions): ClientSearchAnswer {
  const { input, mode } = options;
  const query =
    typeof input === 'object' && input !== null && !Array.isArray(input)
      ? (input as Record<string, unknown>).query
      : undefined;
  if (typeof query !== 'string' || query.trim() === '')
    return {
      ok: false,
      code: 'invalid_tool_input',
      message: `"query" must be a non-empty string (${mode === 'regex' ? 'a regex pattern' : 'words describing the tool'}).`,
    };
  const maxChars =
    options.maxQueryChars ??
    (mode === 'regex' ? DEFAULT_MAX_REGEX_PATTERN_CHARS : DEFAULT_VENDOR_TOOL_SEARCH_MAX_QUERY_CHARS);
  if (query.length > maxChars)
    return {
      ok: false,
      code: 'invalid_tool_input',
      message: `"query" has ${query.length} characters; at most ${maxChars} are accepted. Shorten it.`,
    };
  if (options.tools.length === 0) return { ok: true, names: [] };
  const byQualified = new Map(options.tools.map((t) => [clientQualifiedName(t.member), t.name]));
  const index = createToolSearch({
    tools: options.tools.map((t) => ({
      name: clientQualifiedName(t.member),
      description: t.description,
      inputSchema: t.inputSchema,
    })),
    state: mode === 'hybrid' ? learnedState(options.runtime) : undefined,
  });
  try {
    const hits = index.search(query, {
      mode,
      limit: options.maxResults ?? DEFAULT_VENDOR_TOOL_SEARCH_MAX_RESULTS,
    });
    return { ok: true, names: hits.flatMap((h) => byQualified.get(h.name) ?? []) };
  } catch (error) {
    if (isCodecallError(error) && error.code === 'SEARCH_INVALID_QUERY')
      return { ok: false, code: 'invalid_tool_input', message: error.message };
    throw error;
  }
}

/** The text the model behind reads for a search answer. */
export function searchAnswerText(answer: ClientSearchAnswer, tools: readonly ClientTool[]): string {
  if (!answer.ok) return `Error (${answer.code}): ${answer.message}`;
  if (answer.names.length === 0) return 'No tool matched. Try other words.';
  const byName = new Map(tools.map((t) => [t.name, t]));
  return [
    `Loaded ${answer.names.length} tool(s); they are callable now:`,
    ...answer.names.map((name) => `- ${name}: ${byName.get(name)?.description ?? ''}`),
  ].join('\n');
}

/** Options of {@link searchToolDefinition}. */
export interface SearchToolDefinitionOptions {
  name: string;
  mode: ClientSearchMode;
  /** Names and descriptions of the deferred tools listed in the description (OpenAI shows them; Anthropic does not). */
  listed?: readonly ClientTool[];
  /** The client's own description (OpenAI `execution: "client"`). */
  description?: string | undefined;
  /** The client's own parameter schema (OpenAI `execution: "client"`). */
  parameters?: JsonSchema | undefined;
}

/** The search tool as the model behind sees it. */
export function searchToolDefinition(options: SearchToolDefinitionOptions): {
  description: string;
  inputSchema: JsonSchema;
} {
  const regex = options.mode === 'regex';
  const base =
    options.description ??
    (regex
      ? `Loads the client's deferred tools whose name, description or argument names match a regex pattern (Python re.search syntax, at most ${DEFAULT_MAX_REGEX_PATTERN_CHARS} characters; start it with (?i) to ignore case). The tools found become callable, directly or from code as their callers allow.`
      : `Loads the client's deferred tools that match a natural-language query (BM25 over names, descriptions and arguments, plus the tool graph). The tools found become callable, directly or from code as their callers allow.`);
  const listed = options.listed ?? [];
  const description =
    listed.length === 0
      ? base
      : `${base}\nDeferred tools:\n${listed.map((t) => `- ${t.name}: ${t.description.slice(0, 200)}`).join('\n')}`;
  const inputSchema: JsonSchema = options.parameters ?? {
    type: 'object',
    properties: {
      query: {
        type: 'string',
        description: regex ? 'A regex pattern, e.g. "(?i)expense|budget".' : 'What the tool should do.',
      },
    },
    required: ['query'],
  };
  return { description, inputSchema };
}
