/**
 * @module
 * Reads an OpenAI Responses request (untrusted JSON) for programmatic tool calling: function
 * tools with `allowed_callers` (`"direct"`, `"programmatic"`), the `programmatic_tool_calling`
 * tool, and the input items (messages, `function_call`, `function_call_output`, `program`,
 * `program_output`) as codecall messages for the model behind. Shapes follow the official SDK's
 * types (`openai` `resources/responses/responses.d.ts`: `FunctionTool.allowed_callers`,
 * `ResponseInputItem.Program`/`ProgramOutput`, `ResponseFunctionToolCall.caller`).
 */
import { DEFAULT_VENDOR_MAX_MESSAGES, DEFAULT_VENDOR_MAX_TOOLS } from '../config/defaults.js';
import type { AssistantMessage, Message, ToolResult } from '../providers/language-model.js';
import type { ToolResultAnswer } from './anthropic-request.js';
import { clientMember, type ClientTool } from './script-turn.js';
import { invalid } from './vendor-error.js';

/** A function tool with who may call it. */
export interface OpenAIClientTool extends ClientTool {
  direct: boolean;
  fromCode: boolean;
  deferLoading: boolean;
  /** `strict` as the client sent it (echoed in a `tool_search_output`). */
  strict: boolean | null;
  /** `allowed_callers` as the client sent it (echoed likewise). */
  allowedCallers: ('direct' | 'programmatic')[] | undefined;
}

/** The request's `tool_search` tool (the SDK's `ToolSearchTool`). */
export interface OpenAIToolSearch {
  execution: 'server' | 'client';
  description?: string;
  parameters?: Record<string, unknown>;
}

/** The request, read. */
export interface OpenAIRequest {
  model: string;
  stream: boolean;
  maxOutputTokens?: number;
  instructions?: string;
  programmatic: boolean;
  toolSearch?: OpenAIToolSearch;
  clientTools: OpenAIClientTool[];
  input: unknown[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads and bounds a request body. */
export function readOpenAIRequest(body: unknown, maxTools = DEFAULT_VENDOR_MAX_TOOLS): OpenAIRequest {
  if (!isObject(body)) throw invalid('body', 'the request body must be a JSON object.');
  const { model, input, tools = [], stream = false, instructions, max_output_tokens: max } = body;
  if (typeof model !== 'string' || model === '')
    throw invalid('model', 'is required (a model name from serve.models, or "demo").');
  const items: unknown[] =
    typeof input === 'string'
      ? [{ type: 'message', role: 'user', content: input }]
      : Array.isArray(input)
        ? input
        : [];
  if (items.length === 0) throw invalid('input', 'must be a string or a non-empty list of items.');
  if (items.length > DEFAULT_VENDOR_MAX_MESSAGES)
    throw invalid('input', `has ${items.length} items; at most ${DEFAULT_VENDOR_MAX_MESSAGES} are accepted.`);
  if (!Array.isArray(tools)) throw invalid('tools', 'must be a list.');
  if (tools.length > maxTools)
    throw invalid('tools', `has ${tools.length} tools; at most ${maxTools} are accepted.`);
  if (typeof stream !== 'boolean') throw invalid('stream', 'must be a boolean.');
  if (instructions !== undefined && instructions !== null && typeof instructions !== 'string')
    throw invalid('instructions', 'must be a string.');
  if (max !== undefined && max !== null && (typeof max !== 'number' || !Number.isInteger(max) || max < 1))
    throw invalid('max_output_tokens', 'must be a positive integer.');
  const request: OpenAIRequest = { model, stream, programmatic: false, clientTools: [], input: items };
  if (typeof instructions === 'string') request.instructions = instructions;
  if (typeof max === 'number') request.maxOutputTokens = max;
  const members = new Map<string, string>();
  tools.forEach((tool: unknown, i) => {
    const at = `tools[${i}]`;
    if (!isObject(tool)) throw invalid(at, 'must be an object.');
    if (tool.type === 'programmatic_tool_calling') {
      request.programmatic = true;
      return;
    }
    if (tool.type === 'tool_search') {
      if (request.toolSearch !== undefined) throw invalid(at, 'only one tool_search tool may be declared.');
      const { execution = 'server', description, parameters } = tool;
      if (execution !== 'server' && execution !== 'client')
        throw invalid(`${at}.execution`, 'must be "server" or "client".');
      if (description !== undefined && description !== null && typeof description !== 'string')
        throw invalid(`${at}.description`, 'must be a string.');
      if (parameters !== undefined && parameters !== null && !isObject(parameters))
        throw invalid(`${at}.parameters`, 'must be a JSON Schema object.');
      request.toolSearch = {
        execution,
        ...(typeof description === 'string' ? { description } : {}),
        ...(isObject(parameters) ? { parameters } : {}),
      };
      return;
    }
    const read = readFunctionTool(tool, at);
    const { name, member } = read;
    const clash = members.get(member);
    if (clash !== undefined)
      throw invalid(
        `${at}.name`,
        `"${name}" and "${clash}" are the same tool in code (tools.client.${member}); rename one.`,
      );
    members.set(member, name);
    request.clientTools.push(read);
  });
  if (request.clientTools.some((t) => t.fromCode) && !request.programmatic)
    throw invalid(
      'tools',
      'a tool allows "programmatic" calls, but no {"type": "programmatic_tool_calling"} tool is declared: add it.',
    );
  if (request.clientTools.some((t) => t.deferLoading) && request.toolSearch === undefined)
    throw invalid(
      'tools',
      'a function tool has defer_loading: true, but no {"type": "tool_search"} tool is declared: add it.',
    );
  return request;
}

/** Reads one `{"type": "function"}` tool (of `tools`, or of a client's `tool_search_output`). */
export function readFunctionTool(tool: Record<string, unknown>, at: string): OpenAIClientTool {
  if (tool.type !== 'function')
    throw invalid(
      `${at}.type`,
      `"${String(tool.type)}" is not served here; codecall serves function tools, programmatic_tool_calling and tool_search.`,
    );
  const { name, description, parameters, allowed_callers: callers } = tool;
  if (typeof name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(name))
    throw invalid(`${at}.name`, 'must match ^[a-zA-Z0-9_-]{1,64}$.');
  let direct = true;
  let fromCode = false;
  if (callers !== undefined && callers !== null) {
    if (!Array.isArray(callers) || callers.length === 0)
      throw invalid(`${at}.allowed_callers`, 'must be a non-empty list.');
    const unknown = callers.find((c) => c !== 'direct' && c !== 'programmatic');
    if (unknown !== undefined)
      throw invalid(
        `${at}.allowed_callers`,
        `"${String(unknown)}" is not a caller; use "direct" and/or "programmatic".`,
      );
    direct = callers.includes('direct');
    fromCode = callers.includes('programmatic');
  }
  const { strict, defer_loading: defer } = tool;
  if (defer !== undefined && defer !== null && typeof defer !== 'boolean')
    throw invalid(`${at}.defer_loading`, 'must be a boolean.');
  return {
    name,
    member: clientMember(name),
    description: typeof description === 'string' ? description : '',
    inputSchema: isObject(parameters) ? parameters : { type: 'object' },
    direct,
    fromCode,
    deferLoading: defer === true,
    strict: typeof strict === 'boolean' ? strict : null,
    allowedCallers: Array.isArray(callers) ? (callers as ('direct' | 'programmatic')[]) : undefined,
  };
}

/** The conversation for the model behind, and the program the last turn paused. */
export interface OpenAIConversation {
  messages: Message[];
  /** System text from `system`/`developer` messages. */
  system: string[];
  paused?: { callId: string; code: string; fingerprint: string; answers: ToolResultAnswer[] };
  /** Function tools loaded by earlier `tool_search_output` items, by name. */
  loaded: Set<string>;
  /** Function tools a client's `tool_search_output` brought that the request's `tools` lack. */
  searched: OpenAIClientTool[];
}

/** Name of the `tool_search` tool for the model behind. */
export const TOOL_SEARCH_NAME = 'tool_search';

function textOf(content: unknown, at: string): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalid(`${at}.content`, 'must be a string or a list of content parts.');
  return content
    .map((part, j) => {
      if (
        isObject(part) &&
        (part.type === 'input_text' || part.type === 'output_text') &&
        typeof part.text === 'string'
      )
        return part.text;
      throw invalid(`${at}.content[${j}]`, 'only input_text and output_text parts are accepted here.');
    })
    .join('\n');
}

function parseValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Reads the input items into the model's conversation (see the module comment). */
export function readOpenAIConversation(items: readonly unknown[], codeToolName: string): OpenAIConversation {
  const messages: Message[] = [];
  const system: string[] = [];
  const fromCode = new Set<string>();
  let assistant: AssistantMessage | undefined;
  let tool: { role: 'tool'; results: ToolResult[] } | undefined;
  let open: { callId: string; code: string; fingerprint: string } | undefined;
  let answers: ToolResultAnswer[] = [];
  const loaded = new Set<string>();
  const searched = new Map<string, OpenAIClientTool>();
  const flushAssistant = (): AssistantMessage => {
    if (tool !== undefined) tool = undefined;
    if (assistant === undefined) {
      assistant = { role: 'assistant', content: [] };
      messages.push(assistant);
    }
    return assistant;
  };
  const toolMessage = (): { role: 'tool'; results: ToolResult[] } => {
    assistant = undefined;
    if (tool === undefined) {
      tool = { role: 'tool', results: [] };
      messages.push(tool);
    }
    return tool;
  };
  items.forEach((item, i) => {
    const at = `input[${i}]`;
    if (!isObject(item)) throw invalid(at, 'must be an object.');
    const type = item.type ?? 'message';
    if (type === 'message') {
      const role = item.role;
      if (role === 'assistant') {
        flushAssistant().content.push({ type: 'text', text: textOf(item.content, at) });
        return;
      }
      if (role === 'system' || role === 'developer') {
        system.push(textOf(item.content, at));
        return;
      }
      if (role !== 'user') throw invalid(`${at}.role`, 'must be user, assistant, system or developer.');
      assistant = undefined;
      tool = undefined;
      answers = [];
      messages.push({ role: 'user', content: textOf(item.content, at) });
      return;
    }
    if (type === 'function_call') {
      const { call_id: callId, name, arguments: args, caller } = item;
      if (typeof callId !== 'string' || typeof name !== 'string')
        throw invalid(at, 'a function_call needs call_id and name.');
      if (isObject(caller) && caller.type === 'program') {
        fromCode.add(callId);
        return;
      }
      flushAssistant().content.push({
        type: 'tool_call',
        id: callId,
        name,
        input: typeof args === 'string' ? parseValue(args) : {},
      });
      return;
    }
    if (type === 'function_call_output') {
      const { call_id: callId, output } = item;
      if (typeof callId !== 'string') throw invalid(`${at}.call_id`, 'must be a string.');
      const text = typeof output === 'string' ? output : JSON.stringify(output);
      if (fromCode.has(callId)) answers.push({ toolUseId: callId, ok: true, value: parseValue(text), text });
      else toolMessage().results.push({ toolCallId: callId, content: text });
      return;
    }
    if (type === 'program') {
      const { call_id: callId, code, fingerprint } = item;
      if (typeof callId !== 'string' || typeof code !== 'string' || typeof fingerprint !== 'string')
        throw invalid(at, 'a program item needs call_id, code and fingerprint, as they came.');
      flushAssistant().content.push({ type: 'tool_call', id: callId, name: codeToolName, input: { code } });
      open = { callId, code, fingerprint };
      answers = [];
      return;
    }
    if (type === 'program_output') {
      const { call_id: callId, result } = item;
      if (typeof callId !== 'string') throw invalid(`${at}.call_id`, 'must be a string.');
      toolMessage().results.push({ toolCallId: callId, content: typeof result === 'string' ? result : '' });
      if (open?.callId === callId) open = undefined;
      return;
    }
    if (type === 'tool_search_call') {
      const callId = typeof item.call_id === 'string' ? item.call_id : item.id;
      if (typeof callId !== 'string') throw invalid(`${at}.call_id`, 'a tool_search_call needs its call_id.');
      flushAssistant().content.push({
        type: 'tool_call',
        id: callId,
        name: TOOL_SEARCH_NAME,
        input: typeof item.arguments === 'string' ? parseValue(item.arguments) : item.arguments,
      });
      return;
    }
    if (type === 'tool_search_output') {
      const callId = item.call_id;
      if (typeof callId !== 'string')
        throw invalid(`${at}.call_id`, 'must be the call_id of its tool_search_call.');
      if (!Array.isArray(item.tools)) throw invalid(`${at}.tools`, 'must be a list of tools.');
      const names = item.tools.map((tool: unknown, j) => {
        const where = `${at}.tools[${j}]`;
        if (!isObject(tool) || tool.type !== 'function')
          throw invalid(`${where}.type`, 'only function tools are loaded by a tool search here.');
        const read = readFunctionTool(tool, where);
        searched.set(read.name, { ...read, deferLoading: false });
        loaded.add(read.name);
        return read.name;
      });
      toolMessage().results.push({
        toolCallId: callId,
        content:
          names.length === 0
            ? 'No tool matched. Try other words.'
            : `Loaded ${names.length} tool(s); they are callable now: ${names.join(', ')}`,
      });
      return;
    }
    if (type === 'reasoning' || type === 'item_reference') return;
    throw invalid(`${at}.type`, `"${String(type)}" is not accepted here.`);
  });
  const conversation: OpenAIConversation = {
    messages: messages.filter((m) => m.role !== 'tool' || m.results.length > 0),
    system,
    loaded,
    searched: [...searched.values()],
  };
  if (open !== undefined) conversation.paused = { ...open, answers };
  return conversation;
}
