/**
 * @module
 * Reads an Anthropic Messages request (untrusted JSON) into what the run needs: the tools
 * (`code_execution_20250825`/`_20260120`, client tools with `allowed_callers`, tool search) and
 * the conversation as codecall messages for the model behind. Shapes follow the official SDK's
 * types (`@anthropic-ai/sdk` `resources/messages/messages.d.ts`: `ToolUnion`, `MessageParam`,
 * `ServerToolUseBlockParam`, `ToolResultBlockParam`, `CodeExecutionToolResultBlockParam`).
 */
import { DEFAULT_VENDOR_MAX_MESSAGES, DEFAULT_VENDOR_MAX_TOOLS } from '../config/defaults.js';
import type { Message, ToolCallPart, ToolResult } from '../providers/language-model.js';
import { clientMember, type ClientTool } from './script-turn.js';
import { invalid } from './vendor-error.js';

/** `code_execution` tool versions served (Anthropic's `type` field). */
export const CODE_EXECUTION_TYPES = ['code_execution_20250825', 'code_execution_20260120'] as const;
/** Tool search tool versions served (the SDK's `ToolSearchToolBm25_20251119`, `ToolSearchToolRegex20251119`). */
export const TOOL_SEARCH_TYPES = [
  'tool_search_tool_bm25_20251119',
  'tool_search_tool_bm25',
  'tool_search_tool_regex_20251119',
  'tool_search_tool_regex',
] as const;

export type CodeExecutionType = (typeof CODE_EXECUTION_TYPES)[number];

/** A client tool with who may call it. */
export interface AnthropicClientTool extends ClientTool {
  direct: boolean;
  fromCode: boolean;
  deferLoading: boolean;
}

/** The request, read. */
export interface AnthropicRequest {
  model: string;
  maxTokens: number;
  stream: boolean;
  system?: string;
  codeExecution?: CodeExecutionType;
  /** The tool search tool: its variant and its name (`tool_search_tool_bm25` / `_regex`). */
  toolSearch?: { kind: 'bm25' | 'regex'; name: string };
  clientTools: AnthropicClientTool[];
  messages: unknown[];
  container?: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function systemText(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  if (Array.isArray(value))
    return value
      .map((b, i) => {
        if (!isObject(b) || b.type !== 'text' || typeof b.text !== 'string')
          throw invalid(`system.${i}`, 'only text blocks are accepted in system.');
        return b.text;
      })
      .join('\n');
  throw invalid('system', 'must be a string or a list of text blocks.');
}

/** Reads and bounds a request body. */
export function readAnthropicRequest(body: unknown, maxTools = DEFAULT_VENDOR_MAX_TOOLS): AnthropicRequest {
  if (!isObject(body)) throw invalid('body', 'the request body must be a JSON object.');
  const { model, max_tokens: maxTokens, messages, tools = [], stream = false, container } = body;
  if (typeof model !== 'string' || model === '')
    throw invalid('model', 'is required (a model name from serve.models, or "demo").');
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1)
    throw invalid('max_tokens', 'is required: a positive integer.');
  if (!Array.isArray(messages) || messages.length === 0)
    throw invalid('messages', 'must be a non-empty list.');
  if (messages.length > DEFAULT_VENDOR_MAX_MESSAGES)
    throw invalid(
      'messages',
      `has ${messages.length} messages; at most ${DEFAULT_VENDOR_MAX_MESSAGES} are accepted.`,
    );
  if (!Array.isArray(tools)) throw invalid('tools', 'must be a list.');
  if (tools.length > maxTools)
    throw invalid('tools', `has ${tools.length} tools; at most ${maxTools} are accepted.`);
  if (typeof stream !== 'boolean') throw invalid('stream', 'must be a boolean.');
  let containerId: string | undefined;
  if (container !== undefined && container !== null) {
    if (typeof container === 'string') containerId = container;
    else if (isObject(container) && typeof container.id === 'string') containerId = container.id;
    else throw invalid('container', 'must be the container id of the earlier response.');
  }
  const request: AnthropicRequest = {
    model,
    maxTokens,
    stream,
    clientTools: [],
    messages,
    ...(containerId !== undefined ? { container: containerId } : {}),
  };
  const system = systemText(body.system);
  if (system !== undefined) request.system = system;
  const members = new Map<string, string>();
  tools.forEach((tool: unknown, i) => {
    const at = `tools.${i}`;
    if (!isObject(tool)) throw invalid(at, 'must be an object.');
    const type = tool.type;
    if (typeof type === 'string' && (CODE_EXECUTION_TYPES as readonly string[]).includes(type)) {
      request.codeExecution = type as CodeExecutionType;
      return;
    }
    if (typeof type === 'string' && (TOOL_SEARCH_TYPES as readonly string[]).includes(type)) {
      const kind = type.includes('regex') ? 'regex' : 'bm25';
      const expected = `tool_search_tool_${kind}`;
      if (tool.name !== expected) throw invalid(`${at}.name`, `must be "${expected}" for ${type}.`);
      if (tool.defer_loading === true)
        throw invalid(`${at}.defer_loading`, 'the tool search tool itself cannot be deferred; remove it.');
      if (request.toolSearch !== undefined) throw invalid(at, 'only one tool search tool may be declared.');
      request.toolSearch = { kind, name: expected };
      return;
    }
    if (type !== undefined && type !== 'custom')
      throw invalid(
        `${at}.type`,
        `"${String(type)}" is not served here; codecall serves ${[...CODE_EXECUTION_TYPES, ...TOOL_SEARCH_TYPES].join(', ')} and client tools.`,
      );
    const {
      name,
      description = '',
      input_schema: schema,
      allowed_callers: callers,
      defer_loading: defer,
    } = tool;
    if (typeof name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(name))
      throw invalid(`${at}.name`, 'must match ^[a-zA-Z0-9_-]{1,64}$.');
    if (!isObject(schema)) throw invalid(`${at}.input_schema`, 'must be a JSON Schema object.');
    if (typeof description !== 'string') throw invalid(`${at}.description`, 'must be a string.');
    let direct = true;
    let fromCode = false;
    if (callers !== undefined) {
      if (!Array.isArray(callers) || callers.length === 0)
        throw invalid(`${at}.allowed_callers`, 'must be a non-empty list.');
      direct = callers.includes('direct');
      fromCode = callers.some((c) => (CODE_EXECUTION_TYPES as readonly unknown[]).includes(c));
      const unknown = callers.find(
        (c) => c !== 'direct' && !(CODE_EXECUTION_TYPES as readonly unknown[]).includes(c),
      );
      if (unknown !== undefined)
        throw invalid(
          `${at}.allowed_callers`,
          `"${String(unknown)}" is not a caller; use "direct" and/or ${CODE_EXECUTION_TYPES.join(' or ')}.`,
        );
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
      description,
      inputSchema: schema,
      direct,
      fromCode,
      deferLoading: defer === true,
    });
  });
  if (request.clientTools.some((t) => t.fromCode) && request.codeExecution === undefined)
    throw invalid(
      'tools',
      `a tool allows calls from code, but no code execution tool is declared: add {"type": "${CODE_EXECUTION_TYPES[0]}", "name": "code_execution"}.`,
    );
  if (request.clientTools.some((t) => t.deferLoading) && request.toolSearch === undefined)
    throw invalid(
      'tools',
      `a tool has defer_loading: true, but no tool search tool is declared: add {"type": "${TOOL_SEARCH_TYPES[0]}", "name": "tool_search_tool_bm25"}.`,
    );
  return request;
}

/** A client tool_result answering a call the script made. */
export interface ToolResultAnswer {
  toolUseId: string;
  ok: boolean;
  value: unknown;
  text: string;
}

/** The conversation for the model behind, and the script the last turn paused. */
export interface AnthropicConversation {
  messages: Message[];
  /** The paused script, when the last assistant turn ended in one waiting for client calls. */
  paused?: { serverToolUseId: string; code: string; answers: ToolResultAnswer[] };
  /** Tools loaded by earlier searches: `tool_reference`s of `tool_search_tool_result` blocks and of the client's own `tool_result`s. */
  loaded: Set<string>;
}

/** Client tool names of the `tool_reference` blocks in `blocks` (bounded by the message bound on the caller's side). */
function referencesIn(blocks: unknown): string[] {
  if (!Array.isArray(blocks)) return [];
  return blocks.flatMap((b) =>
    isObject(b) && b.type === 'tool_reference' && typeof b.tool_name === 'string' ? [b.tool_name] : [],
  );
}

/** The text the model behind reads for a search result block. */
function searchResultText(content: unknown): string {
  if (!isObject(content)) return 'Error: the search failed.';
  if (content.type === 'tool_search_tool_result_error')
    return `Error (${String(content.error_code)}): ${typeof content.error_message === 'string' ? content.error_message : 'the search failed.'}`;
  const names = referencesIn(content.tool_references);
  return names.length === 0
    ? 'No tool matched. Try other words.'
    : `Loaded ${names.length} tool(s); they are callable now: ${names.join(', ')}`;
}

function resultText(content: unknown): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((b) =>
        isObject(b) && b.type === 'text' && typeof b.text === 'string' ? b.text : JSON.stringify(b),
      )
      .join('\n');
  return JSON.stringify(content);
}

function parseValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Text of a `code_execution_tool_result`, as the model behind read it first. */
export function codeResultText(content: unknown): string {
  if (!isObject(content)) return 'exit status: error';
  if (content.type === 'code_execution_tool_result_error')
    return `exit status: error (${String(content.error_code)})`;
  const stdout = typeof content.stdout === 'string' ? content.stdout.replace(/\n$/, '') : '';
  const stderr = typeof content.stderr === 'string' ? content.stderr.replace(/\n$/, '') : '';
  const parts = [stdout === '' ? 'stdout: (empty)' : `stdout:\n${stdout}`];
  if (stderr !== '') parts.push(`stderr:\n${stderr}`);
  parts.push(
    content.return_code === 0
      ? 'exit status: ok'
      : `exit status: error (return code ${String(content.return_code)})`,
  );
  return parts.join('\n\n');
}

/**
 * Reads the messages into the model's conversation: `server_tool_use` of code becomes an
 * `execute_code` call answered by its `code_execution_tool_result`; `tool_use` blocks made from
 * code (they carry a `caller` of a code execution tool) and their `tool_result`s are the
 * script's, not the model's.
 */
export function readConversation(raw: readonly unknown[], codeToolName: string): AnthropicConversation {
  const messages: Message[] = [];
  const fromCode = new Set<string>();
  const loaded = new Set<string>();
  let openCode: { id: string; code: string } | undefined;
  let lastAnswers: ToolResultAnswer[] = [];
  raw.forEach((message, i) => {
    const at = `messages.${i}`;
    if (!isObject(message)) throw invalid(at, 'must be an object.');
    const { role, content } = message;
    const blocks: unknown[] =
      typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : [];
    if (!Array.isArray(content) && typeof content !== 'string')
      throw invalid(`${at}.content`, 'must be a string or a list of blocks.');
    if (role === 'user') {
      const texts: string[] = [];
      const results: ToolResult[] = [];
      lastAnswers = [];
      blocks.forEach((block, j) => {
        if (!isObject(block)) throw invalid(`${at}.content.${j}`, 'must be an object.');
        if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
        else if (block.type === 'tool_result') {
          if (typeof block.tool_use_id !== 'string')
            throw invalid(`${at}.content.${j}.tool_use_id`, 'must be a string.');
          const text = resultText(block.content);
          const ok = block.is_error !== true;
          for (const name of referencesIn(block.content)) loaded.add(name);
          if (fromCode.has(block.tool_use_id))
            lastAnswers.push({ toolUseId: block.tool_use_id, ok, value: parseValue(text), text });
          else
            results.push({ toolCallId: block.tool_use_id, content: text, ...(ok ? {} : { isError: true }) });
        } else
          throw invalid(
            `${at}.content.${j}.type`,
            `"${String(block.type)}" is not accepted in a user message here (text and tool_result are).`,
          );
      });
      if (results.length > 0) messages.push({ role: 'tool', results });
      if (texts.length > 0) messages.push({ role: 'user', content: texts.join('\n') });
      return;
    }
    if (role !== 'assistant') throw invalid(`${at}.role`, 'must be "user" or "assistant".');
    let parts: Message & { role: 'assistant' } = { role: 'assistant', content: [] };
    blocks.forEach((block, j) => {
      if (!isObject(block)) throw invalid(`${at}.content.${j}`, 'must be an object.');
      if (block.type === 'text' && typeof block.text === 'string')
        parts.content.push({ type: 'text', text: block.text });
      else if (
        block.type === 'server_tool_use' &&
        block.name === 'code_execution' &&
        typeof block.id === 'string'
      ) {
        const input = block.input;
        const code = isObject(input) && typeof input.code === 'string' ? input.code : '';
        parts.content.push({ type: 'tool_call', id: block.id, name: codeToolName, input: { code } });
        openCode = { id: block.id, code };
      } else if (block.type === 'code_execution_tool_result' && typeof block.tool_use_id === 'string') {
        messages.push(parts);
        messages.push({
          role: 'tool',
          results: [{ toolCallId: block.tool_use_id, content: codeResultText(block.content) }],
        });
        parts = { role: 'assistant', content: [] };
        if (openCode?.id === block.tool_use_id) openCode = undefined;
      } else if (
        block.type === 'tool_use' &&
        typeof block.id === 'string' &&
        typeof block.name === 'string'
      ) {
        const caller = block.caller;
        if (isObject(caller) && caller.type !== 'direct') fromCode.add(block.id);
        else
          parts.content.push({
            type: 'tool_call',
            id: block.id,
            name: block.name,
            input: block.input,
          } satisfies ToolCallPart);
      } else if (
        block.type === 'server_tool_use' &&
        typeof block.id === 'string' &&
        (block.name === 'tool_search_tool_bm25' || block.name === 'tool_search_tool_regex')
      ) {
        parts.content.push({ type: 'tool_call', id: block.id, name: block.name, input: block.input });
      } else if (block.type === 'tool_search_tool_result' && typeof block.tool_use_id === 'string') {
        const content = block.content;
        if (isObject(content)) for (const name of referencesIn(content.tool_references)) loaded.add(name);
        messages.push(parts);
        messages.push({
          role: 'tool',
          results: [
            {
              toolCallId: block.tool_use_id,
              content: searchResultText(content),
              ...(isObject(content) && content.type === 'tool_search_tool_result_error'
                ? { isError: true }
                : {}),
            },
          ],
        });
        parts = { role: 'assistant', content: [] };
      } else if (
        block.type === 'server_tool_use' ||
        block.type === 'thinking' ||
        block.type === 'redacted_thinking'
      ) {
        // Search steps and thinking are codecall's own; the model behind does not need them again.
      } else
        throw invalid(
          `${at}.content.${j}.type`,
          `"${String(block.type)}" is not accepted in an assistant message here.`,
        );
    });
    if (parts.content.length > 0) messages.push(parts);
  });
  const conversation: AnthropicConversation = {
    messages: messages.filter((m) => m.role !== 'assistant' || m.content.length > 0),
    loaded,
  };
  if (openCode !== undefined)
    conversation.paused = { serverToolUseId: openCode.id, code: openCode.code, answers: lastAnswers };
  return conversation;
}
