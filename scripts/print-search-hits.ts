// `node scripts/print-search-hits.ts [--src <repository root>] [--tools <count>] [--queries <count>]`:
// prints every hit, score, reason and chain of a few thousand searches, one line each, so that two
// versions of the search code can be compared byte for byte (`diff` the two outputs). The sources
// are imported from `--src` (default: this repository), so a checkout of the base commit and the
// working tree run the same script. A developer tool of this repository, like eval-search.
//
// What it runs, on a catalog of Seal-Tools (replicated to `--tools`, names varied), ToolBench, the
// MCP catalog (CJK descriptions) and UltraTool: sentences, keyword pairs, full, bare and split tool
// names, on a fresh index (hybrid, bm25, RM3 forced, another `b`, three hits with two chains);
// after a learned graph; after recorded uses (feedback weighted up too); after removing a seventh
// of the tools and adding half of them back; with single tools added and removed between queries;
// after a large batch added back; and on indexes with Porter stemming, verb normalization and
// other field weights. Needs the data folder: `$CODECALL_DATA_DIR`, else ../shared/data.
import './register-ts-sources.mjs';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

interface Tool {
  name: string;
  server?: string;
  description?: string;
  inputSchema?: { properties?: Record<string, { description?: string }> };
}
interface Hit {
  name: string;
  score: number;
  reasons: string[];
}
interface Result {
  hits: Hit[];
  chains: Array<{ tools: string[]; score: number; reasons: string[] }>;
}
interface Search {
  searchDetailed(query: string, options?: Record<string, unknown>): Result;
  recordSequence(names: readonly string[]): void;
  recordUsage(usage: { query: string; tools: readonly string[] }): void;
  addTools(tools: readonly Tool[]): void;
  removeTools(names: readonly string[]): void;
}

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const USAGE = `Usage: node scripts/print-search-hits.ts [--src <repository root>] [--tools <count>] [--queries <count>]

Prints every hit, score, reason and chain of a few thousand searches, one line each, so that two
versions of the search code can be compared byte for byte (diff the two outputs).

  --src <folder>      the repository whose src/ is searched with (default: this one)
  --tools <count>     Seal-Tools catalog size, replicated with varied names (default: 10000)
  --queries <count>   queries of each kind (default: 1500)
  -h, --help          this text

Needs the data folder: $CODECALL_DATA_DIR, else ../shared/data beside the repository.
`;
const { values } = (() => {
  try {
    return parseArgs({
      options: {
        src: { type: 'string', default: ROOT },
        tools: { type: 'string', default: '10000' },
        queries: { type: 'string', default: '1500' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    process.stderr.write(`print-search-hits: ${(error as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
})();
if (values.help === true) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const DATA_DIR = process.env.CODECALL_DATA_DIR || resolve(ROOT, '..', 'shared', 'data');
if (!existsSync(resolve(DATA_DIR, 'seal-tools', 'tools.jsonl'))) {
  console.error(`print-search-hits: ${DATA_DIR}/seal-tools/tools.jsonl is missing (set CODECALL_DATA_DIR)`);
  process.exit(2);
}
const source = (path: string): string => pathToFileURL(resolve(values.src, path)).href;
const { createToolSearch } = (await import(source('src/search/tool-search.ts'))) as {
  createToolSearch: (options: Record<string, unknown>) => Search;
};
const { seededRandom } = (await import(source('src/util/seeded-random.ts'))) as {
  seededRandom: (seed: number) => () => number;
};

const read = (path: string): Tool[] => {
  const file = resolve(DATA_DIR, path);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Tool);
};
const seal = read('seal-tools/tools.jsonl');
const catalog: Tool[] = [];
for (let i = 0; catalog.length < Number(values.tools); i++) {
  const t = seal[i % seal.length]!;
  const copy = Math.floor(i / seal.length);
  const server = `srv${copy}`;
  catalog.push({ ...t, name: `${server}.${t.name}${copy ? `V${copy}` : ''}`, server });
}
const seen = new Set(catalog.map((t) => t.name));
for (const t of [
  ...read('toolbench/tools.jsonl'),
  ...read('mcp-catalog/tools.jsonl'),
  ...read('ultratool/tools.jsonl'),
]) {
  if (!seen.has(t.name)) catalog.push(t);
  seen.add(t.name);
}

const rand = seededRandom(7);
const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
const words = (text: string): string[] => text.split(/[^\p{L}\p{N}]+/u).filter((w) => w !== '');
const queries: string[] = [];
for (let i = 0; queries.length < Number(values.queries); i++) {
  const t = pick(catalog);
  const w = words(t.description ?? t.name);
  switch (i % 6) {
    case 0:
      queries.push(`Can you ${(t.description ?? t.name).toLowerCase()}?`);
      break;
    case 1:
      queries.push(`${pick(w) ?? t.name} ${pick(w) ?? ''}`);
      break;
    case 2:
      queries.push(t.name);
      break;
    case 3:
      queries.push(t.name.split(/\.|::/).pop()!);
      break;
    case 4:
      queries.push(words(t.name).join(' '));
      break;
    default: {
      const u = pick(catalog);
      queries.push(
        `${pick(w) ?? ''} then ${pick(words(u.description ?? u.name)) ?? u.name} ${pick(w) ?? ''}`,
      );
    }
  }
}
for (const text of read('toolbench/dev.jsonl') as unknown as Array<{ query: string }>)
  queries.push(text.query);
// A query of no words is an error, not a search: dropped.
for (let i = queries.length - 1; i >= 0; i--) if (words(queries[i]!).length === 0) queries.splice(i, 1);

let lines = 0;
const out: string[] = [];
const flush = (): void => {
  process.stdout.write(out.join('\n') + '\n');
  out.length = 0;
};
function run(label: string, search: Search, options: Record<string, unknown> = {}, every = 1): void {
  for (let i = 0; i < queries.length; i += every) {
    const result = search.searchDetailed(queries[i]!, options);
    const hits = result.hits.map((h) => `${h.name} ${h.score} ${h.reasons.join(' | ')}`).join(' ;; ');
    const chains = result.chains.map((c) => `${c.tools.join('>')} ${c.score} ${c.reasons.join(' | ')}`);
    out.push(`${label} #${i} ${hits} ## ${chains.join(' ;; ')}`);
    lines++;
  }
  flush();
}

const names = catalog.map((t) => t.name);
const search = createToolSearch({ tools: catalog });
run('fresh', search);
run('fresh-bm25', search, { mode: 'bm25' });
run('fresh-rm3', search, { expansionWhen: 'always' }, 2);
run('fresh-b', search, { b: 0.4, k1: 1.5 }, 3);
run('fresh-chains', search, { limit: 3, chainLimit: 2 }, 3);
const workflows = Array.from({ length: 500 }, () =>
  Array.from({ length: 2 + Math.floor(rand() * 3) }, () => pick(names)),
);
for (let i = 0; i < 10_000; i++)
  search.recordSequence(workflows[Math.floor(workflows.length * rand() ** 2)]!);
run('graph', search);
for (let i = 0; i < 20_000; i++) {
  const flow = workflows[Math.floor(workflows.length * rand() ** 2)]!;
  const tool = catalog.find((t) => t.name === flow[0]);
  const w = words(tool?.description ?? flow[0]!);
  search.recordUsage({ query: `${pick(w) ?? ''} ${pick(w) ?? ''} ${pick(w) ?? ''}`, tools: flow });
}
run('feedback', search);
run('feedback-bm25', search, { mode: 'bm25' }, 2);
run('feedback-weighted', search, { feedbackWeight: 6, limit: 3, chainLimit: 2 }, 3);
run('feedback-rm3', search, { expansionWhen: 'always' }, 3);

// Removal, re-add, more uses.
const removed = names.filter((_, i) => i % 7 === 3);
search.removeTools(removed);
run('removed', search);
const back = removed.filter((_, i) => i % 2 === 0);
search.addTools(catalog.filter((t) => back.includes(t.name)));
for (let i = 0; i < 3_000; i++) {
  const flow = pick(workflows);
  search.recordUsage({ query: words(flow[0]!).join(' '), tools: flow });
}
run('readded', search);
run('readded-bm25', search, { mode: 'bm25' }, 2);

// One tool at a time between queries: added (new and re-added), removed, changed.
for (let step = 0; step < 200; step++) {
  const t = pick(catalog);
  const action = step % 4;
  if (action === 0) search.removeTools([t.name]);
  else if (action === 1) search.addTools([t]);
  else if (action === 2) search.addTools([{ ...t, description: `${t.description ?? ''} changed ${step}` }]);
  else search.addTools([{ ...t, name: `extra${step}.${t.name}`, server: `extra${step}` }]);
  const q = queries[(step * 37) % queries.length]!;
  for (const options of [{}, { mode: 'bm25' }]) {
    const result = search.searchDetailed(q, options);
    out.push(
      `step${step} ${result.hits.map((h) => `${h.name} ${h.score} ${h.reasons.join(' | ')}`).join(' ;; ')}`,
    );
    lines++;
  }
}
flush();
run('stepped', search, {}, 2);
// A large batch back (the rest of the removed tools) and a large removal.
search.addTools(catalog.filter((t) => removed.includes(t.name) && !back.includes(t.name)));
run('batch-added', search, {}, 2);
search.removeTools(names.filter((_, i) => i % 3 === 1));
run('batch-removed', search, { mode: 'bm25' }, 2);
search.addTools(catalog);
run('all-back', search, {}, 2);

// Other lexical options and field weights, on fresh indexes.
const subset = catalog.filter((_, i) => i % 3 === 0);
run('porter', createToolSearch({ tools: subset, stemming: 'porter' }), {}, 3);
run('verbs', createToolSearch({ tools: subset, verbNormalization: true, stemming: 'none' }), {}, 3);
run(
  'weights',
  createToolSearch({ tools: subset, fieldWeights: { name: 1, description: 3, examples: 2, server: 0 } }),
  { mode: 'bm25' },
  3,
);
process.stderr.write(`print-search-hits: ${lines} lines\n`);
