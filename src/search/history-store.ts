/**
 * @module
 * Where usage history lives: a small interface that the embedded SQLite store implements and a
 * server-grade store (Postgres, Redis…) can implement later, plus an in-memory store for tests
 * and short-lived processes. Pure.
 */
import { DEFAULT_APPROVALS_LIST_LIMIT, DEFAULT_APPROVALS_MAX_KEPT } from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import { ToolGraph, type ToolSearchState } from './tool-graph.js';
import { DEFAULT_MAX_SERIALIZED_USES, type ToolUsage } from './tool-search.js';

/**
 * Persistent usage history: the call sequences of executed runs, aggregated into transition
 * counts. `append` is atomic: a crash mid-write loses at most that run and never corrupts the
 * store.
 *
 * @example
 * ```ts
 * const store = await SqliteHistoryStore.open({ path: '.codecall/history.sqlite' });
 * const search = createToolSearch({ tools, state: await store.load() });
 * const calls = ['get_team_members', 'get_expenses'];
 * search.recordSequence(calls);
 * await store.append(calls);
 * await store.close();
 * ```
 */
export interface UsageHistoryStore {
  /** The aggregated counts, ready for `createToolSearch({ tools, state })`. */
  load(): Promise<ToolSearchState>;
  /** Records one run's tool calls, in dispatch order. */
  append(sequence: readonly string[]): Promise<void>;
  /**
   * Records one use of search: a query and the tools the run then called (query feedback).
   * `load()` then returns the most recent uses in `usages`. Stores without it do not learn
   * from queries across restarts.
   */
  appendUsage?(usage: ToolUsage): Promise<void>;
  /** Records one approval decision (the audit trail). Stores without it keep no audit trail. */
  appendApproval?(entry: ApprovalAuditEntry): Promise<void>;
  /** The newest approval decisions, newest first. */
  listApprovals?(options?: ListApprovalsOptions): Promise<ApprovalAuditEntry[]>;
  /** The JSON of a value scripts kept with `store.set`, or undefined. Stores without it keep no values. */
  getValue?(namespace: string, key: string): Promise<string | undefined>;
  /**
   * Keeps the JSON of a value (`undefined`: removes the key). Rejects with `STORE_LIMIT` when
   * the namespace would hold more than `limits.maxNamespaceBytes` (checked atomically with the
   * write); the caller checks the value's own size.
   */
  setValue?(
    namespace: string,
    key: string,
    json: string | undefined,
    limits: StoreValueLimits,
  ): Promise<void>;
  /** Releases the store; idempotent. */
  close(): Promise<void>;
}

/** Bounds of one {@link UsageHistoryStore.setValue}. */
export interface StoreValueLimits {
  /** Bytes the namespace may hold: UTF-8 of every key plus its value's JSON. */
  maxNamespaceBytes: number;
}

/** Bytes a kept value counts against its namespace: its key and its JSON, in UTF-8. */
export function storedBytes(key: string, json: string): number {
  return Buffer.byteLength(key) + Buffer.byteLength(json);
}

/** The `STORE_LIMIT` error of a write that would put its namespace over its limit. */
export function namespaceLimitError(key: string, used: number, adding: number, limit: number): CodecallError {
  return new CodecallError(
    'STORE_LIMIT',
    `store.set refused: this configuration's store holds ${used} bytes and this value would make it ${used + adding}; the limit is ${limit} bytes (store.maxNamespaceBytes). Remove values you no longer need with store.set(key, undefined), or keep less.`,
    { details: { key, limit, used, adding, configKey: 'store.maxNamespaceBytes' } },
  );
}

/** One approval decision as the history store keeps it. */
export interface ApprovalAuditEntry {
  /** Qualified tool name, `server.tool`. */
  tool: string;
  /** sha256 (hex) of the arguments' JSON (the arguments themselves are not kept). */
  argsSha256: string;
  /** `approved`, `denied`, `timeout` or `cancelled`. */
  outcome: string;
  /** Who or what decided: `callback`, `tty`, `flag`, `elicitation`, `policy`, `timeout`, `cancelled`. */
  decidedBy: string;
  reason?: string;
  /** `direct` or `code_execution`. */
  caller: string;
  /** Milliseconds since the epoch. */
  at: number;
  runId?: string;
  callIndex?: number;
  /** The script line (1-based) that made the call, when known. */
  line?: number;
}

/** Options of {@link UsageHistoryStore.listApprovals}. */
export interface ListApprovalsOptions {
  /** @defaultValue {@link DEFAULT_APPROVALS_LIST_LIMIT} */
  limit?: number;
}

/** Checks an audit entry's fields (strings, a finite time) before it is stored. */
export function checkApprovalEntry(entry: unknown): ApprovalAuditEntry {
  const e = entry as Partial<ApprovalAuditEntry> | null;
  const ok =
    typeof e === 'object' &&
    e !== null &&
    typeof e.tool === 'string' &&
    typeof e.argsSha256 === 'string' &&
    typeof e.outcome === 'string' &&
    typeof e.decidedBy === 'string' &&
    typeof e.caller === 'string' &&
    Number.isFinite(e.at) &&
    (e.reason === undefined || typeof e.reason === 'string') &&
    (e.runId === undefined || typeof e.runId === 'string') &&
    (e.callIndex === undefined || Number.isSafeInteger(e.callIndex)) &&
    (e.line === undefined || Number.isSafeInteger(e.line));
  if (!ok)
    throw new CodecallError(
      'INVALID_ARGUMENT',
      'An approval entry needs tool, argsSha256, outcome, decidedBy, caller (strings) and at (milliseconds).',
      { details: { field: 'entry' } },
    );
  return e as ApprovalAuditEntry;
}

/** Checks a `limit` of {@link UsageHistoryStore.listApprovals}. */
export function checkApprovalsLimit(limit: unknown): number {
  if (limit === undefined) return DEFAULT_APPROVALS_LIST_LIMIT;
  if (!Number.isSafeInteger(limit) || (limit as number) < 1)
    throw new CodecallError('INVALID_ARGUMENT', `limit must be a positive integer; got ${String(limit)}.`, {
      details: { field: 'limit', value: limit },
    });
  return limit as number;
}

/** Checks `sequence` is an array of strings (names are untrusted: they come from model code). */
export function checkSequence(sequence: unknown): readonly string[] {
  if (!Array.isArray(sequence) || sequence.some((name) => typeof name !== 'string')) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      'A usage sequence must be an array of tool names (strings) in call order.',
      {
        details: { field: 'sequence' },
      },
    );
  }
  return sequence as readonly string[];
}

/** Checks `usage` is `{ query: string, tools: string[] }` (untrusted: it comes from model output). */
export function checkUsage(usage: unknown): ToolUsage {
  const u = usage as Partial<ToolUsage> | null;
  if (
    typeof u !== 'object' ||
    u === null ||
    typeof u.query !== 'string' ||
    !Array.isArray(u.tools) ||
    u.tools.some((name) => typeof name !== 'string')
  ) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      'A usage must be { query: string, tools: string[] } (the tools the run called after the query).',
      { details: { field: 'usage' } },
    );
  }
  return u as ToolUsage;
}

/** A {@link UsageHistoryStore} that keeps counts in memory (lost when the process ends). */
export class MemoryHistoryStore implements UsageHistoryStore {
  readonly #graph = new ToolGraph();
  #usages: Array<[string, string[]]> = [];
  #approvals: ApprovalAuditEntry[] = [];
  readonly #values = new Map<string, Map<string, string>>();
  #closed = false;

  getValue(namespace: string, key: string): Promise<string | undefined> {
    if (this.#closed) return Promise.reject(closedError());
    return Promise.resolve(this.#values.get(namespace)?.get(key));
  }

  setValue(
    namespace: string,
    key: string,
    json: string | undefined,
    limits: StoreValueLimits,
  ): Promise<void> {
    if (this.#closed) return Promise.reject(closedError());
    const values = this.#values.get(namespace) ?? new Map<string, string>();
    const old = values.get(key);
    if (json === undefined) {
      values.delete(key);
      return Promise.resolve();
    }
    let used = 0;
    for (const [k, v] of values) used += storedBytes(k, v);
    const adding = storedBytes(key, json) - (old === undefined ? 0 : storedBytes(key, old));
    if (adding > 0 && used + adding > limits.maxNamespaceBytes)
      return Promise.reject(namespaceLimitError(key, used, adding, limits.maxNamespaceBytes));
    values.set(key, json);
    this.#values.set(namespace, values);
    return Promise.resolve();
  }

  appendApproval(entry: ApprovalAuditEntry): Promise<void> {
    if (this.#closed) return Promise.reject(closedError());
    try {
      this.#approvals.push({ ...checkApprovalEntry(entry) });
      if (this.#approvals.length > DEFAULT_APPROVALS_MAX_KEPT) this.#approvals.shift();
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  listApprovals(options: ListApprovalsOptions = {}): Promise<ApprovalAuditEntry[]> {
    if (this.#closed) return Promise.reject(closedError());
    try {
      const limit = checkApprovalsLimit(options.limit);
      return Promise.resolve(
        this.#approvals
          .slice(-limit)
          .reverse()
          .map((entry) => ({ ...entry })),
      );
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  load(): Promise<ToolSearchState> {
    if (this.#closed) return Promise.reject(closedError());
    const state = this.#graph.toState();
    if (this.#usages.length > 0) state.usages = this.#usages.map(([q, t]) => [q, [...t]]);
    return Promise.resolve(state);
  }

  appendUsage(usage: ToolUsage): Promise<void> {
    if (this.#closed) return Promise.reject(closedError());
    try {
      const { query, tools } = checkUsage(usage);
      this.#usages.push([query, [...tools]]);
      if (this.#usages.length > DEFAULT_MAX_SERIALIZED_USES) this.#usages.shift();
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  append(sequence: readonly string[]): Promise<void> {
    if (this.#closed) return Promise.reject(closedError());
    try {
      this.#graph.record(checkSequence(sequence));
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  close(): Promise<void> {
    this.#closed = true;
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** The error of a call on a closed store. */
export function closedError(): CodecallError {
  return new CodecallError('CLOSED', 'The usage history store is closed. Open a new one.');
}
