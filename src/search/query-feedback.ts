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
 */

import { DEFAULT_FEEDBACK_CANDIDATES, DEFAULT_MAX_FEEDBACK_PAIRS } from '../config/defaults.js';

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
  tools: Map<string, Pair>;
  /** Its strongest tools as a query reads them (dropped when a use changes the term). */
  ranked: RankedTools | undefined;
}

/** What {@link QueryFeedback.score} reads of one term, for one minimum count. */
interface RankedTools {
  minCount: number;
  tools: string[];
  weights: Float64Array;
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
   * Tools returned at most, the highest scores first.
   * @defaultValue {@link DEFAULT_FEEDBACK_CANDIDATES}
   */
  limit?: number;
}

/** Learned query-term → tool associations. */
export class QueryFeedback {
  readonly #terms = new Map<string, TermStats>();
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
    for (const term of distinctTerms) {
      let stats = this.#terms.get(term);
      if (!stats) {
        stats = { value: 0, tools: new Map(), ranked: undefined };
        this.#terms.set(term, stats);
      }
      stats.value += scale;
      stats.ranked = undefined;
      for (const tool of distinctTools) {
        let pair = stats.tools.get(tool);
        if (!pair) {
          pair = { value: 0, seen: 0 };
          stats.tools.set(tool, pair);
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

  /** Divides every count by `scale` and starts a new epoch (the order of counts is unchanged). */
  #rescale(scale: number): void {
    for (const stats of this.#terms.values()) {
      stats.value /= scale;
      for (const pair of stats.tools.values()) pair.value /= scale;
    }
    this.#epoch = this.#clock;
  }

  /** Keeps the `keep` strongest tools of one term. */
  #forgetTools(stats: TermStats, keep: number): void {
    const ranked = [...stats.tools].sort((a, b) => b[1].value - a[1].value);
    for (let i = keep; i < ranked.length; i++) stats.tools.delete(ranked[i]![0]);
    stats.ranked = undefined;
    this.#pairs -= Math.max(0, ranked.length - keep);
  }

  /** Keeps the `maxTerms` most used terms, with their pairs. */
  #forgetTerms(): void {
    const ranked = [...this.#terms].sort((a, b) => b[1].value - a[1].value);
    for (let i = this.#maxTerms; i < ranked.length; i++) {
      const [term, stats] = ranked[i]!;
      this.#pairs -= stats.tools.size;
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
      stats.ranked = undefined;
      for (const [tool, pair] of stats.tools) {
        if (pair.value < cut || (pair.value === cut && atCut-- <= 0)) {
          stats.tools.delete(tool);
          this.#pairs--;
        }
      }
      if (stats.tools.size === 0) this.#terms.delete(term);
    }
  }

  /**
   * Feedback score of the tools with the most evidence for the query `terms` (0–1: the mean over
   * the query's distinct terms of the shrunk share of uses with that term that used the tool; at
   * most `limit`, the highest first), and for each tool the term that contributed most (for its
   * reason).
   */
  score(
    terms: readonly string[],
    options: FeedbackScoreOptions,
  ): Map<string, { score: number; term: string }> {
    const out = new Map<string, { score: number; term: string }>();
    const distinct = [...new Set(terms)];
    if (distinct.length === 0 || this.#terms.size === 0) return out;
    // Counts are stored scaled; one factor turns them into decayed counts.
    const unscale = 1 / this.#scale();
    const { minCount, evidencePrior } = options;
    // Accumulated in parallel arrays (slot per tool), objects made only for the tools returned.
    const slots = new Map<string, number>();
    const tools: string[] = [];
    const scores: number[] = [];
    const best: number[] = [];
    const bestTerm: string[] = [];
    for (const term of distinct) {
      const stats = this.#terms.get(term);
      if (!stats) continue;
      const factor = unscale / ((stats.value * unscale + evidencePrior) * distinct.length);
      const ranked = this.#ranked(stats, minCount);
      for (let i = 0; i < ranked.tools.length; i++) {
        const tool = ranked.tools[i]!;
        const share = ranked.weights[i]! * factor;
        const slot = slots.get(tool);
        if (slot === undefined) {
          slots.set(tool, tools.length);
          tools.push(tool);
          scores.push(share);
          best.push(share);
          bestTerm.push(term);
        } else {
          scores[slot]! += share;
          if (share > best[slot]!) {
            best[slot] = share;
            bestTerm[slot] = term;
          }
        }
      }
    }
    const limit = options.limit ?? DEFAULT_FEEDBACK_CANDIDATES;
    // The best `limit` by score (ties at the cut by name): a numeric sort finds the cut.
    let cut = -Infinity;
    if (tools.length > limit) cut = Float64Array.from(scores).sort()[tools.length - limit]!;
    const atCut: number[] = [];
    for (let slot = 0; slot < tools.length; slot++) {
      const score = scores[slot]!;
      if (score > cut) out.set(tools[slot]!, { score, term: bestTerm[slot]! });
      else if (score === cut) atCut.push(slot);
    }
    atCut.sort((a, b) => (tools[a]! < tools[b]! ? -1 : 1));
    for (const slot of atCut.slice(0, limit - out.size))
      out.set(tools[slot]!, { score: scores[slot]!, term: bestTerm[slot]! });
    return out;
  }

  /**
   * A term's strongest tools with at least `minCount` observations, strongest first, and the
   * weight of each (its scaled count, discounted by `seen − minCount + 1` of `seen` so a pair at
   * the minimum weighs least); cached until a use changes the term.
   */
  #ranked(stats: TermStats, minCount: number): RankedTools {
    if (stats.ranked?.minCount === minCount) return stats.ranked;
    const kept = [...stats.tools]
      .filter(([, pair]) => pair.seen >= minCount)
      .map(([tool, pair]) => [tool, (pair.value * (pair.seen - minCount + 1)) / pair.seen] as const)
      .sort((a, b) => b[1] - a[1])
      .slice(0, DEFAULT_FEEDBACK_TOOLS_READ_PER_TERM);
    stats.ranked = {
      minCount,
      tools: kept.map(([tool]) => tool),
      weights: Float64Array.from(kept, ([, weight]) => weight),
    };
    return stats.ranked;
  }
}
