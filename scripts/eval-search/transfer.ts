/**
 * @module
 * `node scripts/eval-transfer.ts`: the experiments of issue 33 part 2 (catalogs without
 * history) that were measured and not kept, so their figures can be re-run. Each variant changes
 * the text a fresh catalog indexes or a query searches with, and is scored against the same
 * lexical ranking (`mode: 'bm25'`, the defaults, RM3 included) on the development sets that have
 * labelled queries (ToolBench `dev.jsonl`, UltraTool `train.jsonl`):
 *
 * - `associations`: term associations learned from one set (query words → words of the tools
 *   those queries led to, by lift) expand the queries of the other set (leave-one-dataset-out);
 *   a second row expands only the query words no tool of the catalog contains.
 * - `salience`: query words that one set's queries use often but whose tools never contain them
 *   are dropped from the other set's queries (leave-one-dataset-out).
 * - `compounds`: glued words of tool and parameter names (`songkick`, `chatroom`) split in two
 *   when both halves are words of the same catalog (nothing learned).
 * - `prefix fallback`: a query word that no tool contains is completed to the catalog's words that
 *   share its first five letters (at most three), e.g. `assistanc` → `assist`.
 * - `abbreviations`: a table of common abbreviations (`info`, `msg`, `repo`…) spelled out in tools
 *   and queries alike (nothing learned).
 * - then the grid of `transfer-documents.ts`: associations learned from the tool documents of the
 *   other catalogs (all four on disk), used as query expansion, as a document field, or as a
 *   field with its own statistics, per fold, with the variant each set would choose scored on the
 *   other (`--full` adds a third model and two stricter tunings); and the same associations kept
 *   only where the evaluated catalog's own documents support them (`| X co1`, `co2`, `pmi`), with
 *   the control of a model from that catalog's own documents only (`own`).
 *
 * A developer tool of this repository; the data folder is `$CODECALL_DATA_DIR`, else
 * `../shared/data` next to the package (as for `npm run eval-search`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SearchableTool } from '../../src/search/index.js';
import { createToolSearch } from '../../src/search/index.js';
import { tokenize } from '../../src/search/tokenize.js';
import { defaultDataDir } from './command.js';
import { documentAssociationReport, documentVariants } from './transfer-documents.js';

interface Query {
  query: string;
  tools: string[];
}

interface DataSet {
  name: string;
  tools: SearchableTool[];
  queries: Query[];
}

/** Learned association pairs seen fewer times than this are not kept. */
const MIN_PAIR_COUNT = 3;
/** Associated words kept per query word. */
const ASSOCIATIONS_PER_WORD = 3;
/** A query word is judged for `salience` once this many query–tool pairs use it. */
const MIN_SALIENCE_COUNT = 20;
/** Letters a query word shares with the catalog words it is completed to (`prefix fallback`). */
const PREFIX_CHARS = 5;
/** A prefix that more catalog words share than this completes nothing. */
const MAX_PREFIX_WORDS = 3;
/** Halves of a compound are at least this long. */
const MIN_COMPOUND_PART = 3;

const ABBREVIATIONS: Readonly<Record<string, string>> = {
  info: 'information',
  msg: 'message',
  img: 'image',
  doc: 'document',
  docs: 'documents',
  repo: 'repository',
  stats: 'statistics',
  config: 'configuration',
  auth: 'authentication',
  num: 'number',
  addr: 'address',
  db: 'database',
  pic: 'picture',
  loc: 'location',
  desc: 'description',
  dir: 'directory',
  param: 'parameter',
  params: 'parameters',
  temp: 'temperature',
  qty: 'quantity',
  pwd: 'password',
  dept: 'department',
  org: 'organization',
  acct: 'account',
  amt: 'amount',
  avg: 'average',
  lat: 'latitude',
  lng: 'longitude',
};

function readLines<T>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}

function load(dataDir: string, name: string, queries: string): DataSet {
  return {
    name,
    tools: readLines<SearchableTool>(join(dataDir, name, 'tools.jsonl')),
    queries: readLines<Query>(join(dataDir, name, queries)),
  };
}

function parameterNames(tool: SearchableTool): string {
  const schema = tool.inputSchema as { properties?: Record<string, unknown> } | undefined;
  return Object.keys(schema?.properties ?? {}).join(' ');
}

function toolText(tool: SearchableTool): string {
  return `${tool.name} ${tool.description ?? ''} ${parameterNames(tool)}`;
}

/** Lowercase words, camelCase split, unstemmed. */
function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '');
}

/** NDCG@10 and Recall@5 (percent) of the lexical ranking, queries rewritten by `rewrite`. */
function score(
  tools: readonly SearchableTool[],
  queries: readonly Query[],
  rewrite = (q: string) => q,
): string {
  const index = createToolSearch({ tools });
  let ndcg = 0;
  let recall = 0;
  for (const q of queries) {
    const hits = index.searchDetailed(rewrite(q.query), { mode: 'bm25', limit: 10 }).hits.map((h) => h.name);
    const relevant = new Set(q.tools);
    let dcg = 0;
    let ideal = 0;
    hits.forEach((name, i) => {
      if (relevant.has(name)) dcg += 1 / Math.log2(i + 2);
    });
    for (let i = 0; i < Math.min(10, relevant.size); i++) ideal += 1 / Math.log2(i + 2);
    ndcg += dcg / ideal;
    recall += hits.slice(0, 5).filter((name) => relevant.has(name)).length / relevant.size;
  }
  const percent = (x: number) => ((100 * x) / queries.length).toFixed(1);
  return `NDCG@10 ${percent(ndcg)} R@5 ${percent(recall)}`;
}

interface Learned {
  /** Query term → associated tool terms, strongest first. */
  associations: Map<string, string[]>;
  /** A surface word per term (expansions are appended to the query as words). */
  surface: Map<string, string>;
  /** Query terms the training queries use often and their tools never contain. */
  unsalient: Set<string>;
}

function learn(set: DataSet): Learned {
  const byName = new Map(set.tools.map((t) => [t.name, t]));
  const surface = new Map<string, string>();
  const termsOf = (text: string): Set<string> => {
    const out = new Set<string>();
    for (const word of words(text)) {
      for (const term of tokenize(word)) {
        out.add(term);
        if (!surface.has(term)) surface.set(term, word);
      }
    }
    return out;
  };
  const pairs = new Map<string, Map<string, number>>();
  const queryCount = new Map<string, number>();
  const toolCount = new Map<string, number>();
  const contained = new Map<string, number>();
  let total = 0;
  for (const q of set.queries) {
    const queryTerms = termsOf(q.query);
    for (const name of new Set(q.tools)) {
      const tool = byName.get(name);
      if (tool === undefined) continue;
      const toolTerms = termsOf(toolText(tool));
      total++;
      for (const a of queryTerms) {
        queryCount.set(a, (queryCount.get(a) ?? 0) + 1);
        if (toolTerms.has(a)) contained.set(a, (contained.get(a) ?? 0) + 1);
        let row = pairs.get(a);
        if (row === undefined) pairs.set(a, (row = new Map()));
        for (const b of toolTerms) if (b !== a) row.set(b, (row.get(b) ?? 0) + 1);
      }
      for (const b of toolTerms) toolCount.set(b, (toolCount.get(b) ?? 0) + 1);
    }
  }
  const associations = new Map<string, string[]>();
  for (const [a, row] of pairs) {
    const na = queryCount.get(a)!;
    const ranked: Array<[string, number]> = [];
    for (const [b, count] of row) {
      if (count < MIN_PAIR_COUNT) continue;
      const lift = Math.log((count * total) / (na * toolCount.get(b)!)) * (count / na);
      if (lift > 0) ranked.push([b, lift]);
    }
    ranked.sort((x, y) => y[1] - x[1]);
    if (ranked.length > 0)
      associations.set(
        a,
        ranked.slice(0, ASSOCIATIONS_PER_WORD).map(([b]) => b),
      );
  }
  const unsalient = new Set<string>();
  for (const [a, count] of queryCount) {
    if (count >= MIN_SALIENCE_COUNT && (contained.get(a) ?? 0) === 0) unsalient.add(a);
  }
  return { associations, surface, unsalient };
}

/** Terms of a catalog's tools (what a query term can match at all). */
function catalogTerms(tools: readonly SearchableTool[]): Set<string> {
  const out = new Set<string>();
  for (const tool of tools)
    for (const term of tokenize(`${toolText(tool)} ${tool.server ?? ''}`)) out.add(term);
  return out;
}

function splitCompounds(tools: readonly SearchableTool[]): { tools: SearchableTool[]; split: number } {
  const vocabulary = new Map<string, number>();
  for (const tool of tools) {
    for (const word of new Set(words(toolText(tool)))) vocabulary.set(word, (vocabulary.get(word) ?? 0) + 1);
  }
  let split = 0;
  const out = tools.map((tool) => {
    const extra: string[] = [];
    for (const word of new Set(words(`${tool.name} ${parameterNames(tool)}`))) {
      if (word.length < 2 * MIN_COMPOUND_PART || /[0-9]/.test(word)) continue;
      let best: { a: string; b: string; support: number } | undefined;
      for (let i = MIN_COMPOUND_PART; i <= word.length - MIN_COMPOUND_PART; i++) {
        const a = word.slice(0, i);
        const b = word.slice(i);
        const support = Math.min(vocabulary.get(a) ?? 0, vocabulary.get(b) ?? 0);
        if (support > 0 && (vocabulary.get(word) ?? 0) <= support && support > (best?.support ?? 0)) {
          best = { a, b, support };
        }
      }
      if (best !== undefined) {
        extra.push(best.a, best.b);
        split++;
      }
    }
    return extra.length === 0
      ? tool
      : { ...tool, description: `${tool.description ?? ''} ${extra.join(' ')}` };
  });
  return { tools: out, split };
}

/** Rewrites a query: words no tool contains get the catalog words sharing their prefix. */
function prefixFallback(tools: readonly SearchableTool[]): (query: string) => string {
  const surface = new Map<string, string>();
  for (const tool of tools) {
    const text = `${toolText(tool)} ${tool.server ?? ''} ${JSON.stringify(tool.inputSchema ?? {})}`;
    for (const word of words(text)) {
      for (const term of tokenize(word, { keepStopWords: true }))
        if (!surface.has(term)) surface.set(term, word);
    }
  }
  const byPrefix = new Map<string, string[]>();
  for (const term of surface.keys()) {
    if (term.length < PREFIX_CHARS || /[0-9]/.test(term)) continue;
    const key = term.slice(0, PREFIX_CHARS);
    byPrefix.set(key, [...(byPrefix.get(key) ?? []), term]);
  }
  return (query) => {
    const extra: string[] = [];
    for (const term of new Set(tokenize(query))) {
      if (surface.has(term) || term.length < PREFIX_CHARS) continue;
      const completions = byPrefix.get(term.slice(0, PREFIX_CHARS)) ?? [];
      if (completions.length <= MAX_PREFIX_WORDS) for (const c of completions) extra.push(surface.get(c)!);
    }
    return `${query} ${extra.join(' ')}`;
  };
}

function spellOut(text: string): string {
  return text.replace(/\p{L}+/gu, (word) => ABBREVIATIONS[word.toLowerCase()] ?? word);
}

/** The spelled-out forms of the abbreviations in a tool name (the name itself is the tool's id). */
function nameAbbreviations(name: string): string {
  return words(name)
    .flatMap((w) => ABBREVIATIONS[w] ?? [])
    .join(' ');
}

const HELP = `Usage: node scripts/eval-transfer.ts [--full]

Re-runs the experiments of issue 33 part 2 that were measured and not kept (docs/search.md,
"Catalogs without history"): NDCG@10 and Recall@5 of the lexical ranking on ToolBench (dev.jsonl)
and UltraTool (train.jsonl) with learned term associations and query-word salience (trained on the
other set), compound splitting, prefix completion and abbreviations; then term associations
learned from the tool documents of the other catalogs (mcp-catalog and seal-tools too), per fold
against today's default ranking, also kept only where the evaluated catalog's own documents
support them (a few minutes). --full: a larger grid of those. The data folder
is $CODECALL_DATA_DIR, else ../shared/data next to the package.
`;
if (process.argv.includes('--help') || process.argv.includes('-h')) {
  process.stdout.write(HELP);
  process.exit(0);
}
const dataDir = defaultDataDir(process.env);
const sets = [load(dataDir, 'toolbench', 'dev.jsonl'), load(dataDir, 'ultratool', 'train.jsonl')];
const out: string[] = [];
for (const test of sets) {
  const train = sets.find((s) => s !== test)!;
  const learned = learn(train);
  const vocabulary = catalogTerms(test.tools);
  const expand = (query: string, gapsOnly = false): string => {
    const extra: string[] = [];
    for (const term of new Set(tokenize(query))) {
      if (gapsOnly && vocabulary.has(term)) continue;
      for (const b of learned.associations.get(term) ?? []) {
        if (vocabulary.has(b)) extra.push(learned.surface.get(b) ?? b);
      }
    }
    return `${query} ${extra.join(' ')}`;
  };
  const prune = (query: string): string =>
    query
      .split(/([^\p{L}\p{N}]+)/u)
      .filter((piece) => !tokenize(piece).some((term) => learned.unsalient.has(term)))
      .join('');
  const compounds = splitCompounds(test.tools);
  out.push(
    `${test.name} (${test.queries.length} queries, ${test.tools.length} tools)`,
    `  baseline (lexical ranking)              ${score(test.tools, test.queries)}`,
    `  associations learned on ${train.name.padEnd(14)} ${score(test.tools, test.queries, expand)}`,
    `  the same, for query words no tool has  ${score(test.tools, test.queries, (q) => expand(q, true))}`,
    `  salience learned on ${train.name.padEnd(18)} ${score(test.tools, test.queries, prune)}`,
    `  compounds split (${String(compounds.split).padStart(3)} words)            ${score(compounds.tools, test.queries)}`,
    `  prefix fallback for unmatched words    ${score(test.tools, test.queries, prefixFallback(test.tools))}`,
    `  abbreviations spelled out               ${score(
      test.tools.map((t) => ({
        ...t,
        description: `${spellOut(t.description ?? '')} ${nameAbbreviations(t.name)}`,
      })),
      test.queries,
      spellOut,
    )}`,
  );
}
process.stdout.write(`${out.join('\n')}\n\n`);
const unlabelled = ['mcp-catalog', 'seal-tools'].map((name) => ({
  name,
  tools: readLines<SearchableTool>(join(dataDir, name, 'tools.jsonl')),
  queries: [],
}));
process.stdout.write(
  documentAssociationReport(sets, unlabelled, documentVariants(process.argv.includes('--full'))),
);
