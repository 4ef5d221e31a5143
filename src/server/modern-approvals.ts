/**
 * @module
 * Approvals for 2026-07-28 clients without a held stream (Multi Round-Trip Requests, spec
 * `basic/patterns/mrtr.mdx`). An `execute_code` run whose call needs approval is journaled; when
 * the call asks, the run stops and the client gets `input_required`: an elicitation form with one
 * boolean, and a `requestState` naming the paused call (journal key, script hash, call index, tool,
 * arguments hash). The client answers and retries the same call; the run is re-run by replay of its
 * journal (calls already made are answered from it, see `journaled-invoker.ts`), and the paused
 * call gets the answer, which applies to that call alone.
 *
 * `requestState` comes back from the client, so it is signed (HMAC-SHA256 by the SDK's
 * `createRequestStateCodec`), bounded in age ({@link DEFAULT_SERVE_REQUEST_STATE_TTL_MS}) and in
 * size ({@link DEFAULT_SERVE_REQUEST_STATE_MAX_BYTES}, checked before the MAC), and carries no
 * secret (signed, not encrypted: the client can read it).
 */
import { randomBytes } from 'node:crypto';
import {
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  type InputRequiredResult,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';
import {
  DEFAULT_SERVE_REQUEST_STATE_MAX_BYTES,
  DEFAULT_SERVE_REQUEST_STATE_TTL_MS,
} from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import type { ApprovalDecision, ApprovalRequest, Approver } from '../tools/index.js';
import { escapeInvisible, renderApprovalCall } from '../tools/approval-text.js';
import { CallsInFlight, hashArgs, type RunJournal } from '../store/index.js';

/** Key of the one embedded request of an approval round. */
export const APPROVAL_INPUT_KEY = 'approval';

/** What a `requestState` names: the paused call of one journaled run. */
export interface PausedCall {
  /** Key of the run's journal. */
  run: string;
  /** sha256 of the script: a retry with another script is refused. */
  code: string;
  /** Journal index of the call waiting for the decision. */
  call: number;
  tool: string;
  /** sha256 of the call's arguments. */
  args: string;
  /** Present when the run paused on an upstream server's input request (not on an approval). */
  input?: PausedInput | undefined;
  /** Input rounds the run has had so far (bounded by `DEFAULT_SERVE_INPUT_ROUNDS_MAX`). */
  inputRounds?: number | undefined;
}

/** Which of a paused call's upstream input requests the client is asked (see `modern-input.ts`). */
export interface PausedInput {
  /** Position of the request among those the call's upstream made (0-based, over its rounds). */
  ask: number;
  /** sha256 of the request (method and parameters) as the upstream made it. */
  request: string;
  /** Key of the request in `inputRequests`, and of its answer in `inputResponses`. */
  key: string;
}

/** Approvals decided in earlier rounds of a run (see `RunAnswers`). */
export interface DecidedApprovals {
  get(call: number, tool: string, args: string): ApprovalDecision | undefined;
  record(call: number, tool: string, args: string, decision: ApprovalDecision): Promise<void>;
}

/** Options of {@link createApprovalStateCodec}. */
export interface ApprovalStateCodecOptions {
  /** HMAC key, at least 32 bytes; every node that may get the retry needs the same. @defaultValue a random per-process key */
  key?: string | undefined;
  /** @defaultValue {@link DEFAULT_SERVE_REQUEST_STATE_TTL_MS} */
  ttlMs?: number | undefined;
  /** @defaultValue {@link DEFAULT_SERVE_REQUEST_STATE_MAX_BYTES} */
  maxBytes?: number | undefined;
}

/** The signing codec of paused calls, its `verify` bounded in size before any work. */
export function createApprovalStateCodec(
  options: ApprovalStateCodecOptions = {},
): RequestStateCodec<PausedCall> {
  const key = options.key ?? randomBytes(32);
  if (typeof key === 'string' && Buffer.byteLength(key) < 32)
    throw new CodecallError(
      'INVALID_ARGUMENT',
      'CODECALL_REQUEST_STATE_KEY must be at least 32 bytes (it signs the requestState of 2026-07-28 approvals); generate one with `openssl rand -hex 32`.',
      { details: { field: 'CODECALL_REQUEST_STATE_KEY' } },
    );
  const maxBytes = options.maxBytes ?? DEFAULT_SERVE_REQUEST_STATE_MAX_BYTES;
  const codec = createRequestStateCodec<PausedCall>({
    key,
    ttlSeconds: Math.max(1, Math.round((options.ttlMs ?? DEFAULT_SERVE_REQUEST_STATE_TTL_MS) / 1000)),
    // Bound to the method: a state minted for tools/call is refused anywhere else.
    bind: (ctx) => ctx.mcpReq.method,
  });
  return {
    mint: (payload, ctx) => codec.mint(payload, ctx),
    verify: (state: string, ctx: ServerContext) => {
      if (state.length > maxBytes) return Promise.reject(new Error('too-large'));
      return codec.verify(state, ctx);
    },
  };
}

/** The decision the client sent under `key`, or undefined when it sent none. */
export function decisionOf(
  inputResponses: Record<string, unknown> | undefined,
  key: string = APPROVAL_INPUT_KEY,
): ApprovalDecision | undefined {
  const view = inputResponse(inputResponses, key);
  if (view.kind === 'missing') return undefined;
  if (view.kind !== 'elicit')
    return { approved: false, decidedBy: 'elicitation', reason: 'the client sent no form answer' };
  if (view.action === 'accept' && (view.content as { approve?: unknown } | undefined)?.approve === true)
    return { approved: true, decidedBy: 'elicitation' };
  return {
    approved: false,
    decidedBy: 'elicitation',
    reason: view.action === 'accept' ? 'the client answered no' : `the client chose ${view.action}`,
  };
}

/** The approver of one round of a journaled run, and the call it paused on (if any). */
export interface RoundApprover {
  /** Wraps the run's journal: tells the approver the journal index of each call in flight. */
  journal: RunJournal;
  approver: Approver;
  /** The call that asked and found no decision: the run stopped on it. */
  paused(): { request: ApprovalRequest; call: number; args: string } | undefined;
  /** The journal index of a call in flight with this tool and arguments hash (the latest one). */
  callOf(tool: string, args: string): number | undefined;
}

/**
 * An approver that answers the call `decided` names with `decision`, and stops the run (through
 * `stop`) on any other call that needs approval.
 */
export function createRoundApprover(options: {
  journal: RunJournal;
  decided: PausedCall | undefined;
  decision: ApprovalDecision | undefined;
  /** Decisions of earlier rounds, kept so a call approved before a later pause stays approved. */
  decisions?: DecidedApprovals | undefined;
  stop: () => void;
}): RoundApprover {
  const journal = new CallsInFlight(options.journal);
  let paused: { request: ApprovalRequest; call: number; args: string } | undefined;
  const approver: Approver = (request) => {
    const args = hashArgs(request.args);
    const call = journal.claim(request.tool, args);
    if (call === undefined)
      return {
        approved: false,
        decidedBy: 'policy',
        reason: 'codecall could not place the call in its run journal',
      };
    const { decided, decision, decisions } = options;
    if (
      decided &&
      decision &&
      decided.input === undefined &&
      decided.call === call &&
      decided.tool === request.tool &&
      decided.args === args
    )
      return decisions ? decisions.record(call, request.tool, args, decision).then(() => decision) : decision;
    const earlier = decisions?.get(call, request.tool, args);
    if (earlier) return earlier;
    paused ??= { request, call, args };
    options.stop();
    // Never answered: the stop aborts the run, which withdraws the question.
    return new Promise<never>(() => {});
  };
  return {
    journal,
    approver,
    paused: () => paused,
    callOf: (tool, args) => journal.latest(tool, args),
  };
}

/** The `input_required` answer of a run paused on `request`. */
export async function approvalRound(
  codec: RequestStateCodec<PausedCall>,
  state: PausedCall,
  request: ApprovalRequest,
  ctx: ServerContext,
): Promise<InputRequiredResult> {
  const from = `a script (execute_code, call #${state.call + 1}${request.line !== undefined ? `, line ${request.line}` : ''})`;
  return inputRequired({
    inputRequests: {
      [APPROVAL_INPUT_KEY]: inputRequired.elicit({
        message: `Approve ${renderApprovalCall(request)} from ${from}? It needs approval because ${escapeInvisible(request.reason)}.`,
        requestedSchema: {
          type: 'object',
          properties: {
            approve: {
              type: 'boolean',
              title: `Run ${escapeInvisible(request.tool)}`,
              description: 'true runs the call once; false denies it.',
            },
          },
          required: ['approve'],
        },
      }),
    },
    requestState: await codec.mint(state, ctx),
  });
}
