/**
 * @module
 * The handler table both MCP eras answer from: the 2025-11-25 server (create-codecall-server.ts,
 * SDK 1.x, one per session) and the 2026-07-28 legs (modern-http.ts, SDK v2, one server per
 * stateless request or stdio connection). What differs between the eras (sessions, progress,
 * elicitation against `input_required`, tasks) stays with each; what a tool list, a search or a
 * failure looks like is written once here. The gateway's resources, prompts and completion are
 * the same kind of table ({@link gatewayRequests} in gateway.ts).
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import {
  executeCodeDefinition,
  parseSearchToolsInput,
  renderSearchResult,
  searchToolsDefinition,
} from '../meta/index.js';
import { isCodecallError } from '../errors.js';
import type { CodecallRuntime } from '../execute/index.js';
import type { CatalogTool } from '../tools/index.js';
import { waitForStartingServers } from './starting-servers.js';

export function textResult(text: string, isError = false): CallToolResult {
  return { content: [{ type: 'text', text }], ...(isError ? { isError: true } : {}) };
}

/**
 * The text a client sees for a failure. A CodecallError's message is written for callers; any
 * other error's message may carry host data (paths, stack details), so the client gets only its
 * name and the whole error goes to `onError` (the server's log).
 */
export function errorText(error: unknown, onError: ((error: unknown) => void) | undefined): string {
  if (isCodecallError(error)) return error.message;
  try {
    onError?.(error);
  } catch {
    // A listener's failure must not fail the call.
  }
  const name = error instanceof Error ? error.name : typeof error;
  return `codecall failed unexpectedly (${name}); the server's log has the details.`;
}

/**
 * A note on the MCP servers that are not connected (still starting, reconnecting, failed), for
 * the results of `search_tools` and `execute_code`; undefined when all are. Reasons are the
 * pool's public ones: no command lines, paths or stderr.
 */
export function serverNote(runtime: CodecallRuntime): string | undefined {
  const starting: string[] = [];
  const failed: string[] = [];
  for (const status of runtime.tools.serverStatus()) {
    if (status.state === 'connecting' || status.state === 'reconnecting')
      starting.push(`"${status.name}"${status.state === 'reconnecting' ? ' (reconnecting)' : ''}`);
    else if (status.state === 'failed')
      failed.push(`"${status.name}" (${status.publicReason ?? 'it failed to start'})`);
  }
  const parts: string[] = [];
  if (starting.length > 0)
    parts.push(
      `MCP servers still starting: ${starting.join(', ')}; their tools are not available yet (the tool list changes when they are).`,
    );
  if (failed.length > 0)
    parts.push(`MCP servers that failed: ${failed.join(', ')}; their tools are unavailable.`);
  return parts.length > 0 ? `Note: ${parts.join(' ')}` : undefined;
}

/** `result` with the server note (if any) as a last text block. */
export function withServerNote(result: CallToolResult, runtime: CodecallRuntime): CallToolResult {
  const note = serverNote(runtime);
  return note === undefined
    ? result
    : { ...result, content: [...result.content, { type: 'text', text: note }] };
}

/** `tools/list`: `search_tools`, `execute_code`, then the pass-through tools `direct`, in a stable order. */
export function listCodecallTools(
  runtime: CodecallRuntime,
  direct: ReadonlyMap<string, CatalogTool>,
  options: { executeAsTask?: boolean } = {},
): Tool[] {
  const search = searchToolsDefinition();
  const execute = executeCodeDefinition({
    ...runtime.config.sandbox.limits,
    store: runtime.scriptStore !== undefined,
  });
  const tools: Tool[] = [
    {
      name: search.name,
      description: search.description,
      inputSchema: search.inputSchema as Tool['inputSchema'],
      annotations: { title: 'Search tools', readOnlyHint: true, openWorldHint: false },
    },
    {
      name: execute.name,
      description: execute.description,
      inputSchema: execute.inputSchema as Tool['inputSchema'],
      annotations: { title: 'Execute code' },
      // 2025-11-25 tasks: a client may run it as a task (then it runs on the job backend).
      ...(options.executeAsTask === true ? { execution: { taskSupport: 'optional' as const } } : {}),
    },
  ];
  for (const [name, tool] of direct) {
    const entry: Tool = {
      name,
      description: tool.description,
      inputSchema: tool.inputSchema as Tool['inputSchema'],
    };
    if (tool.title !== undefined) entry.title = tool.title;
    if (tool.outputSchema !== undefined) entry.outputSchema = tool.outputSchema as Tool['outputSchema'];
    if (tool.annotations !== undefined) entry.annotations = { ...tool.annotations };
    tools.push(entry);
  }
  return tools;
}

/** Options of {@link searchToolsCall}. */
export interface SearchToolsCallOptions {
  /** The pass-through tools, by the name the client calls them with. */
  direct: ReadonlyMap<string, CatalogTool>;
  /** Milliseconds to wait for MCP servers still starting before ranking. */
  waitForServersMs: number;
  signal: AbortSignal;
  onError: ((error: unknown) => void) | undefined;
}

/**
 * A `search_tools` call. `query` is the query that ranked (not a regex search), for the session's
 * query feedback where there is a session.
 */
export async function searchToolsCall(
  runtime: CodecallRuntime,
  args: Record<string, unknown>,
  options: SearchToolsCallOptions,
): Promise<{ result: CallToolResult; query?: string }> {
  const input = parseSearchToolsInput(args);
  if ('error' in input) return { result: textResult(input.error, true) };
  try {
    // A client that searches right after connecting gets the servers still starting too.
    await waitForStartingServers(runtime.tools, options.waitForServersMs, options.signal);
    const found = await runtime.findTools(input.query, {
      ...(input.limit !== undefined ? { limit: input.limit } : {}),
      ...(input.regex !== undefined ? { regex: input.regex } : {}),
    });
    const directName = (tool: CatalogTool): string | undefined => {
      for (const [exposed, candidate] of options.direct) if (candidate.name === tool.name) return exposed;
      return undefined;
    };
    const result = withServerNote(
      textResult(renderSearchResult(found, { query: input.query, directName })),
      runtime,
    );
    return input.regex === true ? { result } : { result, query: input.query };
  } catch (error) {
    return { result: textResult(errorText(error, options.onError), true) };
  }
}
