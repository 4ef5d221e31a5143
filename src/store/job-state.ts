/**
 * @module
 * The durable state of a job between its attempts, behind one contract: its **run journal** (the
 * tool calls an attempt started and finished, so a retry replays the finished ones instead of
 * making them again) and its **approvals** (the call it waits on, and the decisions recorded for
 * it). {@link JobStateStore} is implemented in memory (the embedded backend), in Redis (BullMQ)
 * and in PostgreSQL (pg-boss); `test/contract/job-state.test.ts` runs one suite against all three.
 *
 * A job's state is addressed by a key the queue gives it (its id and its creation time, so a job
 * submitted again under the same id does not replay the first one's calls), and is deleted with
 * {@link JobStateStore.forget} once the queue has recorded the job's end.
 */
import { CodecallError } from '../errors.js';
import type { RunJournal } from './run-journal.js';

/**
 * An upstream server's input request (an `elicitation/create` or `sampling/createMessage`) that
 * a job's call met: the job waits for its client's answer as it waits for an approval.
 */
export interface PendingInput {
  /** `elicitation/create` or `sampling/createMessage`. */
  method: 'elicitation/create' | 'sampling/createMessage';
  /** The request's params as the upstream sent them, without its own `_meta` and `task` (untrusted). */
  params: Record<string, unknown>;
  /** Position of the request among the requests of its call, over all the call's rounds (0-based). */
  ask: number;
  /** sha256 (hex) of the request's JSON (`{method, params}`): the answer applies to this request only. */
  requestHash: string;
  /** Input requests the job put to its client before this one (so `round` is unique over the job's life). */
  round: number;
}

/**
 * A call of a job that waits for a decision: an approval, or (with `input`) the answer to an
 * input request its upstream server sent during the call.
 */
export interface PendingApproval {
  /** Qualified name, `server.tool`. */
  tool: string;
  /** The call's arguments. */
  args: unknown;
  /** sha256 (hex) of the arguments' JSON. */
  argsHash: string;
  /** Index of the call in the job's run journal (0-based, the script's call order). */
  callIndex: number;
  /** Why it needs approval (the configuration key or the annotation). */
  reason: string;
  /** Epoch milliseconds. */
  requestedAt: number;
  /** The job ends (`APPROVAL_TIMEOUT`, `INPUT_TIMEOUT`) if nobody decides by then (epoch milliseconds). */
  expiresAt: number;
  /** Set when the call waits for the answer to its upstream's input request, not for an approval. */
  input?: PendingInput;
}

/** A decision recorded for a pending call. */
export interface JobApprovalDecision {
  approved: boolean;
  reason?: string;
  /** Which call it decides. */
  callIndex: number;
  tool: string;
  argsHash: string;
  /** Epoch milliseconds. */
  decidedAt: number;
  /** The input request it answers (position and sha256), when it answers one. */
  input?: { ask: number; requestHash: string };
  /** The answer to that input request (an `ElicitResult` or a `CreateMessageResult`). */
  response?: Record<string, unknown>;
}

/**
 * What a decision says: an approval (`approved`, `reason`), or the answer to an input request
 * (`approved: true` and its `response`).
 */
export interface JobDecisionInput {
  approved: boolean;
  reason?: string;
  response?: Record<string, unknown>;
}

/** Where a job's pending request and decisions are kept. */
export interface JobApprovalStore {
  /** The request the job waits on, if any. */
  pending(): Promise<PendingApproval | undefined>;
  /** Records the request the attempt stops on (durable once resolved). */
  setPending(request: PendingApproval): Promise<void>;
  /** The decision recorded for the call at `callIndex`, if any. */
  decision(callIndex: number): Promise<JobApprovalDecision | undefined>;
  /**
   * Records the decision of the pending request and clears it, atomically (two approvers racing
   * on one request: one wins); false when no request is pending (never asked, or decided already).
   */
  decide(decision: JobDecisionInput): Promise<JobApprovalDecision | false>;
}

/**
 * The state of every job of one queue. `journal` and `approvals` are cheap views (no I/O until
 * used); an `append` or a `setPending` resolves once the write is durable in the store.
 */
export interface JobStateStore {
  /** The run journal of the job under `key`. */
  journal(key: string): RunJournal;
  /** The approvals of the job under `key`. */
  approvals(key: string): JobApprovalStore;
  /** Deletes the job's journal, approvals and answer log (once the queue has recorded its end). */
  forget(key: string): Promise<void>;
  /** Releases connections the store opened. Idempotent. */
  close(): Promise<void>;
}

/**
 * The key of a job's answer log (the answers to its upstream input requests and the approvals it
 * used, a run journal of its own): {@link JobStateStore.forget} deletes it with the job's state.
 */
export function answerLogKey(stateKey: string): string {
  return `${stateKey}:answers`;
}

/**
 * The decision record of `pending`. Throws `INVALID_ARGUMENT` when the decision does not fit what
 * waits: an input request is answered with a `response`, an approval is decided without one.
 */
export function toDecision(pending: PendingApproval, decision: JobDecisionInput): JobApprovalDecision {
  if (pending.input !== undefined && decision.response === undefined)
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `The job waits for the answer to an ${pending.input.method} request of ${pending.tool} (call ${pending.callIndex}), not for an approval; the MCP client of its task answers it (tasks/update, or tasks/result for a 2025-11-25 client).`,
      { details: { field: 'response' } },
    );
  if (pending.input === undefined && decision.response !== undefined)
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `The job waits for the approval of ${pending.tool} (call ${pending.callIndex}), not for an answer; send {"approved": true} or {"approved": false}.`,
      { details: { field: 'response' } },
    );
  return {
    approved: decision.approved,
    ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
    callIndex: pending.callIndex,
    tool: pending.tool,
    argsHash: pending.argsHash,
    decidedAt: Date.now(),
    ...(pending.input !== undefined
      ? { input: { ask: pending.input.ask, requestHash: pending.input.requestHash } }
      : {}),
    ...(decision.response !== undefined ? { response: decision.response } : {}),
  };
}

/** A job's approvals in memory. */
export class MemoryJobApprovalStore implements JobApprovalStore {
  #pending: PendingApproval | undefined;
  readonly #decisions = new Map<number, JobApprovalDecision>();

  pending(): Promise<PendingApproval | undefined> {
    return Promise.resolve(this.#pending);
  }

  setPending(request: PendingApproval): Promise<void> {
    this.#pending = structuredClone(request);
    return Promise.resolve();
  }

  decision(callIndex: number): Promise<JobApprovalDecision | undefined> {
    return Promise.resolve(this.#decisions.get(callIndex));
  }

  decide(decision: JobDecisionInput): Promise<JobApprovalDecision | false> {
    const pending = this.#pending;
    if (!pending) return Promise.resolve(false);
    let recorded: JobApprovalDecision;
    try {
      recorded = toDecision(pending, decision);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    this.#decisions.set(pending.callIndex, recorded);
    this.#pending = undefined;
    return Promise.resolve(recorded);
  }
}

/** A job's run journal in memory, stored as JSON like the durable stores, so a replay sees what they would. */
class MemoryJobJournal implements RunJournal {
  readonly #lines: string[] = [];

  append(entry: Parameters<RunJournal['append']>[0]): Promise<void> {
    this.#lines.push(JSON.stringify(entry));
    return Promise.resolve();
  }

  entries(): ReturnType<RunJournal['entries']> {
    return Promise.resolve(this.#lines.map((line) => JSON.parse(line) as never));
  }
}

/** Job state in this process's memory (the embedded backend): gone with the process. */
export class MemoryJobStateStore implements JobStateStore {
  readonly #jobs = new Map<string, { journal: MemoryJobJournal; approvals: MemoryJobApprovalStore }>();

  #job(key: string): { journal: MemoryJobJournal; approvals: MemoryJobApprovalStore } {
    let job = this.#jobs.get(key);
    if (!job) {
      job = { journal: new MemoryJobJournal(), approvals: new MemoryJobApprovalStore() };
      this.#jobs.set(key, job);
    }
    return job;
  }

  journal(key: string): RunJournal {
    return this.#job(key).journal;
  }

  approvals(key: string): JobApprovalStore {
    return this.#job(key).approvals;
  }

  forget(key: string): Promise<void> {
    this.#jobs.delete(key);
    this.#jobs.delete(answerLogKey(key));
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.#jobs.clear();
    return Promise.resolve();
  }
}
