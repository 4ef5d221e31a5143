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
}

/** The request, read. */
export interface OpenAIRequest {
  model: string;
  stream: boolean;
  maxOutputTokens?: number;
  instructions?: string;
  programmatic: boolean;
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
    if (tool.type !== 'function')
      throw invalid(
        `${at}.type`,
        `"${String(tool.type)}" is not served here; codecall serves function tools and programmatic_tool_calling.`,
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
    const member = clientMember(name);
    const clash = members.get(member);
    if (clash !== undefined)
      throw invalid(
        `${at}.name`,
        `"${name}" and "${clash}" are the same tool in code (tools.client.${member}); rename one.`,
      );
    members.set(member, name);
    request.clientTools.push({
      name,
      member,
      description: typeof description === 'string' ? description : '',
      inputSchema: isObject(parameters) ? parameters : { type: 'object' },
      direct,
      fromCode,
    });
  });
  if (request.clientTools.some((t) => t.fromCode) && !request.programmatic)
    throw invalid(
      'tools',
      'a tool allows "programmatic" calls, but no {"type": "programmatic_tool_calling"} tool is declared: add it.',
    );
  return request;
}

/** The conversation for the model behind, and the program the last turn paused. */
export interface OpenAIConversation {
  messages: Message[];
  /** System text from `system`/`developer` messages. */
  system: string[];
  paused?: { callId: string; code: string; fingerprint: string; answers: ToolResultAnswer[] };
}

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
    if (type === 'reasoning' || type === 'item_reference') return;
    throw invalid(`${at}.type`, `"${String(type)}" is not accepted here.`);
  });
  const conversation: OpenAIConversation = {
    messages: messages.filter((m) => m.role !== 'tool' || m.results.length > 0),
    system,
  };
  if (open !== undefined) conversation.paused = { ...open, answers };
  return conversation;
}
