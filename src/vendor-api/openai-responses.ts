/**
 * @module
 * `POST /v1/responses` (OpenAI Responses, programmatic tool calling) over any codecall model.
 * The turns run in `vendor-turns.ts`; this file writes them as the Responses API does: code as a
 * `program` item whose `fingerprint` is the signed journal cursor, a script paused on client
 * tools as `function_call` items with `caller: {type: "program", caller_id}`, and the script's
 * end as a `program_output` item. The continuation (the round-tripped `program` item and the
 * `function_call_output` items) resumes the script by journal replay, on any serve process that
 * shares the key and the journals.
 */
import { randomUUID } from 'node:crypto';
import { formatResultForModel } from '../execute/index.js';
import { EXECUTE_CODE_NAME } from '../meta/index.js';
import { modelOf, runIdOf, type VendorContext } from './anthropic-messages.js';
import { DEFAULT_VENDOR_MAX_TOOLS } from '../config/defaults.js';
import { searchToolDefinition } from './client-tool-search.js';
import {
  readOpenAIConversation,
  readOpenAIRequest,
  TOOL_SEARCH_NAME,
  type OpenAIClientTool,
} from './openai-request.js';
import { invalid } from './vendor-error.js';
import { runVendorTurns, type ResumeScript } from './vendor-turns.js';

/** An output item (shapes of the SDK's `ResponseOutputItem`). */
export type ResponseItem = Record<string, unknown> & { type: string; id: string };

/** The response (`Response` of the SDK), the fields codecall fills. */
export interface OpenAIResponse {
  id: string;
  object: 'response';
  created_at: number;
  status: 'completed' | 'incomplete';
  model: string;
  output: ResponseItem[];
  error: null;
  incomplete_details: { reason: 'max_output_tokens' } | null;
  instructions: string | null;
  metadata: Record<string, string>;
  parallel_tool_calls: boolean;
  temperature: number | null;
  tool_choice: 'auto';
  tools: unknown[];
  top_p: number | null;
  usage: {
    input_tokens: number;
    input_tokens_details: { cached_tokens: number };
    output_tokens: number;
    output_tokens_details: { reasoning_tokens: number };
    total_tokens: number;
  };
}

const programCallIdOf = (runId: string): string => `call_prog_${runId}`;
const nestedCallIdOf = (runId: string, index: number): string => `call_${runId}_${index}`;
const itemId = (prefix: string): string => `${prefix}_${randomUUID().replaceAll('-', '')}`;

/** A client tool as the SDK's `FunctionTool` (what a `tool_search_output` loads). */
function functionTool(tool: OpenAIClientTool): Record<string, unknown> {
  return {
    type: 'function',
    name: tool.name,
    description: tool.description,
    parameters: tool.inputSchema,
    strict: tool.strict,
    defer_loading: tool.deferLoading,
    ...(tool.allowedCallers !== undefined ? { allowed_callers: tool.allowedCallers } : {}),
  };
}

/** The request's tools plus those a client's searches loaded that it lacks, bounded. */
function withSearched(tools: OpenAIClientTool[], searched: readonly OpenAIClientTool[]): OpenAIClientTool[] {
  const names = new Set(tools.map((t) => t.name));
  const members = new Map(tools.map((t) => [t.member, t.name]));
  const all = [...tools];
  for (const tool of searched) {
    if (names.has(tool.name)) continue;
    const clash = members.get(tool.member);
    if (clash !== undefined)
      throw invalid(
        'input',
        `the tool_search_output tool "${tool.name}" and "${clash}" are the same tool in code (tools.client.${tool.member}); rename one.`,
      );
    names.add(tool.name);
    members.set(tool.member, tool.name);
    all.push(tool);
  }
  if (all.length > DEFAULT_VENDOR_MAX_TOOLS)
    throw invalid(
      'input',
      `tools and tool_search_output items declare ${all.length} tools; at most ${DEFAULT_VENDOR_MAX_TOOLS} are accepted.`,
    );
  return all;
}

/** Answers one Responses request (`stream` is written by the caller). */
export async function createResponse(
  body: unknown,
  context: VendorContext,
  signal?: AbortSignal,
): Promise<OpenAIResponse> {
  const request = readOpenAIRequest(body);
  const model = modelOf(context, request.model);
  const conversation = readOpenAIConversation(request.input, EXECUTE_CODE_NAME);
  let resume: ResumeScript | undefined;
  if (conversation.paused !== undefined) {
    const { callId, code, fingerprint, answers } = conversation.paused;
    const runId = runIdOf(context, fingerprint, 'fingerprint', programCallIdOf, callId);
    resume = { runId, code, callId, answers, idOf: (index) => nestedCallIdOf(runId, index), param: 'input' };
  }
  const system = [request.instructions, ...conversation.system].filter(
    (s): s is string => s !== undefined && s !== '',
  );
  const clientTools = withSearched(request.clientTools, conversation.searched);
  const search = request.toolSearch;
  const turns = await runVendorTurns({
    context,
    model,
    system: system.length > 0 ? system.join('\n\n') : undefined,
    messages: conversation.messages,
    clientTools,
    toolSearch:
      search === undefined
        ? undefined
        : {
            name: TOOL_SEARCH_NAME,
            execution: search.execution,
            mode: 'hybrid',
            ...searchToolDefinition({
              name: TOOL_SEARCH_NAME,
              mode: 'hybrid',
              // The Responses API shows deferred functions' names and descriptions; the schemas load on search.
              listed: clientTools.filter((t) => t.deferLoading),
              description: search.description,
              parameters: search.parameters,
            }),
          },
    loaded: conversation.loaded,
    maxOutputTokens: request.maxOutputTokens,
    resume,
    signal,
    resultText: formatResultForModel,
  });
  const output: ResponseItem[] = [];
  for (const turn of turns.outputs) {
    if (turn.type === 'text')
      output.push({
        type: 'message',
        id: itemId('msg'),
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: turn.text, annotations: [] }],
      });
    else if (turn.type === 'code')
      output.push({
        type: 'program',
        id: itemId('prog'),
        call_id: programCallIdOf(turn.runId),
        code: turn.code,
        fingerprint: context.signer.sign({ runId: turn.runId, expiresAt: turn.expiresAt }),
      });
    else if (turn.type === 'code_result')
      output.push({
        type: 'program_output',
        id: itemId('progout'),
        call_id: programCallIdOf(turn.runId),
        result: formatResultForModel(turn.result),
        status: turn.result.status === 'ok' ? 'completed' : 'incomplete',
      });
    else if (turn.type === 'tool_search') {
      output.push({
        type: 'tool_search_call',
        id: itemId('tsc'),
        call_id: turn.id,
        arguments: turn.input ?? {},
        execution: 'server',
        status: 'completed',
      });
      const byName = new Map(clientTools.map((t) => [t.name, t]));
      output.push({
        type: 'tool_search_output',
        id: itemId('tso'),
        call_id: turn.id,
        execution: 'server',
        status: turn.answer.ok ? 'completed' : 'incomplete',
        tools: turn.answer.ok
          ? turn.answer.names.flatMap((n) => {
              const tool = byName.get(n);
              return tool === undefined ? [] : [functionTool(tool)];
            })
          : [],
      });
    } else if (turn.type === 'tool_search_call')
      output.push({
        type: 'tool_search_call',
        id: itemId('tsc'),
        call_id: turn.id,
        arguments: turn.input ?? {},
        execution: 'client',
        status: 'completed',
      });
    else if (turn.type === 'direct_call')
      output.push({
        type: 'function_call',
        id: itemId('fc'),
        call_id: turn.id,
        name: turn.name,
        arguments: JSON.stringify(turn.input ?? {}),
        status: 'completed',
        caller: { type: 'direct' },
      });
    else
      for (const call of turn.calls)
        output.push({
          type: 'function_call',
          id: itemId('fc'),
          call_id: nestedCallIdOf(turn.runId, call.index),
          name: call.name,
          arguments: JSON.stringify(call.input ?? {}),
          status: 'completed',
          caller: { type: 'program', caller_id: programCallIdOf(turn.runId) },
        });
  }
  const cut = turns.stop === 'max_tokens';
  return {
    id: itemId('resp'),
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: cut ? 'incomplete' : 'completed',
    model: request.model,
    output,
    error: null,
    incomplete_details: cut ? { reason: 'max_output_tokens' } : null,
    instructions: request.instructions ?? null,
    metadata: {},
    parallel_tool_calls: true,
    temperature: null,
    tool_choice: 'auto',
    tools: [],
    top_p: null,
    usage: {
      input_tokens: turns.usage.input,
      input_tokens_details: { cached_tokens: turns.usage.cacheRead },
      output_tokens: turns.usage.output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: turns.usage.input + turns.usage.output,
    },
  };
}

/** The server-sent events of a finished response, in the order the Responses stream sends them. */
export function responseEvents(response: OpenAIResponse): { event: string; data: Record<string, unknown> }[] {
  const events: { event: string; data: Record<string, unknown> }[] = [];
  let sequence = 0;
  const push = (type: string, data: Record<string, unknown>): void => {
    events.push({ event: type, data: { type, sequence_number: sequence++, ...data } });
  };
  const started = { ...response, status: 'in_progress', output: [] };
  push('response.created', { response: started });
  push('response.in_progress', { response: started });
  response.output.forEach((item, index) => {
    push('response.output_item.added', { output_index: index, item });
    push('response.output_item.done', { output_index: index, item });
  });
  push(response.status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
  return events;
}
