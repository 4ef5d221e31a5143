/**
 * @module
 * Upstream input requests in `exec` jobs. A job's call may be asked something by its upstream
 * server while it is in flight (a 2026-07-28 server's `input_required` round, or a 2025-11-25
 * server's `elicitation/create` / `sampling/createMessage` during the call). A job that runs an MCP
 * client's task (`execute_code` as a task) parks on such a request the way it parks on an approval
 * (`job-approvals.ts`): the request is recorded as the job's pending request, the attempt stops,
 * the task client answers it, and the next attempt replays the journal, makes the call again and
 * answers the re-asked request only when it is the same one (same call, same position among the
 * call's requests, same sha256).
 *
 * Who can answer is said by the job's {@link JOB_ASKS_LABEL} label, which `codecall serve` sets
 * from the task client's declared capabilities; a job without it (submitted through the jobs API)
 * has nobody to ask, and the call fails at once as before.
 *
 * The answers a job was given are kept in its **answer log**, a run journal of its own beside the
 * job's (`<state key>:answers`, same store), whose entries are `finished` records: `index` is the
 * call's journal index, `name` says what it records (`input:<position>` an answer, `asked:<position>`
 * a request put to the client, `approval:<tool>` an approval used), `argsHash` the request's (or the
 * arguments') sha256. A call asked twice, or approved and then asked, is answered in later attempts
 * without asking again, and the number of `asked:` entries bounds the job's input rounds.
 */
import { createHash } from 'node:crypto';
import { InputAnswers, type RunJournal } from '../store/index.js';
import type { PendingInput } from '../store/job-state.js';

export { answerLogKey } from '../store/job-state.js';

/**
 * The label of a job that says which input requests its requester can answer: a comma-separated
 * list of `elicitation.form`, `elicitation.url` and `sampling`. `codecall serve` sets it on the
 * jobs of MCP tasks from the client's declared capabilities.
 */
export const JOB_ASKS_LABEL = 'mcp-task-asks';

/** What a job's requester can answer (from {@link JOB_ASKS_LABEL}). */
export type JobAsks = ReadonlySet<string>;

/** The asks of a job's labels; undefined when it has none (nobody to ask). */
export function asksOfLabels(labels: Record<string, string> | undefined): JobAsks | undefined {
  const text = labels?.[JOB_ASKS_LABEL];
  if (text === undefined) return undefined;
  return new Set(
    text
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean),
  );
}

/** Why the job's requester cannot answer `method` (in `mode`), or undefined when it can. */
export function refusalOf(method: PendingInput['method'], mode: string, asks: JobAsks): string | undefined {
  if (method === 'sampling/createMessage')
    return asks.has('sampling')
      ? undefined
      : 'the MCP client of this task did not declare the "sampling" capability, so it cannot be passed a sampling/createMessage request; use a client that supports sampling';
  const want = mode === 'url' ? 'elicitation.url' : 'elicitation.form';
  if (asks.has(want)) return undefined;
  return asks.has('elicitation.form') || asks.has('elicitation.url')
    ? `the MCP client of this task did not declare elicitation mode "${mode}" (capabilities.elicitation.${mode}), so this request cannot be passed to it`
    : 'the MCP client of this task did not declare the "elicitation" capability, so this elicitation/create request cannot be passed to it; use a client that supports elicitation';
}

/** The sha256 (hex) of a request's JSON. */
export function requestHashOf(json: string): string {
  return createHash('sha256').update(json, 'utf8').digest('hex');
}

/** An approval an earlier attempt used, as the answer log keeps it. */
interface KeptApproval {
  approved: boolean;
  reason?: string;
}

/** A job's answer log, read once on first use (a job that never asks reads nothing). */
export class JobAnswers {
  #read: Promise<void> | undefined;
  readonly #answers: InputAnswers;
  readonly #approvals = new Map<string, KeptApproval>();
  #asked = 0;

  constructor(private readonly log: RunJournal) {
    this.#answers = new InputAnswers(log);
  }

  #open(): Promise<void> {
    this.#read ??= this.log.entries().then((entries) => {
      for (const entry of entries) {
        if (entry.type !== 'finished' || this.#answers.read(entry)) continue;
        if (entry.name.startsWith('asked:')) this.#asked++;
        else if (entry.name.startsWith('approval:'))
          this.#approvals.set(`${entry.index}\0${entry.name}\0${entry.argsHash}`, {
            approved: entry.ok,
            ...(typeof entry.error === 'string' ? { reason: entry.error } : {}),
          });
      }
    });
    // A failed read is tried again by the next use.
    this.#read.catch(() => (this.#read = undefined));
    return this.#read;
  }

  /** The answer kept for request `request` at position `ask` of call `call`, if any. */
  async answer(call: number, ask: number, request: string): Promise<Record<string, unknown> | undefined> {
    await this.#open();
    return this.#answers.answer(call, ask, request);
  }

  /** Keeps an answer (durable before the upstream gets it). */
  async recordAnswer(
    call: number,
    ask: number,
    request: string,
    response: Record<string, unknown>,
  ): Promise<void> {
    await this.#open();
    await this.#answers.record(call, ask, request, response);
  }

  /** Input requests the job has put to its client so far. */
  async asked(): Promise<number> {
    await this.#open();
    return this.#asked;
  }

  /** Counts a request put to the client (durable before the job parks on it). */
  async recordAsked(call: number, ask: number, request: string): Promise<void> {
    await this.#open();
    await this.log.append({
      type: 'finished',
      index: call,
      name: `asked:${ask}`,
      argsHash: request,
      ok: true,
      at: Date.now(),
    });
    this.#asked++;
  }

  /** The approval an earlier attempt used for call `call` (same tool and arguments), if any. */
  async approval(call: number, tool: string, argsHash: string): Promise<KeptApproval | undefined> {
    await this.#open();
    return this.#approvals.get(`${call}\0approval:${tool}\0${argsHash}`);
  }

  /** Keeps an approval used by this attempt, so a later decision on the same call does not replace it. */
  async recordApproval(call: number, tool: string, argsHash: string, decision: KeptApproval): Promise<void> {
    await this.#open();
    if (this.#approvals.has(`${call}\0approval:${tool}\0${argsHash}`)) return;
    await this.log.append({
      type: 'finished',
      index: call,
      name: `approval:${tool}`,
      argsHash,
      ok: decision.approved,
      ...(decision.reason !== undefined ? { error: decision.reason } : {}),
      at: Date.now(),
    });
    this.#approvals.set(`${call}\0approval:${tool}\0${argsHash}`, decision);
  }
}
