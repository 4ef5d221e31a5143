/**
 * @module
 * Query feedback: what was asked, and which tools the run then used. Each recorded use
 * `(query, tools)` adds one observation of "a query with term t led to tool u" for every distinct
 * term of the query and every distinct tool used (relevance feedback with the run's calls as the
 * clicks). Observations decay with a half-life counted in recorded uses, so old habits fade, and
 * a term–tool pair must have been seen `minCount` times (after decay) before it moves a ranking,
 * so one-off noise does not. Scores are derived on read: for a query, a tool's feedback score is
 * the mean over the query's terms of `c(t,u) · (s − m + 1)/s / (n(t) + κ)`, where `c` is the
 * decayed and `s` the raw count of the pair, `m` the minimum count, and `n(t)` the decayed number
 * of uses whose query had `t`. Pure; bounded in terms, tools per term, term–tool pairs and
 * tools per use.
 *
 * Decay costs nothing per read: counts are kept scaled by `2^(t/h)` at the use `t` that added them
 * (rescaled now and then so the numbers stay finite), so every count shares one factor at read
 * time, and forgetting the weakest is a sort of plain numbers. The forgetting rule, in order:
 * every observation fades with the half-life; past a bound by a margin (a quarter for the tools of
 * one term, a tenth for the terms and for all pairs), the entries with the smallest decayed counts
 * are forgotten down to the bound, so recording stays amortised O(1) and memory stays bounded.
 *
 * Tools are kept as interned integer ids (an id no pair holds any more is reused), so recording
 * and scoring key maps and typed accumulators by small integers, and names are read back only for
 * the tools a query returns.
 */

import { DEFAULT_FEEDBACK_CANDIDATES, DEFAULT_MAX_FEEDBACK_PAIRS } from '../config/defaults.js';
import { InternedNames } from './interned-names.js';

/** Recorded uses after which one observation weighs half (older uses fade, none is dropped at once). */
export const DEFAULT_FEEDBACK_HALF_LIFE_USES = 5_000;
/** Decayed co-occurrences a term–tool pair needs before it counts (one-off noise does not). */
export const DEFAULT_FEEDBACK_MIN_COUNT = 2;
/** Distinct terms of one query that are learned from. */
export const DEFAULT_MAX_FEEDBACK_TERMS_PER_USE = 32;
/** Distinct tools of one use that are learned from. */
export const DEFAULT_MAX_FEEDBACK_TOOLS_PER_USE = 32;
/** Tools remembered per term (the weakest are forgotten first). */
export const DEFAULT_MAX_FEEDBACK_TOOLS_PER_TERM = 256;
/**
 * Tools of one query term that a query reads, the strongest first: a weaker one's share of that
 * term is too small to lift it into the results.
 */
export const DEFAULT_FEEDBACK_TOOLS_READ_PER_TERM = 64;
/** Terms remembered (the least used are forgotten first). */
export const DEFAULT_MAX_FEEDBACK_TERMS = 50_000;
export { DEFAULT_FEEDBACK_CANDIDATES, DEFAULT_MAX_FEEDBACK_PAIRS };

/** Scaled counts are divided back when the scale passes this (2^64), so they stay finite. */
const RESCALE_ABOVE = 2 ** 64;

/** One count of a pair: its scaled decayed value and its raw number of observations. */
interface Pair {
  value: number;
  seen: number;
}

interface TermStats {
  value: number;
  /** By interned tool id. */
  tools: Map<number, Pair>;
  /**
   * Its strongest tools as a query reads them, in the shared arena of ranked tools: where they
   * start (−1 when a use changed the term since), how many, and for which minimum count.
   */
  rankedAt: number;
  rankedLength: number;
  rankedMinCount: number;
}

/**
 * What {@link QueryFeedback.scoreIds} returns: the tools with the most evidence for a query, in
 * parallel arrays of `length` (interned tool ids, their scores, the query term that contributed
 * most to each). Reused by the next call: read it before scoring again.
 */
export interface FeedbackScores {
  length: number;
  tools: Int32Array;
  scores: Float64Array;
  terms: string[];
}

/** Bounds of a {@link QueryFeedback}; every field defaults to the constant of the same name. */
export interface QueryFeedbackOptions {
  /** @defaultValue {@link DEFAULT_FEEDBACK_HALF_LIFE_USES} */
  halfLifeUses?: number;
  /** @defaultValue {@link DEFAULT_MAX_FEEDBACK_PAIRS} */
  maxPairs?: number;
  /** @defaultValue {@link DEFAULT_MAX_FEEDBACK_TERMS} */
  maxTerms?: number;
  /** @defaultValue {@link DEFAULT_MAX_FEEDBACK_TOOLS_PER_TERM} */
  maxToolsPerTerm?: number;
}

/** Parameters of {@link QueryFeedback.score}. */
export interface FeedbackScoreOptions {
  /** Pseudo-count κ added to each term's use count. */
  evidencePrior: number;
  /** Decayed co-occurrences a pair needs. */
  minCount: number;
  /**
   * Tools returned at most: those with the highest scores (in no particular order).
   * @defaultValue {@link DEFAULT_FEEDBACK_CANDIDATES}
   */
  limit?: number;
}

/** Learned query-term → tool associations. */
export class QueryFeedback {
  readonly #terms = new Map<string, TermStats>();
  readonly #tools = new InternedNames();
  /**
   * Per-query accumulators indexed by tool id (ids are bounded by the pairs kept), reset by a
   * stamp instead of cleared: per id, its stamp, and three numbers side by side: the tool's sum,
   * its best share and that share's term. Indexed directly, a read is one load where a table
   * hashed per query (tried before) cost a probe loop; measured faster on the bench's catalog.
   */
  #stamp = new Uint32Array(0);
  #round = 0;
  #slotData = new Float64Array(0);
  /** Tool ids in the order they were first touched. */
  #touched = new Int32Array(0);
  #values = new Float64Array(0);
  /**
   * The strongest tools of every term, as pairs side by side (`arena[2i]` a tool id,
   * `arena[2i + 1]` its weight), each term's in one run: a query reads one contiguous block per
   * term, with no object between. Appended to; compacted when full.
   */
  #arena = new Float64Array(1024);
  #arenaEnd = 0;
  /**
   * The terms whose runs were put in the arena, in arena order, and where each run started (a run
   * is live while its term still starts there): compaction walks these, not every term.
   */
  #runTerms: TermStats[] = [];
  #runStarts: number[] = [];
  /** The stats of each distinct query term that has ranked tools (scratch of one query). */
  readonly #read: Array<TermStats | undefined> = [];
  readonly #distinct: string[] = [];
  readonly #factors: number[] = [];
  readonly #out: FeedbackScores = {
    length: 0,
    tools: new Int32Array(0),
    scores: new Float64Array(0),
    terms: [],
  };
  readonly #halfLife: number;
  readonly #maxPairs: number;
  readonly #maxTerms: number;
  readonly #maxToolsPerTerm: number;
  #clock = 0;
  /** The use counts are scaled from: a count added at use `t` is stored as `2^((t − epoch)/h)`. */
  #epoch = 0;
  #pairs = 0;

  constructor(options: number | QueryFeedbackOptions = {}) {
    const resolved = typeof options === 'number' ? { halfLifeUses: options } : options;
    this.#halfLife = resolved.halfLifeUses ?? DEFAULT_FEEDBACK_HALF_LIFE_USES;
    this.#maxPairs = Math.max(1, resolved.maxPairs ?? DEFAULT_MAX_FEEDBACK_PAIRS);
    this.#maxTerms = Math.max(1, resolved.maxTerms ?? DEFAULT_MAX_FEEDBACK_TERMS);
    this.#maxToolsPerTerm = Math.max(1, resolved.maxToolsPerTerm ?? DEFAULT_MAX_FEEDBACK_TOOLS_PER_TERM);
  }

  /** Uses recorded. */
  get uses(): number {
    return this.#clock;
  }

  /** Term–tool pairs kept (bounded by `maxPairs` and a tenth). */
  get pairs(): number {
    return this.#pairs;
  }

  /** Terms kept (bounded by `maxTerms` and a tenth). */
  get terms(): number {
    return this.#terms.size;
  }

  /** True when nothing was learned (search then ranks exactly as without feedback). */
  get empty(): boolean {
    return this.#terms.size === 0;
  }

  /** The scale of a count added now (1 without decay). */
  #scale(): number {
    return Number.isFinite(this.#halfLife) ? 2 ** ((this.#clock - this.#epoch) / this.#halfLife) : 1;
  }

  /** Records one use: the query's terms and the tools the run used (order does not matter). */
  record(terms: readonly string[], tools: readonly string[]): void {
    const distinctTools = [...new Set(tools)].slice(0, DEFAULT_MAX_FEEDBACK_TOOLS_PER_USE);
    const distinctTerms = [...new Set(terms)].slice(0, DEFAULT_MAX_FEEDBACK_TERMS_PER_USE);
    if (distinctTools.length === 0 || distinctTerms.length === 0) return;
    this.#clock++;
    let scale = this.#scale();
    if (scale > RESCALE_ABOVE) {
      this.#rescale(scale);
      scale = 1;
    }
    const toolIds = distinctTools.map((tool) => this.#tools.intern(tool));
    for (const term of distinctTerms) {
      let stats = this.#terms.get(term);
      if (!stats) {
        stats = { value: 0, tools: new Map(), rankedAt: -1, rankedLength: 0, rankedMinCount: 0 };
        this.#terms.set(term, stats);
      }
      stats.value += scale;
      this.#dropRanked(stats);
      for (const tool of toolIds) {
        let pair = stats.tools.get(tool);
        if (!pair) {
          pair = { value: 0, seen: 0 };
          stats.tools.set(tool, pair);
          this.#tools.retain(tool);
          this.#pairs++;
        }
        pair.value += scale;
        pair.seen++;
      }
      const toolBound = this.#maxToolsPerTerm;
      if (stats.tools.size > toolBound + Math.ceil(toolBound / 4)) this.#forgetTools(stats, toolBound);
    }
    if (this.#terms.size > this.#maxTerms + Math.ceil(this.#maxTerms / 10)) this.#forgetTerms();
    if (this.#pairs > this.#maxPairs + Math.ceil(this.#maxPairs / 10)) this.#forgetPairs();
  }

  /**
   * Divides every count by `scale` and starts a new epoch (the order of counts is unchanged); the
   * cached strongest tools of each term are dropped with it.
   */
  #rescale(scale: number): void {
    for (const stats of this.#terms.values()) {
      stats.value /= scale;
      for (const pair of stats.tools.values()) pair.value /= scale;
      // Its strongest tools were weighed at the old scale.
      this.#dropRanked(stats);
    }
    this.#epoch = this.#clock;
  }

  /**
   * Keeps the `keep` strongest tools of one term: a selection finds the cut, and at the cut the
   * earliest recorded are kept (what a stable sort by strength would keep).
   */
  #forgetTools(stats: TermStats, keep: number): void {
    const size = stats.tools.size;
    if (size <= keep) return;
    if (this.#values.length < size) this.#values = new Float64Array(size * 2);
    const values = this.#values;
    let i = 0;
    for (const pair of stats.tools.values()) values[i++] = pair.value;
    const cut = selectNth(values, size, size - keep);
    let above = 0;
    for (const pair of stats.tools.values()) if (pair.value > cut) above++;
    let atCut = keep - above;
    for (const [tool, pair] of stats.tools) {
      if (pair.value > cut || (pair.value === cut && atCut-- > 0)) continue;
      stats.tools.delete(tool);
      this.#tools.release(tool);
    }
    this.#dropRanked(stats);
    this.#pairs -= size - keep;
  }

  /** Keeps the `maxTerms` most used terms, with their pairs. */
  #forgetTerms(): void {
    const ranked = [...this.#terms].sort((a, b) => b[1].value - a[1].value);
    for (let i = this.#maxTerms; i < ranked.length; i++) {
      const [term, stats] = ranked[i]!;
      this.#pairs -= stats.tools.size;
      for (const tool of stats.tools.keys()) this.#tools.release(tool);
      this.#dropRanked(stats);
      this.#terms.delete(term);
    }
  }

  /** Keeps the `maxPairs` strongest pairs over all terms (terms left without one go too). */
  #forgetPairs(): void {
    const values = new Float64Array(this.#pairs);
    let i = 0;
    for (const stats of this.#terms.values())
      for (const pair of stats.tools.values()) values[i++] = pair.value;
    values.sort();
    // Forget below the cut, and at the cut only as many as it takes.
    const cut = values[values.length - this.#maxPairs]!;
    let atCut = 0;
    for (let j = values.length - this.#maxPairs; j < values.length && values[j] === cut; j++) atCut++;
    for (const [term, stats] of this.#terms) {
      this.#dropRanked(stats);
      for (const [tool, pair] of stats.tools) {
        if (pair.value < cut || (pair.value === cut && atCut-- <= 0)) {
          stats.tools.delete(tool);
          this.#tools.release(tool);
          this.#pairs--;
        }
      }
      if (stats.tools.size === 0) {
        this.#dropRanked(stats);
        this.#terms.delete(term);
      }
    }
  }

  /** Distinct tool names the pairs hold (their ids are reused once no pair holds them). */
  get tools(): number {
    return this.#tools.size;
  }

  /** Bumped whenever a tool id stops naming the tool it named (what caches of ids by name key on). */
  get namesVersion(): number {
    return this.#tools.version;
  }

  /** The name of a tool id that {@link scoreIds} returned. */
  toolName(id: number): string {
    return this.#tools.name(id);
  }

  /**
   * Feedback score of the tools with the most evidence for the query `terms` (0–1: the mean over
   * the query's distinct terms of the shrunk share of uses with that term that used the tool; at
   * most `limit`, the highest, in no particular order), and for each tool the term that contributed most (for its
   * reason), by name.
   */
  score(
    terms: readonly string[],
    options: FeedbackScoreOptions,
  ): Map<string, { score: number; term: string }> {
    const scored = this.scoreIds(terms, options);
    const out = new Map<string, { score: number; term: string }>();
    for (let i = 0; i < scored.length; i++)
      out.set(this.#tools.name(scored.tools[i]!), { score: scored.scores[i]!, term: scored.terms[i]! });
    return out;
  }

  /**
   * {@link score} by tool id, in reused arrays: shares are summed into accumulators indexed by
   * tool id, and the best `limit` are chosen by one selection of the cut (ties at the cut by name).
   */
  scoreIds(terms: readonly string[], options: FeedbackScoreOptions): FeedbackScores {
    const out = this.#out;
    out.length = 0;
    if (terms.length === 0 || this.#terms.size === 0) return out;
    const distinct = dedupeTerms(terms, this.#distinct);
    // Counts are stored scaled; one factor turns them into decayed counts.
    const unscale = 1 / this.#scale();
    const { minCount, evidencePrior } = options;
    // The terms' tools first, then their shares summed per tool.
    const read = this.#read;
    const factors = this.#factors;
    read.length = distinct.length;
    factors.length = distinct.length;
    for (let t = 0; t < distinct.length; t++) {
      const stats = this.#terms.get(distinct[t]!);
      read[t] = stats;
      if (stats === undefined) continue;
      this.#rank(stats, minCount);
      factors[t] = unscale / ((stats.value * unscale + evidencePrior) * distinct.length);
    }
    // Read after every term was ranked (ranking one may compact the arena).
    const arena = this.#arena;
    // Accumulators for every tool id (grown with the ids), a new stamp for this query.
    const capacity = this.#tools.capacity;
    if (this.#stamp.length < capacity) {
      this.#stamp = new Uint32Array(capacity * 2);
      this.#slotData = new Float64Array(capacity * 2 * 3);
      this.#touched = new Int32Array(capacity * 2);
      this.#round = 0;
    }
    if (this.#values.length < capacity) this.#values = new Float64Array(capacity * 2);
    this.#round = (this.#round + 1) >>> 0;
    if (this.#round === 0) {
      this.#stamp.fill(0);
      this.#round = 1;
    }
    const round = this.#round;
    const stamp = this.#stamp;
    const data = this.#slotData;
    const touched = this.#touched;
    let count = 0;
    for (let t = 0; t < distinct.length; t++) {
      const stats = read[t];
      if (stats === undefined) continue;
      const factor = factors[t]!;
      const end = stats.rankedAt + 2 * stats.rankedLength;
      for (let i = stats.rankedAt; i < end; i += 2) {
        const tool = arena[i]! | 0;
        const share = arena[i + 1]! * factor;
        const at = tool * 3;
        if (stamp[tool] !== round) {
          stamp[tool] = round;
          touched[count++] = tool;
          data[at] = share;
          data[at + 1] = share;
          data[at + 2] = t;
        } else {
          data[at]! += share;
          if (share > data[at + 1]!) {
            data[at + 1] = share;
            data[at + 2] = t;
          }
        }
      }
    }
    read.length = 0;
    const limit = options.limit ?? DEFAULT_FEEDBACK_CANDIDATES;
    // The best `limit` by score (ties at the cut by name): a selection finds the cut.
    let cut = -Infinity;
    if (count > limit) {
      const values = this.#values;
      for (let i = 0; i < count; i++) values[i] = data[touched[i]! * 3]!;
      cut = selectNth(values, count, count - limit);
    }
    if (out.tools.length < Math.min(count, limit)) {
      out.tools = new Int32Array(limit);
      out.scores = new Float64Array(limit);
    }
    // Tools at the cut (they tie on score).
    const atCut: number[] = [];
    for (let i = 0; i < count; i++) {
      const tool = touched[i]!;
      const score = data[tool * 3]!;
      if (score > cut) {
        out.tools[out.length] = tool;
        out.scores[out.length] = score;
        out.terms[out.length++] = distinct[data[tool * 3 + 2]!]!;
      } else if (score === cut) atCut.push(tool);
    }
    if (atCut.length > 0) {
      // Names break the tie only when not every tool at the cut fits.
      const names = this.#tools;
      if (atCut.length > limit - out.length) atCut.sort((a, b) => (names.name(a) < names.name(b) ? -1 : 1));
      for (let i = 0; i < atCut.length && out.length < limit; i++) {
        const tool = atCut[i]!;
        out.tools[out.length] = tool;
        out.scores[out.length] = data[tool * 3]!;
        out.terms[out.length++] = distinct[data[tool * 3 + 2]!]!;
      }
    }
    out.terms.length = out.length;
    return out;
  }

  /**
   * Puts in the arena a term's strongest tools with at least `minCount` observations, strongest
   * first, and the weight of each (its scaled count, discounted by `seen − minCount + 1` of `seen`
   * so a pair at the minimum weighs least); kept until a use changes the term.
   */
  #rank(stats: TermStats, minCount: number): void {
    if (stats.rankedAt >= 0 && stats.rankedMinCount === minCount) return;
    const kept = [...stats.tools]
      .filter(([, pair]) => pair.seen >= minCount)
      .map(([tool, pair]) => [tool, (pair.value * (pair.seen - minCount + 1)) / pair.seen] as const)
      .sort((a, b) => b[1] - a[1])
      .slice(0, DEFAULT_FEEDBACK_TOOLS_READ_PER_TERM);
    stats.rankedAt = -1;
    if (this.#arenaEnd + 2 * kept.length > this.#arena.length) this.#compact(2 * kept.length);
    const arena = this.#arena;
    let at = this.#arenaEnd;
    stats.rankedAt = at;
    // An empty run takes no room and needs no moving: only the others are tracked.
    if (kept.length > 0) {
      this.#runTerms.push(stats);
      this.#runStarts.push(at);
    }
    stats.rankedLength = kept.length;
    stats.rankedMinCount = minCount;
    for (const [tool, weight] of kept) {
      arena[at++] = tool;
      arena[at++] = weight;
    }
    this.#arenaEnd = at;
  }

  /** Forgets a term's ranked tools (their place in the arena is reclaimed by the next compaction). */
  #dropRanked(stats: TermStats): void {
    stats.rankedAt = -1;
  }

  /**
   * Copies the ranked tools of the terms that still have them to the front of an arena with room
   * for `need` more numbers (at least twice what is kept, so compactions stay amortised O(1)).
   */
  #compact(need: number): void {
    // The live runs, in arena order (each term's latest run; dropped terms start at −1).
    const runs: TermStats[] = [];
    let live = 0;
    for (let r = 0; r < this.#runTerms.length; r++) {
      const stats = this.#runTerms[r]!;
      if (stats.rankedAt !== this.#runStarts[r]) continue;
      runs.push(stats);
      live += 2 * stats.rankedLength;
    }
    const old = this.#arena;
    const size = Math.max(1024, 2 * (live + need));
    const arena = size > old.length || size < old.length / 4 ? new Float64Array(size) : old;
    // Copying forward within one array is safe: every run moves to an index at or before its own.
    let at = 0;
    const starts: number[] = [];
    for (const stats of runs) {
      const from = stats.rankedAt;
      if (arena === old) old.copyWithin(at, from, from + 2 * stats.rankedLength);
      else arena.set(old.subarray(from, from + 2 * stats.rankedLength), at);
      stats.rankedAt = at;
      starts.push(at);
      at += 2 * stats.rankedLength;
    }
    this.#runTerms = runs;
    this.#runStarts = starts;
    this.#arena = arena;
    this.#arenaEnd = at;
  }
}

/** Terms of a query that are compared one by one to drop repeats (a set past them). */
const FEW_TERMS = 16;

/**
 * The distinct `terms` in order of first occurrence, written into `into` (reused): a short query
 * is deduplicated by comparing its terms (no set allocated), a long one through a set.
 */
function dedupeTerms(terms: readonly string[], into: string[]): string[] {
  into.length = 0;
  if (terms.length > FEW_TERMS) {
    for (const term of new Set(terms)) into.push(term);
    return into;
  }
  for (const term of terms) if (!into.includes(term)) into.push(term);
  return into;
}

/**
 * The value that would sit at index `n` if the first `length` values were sorted ascending
 * (Hoare's selection; reorders them). Values are finite numbers.
 */
export function selectNth(values: Float64Array, length: number, n: number): number {
  let lo = 0;
  let hi = length - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >>> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[i]! < pivot) i++;
      while (values[j]! > pivot) j--;
      if (i <= j) {
        const swap = values[i]!;
        values[i++] = values[j]!;
        values[j--] = swap;
      }
    }
    if (n <= j) hi = j;
    else if (n >= i) lo = i;
    else return values[n]!;
  }
  return values[n]!;
}
