/**
 * @module
 * The second round of issue 33 part 2 (catalogs without history), run by
 * `node scripts/eval-transfer.ts`: term associations learned from **tool documents** across
 * catalogs (how tools are described, not what one catalog's users say), used four ways, scored
 * leave-one-dataset-out per cross-validation fold against today's default ranking at cold start.
 *
 * Models (for a catalog X, trained only on the other catalogs' tools, and for `+queries` also on
 * the other labelled set's queries):
 *
 * - `cooc`: two terms of one tool document (name, description, parameter names and descriptions)
 *   co-occur; a term's associations are its partners by positive PMI weighted by
 *   `count / n(a)` (as the query-learned lift of `transfer.ts`), at most
 *   {@link ASSOCIATIONS_PER_TERM}.
 * - `name`: a word of a tool's description or parameters points to the words of its name (the
 *   description is a paraphrase of the name, as a query is of the tool it needs), same scoring.
 * - `cooc+queries`: `cooc` with the other set's query → tool pairs added to the counts.
 *
 * Uses: query expansion fused with the query's own ranking at a small weight
 * (`(1 − w)·s(q) + w·s(q + expansion)`, as RM3 interpolates), on every query, only where the
 * first pass is flat or short (its 10th hit scores at least {@link FLAT_SHARE} of the best, the
 * gate of embedding fusion), or only for query words the catalog lacks; and document expansion at
 * index time (each tool's associated words as a low-weight BM25F field: the `examples` field,
 * which neither set uses, with its weight set).
 */
import { seededRandom } from '../../src/util/seeded-random.js';
import { DEFAULT_EVAL_SEED } from '../../src/search/evaluate-search.js';
import type { SearchableTool, ToolSearch } from '../../src/search/index.js';
import { createToolSearch } from '../../src/search/index.js';
import { tokenize } from '../../src/search/tokenize.js';

/** A labelled query. */
export interface TransferQuery {
  query: string;
  tools: string[];
}

/** A catalog, with its labelled queries when it has any. */
export interface TransferSet {
  name: string;
  tools: SearchableTool[];
  queries: TransferQuery[];
}

/** Pairs seen fewer times than this are not kept. */
const MIN_PAIR_COUNT = 3;
/** Associations kept per term. */
const ASSOCIATIONS_PER_TERM = 3;
/** A term in more than this share of the training documents is too common to associate. */
const MAX_DOCUMENT_SHARE = 0.05;
/** The flat-first-pass gate: the 10th hit scores at least this share of the best. */
const FLAT_SHARE = 0.5;
/** Folds of `npm run eval-search -- --cold-start`. */
const FOLDS = 5;
/** First-pass hits fused. */
const FUSION_DEPTH = 100;
/** Associated words added to one tool document at most. */
const MAX_DOCUMENT_WORDS = 30;

interface ToolTerms {
  name: Set<string>;
  rest: Set<string>;
}

/** Lowercase words, camelCase and identifiers split, unstemmed. */
function words(text: string): string[] {
  return text
    .replace(/([\p{Ll}0-9])(\p{Lu})/gu, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '');
}

/** Words of a tool: its name (without the server prefix) and the rest of its text. */
function toolTerms(tool: SearchableTool, surface: Map<string, string>): ToolTerms {
  const schema = tool.inputSchema as { properties?: Record<string, { description?: unknown }> } | undefined;
  const properties = schema?.properties ?? {};
  const parameterText = Object.entries(properties)
    .map(([key, value]) => `${key} ${typeof value?.description === 'string' ? value.description : ''}`)
    .join(' ');
  const bare = tool.name.includes('::') ? tool.name.slice(tool.name.lastIndexOf('::') + 2) : tool.name;
  const termsOf = (text: string): Set<string> => {
    const out = new Set<string>();
    for (const word of words(text)) {
      const terms = tokenize(word);
      for (const term of terms) out.add(term);
      // A word stands for its term in a query or a document only when it tokenizes to it alone.
      if (terms.length === 1 && !surface.has(terms[0]!)) surface.set(terms[0]!, word);
    }
    return out;
  };
  const name = termsOf(bare);
  const rest = termsOf(`${tool.description ?? ''} ${parameterText}`);
  return { name, rest };
}

/** Term → its associated terms, strongest first, and a word per term that tokenizes to it. */
export interface Associations {
  related: Map<string, string[]>;
  surface: Map<string, string>;
}

type Model = 'cooc' | 'name' | 'cooc+queries';

/** How strict a model is. */
export interface ModelTuning {
  /** Pairs seen fewer times are not kept. */
  minCount: number;
  /** Associations kept per term. */
  perTerm: number;
  /** Keep `a → b` only when `b → a` is kept too. */
  mutual: boolean;
}

const DEFAULT_TUNING: ModelTuning = { minCount: MIN_PAIR_COUNT, perTerm: ASSOCIATIONS_PER_TERM, mutual: false };

/** Trains a model on `catalogs` (documents) and, for `cooc+queries`, on `labelled`'s queries. */
export function trainAssociations(
  model: Model,
  catalogs: readonly TransferSet[],
  labelled: readonly TransferSet[],
  tuning: ModelTuning = DEFAULT_TUNING,
): Associations {
  const surface = new Map<string, string>();
  const pairs = new Map<string, Map<string, number>>();
  const sourceCount = new Map<string, number>();
  const targetCount = new Map<string, number>();
  let total = 0;
  const documents: Array<{ sources: Set<string>; targets: Set<string> }> = [];
  for (const set of catalogs) {
    for (const tool of set.tools) {
      const terms = toolTerms(tool, surface);
      if (model === 'name') documents.push({ sources: terms.rest, targets: terms.name });
      else {
        const all = new Set([...terms.name, ...terms.rest]);
        documents.push({ sources: all, targets: all });
      }
    }
  }
  const documentFrequency = new Map<string, number>();
  for (const d of documents)
    for (const t of new Set([...d.sources, ...d.targets]))
      documentFrequency.set(t, (documentFrequency.get(t) ?? 0) + 1);
  const tooCommon = (t: string) => (documentFrequency.get(t) ?? 0) > MAX_DOCUMENT_SHARE * documents.length;
  if (model === 'cooc+queries') {
    for (const set of labelled) {
      const byName = new Map(set.tools.map((t) => [t.name, t]));
      for (const q of set.queries) {
        const queryTerms = new Set(tokenize(q.query));
        for (const name of new Set(q.tools)) {
          const tool = byName.get(name);
          if (tool === undefined) continue;
          const terms = toolTerms(tool, surface);
          documents.push({ sources: queryTerms, targets: new Set([...terms.name, ...terms.rest]) });
        }
      }
    }
  }
  for (const d of documents) {
    total++;
    const targets = [...d.targets].filter((t) => !tooCommon(t));
    for (const a of d.sources) {
      if (tooCommon(a)) continue;
      sourceCount.set(a, (sourceCount.get(a) ?? 0) + 1);
      let row = pairs.get(a);
      if (row === undefined) pairs.set(a, (row = new Map()));
      for (const b of targets) if (b !== a) row.set(b, (row.get(b) ?? 0) + 1);
    }
    for (const b of targets) targetCount.set(b, (targetCount.get(b) ?? 0) + 1);
  }
  const related = new Map<string, string[]>();
  for (const [a, row] of pairs) {
    if (!/^\p{L}{3,}$/u.test(a)) continue;
    const na = sourceCount.get(a)!;
    const ranked: Array<[string, number]> = [];
    for (const [b, count] of row) {
      if (count < tuning.minCount || !/^\p{L}{3,}$/u.test(b)) continue;
      const lift = Math.log((count * total) / (na * targetCount.get(b)!)) * (count / na);
      if (lift > 0) ranked.push([b, lift]);
    }
    if (ranked.length === 0) continue;
    ranked.sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1));
    related.set(
      a,
      ranked.slice(0, tuning.perTerm).map(([b]) => b),
    );
  }
  if (tuning.mutual) {
    for (const [a, list] of related) {
      const kept = list.filter((b) => related.get(b)?.includes(a) === true);
      if (kept.length === 0) related.delete(a);
      else related.set(a, kept);
    }
  }
  return { related, surface };
}

/** Fold of each query: the seeded shuffle and round-robin of `evaluateColdStart`. */
function foldsOf(count: number): number[] {
  const order = Array.from({ length: count }, (_, i) => i);
  const next = seededRandom(DEFAULT_EVAL_SEED);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const fold = new Array<number>(count);
  order.forEach((q, position) => (fold[q] = position % FOLDS));
  return fold;
}

interface Scores {
  /** NDCG@10 per fold (percent). */
  folds: number[];
  ndcg: number;
  recall5: number;
  recall10: number;
}

function measure(
  search: ToolSearch,
  queries: readonly TransferQuery[],
  rank: (query: string) => string[],
): Scores {
  const fold = foldsOf(queries.length);
  const sums = new Array<number>(FOLDS).fill(0);
  const counts = new Array<number>(FOLDS).fill(0);
  let ndcg = 0;
  let recall5 = 0;
  let recall10 = 0;
  let n = 0;
  queries.forEach((q, i) => {
    const relevant = new Set(q.tools.filter((name) => search.has(name)));
    if (relevant.size === 0 || q.query.trim() === '') return;
    const hits = rank(q.query).slice(0, 10);
    let dcg = 0;
    hits.forEach((name, r) => {
      if (relevant.has(name)) dcg += 1 / Math.log2(r + 2);
    });
    let ideal = 0;
    for (let r = 0; r < Math.min(10, relevant.size); r++) ideal += 1 / Math.log2(r + 2);
    sums[fold[i]!]! += dcg / ideal;
    counts[fold[i]!]!++;
    ndcg += dcg / ideal;
    recall5 += hits.slice(0, 5).filter((name) => relevant.has(name)).length / relevant.size;
    recall10 += hits.filter((name) => relevant.has(name)).length / relevant.size;
    n++;
  });
  return {
    folds: sums.map((s, f) => (100 * s) / Math.max(1, counts[f]!)),
    ndcg: (100 * ndcg) / n,
    recall5: (100 * recall5) / n,
    recall10: (100 * recall10) / n,
  };
}

/** The words a query gains: associations of its terms that the catalog has and the query lacks. */
function expansionWords(
  query: string,
  model: Associations,
  vocabulary: ReadonlySet<string>,
  gapsOnly: boolean,
): string[] {
  const terms = new Set(tokenize(query));
  const out: string[] = [];
  for (const term of terms) {
    if (gapsOnly && vocabulary.has(term)) continue;
    for (const b of model.related.get(term) ?? []) {
      if (vocabulary.has(b) && !terms.has(b)) out.push(model.surface.get(b) ?? b);
    }
  }
  return out;
}

type Gate = 'all' | 'flat' | 'gaps';

function fusedRanking(
  search: ToolSearch,
  model: Associations,
  vocabulary: ReadonlySet<string>,
  gate: Gate,
  weight: number,
): (query: string) => string[] {
  return (query) => {
    const first = search.search(query, { limit: FUSION_DEPTH });
    if (gate === 'flat') {
      const best = first[0]?.score ?? 0;
      const tenth = first[9]?.score ?? 0;
      if (first.length >= 10 && tenth < FLAT_SHARE * best) return first.map((h) => h.name);
    }
    const extra = expansionWords(query, model, vocabulary, gate === 'gaps');
    if (extra.length === 0) return first.map((h) => h.name);
    const expanded = search.search(`${query} ${extra.join(' ')}`, { limit: FUSION_DEPTH });
    const fused = new Map<string, number>();
    for (const h of first) fused.set(h.name, (1 - weight) * h.score);
    for (const h of expanded) fused.set(h.name, (fused.get(h.name) ?? 0) + weight * h.score);
    return [...fused]
      .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
      .slice(0, 10)
      .map(([name]) => name);
  };
}

function lateRanking(
  search: ToolSearch,
  late: ToolSearch,
  gate: Gate,
  weight: number,
): (query: string) => string[] {
  return (query) => {
    const first = search.search(query, { limit: FUSION_DEPTH });
    if (gate === 'flat') {
      const best = first[0]?.score ?? 0;
      const tenth = first[9]?.score ?? 0;
      if (first.length >= 10 && tenth < FLAT_SHARE * best) return first.map((h) => h.name);
    }
    const second = late.search(query, { limit: FUSION_DEPTH, expansionDocs: 0 });
    const fused = new Map<string, number>();
    for (const h of first) fused.set(h.name, h.score);
    for (const h of second) fused.set(h.name, (fused.get(h.name) ?? 0) + weight * h.score);
    return [...fused]
      .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
      .slice(0, 10)
      .map(([name]) => name);
  };
}

/** Each tool with its associated words (those it lacks) as example values: a low-weight field. */
function expandDocuments(
  tools: readonly SearchableTool[],
  model: Associations,
  maxTerms: number,
  maxWords: number,
): SearchableTool[] {
  return tools.map((tool) => {
    const terms = toolTerms(tool, new Map());
    const own = new Set([...terms.name, ...terms.rest]);
    if (own.size > maxTerms) return tool;
    const words: string[] = [];
    const seen = new Set<string>();
    for (const term of own) {
      for (const b of model.related.get(term) ?? []) {
        if (own.has(b) || seen.has(b)) continue;
        seen.add(b);
        words.push(model.surface.get(b) ?? b);
      }
    }
    if (words.length === 0) return tool;
    const room = maxWords === 0 ? own.size : maxWords;
    return { ...tool, inputExamples: [words.slice(0, room).join(' ')] };
  });
}

function vocabularyOf(tools: readonly SearchableTool[]): Set<string> {
  const out = new Set<string>();
  const surface = new Map<string, string>();
  for (const tool of tools) {
    const terms = toolTerms(tool, surface);
    for (const t of terms.name) out.add(t);
    for (const t of terms.rest) out.add(t);
    for (const t of tokenize(tool.server ?? '')) out.add(t);
  }
  return out;
}

/** A variant of the experiment grid. */
export interface DocumentVariant {
  model: Model;
  use: 'query' | 'documents' | 'late';
  gate?: Gate;
  weight: number;
  tuning?: ModelTuning;
  /** `documents`: only tools with at most this many distinct terms are expanded. */
  maxTerms?: number;
  /** `documents`: associated words added per tool at most (0 = as many as the tool has terms). */
  maxWords?: number;
}

function label(v: DocumentVariant): string {
  const t = v.tuning ?? DEFAULT_TUNING;
  return `${t.minCount}/${t.perTerm}${t.mutual ? 'm' : ''} ${labelUse(v)}`;
}

function labelUse(v: DocumentVariant): string {
  if (v.use === 'late')
    return `${v.model}, late field (${v.gate}) w ${v.weight} ≤${v.maxTerms ?? '∞'} +${v.maxWords ?? MAX_DOCUMENT_WORDS}`;
  return v.use === 'query'
    ? `${v.model}, query expansion (${v.gate}) w ${v.weight}`
    : `${v.model}, document field w ${v.weight} ≤${v.maxTerms ?? '∞'} terms +${v.maxWords ?? MAX_DOCUMENT_WORDS}`;
}

const fmt = (x: number) => x.toFixed(1);
const signed = (x: number) => {
  const t = x.toFixed(1);
  return t === '0.0' || t === '-0.0' ? '0.0' : t.startsWith('-') ? t : `+${t}`;
};

/**
 * Scores every variant on every labelled set, trained without it: per-fold NDCG@10 change against
 * today's default ranking, mean change, Recall@5 and Recall@10.
 */
export function documentAssociationReport(
  labelled: readonly TransferSet[],
  unlabelled: readonly TransferSet[],
  variants: readonly DocumentVariant[],
): string {
  const lines: string[] = [];
  for (const test of labelled) {
    const others = [...labelled.filter((s) => s !== test), ...unlabelled];
    const otherLabelled = labelled.filter((s) => s !== test);
    const base = createToolSearch({ tools: test.tools });
    const before = measure(base, test.queries, (q) => base.search(q, { limit: 10 }).map((h) => h.name));
    lines.push(
      `${test.name}: trained on ${others.map((s) => s.name).join(', ')} (queries: ${otherLabelled.map((s) => s.name).join(', ')})`,
      `  today's default ranking: NDCG@10 ${fmt(before.ndcg)} (folds ${before.folds.map(fmt).join(' ')}) R@5 ${fmt(before.recall5)} R@10 ${fmt(before.recall10)}`,
    );
    const vocabulary = vocabularyOf(test.tools);
    const models = new Map<string, Associations>();
    for (const v of variants) {
      const key = `${v.model} ${JSON.stringify(v.tuning ?? DEFAULT_TUNING)}`;
      let model = models.get(key);
      if (model === undefined)
        models.set(key, (model = trainAssociations(v.model, others, otherLabelled, v.tuning)));
      let after: Scores;
      if (v.use === 'query') {
        after = measure(base, test.queries, fusedRanking(base, model, vocabulary, v.gate ?? 'all', v.weight));
      } else if (v.use === 'late') {
        const expanded = expandDocuments(test.tools, model, v.maxTerms ?? Infinity, v.maxWords ?? MAX_DOCUMENT_WORDS);
        const late = createToolSearch({
          tools: expanded.map((t) => ({
            name: t.name,
            description: (t.inputExamples?.[0] as string | undefined) ?? '',
          })),
          fieldWeights: { name: 0, server: 0 },
        });
        after = measure(base, test.queries, lateRanking(base, late, v.gate ?? 'all', v.weight));
      } else {
        const search = createToolSearch({
          tools: expandDocuments(test.tools, model, v.maxTerms ?? Infinity, v.maxWords ?? MAX_DOCUMENT_WORDS),
          fieldWeights: { examples: v.weight },
        });
        after = measure(search, test.queries, (q) => search.search(q, { limit: 10 }).map((h) => h.name));
      }
      const changes = after.folds.map((x, f) => x - before.folds[f]!);
      lines.push(
        `  ${label(v).padEnd(56)} NDCG@10 ${signed(after.ndcg - before.ndcg).padStart(5)} folds ${changes
          .map((c) => signed(c).padStart(5))
          .join(' ')} worst ${signed(Math.min(...changes)).padStart(5)} R@5 ${signed(
          after.recall5 - before.recall5,
        ).padStart(5)} R@10 ${signed(after.recall10 - before.recall10).padStart(5)}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
