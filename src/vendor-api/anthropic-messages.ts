/**
 * @module
 * `POST /v1/messages` (Anthropic Messages, programmatic tool calling) over any codecall model.
 * The model behind is offered `search_tools`, `execute_code` (whose description declares the
 * client tools opened to code as `tools.client.<name>`) and the client tools opened to direct
 * calls. Its `execute_code` calls run in the sandbox and are shown to the client as
 * `server_tool_use` (name `code_execution`) and `code_execution_tool_result` blocks; a script
 * that calls a client tool pauses, and the response ends with `stop_reason: "tool_use"`, the
 * nested `tool_use` blocks (with `caller`) and a `container` whose id is a signed journal cursor.
 * The continuation (the `tool_result`s and the `container`) resumes the script by journal replay.
 */
import { randomUUID } from 'node:crypto';
import { renderDeclarations } from '../compile/index.js';
import { DEFAULT_VENDOR_CONTAINER_TTL_MS, DEFAULT_VENDOR_MAX_MODEL_TURNS } from '../config/defaults.js';
import { isCodecallError } from '../errors.js';
import type { CodecallRuntime } from '../execute/index.js';
import {
  answerSearchTools,
  EXECUTE_CODE_NAME,
  executeCodeDefinition,
  SEARCH_TOOLS_NAME,
  searchToolsDefinition,
} from '../meta/index.js';
import type {
  LanguageModel,
  Message,
  StopReason,
  ToolDefinition,
  ToolResult,
} from '../providers/language-model.js';
import type { ExecutionResult } from '../types.js';
import {
  codeResultText,
  readAnthropicRequest,
  readConversation,
  type AnthropicRequest,
} from './anthropic-request.js';
import type { ContainerSigner } from './container-token.js';
import { newRunId } from './container-token.js';
import type { PausedRuns } from './paused-runs.js';
import {
  clientQualifiedName,
  pendingClientCalls,
  recordClientAnswers,
  runScriptTurn,
  type PendingClientCall,
  type ScriptTurn,
} from './script-turn.js';
import { invalid, VendorError } from './vendor-error.js';

/** What the endpoint needs from the server. */
export interface VendorContext {
  runtime: CodecallRuntime;
  /** The codecall model of a request's `model` name; undefined when unknown. */
  model(name: string): LanguageModel | undefined;
  /** Names `model` knows, for the error of an unknown one. */
  modelNames(): string[];
  signer: ContainerSigner;
  paused: PausedRuns;
  /** @defaultValue {@link DEFAULT_VENDOR_CONTAINER_TTL_MS} */
  containerTtlMs?: number;
  /** @defaultValue {@link DEFAULT_VENDOR_MAX_MODEL_TURNS} */
  maxModelTurns?: number;
  /** Bytes of a meta-tool answer the model reads. */
  maxToolResultBytes: number;
}

/** A content block of the response (shapes of the SDK's `ContentBlock`). */
export type AnthropicBlock = Record<string, unknown> & { type: string };

/** The response (`Message` of the SDK). */
export interface AnthropicMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicBlock[];
  stop_reason: 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal';
  stop_sequence: null;
  usage: {
    input_tokens: number;
    output_tokens: number;
    cache_creation_input_tokens: number;
    cache_read_input_tokens: number;
  };
  container: { id: string; expires_at: string; skills: null } | null;
}

const NESTED_ID = /^toolu_([0-9a-f]{32})_(\d{1,9})$/;

function nestedId(runId: string, index: number): string {
  return `toolu_${runId}_${index}`;
}

function mapStop(reason: StopReason): AnthropicMessage['stop_reason'] {
  if (reason === 'max_tokens' || reason === 'stop_sequence' || reason === 'refusal' || reason === 'tool_use')
    return reason;
  return 'end_turn';
}

function codeResultBlock(srvId: string, result: ExecutionResult): AnthropicBlock {
  const failure =
    result.status === 'error' && result.error ? `${result.error.code}: ${result.error.message}` : '';
  const stderr = [result.stderr.replace(/\n$/, ''), failure].filter((s) => s !== '').join('\n');
  return {
    type: 'code_execution_tool_result',
    tool_use_id: srvId,
    content: {
      type: 'code_execution_result',
      stdout: result.stdout,
      stderr,
      return_code: result.status === 'ok' ? 0 : 1,
      content: [],
    },
  };
}

/** Answers one Messages request (`stream` handled by the caller). */
export async function createMessage(
  body: unknown,
  context: VendorContext,
  signal?: AbortSignal,
): Promise<AnthropicMessage> {
  const request = readAnthropicRequest(body);
  const model = context.model(request.model);
  if (model === undefined)
    throw new VendorError(
      'not_found_error',
      `model: "${request.model}" is not served here; known models: ${context.modelNames().join(', ')}. Add it to serve.models in the codecall config.`,
      'model',
    );
  const conversation = readConversation(request.messages, EXECUTE_CODE_NAME);
  const ttl = context.containerTtlMs ?? DEFAULT_VENDOR_CONTAINER_TTL_MS;
  const codeTools = request.clientTools.filter((t) => t.fromCode);
  const caller = request.codeExecution ?? 'code_execution_20250825';
  const message: AnthropicMessage = {
    id: `msg_${randomUUID().replaceAll('-', '')}`,
    type: 'message',
    role: 'assistant',
    model: request.model,
    content: [],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    container: null,
  };
  const messages = conversation.messages;

  /** Runs or resumes a script; true when it paused (the message is then complete). */
  const script = async (
    runId: string,
    srvId: string,
    code: string,
    replay: boolean,
  ): Promise<ExecutionResult | undefined> => {
    const expiresAt = Date.now() + ttl;
    const opened = await context.paused.open(runId, { create: !replay, expiresAt });
    if (opened === undefined)
      throw invalid(
        'container',
        'the paused script of this container is gone (expired, or kept by another process without a shared serve.vendorJournalDir); start the turn again without it.',
      );
    let turn: ScriptTurn;
    try {
      turn = await runScriptTurn({
        runtime: context.runtime,
        code,
        journal: opened.journal,
        replay,
        clientTools: codeTools,
        signal,
      });
    } finally {
      await opened.release();
    }
    if (turn.kind === 'done') {
      await context.paused.drop(runId);
      return turn.result;
    }
    pause(runId, srvId, turn.calls, expiresAt);
    return undefined;
  };
  const pause = (runId: string, srvId: string, calls: PendingClientCall[], expiresAt: number): void => {
    for (const call of calls)
      message.content.push({
        type: 'tool_use',
        id: nestedId(runId, call.index),
        name: call.name,
        input: call.input,
        caller: { type: caller, tool_id: srvId },
      });
    message.stop_reason = 'tool_use';
    message.container = {
      id: context.signer.sign({ runId, expiresAt }),
      expires_at: new Date(expiresAt).toISOString(),
      skills: null,
    };
  };

  if (conversation.paused !== undefined) {
    const { serverToolUseId: srvId, code, answers } = conversation.paused;
    if (request.container === undefined)
      throw invalid(
        'container',
        `the last assistant turn paused a script (${srvId}); send the container id of that response.`,
      );
    const cursor = context.signer.verify(request.container);
    if ('refused' in cursor)
      throw invalid(
        'container',
        cursor.refused === 'expired'
          ? 'this container expired; start the turn again without it.'
          : 'this container id was not issued by this server (or was altered).',
      );
    if (srvId !== `srvtoolu_${cursor.runId}`)
      throw invalid('container', `this container belongs to another script than ${srvId}.`);
    const opened = await context.paused.open(cursor.runId, { create: false, expiresAt: cursor.expiresAt });
    if (opened === undefined)
      throw invalid(
        'container',
        'the paused script of this container is gone (expired, or kept by another process without a shared serve.vendorJournalDir); start the turn again without it.',
      );
    try {
      const pending = await pendingClientCalls(opened.journal);
      const byId = new Map(answers.map((a) => [a.toolUseId, a]));
      for (const answer of answers) {
        const match = NESTED_ID.exec(answer.toolUseId);
        if (match?.[1] !== cursor.runId || !pending.some((p) => p.index === Number(match[2])))
          throw invalid(
            'messages',
            `tool_result ${answer.toolUseId} answers no tool_use the paused script is waiting for.`,
          );
      }
      const missing = pending.filter((p) => !byId.has(nestedId(cursor.runId, p.index)));
      if (missing.length > 0)
        throw invalid(
          'messages',
          `the paused script waits for tool_result blocks for ${missing.map((p) => nestedId(cursor.runId, p.index)).join(', ')}; send one for each tool_use.`,
        );
      await recordClientAnswers(
        opened.journal,
        pending.map((p) => {
          const answer = byId.get(nestedId(cursor.runId, p.index))!;
          return answer.ok
            ? { index: p.index, ok: true, result: answer.value }
            : { index: p.index, ok: false, error: answer.text };
        }),
      );
    } finally {
      await opened.release();
    }
    const result = await script(cursor.runId, srvId, code, true);
    if (result === undefined) return message;
    const block = codeResultBlock(srvId, result);
    message.content.push(block);
    messages.push({ role: 'tool', results: [{ toolCallId: srvId, content: codeResultText(block.content) }] });
  }

  const tools: ToolDefinition[] = [searchToolsDefinition()];
  const limits = { wallTimeMs: 60_000, maxToolCalls: 1_000, maxStdoutBytes: 65_536 };
  const execute = executeCodeDefinition(limits);
  const declared =
    codeTools.length > 0
      ? renderDeclarations(
          codeTools.map((t) => ({
            name: clientQualifiedName(t.member),
            namespace: 'client',
            member: t.member,
            description: t.description,
            inputSchema: t.inputSchema,
          })),
          { callTool: false },
        )
      : '';
  tools.push({
    name: EXECUTE_CODE_NAME,
    description:
      declared === ''
        ? execute.description
        : `${execute.description}\nThe client's tools, callable from code:\n${declared}`,
    inputSchema: execute.inputSchema,
  });
  for (const tool of request.clientTools)
    if (tool.direct) {
      if (tool.name === EXECUTE_CODE_NAME || tool.name === SEARCH_TOOLS_NAME)
        throw invalid('tools', `"${tool.name}" is a codecall tool name; rename the client tool.`);
      tools.push({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema });
    }

  const maxTurns = context.maxModelTurns ?? DEFAULT_VENDOR_MAX_MODEL_TURNS;
  for (let turn = 0; turn < maxTurns; turn++) {
    let response;
    try {
      response = await model.generate(
        {
          ...(request.system !== undefined ? { system: request.system } : {}),
          messages,
          tools,
          maxOutputTokens: request.maxTokens,
        },
        signal ? { signal } : {},
      );
    } catch (error) {
      if (isCodecallError(error))
        throw new VendorError(
          'api_error',
          `The model behind (${model.provider}:${model.modelId}) failed: ${error.message}`,
        );
      throw error;
    }
    message.usage.input_tokens +=
      response.usage.inputTokens - response.usage.cacheReadTokens - response.usage.cacheWriteTokens;
    message.usage.output_tokens += response.usage.outputTokens;
    message.usage.cache_read_input_tokens += response.usage.cacheReadTokens;
    message.usage.cache_creation_input_tokens += response.usage.cacheWriteTokens;
    messages.push({ role: 'assistant', content: response.content });
    const results: ToolResult[] = [];
    let direct = false;
    for (const part of response.content) {
      if (part.type === 'text') {
        if (part.text !== '') message.content.push({ type: 'text', text: part.text, citations: null });
        continue;
      }
      if (part.name === SEARCH_TOOLS_NAME) {
        const answer = await answerSearchTools(context.runtime, part.input, {
          maxToolResultBytes: context.maxToolResultBytes,
        });
        results.push({
          toolCallId: part.id,
          content: answer.text,
          ...(answer.isError ? { isError: true } : {}),
        });
      } else if (part.name === EXECUTE_CODE_NAME) {
        const input = part.input as { code?: unknown } | undefined;
        const code = typeof input?.code === 'string' ? input.code : '';
        const runId = newRunId();
        const srvId = `srvtoolu_${runId}`;
        message.content.push({
          type: 'server_tool_use',
          id: srvId,
          name: 'code_execution',
          input: { code },
          caller: { type: 'direct' },
        });
        const result = await script(runId, srvId, code, false);
        if (result === undefined) return message;
        const block = codeResultBlock(srvId, result);
        message.content.push(block);
        results.push({ toolCallId: srvId, content: codeResultText(block.content) });
        // The model behind knows the call by its own id.
        results[results.length - 1]!.toolCallId = part.id;
      } else if (request.clientTools.some((t) => t.direct && t.name === part.name)) {
        message.content.push({
          type: 'tool_use',
          id: part.id,
          name: part.name,
          input: part.input,
          caller: { type: 'direct' },
        });
        direct = true;
      } else {
        results.push({ toolCallId: part.id, content: `No tool "${part.name}" is offered.`, isError: true });
      }
    }
    if (direct) {
      message.stop_reason = 'tool_use';
      return message;
    }
    if (results.length === 0) {
      message.stop_reason = mapStop(response.stopReason);
      return message;
    }
    messages.push({ role: 'tool', results } satisfies Message);
  }
  message.stop_reason = 'pause_turn';
  return message;
}

export type { AnthropicRequest };
