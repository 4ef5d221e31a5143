/**
 * @module
 * Where usage history lives: a small interface that the embedded SQLite store implements and a
 * server-grade store (Postgres, Redis…) can implement later, plus an in-memory store for tests
 * and short-lived processes. Pure.
 */
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
  /** Releases the store; idempotent. */
  close(): Promise<void>;
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
  #closed = false;

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
