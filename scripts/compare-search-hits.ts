// `node scripts/compare-search-hits.ts [--base <git ref>] [--data <folder>]`: runs the same
// searches on the tool search of `<git ref>` (default `main`) and on this work tree's, and compares
// every hit, score, reason and chain byte for byte (a developer tool of this repository, for
// changes to the query path that must not change a ranking). The base's `src` is taken with
// `git archive` into a temporary folder; both run under plain Node (type stripping), a resolve
// hook mapping the sources' `.js` import specifiers to their `.ts` files.
//
// The searches: the search bench's catalog (10,000 tools replicated from Seal-Tools, so
// `seal-tools/tools.jsonl` in the data folder: `--data`, else `$CODECALL_DATA_DIR`, else
// ../shared/data beside the repository), queries as sentences, keyword pairs, tool names and in
// the words of recorded uses; on a fresh index (no history), a learned graph alone, the graph with
// 100,000 recorded uses (past the forgetting rule's bound of tools per term), in the hybrid
// and bm25 modes, RM3 forced on, three results with two chains, feedback weighted up; then after
// removing a seventh of the tools, adding half of them back and recording 3,000 more uses.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import './register-ts-sources.mjs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const TOOLS = 10_000;
const WORKFLOWS = 2_000;
const RUNS = 50_000;
const USES = 100_000;
/** Queries of each kind per scenario (bench-style and learned-style). */
const QUERIES = 600;

interface Hit {
  name: string;
  score: number;
  reasons: string[];
}
interface Chain {
  tools: string[];
  score: number;
  reasons: string[];
}
interface Search {
  searchDetailed(query: string, options?: Record<string, unknown>): { hits: Hit[]; chains: Chain[] };
  recordSequence(names: readonly string[]): void;
  recordUsage(usage: { query: string; tools: string[] }): void;
  removeTools(names: readonly string[]): void;
  addTools(tools: readonly object[]): void;
}
type Create = (options: Record<string, unknown>) => Search;

/** Writes every search's output, one line per hit and chain, to `out`. */
async function runSide(source: string, dataDir: string, out: string): Promise<void> {
  const { createToolSearch } = (await import(
    pathToFileURL(join(source, 'src', 'search', 'tool-search.ts')).href
  )) as { createToolSearch: Create };
  const { tokenize } = (await import(pathToFileURL(join(source, 'src', 'search', 'tokenize.ts')).href)) as {
    tokenize: (text: string) => string[];
  };
  const { seededRandom } = (await import(
    pathToFileURL(join(source, 'src', 'util', 'seeded-random.ts')).href
  )) as { seededRandom: (seed: number) => () => number };
  const base = readFileSync(join(dataDir, 'seal-tools', 'tools.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { name: string; description?: string; server?: string });
  const tools: Array<{ name: string; description?: string; server?: string }> = [];
  for (let i = 0; tools.length < TOOLS; i++) {
    const t = base[i % base.length]!;
    const copy = Math.floor(i / base.length);
    const server = `srv${copy}`;
    tools.push({ ...t, name: `${server}.${t.name}${copy ? `V${copy}` : ''}`, server });
  }
  const names = tools.map((t) => t.name);
  const rand = seededRandom(42);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  const workflows = Array.from({ length: WORKFLOWS }, () =>
    Array.from({ length: 2 + Math.floor(rand() * 3) }, () => pick(names)),
  );
  const queries = Array.from({ length: QUERIES }, (_, i) => {
    const t = pick(tools);
    if (i % 3 === 0) return `Can you ${(t.description ?? t.name).toLowerCase()}?`;
    if (i % 3 === 1) {
      const words = tokenize(t.description ?? t.name);
      return `${pick(words)} ${pick(words)}`;
    }
    return t.name.split('.')[1]!;
  });
  const byName = new Map(tools.map((t) => [t.name, t]));
  const wordsOf = workflows.map((flow) =>
    flow.flatMap((name) => (byName.get(name)?.description ?? name).split(/\s+/).filter((w) => w.length > 2)),
  );
  const usage = (): { query: string; tools: string[] } => {
    const i = Math.floor(WORKFLOWS * rand() ** 2);
    const words = wordsOf[i]!;
    const query = Array.from({ length: 3 + Math.floor(rand() * 5) }, () => pick(words)).join(' ');
    return { query, tools: workflows[i]! };
  };
  const usages = Array.from({ length: USES }, usage);
  const learned = usages.slice(0, QUERIES).map((u) => u.query);
  const lines: string[] = [];
  let searches = 0;
  const run = (label: string, search: Search, options: Record<string, unknown>): void => {
    for (const query of [...queries, ...learned]) {
      const result = search.searchDetailed(query, options);
      searches++;
      lines.push(`# ${label} | ${query}`);
      for (const hit of result.hits) lines.push(`${hit.name} ${hit.score} ${hit.reasons.join(' / ')}`);
      for (const chain of result.chains)
        lines.push(`chain ${chain.tools.join(' > ')} ${chain.score} ${chain.reasons.join(' / ')}`);
    }
  };
  const fresh = createToolSearch({ tools });
  run('no history', fresh, { limit: 10 });
  run('no history, bm25', fresh, { limit: 10, mode: 'bm25' });
  const search = createToolSearch({ tools });
  for (let i = 0; i < RUNS; i++) search.recordSequence(workflows[Math.floor(WORKFLOWS * rand() ** 2)]!);
  run('graph', search, { limit: 10 });
  run('graph, 3 hits, 2 chains', search, { limit: 3, chainLimit: 2 });
  for (const u of usages) search.recordUsage(u);
  const scenarios = (label: string): void => {
    run(`${label}`, search, { limit: 10 });
    run(`${label}, bm25`, search, { limit: 10, mode: 'bm25' });
    run(`${label}, 3 hits, 2 chains`, search, { limit: 3, chainLimit: 2 });
    run(`${label}, RM3 always`, search, { limit: 10, expansionWhen: 'always' });
    run(`${label}, feedback x3`, search, { limit: 10, feedbackWeight: 3 });
  };
  scenarios('graph + feedback');
  const removed = names.filter((_, i) => i % 7 === 3);
  search.removeTools(removed);
  search.addTools(tools.filter((_, i) => i % 14 === 3));
  for (let i = 0; i < 3_000; i++) search.recordUsage(usage());
  scenarios('after removal, re-add and 3,000 more uses');
  writeFileSync(out, `${lines.join('\n')}\n`);
  console.log(`${source}: ${searches} searches, ${lines.length} lines`);
}

const USAGE = `Usage: node scripts/compare-search-hits.ts [--base <git ref>] [--data <folder>]

Runs the same searches (about 17,000) on the tool search of <git ref> (default: main) and on this
work tree's, and compares every hit, score, reason and chain byte for byte; exits 1 when any
differs. For changes to the query path that must not change a ranking.

  --base <git ref>   the sources to compare against (their src/, taken with git archive)
  --data <folder>    the data folder with seal-tools/tools.jsonl (default: $CODECALL_DATA_DIR,
                     else ../shared/data beside the repository)
  -h, --help         this text
`;

/** The command line, or a usage error (exit 2) that says what was wrong. */
function options(): { base: string; data?: string; side?: string; out?: string } {
  try {
    const { values } = parseArgs({
      options: {
        base: { type: 'string', default: 'main' },
        data: { type: 'string' },
        side: { type: 'string' },
        out: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (values.help === true) {
      process.stdout.write(USAGE);
      process.exit(0);
    }
    const { help: _help, ...rest } = values;
    return rest;
  } catch (error) {
    process.stderr.write(`compare-search-hits: ${(error as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
}

async function main(): Promise<void> {
  const values = options();
  const dataDir = resolve(
    values.data ?? (process.env.CODECALL_DATA_DIR || join(ROOT, '..', 'shared', 'data')),
  );
  if (values.side !== undefined && values.out !== undefined) {
    await runSide(values.side, dataDir, values.out);
    return;
  }
  const work = mkdtempSync(join(tmpdir(), 'codecall-compare-hits-'));
  try {
    const baseDir = join(work, 'base');
    execFileSync('mkdir', ['-p', baseDir]);
    const archive = execFileSync('git', ['-C', ROOT, 'archive', values.base, 'src'], {
      maxBuffer: 1 << 30,
    });
    execFileSync('tar', ['-x', '-C', baseDir], { input: archive });
    symlinkSync(join(ROOT, 'node_modules'), join(baseDir, 'node_modules'));
    const outputs: string[] = [];
    for (const [side, source] of [
      ['base', baseDir],
      ['head', ROOT],
    ] as const) {
      const out = join(work, `${side}.txt`);
      // One process per side: the two sides' modules never share a process.
      const child = spawnSync(
        process.execPath,
        [fileURLToPath(import.meta.url), '--side', source, '--out', out, '--data', dataDir],
        { stdio: 'inherit' },
      );
      if (child.status !== 0) throw new Error(`the ${side} side failed (exit ${child.status})`);
      outputs.push(readFileSync(out, 'utf8'));
    }
    const [before, after] = outputs.map((text) => text.split('\n')) as [string[], string[]];
    let differ = 0;
    for (let i = 0; i < Math.max(before.length, after.length); i++) {
      if (before[i] === after[i]) continue;
      if (differ++ < 10) console.log(`line ${i + 1}:\n  ${values.base}: ${before[i]}\n  head: ${after[i]}`);
    }
    console.log(
      `${before.length - 1} lines (${values.base}) / ${after.length - 1} lines (work tree); ${differ} differ`,
    );
    process.exitCode = differ === 0 && before.length === after.length ? 0 : 1;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
