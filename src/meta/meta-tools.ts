/**
 * @module
 * The two meta-tools codecall puts in front of every MCP catalog, `search_tools` and
 * `execute_code`: their names, input schemas and the few lines of description that teach a
 * model the rules. Shared by the agent loop and by `codecall serve`, so every client sees the
 * same contract.
 */
import { DEFAULT_SANDBOX_MAX_SESSION_NAME_CHARS } from '../config/defaults.js';
import type { JsonSchema } from '../types.js';

/** Model-facing name of the search meta-tool. */
export const SEARCH_TOOLS_NAME = 'search_tools';
/** Model-facing name of the code-execution meta-tool. */
export const EXECUTE_CODE_NAME = 'execute_code';

/** Default number of tools `search_tools` returns. */
export const DEFAULT_SEARCH_TOOLS_LIMIT = 8;
/** Most tools one `search_tools` call may return. */
export const MAX_SEARCH_TOOLS_LIMIT = 25;

/** Figures the descriptions quote, so the model knows its bounds. */
export interface MetaToolLimits {
  wallTimeMs: number;
  maxToolCalls: number;
  maxStdoutBytes: number;
  /**
   * Whether scripts get `store.get` / `store.set` (the runtime's `scriptStore`): the description
   * then tells the model about them. @defaultValue false
   */
  store?: boolean;
}

/** A provider-neutral tool definition. */
export interface MetaToolDefinition {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

/** Input of `search_tools`. */
export interface SearchToolsInput {
  query: string;
  limit?: number;
  regex?: boolean;
}

/** Input of `execute_code`. */
export interface ExecuteCodeInput {
  code: string;
  /** Session whose globals the script shares with earlier scripts of the same session. */
  session?: string;
}

/** What a session name may contain (letters, digits, `_`, `-`, `.`, `:`). */
const SESSION_NAME = /^[\w.:-]+$/;

/** The `search_tools` definition. */
export function searchToolsDefinition(): MetaToolDefinition {
  return {
    name: SEARCH_TOOLS_NAME,
    description: [
      'Find tools for a task. Returns the best-matching tools with their TypeScript declarations',
      '(`tools.<server>.<tool>(args)`), ranked by text match and by which tools are usually called together.',
      'Describe the task in plain words ("expenses of a team member for a quarter") or give a tool name;',
      'set regex: true to match a pattern against tool names, descriptions and argument names.',
      'Search again with other words when a needed tool is missing.',
    ].join(' '),
    inputSchema: {
      type: 'object',
      properties: {
        query: {
          type: 'string',
          description: 'What the tools should do, keywords, a tool name, or a regex.',
        },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: MAX_SEARCH_TOOLS_LIMIT,
          description: `How many tools to return (default ${DEFAULT_SEARCH_TOOLS_LIMIT}).`,
        },
        regex: { type: 'boolean', description: 'Treat query as a regular expression (default false).' },
      },
      required: ['query'],
      additionalProperties: false,
    },
  };
}

/** The `execute_code` definition, quoting the limits in force. */
export function executeCodeDefinition(limits: MetaToolLimits): MetaToolDefinition {
  return {
    name: EXECUTE_CODE_NAME,
    description: [
      'Run JavaScript or TypeScript in a sandbox where every tool found with search_tools is an async function:',
      '`const rows = await tools.<server>.<tool>({...})` (or `await callTool("server.tool", {...})`).',
      'Top-level await works; use Promise.all for independent calls.',
      'Only what you print (console.log) comes back to you, so filter, aggregate and print just the answer',
      '— never dump raw tool results.',
      'No network, filesystem, timers or imports.',
      `Limits per run: ${Math.round(limits.wallTimeMs / 1000)} s, ${limits.maxToolCalls} tool calls,`,
      `${Math.round(limits.maxStdoutBytes / 1024)} KB of output (longer output is cut).`,
      'You get stdout, stderr and the exit status; on an error, fix the code and run it again.',
      'Pass the same `session` to keep state between runs like a REPL: top-level variables, functions and',
      'fetched data of one run are there in the next, so do not fetch again. If a session expired,',
      'fix nothing: start over (fetch what you need again).',
      'A result too large to copy arrives as a handle (`r.isHandle`, `r.length`, `r.keys`) that stays on the host:',
      'reduce it there with `await r.count(where)`, `r.sum|min|max(field, where)`, `r.groupBy(field, { sum })`,',
      '`r.filter(where)`, `r.pick(fields, { where, limit })` (where = `{ field: value }`), iterate',
      '`for await (const row of r)`, or pass `r` to another tool; a handle lasts one run.',
      ...(limits.store === true
        ? [
            '`await store.set(key, value)` keeps a small JSON value for later runs and sessions;',
            '`await store.get(key)` reads it back (undefined when absent).',
          ]
        : []),
    ].join(' '),
    inputSchema: {
      type: 'object',
      properties: {
        code: { type: 'string', description: 'The script to run (JavaScript or TypeScript).' },
        session: {
          type: 'string',
          minLength: 1,
          maxLength: DEFAULT_SANDBOX_MAX_SESSION_NAME_CHARS,
          pattern: SESSION_NAME.source,
          description:
            'Optional session name: scripts of one session share their globals (variables, functions, data).',
        },
      },
      required: ['code'],
      additionalProperties: false,
    },
  };
}

/** Reads `search_tools` input from untrusted model output; returns an error message or the input. */
export function parseSearchToolsInput(input: unknown): SearchToolsInput | { error: string } {
  if (typeof input !== 'object' || input === null) {
    return { error: 'search_tools expects an object like {"query": "expenses by quarter"}.' };
  }
  const record = input as Record<string, unknown>;
  if (typeof record.query !== 'string' || record.query.trim() === '') {
    return { error: 'search_tools needs "query": a non-empty string describing the tools you need.' };
  }
  const result: SearchToolsInput = { query: record.query };
  if (record.limit !== undefined) {
    if (typeof record.limit !== 'number' || !Number.isInteger(record.limit) || record.limit < 1) {
      return { error: `search_tools "limit" must be an integer from 1 to ${MAX_SEARCH_TOOLS_LIMIT}.` };
    }
    result.limit = Math.min(record.limit, MAX_SEARCH_TOOLS_LIMIT);
  }
  if (record.regex !== undefined) {
    if (typeof record.regex !== 'boolean') return { error: 'search_tools "regex" must be true or false.' };
    result.regex = record.regex;
  }
  return result;
}

/** Reads `execute_code` input from untrusted model output; returns an error message or the input. */
export function parseExecuteCodeInput(input: unknown): ExecuteCodeInput | { error: string } {
  if (typeof input !== 'object' || input === null || typeof (input as { code?: unknown }).code !== 'string') {
    return { error: 'execute_code expects {"code": "<JavaScript or TypeScript>"}.' };
  }
  const code = (input as { code: string }).code;
  if (code.trim() === '') return { error: 'execute_code got empty code; send the script to run.' };
  const session = (input as { session?: unknown }).session;
  if (session === undefined) return { code };
  if (
    typeof session !== 'string' ||
    session.length > DEFAULT_SANDBOX_MAX_SESSION_NAME_CHARS ||
    !SESSION_NAME.test(session)
  ) {
    return {
      error: `execute_code "session" must be a name of 1 to ${DEFAULT_SANDBOX_MAX_SESSION_NAME_CHARS} letters, digits, "_", "-", "." or ":" (for example "main"); leave it out to run without a session.`,
    };
  }
  return { code, session };
}
