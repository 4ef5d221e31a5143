/**
 * @module
 * The learned tool graph (ToolNet, arXiv 2403.00839): nodes are tool names, and the graph stores
 * how many recorded runs called tool j right after tool i. Probabilities are derived on read,
 * `w_ij = count(i→j) / Σ_k count(i→k)`, so adding or removing tools never needs a rebuild or a
 * renormalisation pass: counts of tools not in the catalog are kept (they come back with their
 * server) and simply never reach a search result. Pure.
 */
import { CodecallError } from '../errors.js';

import {
  DEFAULT_MAX_RECORDED_CALLS,
  DEFAULT_MAX_TOOL_NAME_CHARS,
  transitionsOf,
} from '../util/call-transitions.js';

export { DEFAULT_MAX_RECORDED_CALLS, DEFAULT_MAX_TOOL_NAME_CHARS, transitionsOf };

/**
 * The learned part of a tool search, as plain JSON: what {@link ToolSearch.serialize} returns,
 * what a history store loads, and what `createToolSearch({ state })` restores.
 */
export interface ToolSearchState {
  version: 1;
  /** Runs (call sequences) recorded. */
  sequences: number;
  /** `[from, to, count]`: runs in which `to` was called right after `from`. */
  transitions: Array<[from: string, to: string, count: number]>;
  /**
   * Recorded uses `[query, tools used]`, oldest first, that query feedback learns from (replayed
   * on load, so their decay is reproduced). Absent in states written before query feedback.
   */
  usages?: Array<[query: string, tools: string[]]>;
}

/** Observed transition counts between tools, in both directions. */
export class ToolGraph {
  readonly #out = new Map<string, Map<string, number>>();
  readonly #in = new Map<string, Map<string, number>>();
  readonly #outTotals = new Map<string, number>();
  readonly #inTotals = new Map<string, number>();
  #sequences = 0;

  /** Runs recorded. */
  get sequences(): number {
    return this.#sequences;
  }

  /** True when no transition has been observed (the graph walk then finds nothing). */
  get empty(): boolean {
    return this.#out.size === 0;
  }

  /** Records one run's calls in order. */
  record(sequence: readonly string[]): void {
    this.#sequences++;
    for (const [from, to] of transitionsOf(sequence)) this.add(from, to, 1);
  }

  /** Adds `count` observations of `from → to`. */
  add(from: string, to: string, count: number): void {
    bump(this.#out, from, to, count);
    bump(this.#in, to, from, count);
    this.#outTotals.set(from, (this.#outTotals.get(from) ?? 0) + count);
    this.#inTotals.set(to, (this.#inTotals.get(to) ?? 0) + count);
  }

  /** Runs in which `to` was called right after `from`. */
  count(from: string, to: string): number {
    return this.#out.get(from)?.get(to) ?? 0;
  }

  /** Σ_k count(from → k). */
  outTotal(from: string): number {
    return this.#outTotals.get(from) ?? 0;
  }

  /** Σ_k count(k → to). */
  inTotal(to: string): number {
    return this.#inTotals.get(to) ?? 0;
  }

  /** Observed successors of `from` with their counts. */
  successors(from: string): ReadonlyMap<string, number> {
    return this.#out.get(from) ?? EMPTY;
  }

  /** Observed predecessors of `to` with their counts. */
  predecessors(to: string): ReadonlyMap<string, number> {
    return this.#in.get(to) ?? EMPTY;
  }

  /** Every observed edge. */
  *edges(): Generator<[from: string, to: string, count: number]> {
    for (const [from, targets] of this.#out) for (const [to, count] of targets) yield [from, to, count];
  }

  /** The counts as plain JSON. */
  toState(): ToolSearchState {
    return { version: 1, sequences: this.#sequences, transitions: [...this.edges()] };
  }

  /** Adds the counts of `state` (validated: it may come from a file). */
  load(state: unknown): void {
    const s = state as Partial<ToolSearchState> | null;
    if (typeof s !== 'object' || s === null || s.version !== 1 || !Array.isArray(s.transitions)) {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        'Tool search state is not a version 1 state ({ version: 1, sequences, transitions }). Pass what serialize() or a history store returned.',
        { details: { field: 'state' } },
      );
    }
    const sequences = s.sequences ?? 0;
    if (!Number.isSafeInteger(sequences) || sequences < 0) {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `Tool search state: "sequences" must be a non-negative integer.`,
        {
          details: { field: 'state.sequences' },
        },
      );
    }
    s.transitions.forEach((t, index) => {
      const ok =
        Array.isArray(t) &&
        typeof t[0] === 'string' &&
        typeof t[1] === 'string' &&
        Number.isSafeInteger(t[2]) &&
        t[2] > 0 &&
        t[0].length <= DEFAULT_MAX_TOOL_NAME_CHARS &&
        t[1].length <= DEFAULT_MAX_TOOL_NAME_CHARS;
      if (!ok) {
        throw new CodecallError(
          'INVALID_ARGUMENT',
          `Tool search state: transitions[${index}] must be [from: string, to: string, count: positive integer].`,
          { details: { field: `state.transitions[${index}]` } },
        );
      }
    });
    this.#sequences += sequences;
    for (const [from, to, count] of s.transitions) this.add(from, to, count);
  }
}

const EMPTY: ReadonlyMap<string, number> = new Map();

function bump(map: Map<string, Map<string, number>>, a: string, b: string, count: number): void {
  let inner = map.get(a);
  if (!inner) {
    inner = new Map();
    map.set(a, inner);
  }
  inner.set(b, (inner.get(b) ?? 0) + count);
}
