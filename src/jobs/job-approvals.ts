/**
 * @module
 * Durable approvals of `exec` jobs. A script's call that needs approval (`requireApproval`) does
 * not hold its worker while a person decides: the job's approver records the request as
 * *pending* (keyed by the call's index in the job's run journal), the attempt stops, and the job
 * waits (`waiting-approval`) without a worker or an isolate. `codecall jobs approve` /
 * `POST /v1/jobs/:id/approvals` records the decision and wakes the job; the next attempt, on any
 * worker, replays the journal (calls already made are answered from it) and the pending call
 * gets the recorded decision: approved, it runs once; denied, the script sees `APPROVAL_DENIED`.
 * A request nobody decides within the approval timeout ends the job (`expired`,
 * `APPROVAL_TIMEOUT`).
 *
 * Decisions are matched by (journal index, tool, arguments hash): a replay that reaches the same
 * index with another call asks again instead of applying a decision made about something else.
 *
 * The same approver parks the job on an upstream server's input request during a call, when the
 * job's requester can answer it (`job-inputs.ts`): one pending request at a time, whichever kind.
 */
import { DEFAULT_SERVE_INPUT_REQUEST_MAX_BYTES, DEFAULT_SERVE_INPUT_ROUNDS_MAX } from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import type { ExecuteOptions } from '../execute/index.js';
import { CallsInFlight, hashArgs, type RunJournal } from '../store/index.js';
import type { JobApprovalStore, PendingApproval } from '../store/job-state.js';
import type { UpstreamAsker } from '../tools/index.js';
import { refusalOf, requestHashOf, type JobAnswers, type JobAsks } from './job-inputs.js';

/** The approver type of `ExecuteOptions` (the tools layer's `Approver`). */
type Approver = NonNullable<ExecuteOptions['approver']>;

/** What a pending request is about, for messages: `the approval of x (call 2)` or `an answer to …`. */
export function describePending(request: PendingApproval): string {
  return request.input === undefined
    ? `the approval of ${request.tool} (call ${request.callIndex})`
    : `the answer to the ${request.input.method} request of ${request.tool} (call ${request.callIndex})`;
}

/** Bytes of a decision's reason kept. */
export const MAX_APPROVAL_REASON_CHARS = 1_000;

/**
 * Checks the body of an approve request: `{approved: boolean, reason?: string}`. `approved` is
 * required: a body without it (`{}`) decides nothing rather than approving a destructive call.
 */
export function parseApprovalInput(input: unknown): { approved: boolean; reason?: string } {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new CodecallError(
      'INVALID_ARGUMENT',
      'An approval is an object like {"approved": true} or {"approved": false, "reason": "..."}.',
      { details: { field: 'body' } },
    );
  const { approved, reason, ...rest } = input as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length > 0)
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `Unknown field "${extra[0]}" in the approval; use "approved" (boolean) and "reason" (string).`,
      { details: { field: extra[0]! } },
    );
  if (typeof approved !== 'boolean')
    throw new CodecallError(
      'INVALID_ARGUMENT',
      approved === undefined
        ? '"approved" is required: send {"approved": true} to run the call, {"approved": false} to deny it.'
        : '"approved" must be true or false.',
      { details: { field: 'approved' } },
    );
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > MAX_APPROVAL_REASON_CHARS))
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `"reason" must be a string of at most ${MAX_APPROVAL_REASON_CHARS} characters.`,
      { details: { field: 'reason' } },
    );
  return { approved, ...(reason !== undefined ? { reason } : {}) };
}

/** Why an attempt stopped: the job waits for a decision on `request`. */
export class JobWaitingApprovalError extends Error {
  constructor(readonly request: PendingApproval) {
    super(`The job waits for ${describePending(request)}.`);
    this.name = 'JobWaitingApprovalError';
  }
}

/** The job approver of one attempt, and the journal it watches. */
export interface JobApprover {
  /** Wraps the job's journal: tells the approver the journal index of each call in flight. */
  journal: RunJournal;
  approver: Approver;
  /** Answers upstream input requests from the answer log and the job's decisions, parks on new ones. */
  asker: UpstreamAsker | undefined;
  /** Set when the attempt stopped to wait for a decision. */
  waiting(): PendingApproval | undefined;
  /** Set when a pending request ran past its timeout. */
  timedOut(): PendingApproval | undefined;
}

/** Options of {@link createJobApprover}. */
export interface JobApproverOptions {
  store: JobApprovalStore;
  journal: RunJournal;
  /** How long a request waits for a decision. */
  timeoutMs: number;
  /** Stops the attempt (the caller aborts the run). */
  stop: () => void;
  now?: () => number;
  /** The job's answer log (`job-inputs.ts`); without it, approvals only and no asker. */
  answers?: JobAnswers | undefined;
  /** Which input requests the job's requester can answer; undefined: nobody (no asker). */
  asks?: JobAsks | undefined;
}

/**
 * The approver of one attempt of an `exec` job. For each call that needs approval: a decision
 * recorded for its journal index (same tool, same arguments) answers at once; otherwise the
 * request is recorded as pending and the attempt stops (or, past its timeout, the job ends).
 */
export function createJobApprover(options: JobApproverOptions): JobApprover {
  const { store, stop } = options;
  const now = options.now ?? Date.now;
  const journal = new CallsInFlight(options.journal);
  let waiting: PendingApproval | undefined;
  let timedOut: PendingApproval | undefined;
  const approver: Approver = async (request) => {
    const argsHash = hashArgs(request.args);
    const callIndex = journal.claim(request.tool, argsHash);
    if (callIndex === undefined)
      return {
        approved: false,
        decidedBy: 'policy',
        reason: 'the job could not place the call in its run journal',
      };
    const kept = await options.answers?.approval(callIndex, request.tool, argsHash);
    if (kept)
      return {
        approved: kept.approved,
        decidedBy: 'jobs-api',
        ...(kept.reason !== undefined ? { reason: kept.reason } : {}),
      };
    const decision = await store.decision(callIndex);
    if (
      decision &&
      decision.input === undefined &&
      decision.tool === request.tool &&
      decision.argsHash === argsHash
    ) {
      // Kept in the answer log: an input request of the same call, decided later, replaces the
      // store's decision for this call index.
      await options.answers?.recordApproval(callIndex, request.tool, argsHash, {
        approved: decision.approved,
        ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
      });
      return {
        approved: decision.approved,
        decidedBy: 'jobs-api',
        ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
      };
    }
    const pending = await store.pending();
    const at = now();
    if (
      pending &&
      pending.input === undefined &&
      pending.callIndex === callIndex &&
      pending.tool === request.tool &&
      pending.argsHash === argsHash
    ) {
      if (at >= pending.expiresAt) {
        timedOut = pending;
        stop();
        return new Promise<never>(() => {});
      }
      waiting = pending;
      stop();
      return new Promise<never>(() => {});
    }
    const fresh: PendingApproval = {
      tool: request.tool,
      args: request.args,
      argsHash,
      callIndex,
      reason: request.reason,
      requestedAt: at,
      expiresAt: at + options.timeoutMs,
    };
    // Only the first call that needs a decision is recorded; the attempt stops on it.
    if (!waiting) {
      waiting = fresh;
      await store.setPending(fresh);
    }
    stop();
    // Never answered: the stop aborts the run, which withdraws the question.
    return new Promise<never>(() => {});
  };
  const { answers, asks } = options;
  /** Requests asked so far per call in this attempt (a call's position counter). */
  const positions = new Map<number, number>();
  const asker: UpstreamAsker | undefined =
    answers === undefined
      ? undefined
      : async (request, signal, context) => {
          const cannot = (why: string): Error =>
            new Error(`codecall cannot pass on this ${request.method} request: ${why}.`);
          if (asks === undefined)
            throw cannot(
              'this job has nobody to ask (only an execute_code task of an MCP client that declared the "elicitation" or "sampling" capability can be asked); run the script from such a client, or use a tool that does not ask',
            );
          const mode = request.params.mode === 'url' ? 'url' : 'form';
          const why = refusalOf(request.method, mode, asks);
          if (why !== undefined) throw cannot(why);
          if (context === undefined) throw cannot('it does not know which call of the script it came during');
          const { _meta: _ignoredMeta, task: _ignoredTask, ...params } = request.params;
          const json = JSON.stringify({ method: request.method, params });
          if (Buffer.byteLength(json) > DEFAULT_SERVE_INPUT_REQUEST_MAX_BYTES)
            throw cannot(
              `it is larger than ${DEFAULT_SERVE_INPUT_REQUEST_MAX_BYTES} bytes (DEFAULT_SERVE_INPUT_REQUEST_MAX_BYTES)`,
            );
          const argsHash = hashArgs(context.args);
          const callIndex = journal.latest(context.tool, argsHash);
          if (callIndex === undefined)
            throw cannot(`it could not place ${context.tool} in the job's run journal`);
          const ask = positions.get(callIndex) ?? 0;
          positions.set(callIndex, ask + 1);
          const requestHash = requestHashOf(json);
          const earlier = await answers.answer(callIndex, ask, requestHash);
          if (earlier !== undefined) return earlier;
          const decision = await store.decision(callIndex);
          if (
            decision?.response !== undefined &&
            decision.input?.ask === ask &&
            decision.input.requestHash === requestHash &&
            decision.tool === context.tool &&
            decision.argsHash === argsHash
          ) {
            await answers.recordAnswer(callIndex, ask, requestHash, decision.response);
            return decision.response;
          }
          const parked = (): Promise<never> => {
            stop();
            // Never answered in this attempt: the stop aborts the run, which withdraws the question.
            return new Promise<never>((_resolve, reject) => {
              if (signal.aborted) reject(signal.reason as Error);
              else signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
            });
          };
          const pending = await store.pending();
          const at = now();
          if (
            pending?.input !== undefined &&
            pending.callIndex === callIndex &&
            pending.input.ask === ask &&
            pending.input.requestHash === requestHash
          ) {
            if (at >= pending.expiresAt) timedOut = pending;
            else waiting = pending;
            return parked();
          }
          if (waiting) return parked();
          const rounds = await answers.asked();
          if (rounds >= DEFAULT_SERVE_INPUT_ROUNDS_MAX)
            throw cannot(`the job already asked its client ${rounds} times (DEFAULT_SERVE_INPUT_ROUNDS_MAX)`);
          const fresh: PendingApproval = {
            tool: context.tool,
            args: context.args,
            argsHash,
            callIndex,
            reason: `${context.tool}'s server asks for input (${request.method})`,
            requestedAt: at,
            expiresAt: at + options.timeoutMs,
            input: { method: request.method, params, ask, requestHash, round: rounds },
          };
          waiting = fresh;
          await answers.recordAsked(callIndex, ask, requestHash);
          await store.setPending(fresh);
          return parked();
        };
  return { journal, approver, asker, waiting: () => waiting, timedOut: () => timedOut };
}
