/**
 * @module
 * A script's upstream input requests for 2026-07-28 clients without a held stream. When a call of
 * an `execute_code` run is asked something by its upstream server (an `elicitation/create` or
 * `sampling/createMessage`: a 2026-07-28 server's `input_required` round, or a 2025-11-25
 * server's request during the call), the run stops as it does for an approval
 * (`modern-approvals.ts`) and the client gets `input_required` carrying that request, with a signed
 * `requestState` naming the paused call and the request (its position among the call's requests
 * and its sha256).
 *
 * The client's retry may reach any node: the run replays its journal to the paused call, which is
 * made again, and the upstream asks again. Each request is answered only when it is the one the
 * client was shown (same call, same position, same sha256) or one answered in an earlier round of
 * the same call (kept in the run's answer log, below); anything else becomes a new round, bounded
 * by {@link DEFAULT_SERVE_INPUT_ROUNDS_MAX}. So an upstream that asks something else on replay
 * gets a new question to the client, never an answer meant for another one.
 *
 * The answer log keeps, beside the run's journal and in the same store (so any node that can
 * resume the run can read it), each answer a call was given and each approval decided, so a call
 * asked twice (or approved, then asked) is answered in later rounds without asking again. It is
 * a journal of its own (`<run journal key>:answers`) whose entries are `finished` records:
 * `index` is the call's journal index, `name` says what was decided (`input:<position>` or
 * `approval:<tool>`), `argsHash` the request's (or the arguments') sha256, `result` the answer.
 */
import { createHash } from 'node:crypto';
import {
  inputRequired,
  inputResponse,
  type InputRequiredResult,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { DEFAULT_SERVE_INPUT_REQUEST_MAX_BYTES, DEFAULT_SERVE_INPUT_ROUNDS_MAX } from '../config/defaults.js';
import type { ApprovalDecision, UpstreamAsker, UpstreamRequest } from '../tools/index.js';
import { hashArgs, InputAnswers, type RunJournal } from '../store/index.js';
import type { DecidedApprovals, PausedCall } from './modern-approvals.js';

export { answerLogKey } from '../store/job-state.js';

/** What a run was told in its earlier rounds: answers to upstream requests, approvals. */
export class RunAnswers implements DecidedApprovals {
  private constructor(
    private readonly log: RunJournal,
    private readonly answers: InputAnswers,
    private readonly approvals: Map<string, ApprovalDecision>,
  ) {}

  /** Reads the log of a run (empty for a new run). */
  static async open(log: RunJournal): Promise<RunAnswers> {
    const answers = new InputAnswers(log);
    const approvals = new Map<string, ApprovalDecision>();
    for (const entry of await log.entries()) {
      if (answers.read(entry)) continue;
      if (entry.type !== 'finished' || typeof entry.result !== 'object' || entry.result === null) continue;
      if (entry.name.startsWith('approval:'))
        approvals.set(`${entry.index}\0${entry.name}\0${entry.argsHash}`, entry.result as ApprovalDecision);
    }
    return new RunAnswers(log, answers, approvals);
  }

  /** The answer given to request `request` at position `ask` of call `call`, if any. */
  answer(call: number, ask: number, request: string): Record<string, unknown> | undefined {
    return this.answers.answer(call, ask, request);
  }

  /** Records an answer (durable before the upstream gets it). */
  recordAnswer(call: number, ask: number, request: string, response: Record<string, unknown>): Promise<void> {
    return this.answers.record(call, ask, request, response);
  }

  get(call: number, tool: string, args: string): ApprovalDecision | undefined {
    return this.approvals.get(`${call}\0approval:${tool}\0${args}`);
  }

  async record(call: number, tool: string, args: string, decision: ApprovalDecision): Promise<void> {
    await this.log.append({
      type: 'finished',
      index: call,
      name: `approval:${tool}`,
      argsHash: args,
      ok: decision.approved,
      result: decision,
      at: Date.now(),
    });
    this.approvals.set(`${call}\0approval:${tool}\0${args}`, decision);
  }
}

/** The upstream request a run paused on. */
export interface PausedAsk {
  call: number;
  tool: string;
  /** sha256 of the call's arguments. */
  args: string;
  ask: number;
  /** sha256 of the request. */
  request: string;
  /** The request as the client gets it. */
  forwarded: UpstreamRequest;
}

/** What the client declared it can answer (`io.modelcontextprotocol/clientCapabilities`). */
export type ClientCapabilities = Record<string, unknown> | undefined;

/** Why the client cannot be asked `request`, or undefined when it can. */
function refusal(request: UpstreamRequest, capabilities: ClientCapabilities): string | undefined {
  if (request.method === 'sampling/createMessage')
    return capabilities?.sampling === undefined
      ? 'the MCP client did not declare the "sampling" capability, so this sampling/createMessage request cannot be passed to it; use a client that supports sampling'
      : undefined;
  const elicitation = capabilities?.elicitation as Record<string, unknown> | undefined;
  if (elicitation === undefined)
    return 'the MCP client did not declare the "elicitation" capability, so this elicitation/create request cannot be passed to it; use a client that supports elicitation';
  const mode = request.params.mode === 'url' ? 'url' : 'form';
  // An empty `elicitation: {}` means form mode (spec 2025-11-25 client/elicitation § Capabilities).
  const declared =
    mode === 'form' ? Object.keys(elicitation).length === 0 || 'form' in elicitation : 'url' in elicitation;
  return declared
    ? undefined
    : `the MCP client did not declare elicitation mode "${mode}" (capabilities.elicitation.${mode}), so this request cannot be passed to it`;
}

/** The request as the client gets it: the upstream's, without its own `_meta` and `task`. */
function forwardedOf(request: UpstreamRequest): UpstreamRequest {
  const { _meta: _ignoredMeta, task: _ignoredTask, ...params } = request.params;
  return { method: request.method, params };
}

/** The client's answer under `key` in the form `method` expects, undefined when it sent none. */
export function responseOf(
  method: UpstreamRequest['method'],
  responses: Record<string, unknown> | undefined,
  key: string,
): Record<string, unknown> | undefined | Error {
  const view = inputResponse(responses, key);
  if (view.kind === 'missing') return undefined;
  if (method === 'elicitation/create' && view.kind === 'elicit')
    return {
      action: view.action,
      ...(view.action === 'accept' && view.content ? { content: view.content } : {}),
    };
  if (method === 'sampling/createMessage' && view.kind === 'sampling')
    return view.result as Record<string, unknown>;
  return new Error(`the client's answer under "${key}" is not a result of ${method}`);
}

/** Options of {@link createInputRound}. */
export interface InputRoundOptions {
  /** The journal index of a call in flight (the round approver's `callOf`). */
  callOf: (tool: string, args: string) => number | undefined;
  answers: RunAnswers;
  /** The verified state of this retry, if any. */
  decided: PausedCall | undefined;
  /** The retry's `inputResponses`. */
  responses: Record<string, unknown> | undefined;
  capabilities: ClientCapabilities;
  /** Stops the run (the pause). */
  stop: () => void;
}

/** The asker of one round of a journaled run, and the request it paused on (if any). */
export interface InputRound {
  asker: UpstreamAsker;
  paused(): PausedAsk | undefined;
}

/** An asker that answers from the client's responses and the answer log, and pauses on anything new. */
export function createInputRound(options: InputRoundOptions): InputRound {
  const asks = new Map<number, number>();
  const rounds = options.decided?.inputRounds ?? 0;
  let paused: PausedAsk | undefined;
  const asker: UpstreamAsker = async (request, signal, context) => {
    const why = refusal(request, options.capabilities);
    if (why !== undefined) throw new Error(`codecall cannot pass on this ${request.method} request: ${why}.`);
    if (context === undefined)
      throw new Error(
        `codecall cannot pass on this ${request.method} request: it does not know which call of the script it came during.`,
      );
    const forwarded = forwardedOf(request);
    const json = JSON.stringify(forwarded);
    if (Buffer.byteLength(json) > DEFAULT_SERVE_INPUT_REQUEST_MAX_BYTES)
      throw new Error(
        `codecall cannot pass on this ${request.method} request: it is larger than ${DEFAULT_SERVE_INPUT_REQUEST_MAX_BYTES} bytes (DEFAULT_SERVE_INPUT_REQUEST_MAX_BYTES).`,
      );
    const args = hashArgs(context.args);
    const call = options.callOf(context.tool, args);
    if (call === undefined)
      throw new Error(
        `codecall cannot pass on this ${request.method} request: it could not place ${context.tool} in its run journal.`,
      );
    const ask = asks.get(call) ?? 0;
    asks.set(call, ask + 1);
    const hash = createHash('sha256').update(json, 'utf8').digest('hex');
    const { decided } = options;
    if (
      decided?.input !== undefined &&
      decided.call === call &&
      decided.tool === context.tool &&
      decided.args === args &&
      decided.input.ask === ask &&
      decided.input.request === hash
    ) {
      const response = responseOf(request.method, options.responses, decided.input.key);
      if (response instanceof Error)
        throw new Error(`codecall cannot pass on the answer: ${response.message}.`);
      if (response !== undefined) {
        await options.answers.recordAnswer(call, ask, hash, response);
        return response;
      }
    }
    const earlier = options.answers.answer(call, ask, hash);
    if (earlier !== undefined) return earlier;
    if (rounds >= DEFAULT_SERVE_INPUT_ROUNDS_MAX)
      throw new Error(
        `codecall cannot pass on this ${request.method} request: the run already asked its client ${rounds} times (DEFAULT_SERVE_INPUT_ROUNDS_MAX).`,
      );
    paused ??= { call, tool: context.tool, args, ask, request: hash, forwarded };
    options.stop();
    // Never answered in this request: the stop aborts the run, which withdraws the question.
    return new Promise<never>((_resolve, reject) => {
      if (signal.aborted) reject(signal.reason as Error);
      else signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
    });
  };
  return { asker, paused: () => paused };
}

/** The `input_required` answer of a run paused on an upstream's request. */
export async function inputRound(
  codec: RequestStateCodec<PausedCall>,
  state: { run: string; code: string; inputRounds: number },
  paused: PausedAsk,
  ctx: ServerContext,
): Promise<InputRequiredResult> {
  const key = `upstream-${paused.call}-${paused.ask}`;
  const requestState = await codec.mint(
    {
      run: state.run,
      code: state.code,
      call: paused.call,
      tool: paused.tool,
      args: paused.args,
      input: { ask: paused.ask, request: paused.request, key },
      inputRounds: state.inputRounds + 1,
    },
    ctx,
  );
  return inputRequired({
    inputRequests: { [key]: paused.forwarded as never },
    requestState,
  });
}
