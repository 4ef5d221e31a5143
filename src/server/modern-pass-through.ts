/**
 * @module
 * A pass-through `tools/call` on the 2026-07-28 legs, relayed faithfully (spec 2026-07-28
 * `basic/patterns/mrtr.mdx`, SEP-2322):
 *
 * - **`input_required` from a 2026 upstream** goes back to the client with the upstream's
 *   `inputRequests` and codecall's own `requestState`, signed by the codec approvals use
 *   (`modern-approvals.ts`: HMAC-SHA256, bounded in age and size), which wraps the upstream's state
 *   and names the call (tool, arguments hash). The client's retry can land on any node holding the
 *   same key: the SDK verifies the state before the handler runs (a tampered one is `-32602`), and
 *   the call goes upstream with the client's `inputResponses` and the upstream's state byte-exact.
 *   The upstream is told the client's capabilities, not codecall's, so it asks only what the
 *   client can answer; the SDK refuses (`-32021`) any round that asks more.
 * - **Progress** the upstream reports reaches the client under its own `progressToken`.
 * - **A JSON-RPC error** the upstream answered (`-32021`, `-32602`…) passes through as that error,
 *   with its `data`, not as `isError` text.
 *
 * The same relay serves `prompts/get` and `resources/read` ({@link relayGatewayRequest}), the other
 * requests a server may answer with `input_required` (`mrtr.mdx` § Supported Requests).
 *
 * A 2025-11-25 upstream's server→client request during the call needs the held stream of a
 * session, which a stateless request has not: it is refused as for any caller without an asker
 * (docs/mcp-2026.md § Pass-through calls).
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  inputRequired,
  type CallToolResult,
  type InputRequest,
  type InputRequiredResult,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { DEFAULT_SERVE_RELAYED_REQUEST_STATE_MAX_BYTES } from '../config/defaults.js';
import type { CodecallRuntime } from '../execute/index.js';
import { isCodecallError } from '../errors.js';
import { hashArgs } from '../store/index.js';
import type { CallTrace } from '../util/trace-context.js';
import type { CatalogTool, RelayedInputRequired, RelayedInputRound } from '../tools/index.js';
import { errorText, textResult } from './shared-handlers.js';
import { TASKS_EXTENSION } from './modern-tasks.js';
import type { GatewayRequestContext } from './gateway.js';

/** What codecall's `requestState` of a relayed round names. */
export interface RelayedCall {
  /** Marks a relayed round (an approval's state has none). */
  relay: 1;
  /** The request the round belongs to; absent for `tools/call` (states minted before there were others). */
  method?: RelayedGatewayMethod;
  /** The pass-through tool, the prompt's name or the resource's URI (as the client named it). */
  tool: string;
  /** sha256 of the call's (or prompt's) arguments: a retry with other arguments is refused. */
  args: string;
  /** The upstream's `requestState`, byte-exact, when it sent one. */
  upstream?: string;
}

/** The client capabilities an upstream may ask through a relayed round (SEP-2322 input requests). */
const RELAYED_CAPABILITIES = ['elicitation', 'sampling', 'roots'] as const;

/** Options of {@link callPassThrough}. */
export interface PassThroughCallOptions {
  runtime: CodecallRuntime;
  tool: CatalogTool;
  args: Record<string, unknown>;
  ctx: ServerContext;
  /** The request's `_meta` (its `progressToken`). */
  meta: Record<string, unknown> | undefined;
  trace: CallTrace | undefined;
  /** The server's `requestState` codec (shared with approvals: one key, one verify). */
  codec: RequestStateCodec<unknown>;
  onError?: ((error: unknown) => void) | undefined;
  /**
   * The Tasks extension: whether this client declared it (the upstream is told so, and may answer
   * with a task), and the client's task for an upstream's task (task-relay.ts).
   */
  tasks?: {
    declared: boolean;
    created: (result: object) => Record<string, unknown> | undefined;
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The requests besides `tools/call` on which a server may answer `input_required` (spec 2026-07-28
 * `basic/patterns/mrtr.mdx` § Supported Requests; "MUST NOT" on any other).
 */
export const RELAYED_GATEWAY_METHODS = ['prompts/get', 'resources/read'] as const;
export type RelayedGatewayMethod = (typeof RELAYED_GATEWAY_METHODS)[number];

function isRelayedCall(value: unknown): value is RelayedCall {
  return (
    isObject(value) &&
    value.relay === 1 &&
    (value.method === undefined || RELAYED_GATEWAY_METHODS.includes(value.method as RelayedGatewayMethod)) &&
    typeof value.tool === 'string' &&
    typeof value.args === 'string' &&
    (value.upstream === undefined || typeof value.upstream === 'string')
  );
}

function invalidParams(message: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, message);
}

/** The capabilities the client declared in this request's envelope that a relayed round may use. */
function relayedCapabilities(ctx: ServerContext): Record<string, unknown> {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const declared = envelope?.[CLIENT_CAPABILITIES_META_KEY];
  const out: Record<string, unknown> = {};
  if (!isObject(declared)) return out;
  for (const key of RELAYED_CAPABILITIES) if (isObject(declared[key])) out[key] = declared[key];
  return out;
}

/**
 * The round a client's retry carries: its answers and the upstream's state out of codecall's
 * verified `requestState` (the SDK checked its signature and age before the handler ran), which
 * must name this very request (`method`, `target`, `argsHash`); else `-32602`.
 */
function readRelayedRound(
  ctx: ServerContext,
  method: RelayedGatewayMethod | undefined,
  target: string,
  argsHash: string,
  what: string,
): RelayedInputRound {
  const state = ctx.mcpReq.requestState<unknown>();
  if (
    state !== undefined &&
    (!isRelayedCall(state) || state.method !== method || state.tool !== target || state.args !== argsHash)
  )
    throw invalidParams(
      `requestState belongs to another request than ${what}: retry with the arguments and requestState of the ` +
        'input_required answer you got, or send the request again without requestState.',
    );
  const dropped = ctx.mcpReq.droppedInputResponseKeys ?? [];
  if (dropped.length > 0)
    throw invalidParams(
      `inputResponses[${JSON.stringify(dropped[0]!.slice(0, 80))}] is not a response object: each answer is the ` +
        'bare result of its input request (an ElicitResult, CreateMessageResult or ListRootsResult).',
    );
  return {
    inputResponses: ctx.mcpReq.inputResponses,
    requestState: isRelayedCall(state) ? state.upstream : undefined,
    clientCapabilities: relayedCapabilities(ctx),
  };
}

/**
 * A 2026-07-28 client's `prompts/get` or `resources/read` through the gateway, relayed as
 * {@link callPassThrough} relays a call: an upstream's `input_required` goes back with codecall's
 * signed state wrapping the upstream's and naming the request (method, prompt name or URI, hash of
 * the prompt's arguments); the client's retry, on any node, goes upstream with its answers.
 */
export async function relayGatewayRequest(options: {
  method: RelayedGatewayMethod;
  params: Record<string, unknown>;
  handler: (
    params: Record<string, unknown>,
    context: GatewayRequestContext,
  ) => Promise<Record<string, unknown>>;
  ctx: ServerContext;
  codec: RequestStateCodec<unknown>;
}): Promise<Record<string, unknown>> {
  const { method, params, ctx } = options;
  const target = String(method === 'prompts/get' ? params.name : params.uri);
  const argsHash = hashArgs(isObject(params.arguments) ? params.arguments : {});
  const what = `this ${method} of ${JSON.stringify(target.slice(0, 200))}`;
  const relay = readRelayedRound(ctx, method, target, argsHash, what);
  const result = await options.handler(params, { signal: ctx.mcpReq.signal, relay });
  if (result.resultType !== 'input_required') return result;
  const round = result as unknown as RelayedInputRequired;
  const upstream = round.requestState;
  if (upstream !== undefined && Buffer.byteLength(upstream) > DEFAULT_SERVE_RELAYED_REQUEST_STATE_MAX_BYTES)
    throw new ProtocolError(
      ProtocolErrorCode.InternalError,
      `The MCP server behind ${what} asked for input with a requestState of ${Buffer.byteLength(upstream)} bytes, ` +
        `more than codecall relays (${DEFAULT_SERVE_RELAYED_REQUEST_STATE_MAX_BYTES}, ` +
        'DEFAULT_SERVE_RELAYED_REQUEST_STATE_MAX_BYTES); nothing more was sent to it.',
    );
  const state: RelayedCall = {
    relay: 1,
    method,
    tool: target,
    args: argsHash,
    ...(upstream !== undefined ? { upstream } : {}),
  };
  return inputRequired({
    inputRequests: round.inputRequests as unknown as Record<string, InputRequest>,
    requestState: await options.codec.mint(state, ctx),
  }) as unknown as Record<string, unknown>;
}

/** The upstream's JSON-RPC error as the client gets it, or undefined for any other failure. */
function upstreamProtocolError(error: unknown): ProtocolError | undefined {
  if (!isCodecallError(error) || error.code !== 'TOOL_CALL_FAILED') return undefined;
  const code = error.details.mcpCode;
  const cause = error.cause as { message?: unknown; data?: unknown } | undefined;
  if (typeof code !== 'number' || !Number.isSafeInteger(code) || typeof cause?.message !== 'string')
    return undefined;
  return new ProtocolError(code, cause.message.replace(/^(MCP error -?\d+: )+/, ''), cause.data);
}

/**
 * Calls the pass-through `tool` for a 2026-07-28 client and answers what the upstream answered: its
 * result, its `input_required` round (relayed, see the module comment), or its JSON-RPC error.
 */
export async function callPassThrough(
  options: PassThroughCallOptions,
): Promise<CallToolResult | InputRequiredResult> {
  const { runtime, tool, args, ctx } = options;
  const argsHash = hashArgs(args);
  const answers = readRelayedRound(ctx, undefined, tool.name, argsHash, `this call of ${tool.name}`);
  const relay: RelayedInputRound = {
    ...answers,
    clientCapabilities: {
      ...answers.clientCapabilities,
      ...(options.tasks?.declared === true ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
    },
  };
  const progressToken = options.meta?.progressToken;
  let progressSent: Promise<void> = Promise.resolve();
  let result;
  try {
    result = await runtime.callToolResult(tool.name, args, {
      signal: ctx.mcpReq.signal,
      caller: 'direct',
      relay,
      upstreamTask: options.tasks?.declared === true ? 'relay' : 'undeclared',
      ...(options.trace !== undefined ? { trace: options.trace } : {}),
      ...(typeof progressToken === 'string' || typeof progressToken === 'number'
        ? {
            onProgress: (progress) => {
              // In order, and all sent before the answer (a late one on a finished request is dropped).
              progressSent = progressSent
                .then(() =>
                  ctx.mcpReq.notify({
                    method: 'notifications/progress',
                    params: { ...progress, progressToken },
                  }),
                )
                .catch(() => {});
            },
          }
        : {}),
    });
  } catch (error) {
    await progressSent;
    const passed = upstreamProtocolError(error);
    if (passed) throw passed;
    return textResult(errorText(error, options.onError), true) as CallToolResult;
  }
  await progressSent;
  const task = options.tasks?.created(result);
  if (task !== undefined) return task as unknown as CallToolResult;
  const round = result as unknown as Partial<RelayedInputRequired>;
  if (round.resultType === 'input_required')
    return relayRound(options, round as RelayedInputRequired, argsHash);
  const passed: CallToolResult = { content: Array.isArray(result.content) ? result.content : [] };
  if (result.structuredContent !== undefined) passed.structuredContent = result.structuredContent;
  if (result.isError === true) passed.isError = true;
  return passed;
}

/** The client's `input_required`: the upstream's requests, codecall's state wrapping the upstream's. */
async function relayRound(
  options: PassThroughCallOptions,
  round: RelayedInputRequired,
  argsHash: string,
): Promise<CallToolResult | InputRequiredResult> {
  const upstream = round.requestState;
  if (upstream !== undefined && Buffer.byteLength(upstream) > DEFAULT_SERVE_RELAYED_REQUEST_STATE_MAX_BYTES)
    return textResult(
      `${options.tool.name} asked for input with a requestState of ${Buffer.byteLength(upstream)} bytes, more than ` +
        `codecall relays (${DEFAULT_SERVE_RELAYED_REQUEST_STATE_MAX_BYTES}, DEFAULT_SERVE_RELAYED_REQUEST_STATE_MAX_BYTES). ` +
        'Nothing more was sent to it; call the tool from execute_code, where codecall answers its rounds itself.',
      true,
    ) as CallToolResult;
  const state: RelayedCall = {
    relay: 1,
    tool: options.tool.name,
    args: argsHash,
    ...(upstream !== undefined ? { upstream } : {}),
  };
  return inputRequired({
    inputRequests: round.inputRequests as unknown as Record<string, InputRequest>,
    requestState: await options.codec.mint(state, options.ctx),
  });
}
