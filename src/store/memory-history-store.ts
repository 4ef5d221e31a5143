/**
 * @module
 * A {@link UsageHistoryStore} in memory, lost when the process ends: for tests, one-shot
 * processes and per-session values. Bounded like the durable stores.
 */
import { DEFAULT_APPROVALS_MAX_KEPT, DEFAULT_STORE_MAX_USAGES } from '../config/defaults.js';
import { DEFAULT_MAX_RECORDED_CALLS, transitionsOf } from '../util/call-transitions.js';
import {
  approvalFields,
  checkApprovalEntry,
  checkApprovalsLimit,
  checkSequence,
  checkSharedHistoryOptions,
  checkUsage,
  checkUsagesLimit,
  closedError,
  namespaceLimitError,
  storedBytes,
} from './checks.js';
import type { UsageHistoryStore } from './contracts.js';
import { checkShapeArgs, SHAPE_BOUNDS } from './shape-merge.js';
import { mergeShapes, type ResultShape } from '../util/result-shape.js';
import { DEFAULT_RESULT_SHAPE_MAX_TOOLS } from '../config/defaults.js';
import type {
  ApprovalAuditEntry,
  GraphCounts,
  LearnedShape,
  ListApprovalsOptions,
  ListUsagesOptions,
  QueryUsage,
  StoreValueLimits,
} from './types.js';

/** Runs `work`, turning a throw into a rejection (every store method answers with a promise). */
function settle<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error as Error);
  }
}

/** Options of {@link MemoryHistoryStore}. */
export interface MemoryHistoryStoreOptions {
  /** Uses of search kept (the newest). @defaultValue {@link DEFAULT_STORE_MAX_USAGES} */
  maxUsages?: number;
}

/**
 * Every capability of a usage history, in memory.
 *
 * @example
 * ```ts
 * await using store = new MemoryHistoryStore();
 * await store.appendSequence(['get_team_members', 'get_expenses']);
 * await store.loadCounts(); // { sequences: 1, transitions: [['get_team_members', 'get_expenses', 1]] }
 * ```
 */
export class MemoryHistoryStore implements UsageHistoryStore {
  readonly #maxUsages: number;
  #sequences = 0;
  /** Count per transition, keyed by `JSON.stringify([from, to])`. */
  readonly #transitions = new Map<string, [string, string, number]>();
  #usages: QueryUsage[] = [];
  #approvals: ApprovalAuditEntry[] = [];
  readonly #values = new Map<string, Map<string, string>>();
  readonly #shapes = new Map<string, ResultShape>();
  #closed = false;

  constructor(options: MemoryHistoryStoreOptions = {}) {
    this.#maxUsages = options.maxUsages ?? DEFAULT_STORE_MAX_USAGES;
    checkSharedHistoryOptions('memory', { maxUsages: this.#maxUsages });
  }

  #open(): void {
    if (this.#closed) throw closedError();
  }

  loadCounts(): Promise<GraphCounts> {
    return settle(() => {
      this.#open();
      return {
        sequences: this.#sequences,
        transitions: [...this.#transitions.values()].map(([from, to, count]) => [from, to, count]),
      };
    });
  }

  appendSequence(sequence: readonly string[]): Promise<void> {
    return settle(() => {
      this.#open();
      const calls = checkSequence(sequence);
      this.#sequences++;
      for (const [from, to] of transitionsOf(calls, DEFAULT_MAX_RECORDED_CALLS)) {
        const key = JSON.stringify([from, to]);
        const entry = this.#transitions.get(key);
        if (entry) entry[2]++;
        else this.#transitions.set(key, [from, to, 1]);
      }
    });
  }

  appendUsage(usage: QueryUsage): Promise<void> {
    return settle(() => {
      this.#open();
      const { query, tools } = checkUsage(usage);
      this.#usages.push({ query, tools: [...tools] });
      if (this.#usages.length > this.#maxUsages) this.#usages.shift();
    });
  }

  listUsages(options: ListUsagesOptions = {}): Promise<QueryUsage[]> {
    return settle(() => {
      this.#open();
      const limit = checkUsagesLimit(options.limit);
      return this.#usages
        .slice(-limit)
        .reverse()
        .map((usage) => ({ query: usage.query, tools: [...usage.tools] }));
    });
  }

  appendApproval(entry: ApprovalAuditEntry): Promise<void> {
    return settle(() => {
      this.#open();
      this.#approvals.push(approvalFields(checkApprovalEntry(entry)));
      if (this.#approvals.length > DEFAULT_APPROVALS_MAX_KEPT) this.#approvals.shift();
    });
  }

  listApprovals(options: ListApprovalsOptions = {}): Promise<ApprovalAuditEntry[]> {
    return settle(() => {
      this.#open();
      const limit = checkApprovalsLimit(options.limit);
      return this.#approvals
        .slice(-limit)
        .reverse()
        .map((entry) => ({ ...entry }));
    });
  }

  getValue(namespace: string, key: string): Promise<string | undefined> {
    return settle(() => {
      this.#open();
      return this.#values.get(namespace)?.get(key);
    });
  }

  setValue(
    namespace: string,
    key: string,
    json: string | undefined,
    limits: StoreValueLimits,
  ): Promise<void> {
    return settle(() => {
      this.#open();
      const values = this.#values.get(namespace) ?? new Map<string, string>();
      if (json === undefined) {
        values.delete(key);
        return;
      }
      const old = values.get(key);
      let used = 0;
      for (const [k, v] of values) used += storedBytes(k, v);
      const adding = storedBytes(key, json) - (old === undefined ? 0 : storedBytes(key, old));
      if (adding > 0 && used + adding > limits.maxNamespaceBytes)
        throw namespaceLimitError(key, used, adding, limits.maxNamespaceBytes);
      values.set(key, json);
      this.#values.set(namespace, values);
    });
  }

  loadShapes(): Promise<LearnedShape[]> {
    return settle(() => {
      this.#open();
      return [...this.#shapes].map(([tool, shape]) => ({ tool, shape: structuredClone(shape) }));
    });
  }

  mergeShape(tool: string, shape: ResultShape): Promise<void> {
    return settle(() => {
      this.#open();
      const clean = checkShapeArgs(tool, shape);
      const kept = this.#shapes.get(tool);
      if (kept === undefined && this.#shapes.size >= DEFAULT_RESULT_SHAPE_MAX_TOOLS) return;
      this.#shapes.set(tool, kept === undefined ? clean : mergeShapes(kept, clean, SHAPE_BOUNDS));
    });
  }

  /** Releases the store; idempotent. */
  close(): Promise<void> {
    this.#closed = true;
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
