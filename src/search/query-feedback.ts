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
 * of uses whose query had `t`. Pure; bounded in terms, tools per term and
 * tools per use.
 */

/** Recorded uses after which one observation weighs half (older uses fade, none is dropped at once). */
export const DEFAULT_FEEDBACK_HALF_LIFE_USES = 5_000;
/** Decayed co-occurrences a term–tool pair needs before it counts (one-off noise does not). */
export const DEFAULT_FEEDBACK_MIN_COUNT = 2;
/** Distinct terms of one query that are learned from. */
export const DEFAULT_MAX_FEEDBACK_TERMS_PER_USE = 32;
/** Distinct tools of one use that are learned from. */
export const DEFAULT_MAX_FEEDBACK_TOOLS_PER_USE = 32;
/** Tools remembered per term (the weakest is forgotten first). */
export const DEFAULT_MAX_FEEDBACK_TOOLS_PER_TERM = 256;
/** Terms remembered (the least used is forgotten first). */
export const DEFAULT_MAX_FEEDBACK_TERMS = 50_000;

/** One decayed count: its value when last updated, the clock then, and the raw count. */
interface Decayed {
  value: number;
  at: number;
  seen: number;
}

interface TermStats extends Decayed {
  tools: Map<string, Decayed>;
}

/** Parameters of {@link QueryFeedback.score}. */
export interface FeedbackScoreOptions {
  /** Pseudo-count κ added to each term's use count. */
  evidencePrior: number;
  /** Decayed co-occurrences a pair needs. */
  minCount: number;
}

/** Learned query-term → tool associations. */
export class QueryFeedback {
  readonly #terms = new Map<string, TermStats>();
  readonly #halfLife: number;
  #clock = 0;

  constructor(halfLifeUses = DEFAULT_FEEDBACK_HALF_LIFE_USES) {
    this.#halfLife = halfLifeUses;
  }

  /** Uses recorded. */
  get uses(): number {
    return this.#clock;
  }

  /** True when nothing was learned (search then ranks exactly as without feedback). */
  get empty(): boolean {
    return this.#terms.size === 0;
  }

  #now(d: Decayed): number {
    const age = this.#clock - d.at;
    return age === 0 || !Number.isFinite(this.#halfLife) ? d.value : d.value * 2 ** (-age / this.#halfLife);
  }

  #bump(d: Decayed): void {
    d.value = this.#now(d) + 1;
    d.at = this.#clock;
    d.seen++;
  }

  /** Records one use: the query's terms and the tools the run used (order does not matter). */
  record(terms: readonly string[], tools: readonly string[]): void {
    const distinctTools = [...new Set(tools)].slice(0, DEFAULT_MAX_FEEDBACK_TOOLS_PER_USE);
    const distinctTerms = [...new Set(terms)].slice(0, DEFAULT_MAX_FEEDBACK_TERMS_PER_USE);
    if (distinctTools.length === 0 || distinctTerms.length === 0) return;
    this.#clock++;
    for (const term of distinctTerms) {
      let stats = this.#terms.get(term);
      if (!stats) {
        if (this.#terms.size >= DEFAULT_MAX_FEEDBACK_TERMS) this.#forgetTerm();
        stats = { value: 0, at: this.#clock, seen: 0, tools: new Map() };
        this.#terms.set(term, stats);
      }
      this.#bump(stats);
      for (const tool of distinctTools) {
        let pair = stats.tools.get(tool);
        if (!pair) {
          if (stats.tools.size >= DEFAULT_MAX_FEEDBACK_TOOLS_PER_TERM) this.#forgetTool(stats);
          pair = { value: 0, at: this.#clock, seen: 0 };
          stats.tools.set(tool, pair);
        }
        this.#bump(pair);
      }
    }
  }

  #forgetTerm(): void {
    let weakest: string | undefined;
    let least = Infinity;
    for (const [term, stats] of this.#terms) {
      const value = this.#now(stats);
      if (value < least) [weakest, least] = [term, value];
    }
    if (weakest !== undefined) this.#terms.delete(weakest);
  }

  #forgetTool(stats: TermStats): void {
    let weakest: string | undefined;
    let least = Infinity;
    for (const [tool, pair] of stats.tools) {
      const value = this.#now(pair);
      if (value < least) [weakest, least] = [tool, value];
    }
    if (weakest !== undefined) stats.tools.delete(weakest);
  }

  /**
   * Feedback score of each tool with evidence for the query `terms` (0–1: the mean over the
   * query's distinct terms of the shrunk share of uses with that term that used the tool), and
   * for each tool the term that contributed most (for its reason).
   */
  score(
    terms: readonly string[],
    options: FeedbackScoreOptions,
  ): Map<string, { score: number; term: string }> {
    const out = new Map<string, { score: number; term: string; best: number }>();
    const distinct = [...new Set(terms)];
    if (distinct.length === 0 || this.#terms.size === 0) return out;
    for (const term of distinct) {
      const stats = this.#terms.get(term);
      if (!stats) continue;
      const denominator = this.#now(stats) + options.evidencePrior;
      for (const [tool, pair] of stats.tools) {
        // The minimum is on raw observations; the weight is the decayed count, discounted by the
        // same share (`seen − minCount + 1` of `seen`) so a pair at the minimum weighs least.
        if (pair.seen < options.minCount) continue;
        const count = (this.#now(pair) * (pair.seen - options.minCount + 1)) / pair.seen;
        const share = count / denominator / distinct.length;
        const entry = out.get(tool);
        if (!entry) out.set(tool, { score: share, term, best: share });
        else {
          entry.score += share;
          if (share > entry.best) Object.assign(entry, { best: share, term });
        }
      }
    }
    return out;
  }
}
