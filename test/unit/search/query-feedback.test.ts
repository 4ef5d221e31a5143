import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryHistoryStore } from '../../../src/store/index.js';
import { QueryFeedback } from '../../../src/search/query-feedback.js';
import { SqliteHistoryStore } from '../../../src/store/sqlite-history-store.js';
import { createToolSearch, type SearchableTool } from '../../../src/search/tool-search.js';
import { CATALOG, NAMES } from './catalog.js';
import { loadState } from '../../contract/load-state.js';
import { seededRandom } from '../../../src/util/seeded-random.js';

function names(hits: { name: string }[]): string[] {
  return hits.map((h) => h.name);
}

const QUERIES = [
  'travel expenses of my team over budget',
  'send a chat message to the channel',
  'What will the weather be like in Paris tomorrow?',
  'read a text file from disk',
  'employee levels',
  'finance.get_expenses',
  'list channels then post',
  'budget',
];

describe('tool search never hurts without evidence', () => {
  it('ranks exactly as BM25 alone when no usage is recorded (schemas that link tools included)', () => {
    const search = createToolSearch({ tools: CATALOG });
    for (const query of QUERIES) {
      expect(search.searchDetailed(query, { limit: 10 })).toEqual(
        search.searchDetailed(query, { limit: 10, mode: 'bm25' }),
      );
    }
  });

  it('keeps a strong lexical match in the results when graph neighbours outscore it', () => {
    const pdf = ['merge', 'split', 'rotate', 'compress', 'encrypt'];
    const tools: SearchableTool[] = [
      ...pdf.map((verb) => ({ name: `pdf_${verb}`, description: `${verb} pdf files` })),
      { name: 'upload_file', description: 'Upload to storage' },
      { name: 'share_link', description: 'Share a link' },
    ];
    const search = createToolSearch({ tools });
    // Every pdf tool is always followed by upload_file, then share_link: the walk from all five
    // seeds piles credit on them, enough to outrank the one tool the query names.
    for (let i = 0; i < 100; i++)
      for (const verb of pdf) search.recordSequence([`pdf_${verb}`, 'upload_file', 'share_link']);
    const query = 'merge pdf';
    const options = { limit: 2, graphWeight: 2 };
    expect(names(search.search(query, { ...options, mode: 'bm25' }))[0]).toBe('pdf_merge');
    expect(names(search.search(query, { ...options, lexicalGuard: 0 }))).toEqual([
      'upload_file',
      'share_link',
    ]);
    expect(names(search.search(query, options))).toEqual(['upload_file', 'pdf_merge']);
  });
});

describe('query feedback (recordUsage)', () => {
  // No tool says "plot"; users who asked to plot went on to call the chart tool.
  const tools: SearchableTool[] = [
    ...CATALOG,
    { name: 'charts.generate_word_cloud_chart', server: 'charts', description: 'Render a word cloud chart' },
  ];
  const query = 'plot these numbers';

  it('learns query words → tools once the pairing repeats, and says why', () => {
    const search = createToolSearch({ tools });
    expect(search.search(query)).toEqual([]);
    search.recordUsage({ query: 'plot my sales numbers', tools: ['charts.generate_word_cloud_chart'] });
    // One use is noise: below the minimum count nothing moves.
    expect(search.search(query)).toEqual([]);
    search.recordUsage({ query: 'please plot it', tools: ['charts.generate_word_cloud_chart'] });
    const [hit] = search.search(query);
    expect(hit!.name).toBe('charts.generate_word_cloud_chart');
    expect(hit!.reasons.join(' | ')).toMatch(/used after queries with 'plot'/);
    // BM25 alone is untouched, and the feedback can be turned off per query.
    expect(search.search(query, { mode: 'bm25' })).toEqual([]);
    expect(search.search(query, { feedbackWeight: 0 })).toEqual([]);
  });

  it('lifts the tool a query led to above a lexical look-alike', () => {
    const search = createToolSearch({ tools });
    const ask = 'report on spending per person';
    const before = names(search.search(ask, { limit: 3 }));
    expect(before[0]).not.toBe('finance.get_budget_by_level');
    for (let i = 0; i < 3; i++)
      search.recordUsage({ query: `spending per person ${i}`, tools: ['finance.get_budget_by_level'] });
    expect(names(search.search(ask, { limit: 3 }))[0]).toBe('finance.get_budget_by_level');
  });

  it('forgets with a half-life counted in uses: newer habits outweigh older ones', () => {
    const learn = (halfLife: number): QueryFeedback => {
      const feedback = new QueryFeedback(halfLife);
      for (let i = 0; i < 2; i++) feedback.record(['plot'], ['old_chart']);
      for (let i = 0; i < 30; i++) feedback.record(['other'], ['thing']);
      for (let i = 0; i < 2; i++) feedback.record(['plot'], ['new_chart']);
      return feedback;
    };
    const options = { evidencePrior: 2, minCount: 2 };
    const decayed = learn(10).score(['plot'], options);
    // 30+ uses later, the old pairing weighs about 2^-3 of the new one.
    expect(decayed.get('old_chart')!.score / decayed.get('new_chart')!.score).toBeLessThan(0.15);
    const kept = learn(Infinity).score(['plot'], options);
    expect(kept.get('old_chart')!.score).toBeCloseTo(kept.get('new_chart')!.score, 9);
    // Below the minimum count, nothing: one use is noise.
    const once = new QueryFeedback();
    once.record(['plot'], ['chart']);
    expect(once.score(['plot'], options).size).toBe(0);
    expect(learn(10).uses).toBe(34);
  });

  it('keeps memory bounded by the forgetting rule: the weakest pairs go, the strongest stay', () => {
    const feedback = new QueryFeedback({ halfLifeUses: 1_000, maxPairs: 100, maxToolsPerTerm: 40 });
    // One habit repeated throughout, among 2,000 one-off uses of new term–tool pairs.
    for (let i = 0; i < 2_000; i++) {
      feedback.record([`term${i % 30}`], [`tool${i}`]);
      if (i % 10 === 0) feedback.record(['plot'], ['chart']);
    }
    expect(feedback.pairs).toBeGreaterThan(0);
    expect(feedback.pairs).toBeLessThanOrEqual(110);
    expect(feedback.terms).toBeLessThanOrEqual(31);
    const plot = feedback.score(['plot'], { evidencePrior: 2, minCount: 2 });
    expect([...plot.keys()]).toEqual(['chart']);
    // The newest one-offs are what is left of them: the oldest were forgotten first.
    const seen = new QueryFeedback({ halfLifeUses: 1, maxPairs: 10 });
    for (let i = 0; i < 100; i++) {
      seen.record([`t${i}`], [`x${i}`]);
      seen.record([`t${i}`], [`x${i}`]);
    }
    const kept = [...seen.score(['t0', 't99'], { evidencePrior: 2, minCount: 2 }).keys()];
    expect(kept).toEqual(['x99']);
  });

  it('returns the strongest tools up to its limit, and its counts stay finite over many half-lives', () => {
    const feedback = new QueryFeedback(1);
    for (let round = 0; round < 200; round++)
      for (let tool = 0; tool < 10; tool++)
        for (let i = 0; i <= tool; i++) feedback.record(['plot'], [`chart${tool}`]);
    const all = feedback.score(['plot'], { evidencePrior: 0, minCount: 2, limit: 100 });
    expect(all.size).toBe(10);
    for (const { score } of all.values()) expect(Number.isFinite(score)).toBe(true);
    const top = feedback.score(['plot'], { evidencePrior: 0, minCount: 2, limit: 3 });
    expect([...top.keys()].sort()).toEqual(['chart7', 'chart8', 'chart9']);
    // With a half-life of one use, the newest pairing dominates.
    expect(all.get('chart9')!.score).toBeGreaterThan(0.5);
  });

  it('scores each tool once, with the formula: the mean over distinct query terms of its shrunk share', () => {
    // No decay (an infinite half-life), so every count is the raw one and the formula is checked
    // exactly: c(t,u) · (c − m + 1)/c / (n(t) + κ), averaged over the query's distinct terms.
    const feedback = new QueryFeedback({ halfLifeUses: Infinity });
    const random = seededRandom(23);
    const words = Array.from({ length: 12 }, (_, i) => `w${i}`);
    const pairs = new Map<string, number>();
    const uses = new Map<string, number>();
    for (let use = 0; use < 3_000; use++) {
      const terms = [
        ...new Set(
          Array.from({ length: 1 + Math.floor(random() * 4) }, () => words[Math.floor(random() * 12)]!),
        ),
      ];
      const tools = [
        ...new Set(
          Array.from({ length: 1 + Math.floor(random() * 3) }, () => `tool${Math.floor(random() * 90)}`),
        ),
      ];
      feedback.record(terms, tools);
      for (const term of terms) {
        uses.set(term, (uses.get(term) ?? 0) + 1);
        for (const tool of tools) pairs.set(`${term} ${tool}`, (pairs.get(`${term} ${tool}`) ?? 0) + 1);
      }
    }
    const query = ['w1', 'w2', 'w1', 'w3', 'w4', 'w5', 'w6', 'nothing'];
    const distinct = [...new Set(query)];
    const expected = new Map<string, number>();
    for (const term of distinct) {
      // Each term reads its 64 strongest tools (every tool here: 90 tools, about 64 a term at most).
      const ranked = [...pairs]
        .filter(([key, count]) => key.startsWith(`${term} `) && count >= 2)
        .map(([key, count]): [string, number] => [key.slice(term.length + 1), count - 1])
        .sort((a, b) => b[1] - a[1])
        .slice(0, 64);
      for (const [tool, weight] of ranked)
        expected.set(tool, (expected.get(tool) ?? 0) + weight / (uses.get(term)! + 3) / distinct.length);
    }
    const scored = feedback.scoreIds(query, { evidencePrior: 3, minCount: 2, limit: 1_000 });
    const tools = Array.from(scored.tools.subarray(0, scored.length), (id) => feedback.toolName(id));
    expect(new Set(tools).size).toBe(tools.length);
    expect(tools.length).toBe(expected.size);
    expect(tools.length).toBeGreaterThan(80);
    tools.forEach((tool, i) => expect(scored.scores[i]).toBeCloseTo(expected.get(tool)!, 12));
  });

  it('scores a term read before its counts were rescaled as one read after (no stale cached weights)', () => {
    // With a half-life of one use, counts are rescaled every 64 uses. Decay hits a pair and its
    // term alike, so with κ = 0 the score is (s − m + 1)/s whatever the age: 1/2 for s = m = 2.
    const feedback = new QueryFeedback(1);
    feedback.record(['plot'], ['chart']);
    feedback.record(['plot'], ['chart']);
    const options = { evidencePrior: 0, minCount: 2 };
    expect(feedback.score(['plot'], options).get('chart')!.score).toBeCloseTo(0.5, 12);
    for (let use = 0; use < 100; use++) feedback.record(['table'], ['grid']);
    expect(feedback.score(['plot'], options).get('chart')!.score).toBeCloseTo(0.5, 12);
  });

  it('reads each term its own ranked tools from the shared arena, across compactions and changed terms', () => {
    // 30 terms of 32 tools each (1,920 numbers ranked, past the arena's first 1,024, so it is
    // compacted while they are read); no decay, m = 1, κ = 0: a tool's score for one term is c/n.
    const feedback = new QueryFeedback(Infinity);
    const TERMS = 30;
    const toolsOf = (k: number): string[] => Array.from({ length: 32 }, (_, j) => `tool${k}-${j}`);
    for (let k = 0; k < TERMS; k++) for (let use = 0; use < 2; use++) feedback.record([`w${k}`], toolsOf(k));
    const options = { evidencePrior: 0, minCount: 1, limit: 2_000 };
    const expected = (k: number, changed: boolean): [string, number][] =>
      toolsOf(k).map((name, j) => [name, changed ? (j === 0 ? 1 : 2 / 3) : 1]);
    const scores = (terms: string[]): [string, number][] =>
      [...feedback.score(terms, options)].map(([name, { score }]) => [name, score] as [string, number]);
    const sorted = (pairs: [string, number][]): [string, number][] =>
      pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    for (let k = 0; k < TERMS; k++) expect(sorted(scores([`w${k}`]))).toEqual(sorted(expected(k, false)));
    // A use changes the even terms (their runs become garbage); every term is read again.
    for (let k = 0; k < TERMS; k += 2) feedback.record([`w${k}`], [`tool${k}-0`]);
    for (let k = 0; k < TERMS; k++) {
      const got = sorted(scores([`w${k}`]));
      const want = sorted(expected(k, k % 2 === 0));
      expect(got.map(([name]) => name)).toEqual(want.map(([name]) => name));
      got.forEach(([, score], i) => expect(score).toBeCloseTo(want[i]![1], 12));
    }
    // One query over every term, each changed again, so ranking its terms compacts the arena midway.
    for (let k = 0; k < TERMS; k++) feedback.record([`w${k}`], [`tool${k}-1`]);
    const all = Array.from({ length: TERMS }, (_, k) => `w${k}`);
    const got = new Map(scores(all));
    expect(got.size).toBe(TERMS * 32);
    for (let k = 0; k < TERMS; k++) {
      // n = 4 (even terms) or 3; tool 1 gained a use, tool 0 too for even terms.
      const n = k % 2 === 0 ? 4 : 3;
      expect(got.get(`tool${k}-1`)).toBeCloseTo(3 / n / TERMS, 12);
      expect(got.get(`tool${k}-0`)).toBeCloseTo((k % 2 === 0 ? 3 : 2) / n / TERMS, 12);
      expect(got.get(`tool${k}-31`)).toBeCloseTo(2 / n / TERMS, 12);
    }
  });

  it('serializes and restores what it learned, and rejects broken usages by field', () => {
    const search = createToolSearch({ tools });
    for (let i = 0; i < 2; i++) search.recordUsage({ query, tools: ['charts.generate_word_cloud_chart'] });
    const state = JSON.parse(JSON.stringify(search.serialize())) as ReturnType<typeof search.serialize>;
    expect(state.usages).toHaveLength(2);
    const restored = createToolSearch({ tools, state });
    expect(restored.search(query)).toEqual(search.search(query));
    expect(() => createToolSearch({ tools, state: { ...state, usages: [['q', [1]]] as never } })).toThrow(
      /usages\[0\]/,
    );
    expect(() => search.recordUsage({ query: 'x', tools: 'chart' } as never)).toThrow(/recordUsage needs/);
    // Hostile sizes are cut, not stored whole.
    search.recordUsage({ query: 'q'.repeat(100_000), tools: ['x'.repeat(10_000), 'chat.send_message'] });
    const last = search.serialize().usages!.at(-1)!;
    expect(last[0].length).toBeLessThanOrEqual(4_000);
    expect(last[1]).toEqual(['chat.send_message']);
  });
});

describe('usage history stores keep query feedback', () => {
  const dir = mkdtempSync(join(tmpdir(), 'codecall-feedback-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const usage = { query: 'plot these numbers', tools: [NAMES[0]!] };

  it('MemoryHistoryStore and SqliteHistoryStore return recorded uses in load()', async () => {
    const path = join(dir, 'history.sqlite');
    for (const open of [
      async () => new MemoryHistoryStore(),
      async () => SqliteHistoryStore.open({ path }),
    ]) {
      const store = await open();
      await store.appendUsage(usage);
      await store.appendUsage({ query: 'second', tools: [NAMES[1]!, NAMES[2]!] });
      await expect(store.appendUsage({ query: 1 } as never)).rejects.toThrow(/query: string/);
      const state = await loadState(store);
      expect(state.usages).toEqual([
        [usage.query, usage.tools],
        ['second', [NAMES[1], NAMES[2]]],
      ]);
      await store.close();
    }
    // Reopened from disk: the uses are still there, ready for createToolSearch({ state }).
    const reopened = await SqliteHistoryStore.open({ path });
    const search = createToolSearch({ tools: CATALOG, state: await loadState(reopened) });
    expect(search.serialize().usages).toHaveLength(2);
    await reopened.close();
  });
});
