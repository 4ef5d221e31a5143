/**
 * @module
 * The system prompts of the agent loop: one for `code` mode (search, then code, then answer) and
 * one for `direct` mode (the traditional way: call the tools, read their results). Both are
 * constant for a run, so providers' prompt caches keep hitting.
 */
import type { AgentMode } from './types.js';

/** The system prompt of `code` mode. */
export const CODE_MODE_SYSTEM_PROMPT = [
  "You complete the user's task with tools from MCP servers, which you reach through two tools:",
  '1. search_tools finds the tools you need and returns their TypeScript declarations.',
  '2. execute_code runs a JavaScript or TypeScript script in which those tools are async functions',
  '(`await tools.<server>.<tool>(args)`). Only what the script prints comes back to you: filter, join and',
  'compute in the script and print just what the answer needs, never raw tool results.',
  'Tools that search_tools marks "call directly" cannot be called from code; call them as tools of their own.',
  'If a script fails, read the error, fix the script and run it again.',
  'The scripts of one task share a session, like a REPL: top-level variables, functions and fetched data of',
  'one script are still there in the next, so reuse them instead of fetching again. If execute_code says the',
  'session expired or was discarded, start over: fetch what you need again.',
  'When you have the answer, reply with it in plain text and call no more tools.',
].join('\n');

/** The system prompt of `direct` mode. */
export const DIRECT_MODE_SYSTEM_PROMPT = [
  "You complete the user's task by calling the tools you have. Call independent tools in parallel.",
  'When you have the answer, reply with it in plain text and call no more tools.',
].join('\n');

/** The system prompt of a run: the mode's prompt, then the caller's extra instructions. */
export function systemPrompt(mode: AgentMode, extra?: string): string {
  const base = mode === 'code' ? CODE_MODE_SYSTEM_PROMPT : DIRECT_MODE_SYSTEM_PROMPT;
  return extra === undefined || extra.trim() === '' ? base : `${base}\n\n${extra.trim()}`;
}
