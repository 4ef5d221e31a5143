/**
 * @module
 * `POST /v1/messages` (Anthropic Messages, programmatic tool calling) over any codecall model.
 * The turns run in `vendor-turns.ts`; this file writes them as the Messages API does: code as
 * `server_tool_use` (name `code_execution`) and `code_execution_tool_result` blocks, a script
 * paused on client tools as nested `tool_use` blocks (with `caller`), `stop_reason: "tool_use"`
 * and a `container` whose id is a signed journal cursor. The continuation (the `tool_result`s
 * and the `container`) resumes the script by journal replay.
 */
import { randomUUID } from 'node:crypto';
import type { CodecallRuntime } from '../execute/index.js';
import { EXECUTE_CODE_NAME } from '../meta/index.js';
import type { LanguageModel, StopReason } from '../providers/language-model.js';
import type { ExecutionResult } from '../types.js';
import { codeResultText, readAnthropicRequest, readConversation } from './anthropic-request.js';
import { searchToolDefinition } from './client-tool-search.js';
import type { ContainerSigner } from './container-token.js';
import type { PausedRuns } from './paused-runs.js';
import type { Approver } from '../tools/index.js';
import { runVendorTurns, type ResumeScript } from './vendor-turns.js';
import { invalid, VendorError } from './vendor-error.js';

/** What the endpoints need from the server. */
export interface VendorContext {
  runtime: CodecallRuntime;
  /** The codecall model of a request's `model` name; undefined when unknown. */
  model(name: string): LanguageModel | undefined;
  /** Names `model` knows, for the error of an unknown one. */
  modelNames(): string[];
  signer: ContainerSigner;
  paused: PausedRuns;
  /** @defaultValue `DEFAULT_VENDOR_CONTAINER_TTL_MS` */
  containerTtlMs?: number;
  /** @defaultValue `DEFAULT_VENDOR_MAX_MODEL_TURNS` */
  maxModelTurns?: number;
  /** Bytes of a meta-tool answer the model reads. */
  maxToolResultBytes: number;
  /** Decides scripts' calls of configured tools that need approval. @defaultValue the runtime's */
  approver?: Approver | undefined;
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

/** The model of `name`, or the vendor's 404. */
export function modelOf(context: VendorContext, name: string): LanguageModel {
  const model = context.model(name);
  if (model === undefined)
    throw new VendorError(
      'not_found_error',
      `model: "${name}" is not served here; known models: ${context.modelNames().join(', ')}. Add it to serve.models in the codecall config.`,
      'model',
    );
  return model;
}

/** The run id of a container id or fingerprint, or the vendor's 400 naming `param`. */
export function runIdOf(
  context: VendorContext,
  token: string | undefined,
  param: string,
  expectedCallId: (runId: string) => string,
  callId: string,
): string {
  if (token === undefined)
    throw invalid(
      param,
      `the last turn paused a script (${callId}); send the ${param} of that response back.`,
    );
  const cursor = context.signer.verify(token);
  if ('refused' in cursor)
    throw invalid(
      param,
      cursor.refused === 'expired'
        ? 'it expired; start the turn again without the paused script.'
        : 'it was not issued by this server (or was altered).',
    );
  if (expectedCallId(cursor.runId) !== callId)
    throw invalid(param, `it belongs to another script than ${callId}.`);
  return cursor.runId;
}

function mapStop(reason: StopReason | 'pause_turn'): AnthropicMessage['stop_reason'] {
  return reason === 'other' ? 'end_turn' : reason;
}

function resultBlock(srvId: string, result: ExecutionResult): AnthropicBlock {
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

const srvIdOf = (runId: string): string => `srvtoolu_${runId}`;
const nestedIdOf = (runId: string, index: number): string => `toolu_${runId}_${index}`;
/** A `server_tool_use` id of a search, from the model's call id (kept when already one). */
const searchIdOf = (callId: string): string =>
  callId.startsWith('srvtoolu_') ? callId : `srvtoolu_${callId}`;

/** Answers one Messages request (`stream` is written by the caller). */
export async function createMessage(
  body: unknown,
  context: VendorContext,
  signal?: AbortSignal,
): Promise<AnthropicMessage> {
  const request = readAnthropicRequest(body);
  const model = modelOf(context, request.model);
  const conversation = readConversation(request.messages, EXECUTE_CODE_NAME);
  const caller = request.codeExecution ?? 'code_execution_20250825';
  let resume: ResumeScript | undefined;
  if (conversation.paused !== undefined) {
    const { serverToolUseId: srvId, code, answers } = conversation.paused;
    const runId = runIdOf(context, request.container, 'container', srvIdOf, srvId);
    resume = {
      runId,
      code,
      callId: srvId,
      answers,
      idOf: (index) => nestedIdOf(runId, index),
      param: 'messages',
    };
  }
  const turns = await runVendorTurns({
    context,
    model,
    system: request.system,
    messages: conversation.messages,
    clientTools: request.clientTools,
    toolSearch:
      request.toolSearch === undefined
        ? undefined
        : {
            name: request.toolSearch.name,
            execution: 'server',
            mode: request.toolSearch.kind === 'regex' ? 'regex' : 'hybrid',
            ...searchToolDefinition({
              name: request.toolSearch.name,
              mode: request.toolSearch.kind === 'regex' ? 'regex' : 'hybrid',
            }),
          },
    loaded: conversation.loaded,
    maxOutputTokens: request.maxTokens,
    resume,
    signal,
    resultText: (result) => codeResultText(resultBlock('', result).content),
  });
  const message: AnthropicMessage = {
    id: `msg_${randomUUID().replaceAll('-', '')}`,
    type: 'message',
    role: 'assistant',
    model: request.model,
    content: [],
    stop_reason: mapStop(turns.stop),
    stop_sequence: null,
    usage: {
      input_tokens: turns.usage.input - turns.usage.cacheRead - turns.usage.cacheWrite,
      output_tokens: turns.usage.output,
      cache_creation_input_tokens: turns.usage.cacheWrite,
      cache_read_input_tokens: turns.usage.cacheRead,
    },
    container: null,
  };
  for (const output of turns.outputs) {
    if (output.type === 'text') message.content.push({ type: 'text', text: output.text, citations: null });
    else if (output.type === 'code')
      message.content.push({
        type: 'server_tool_use',
        id: srvIdOf(output.runId),
        name: 'code_execution',
        input: { code: output.code },
        caller: { type: 'direct' },
      });
    else if (output.type === 'code_result')
      message.content.push(resultBlock(srvIdOf(output.runId), output.result));
    else if (output.type === 'tool_search') {
      const id = searchIdOf(output.id);
      message.content.push({
        type: 'server_tool_use',
        id,
        name: request.toolSearch?.name ?? 'tool_search_tool_bm25',
        input: output.input,
        caller: { type: 'direct' },
      });
      message.content.push({
        type: 'tool_search_tool_result',
        tool_use_id: id,
        content: output.answer.ok
          ? {
              type: 'tool_search_tool_search_result',
              tool_references: output.answer.names.map((name) => ({
                type: 'tool_reference',
                tool_name: name,
              })),
            }
          : {
              type: 'tool_search_tool_result_error',
              error_code: output.answer.code,
              error_message: output.answer.message,
            },
      });
    } else if (output.type === 'tool_search_call')
      // Anthropic's search tools run server-side only; the turn loop never asks the client.
      throw new VendorError('api_error', 'codecall asked the client to search tools on the Messages wire.');
    else if (output.type === 'direct_call')
      message.content.push({
        type: 'tool_use',
        id: output.id,
        name: output.name,
        input: output.input,
        caller: { type: 'direct' },
      });
    else {
      for (const call of output.calls)
        message.content.push({
          type: 'tool_use',
          id: nestedIdOf(output.runId, call.index),
          name: call.name,
          input: call.input,
          caller: { type: caller, tool_id: srvIdOf(output.runId) },
        });
      message.container = {
        id: context.signer.sign({ runId: output.runId, expiresAt: output.expiresAt }),
        expires_at: new Date(output.expiresAt).toISOString(),
        skills: null,
      };
    }
  }
  return message;
}
