import { describe, expect, it } from 'vitest';
import { GraphCredits, type Step } from '../../../src/search/beam-walk.js';
import { InternedNames } from '../../../src/search/interned-names.js';
import { QueryFeedback, selectNth } from '../../../src/search/query-feedback.js';
import { ScoreMerge } from '../../../src/search/score-merge.js';
import { createToolSearch } from '../../../src/search/tool-search.js';
import { splitName } from '../../../src/search/tokenize.js';
import { seededRandom } from '../../../src/util/seeded-random.js';

describe('interned names', () => {
  it('reuses the id of a name nobody holds any more, and forgets that name', () => {
    const names = new InternedNames();
    const a = names.intern('a');
    const b = names.intern('b');
    names.retain(a);
    names.retain(a);
    names.retain(b);
    expect(names.intern('a')).toBe(a);
    names.release(a);
    expect(names.idOf('a')).toBe(a);
    names.release(a);
    expect(names.idOf('a')).toBeUndefined();
    expect(names.size).toBe(1);
    const c = names.intern('c');
    expect(c).toBe(a);
    expect(names.name(c)).toBe('c');
    expect(names.name(b)).toBe('b');
    expect(names.capacity).toBe(2);
  });
});

describe('query feedback by tool id', () => {
  it('keeps the tool ids bounded by the pairs it remembers, and names stay right after ids are reused', () => {
    const feedback = new QueryFeedback({ halfLifeUses: 1, maxPairs: 10 });
    for (let i = 0; i < 500; i++) {
      feedback.record([`t${i}`], [`x${i}`]);
      feedback.record([`t${i}`], [`x${i}`]);
    }
    // Forgotten pairs free their tools: ids follow the pairs kept, not every tool ever seen.
    expect(feedback.tools).toBeLessThanOrEqual(11);
    expect([...feedback.score(['t499'], { evidencePrior: 2, minCount: 2 }).keys()]).toEqual(['x499']);
    const scored = feedback.scoreIds(['t499', 't498'], { evidencePrior: 2, minCount: 2 });
    const names = Array.from(scored.tools.subarray(0, scored.length), (id) => feedback.toolName(id));
    expect(names.sort()).toEqual(['x498', 'x499']);
  });

  it("forgets a term's weakest tools, keeping the earliest recorded at the cut, and frees their ids", () => {
    const feedback = new QueryFeedback({ halfLifeUses: Infinity, maxToolsPerTerm: 4 });
    // Counts a:3, b:3, then c, d, e, f once each: the sixth tool passes the bound and its margin.
    for (const [tool, times] of [
      ['a', 3],
      ['b', 3],
      ['c', 1],
      ['d', 1],
      ['e', 1],
      ['f', 1],
    ] as const)
      for (let i = 0; i < times; i++) feedback.record(['plot'], [tool]);
    expect(feedback.pairs).toBe(4);
    expect(feedback.tools).toBe(4);
    const kept = feedback.score(['plot'], { evidencePrior: 2, minCount: 1 });
    expect([...kept.keys()].sort()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('breaks ties at the cut by tool name, as a sort by name would', () => {
    const feedback = new QueryFeedback(Infinity);
    // Ten tools with the same evidence, recorded in an order unlike their names.
    for (const tool of ['j', 'c', 'h', 'a', 'e', 'b', 'i', 'd', 'g', 'f'])
      for (let i = 0; i < 2; i++) feedback.record(['plot'], [tool]);
    const top = feedback.score(['plot'], { evidencePrior: 2, minCount: 2, limit: 4 });
    expect([...top.keys()].sort()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('sums each query from zero: what an earlier query or a smaller catalog of ids left is never read', () => {
    const feedback = new QueryFeedback(Infinity);
    const twin = new QueryFeedback(Infinity);
    const record = (terms: string[], tools: string[]): void => {
      feedback.record(terms, tools);
      twin.record(terms, tools);
    };
    const options = { evidencePrior: 2, minCount: 2, limit: 1_000 };
    const scores = (from: QueryFeedback, terms: string[]): Array<[string, number, string]> => {
      const scored = from.scoreIds(terms, options);
      return Array.from({ length: scored.length }, (_, i): [string, number, string] => [
        from.toolName(scored.tools[i]!),
        scored.scores[i]!,
        scored.terms[i]!,
      ]).sort((a, b) => (a[0] < b[0] ? -1 : 1));
    };
    for (let i = 0; i < 2; i++) record(['plot', 'chart'], ['a', 'b', 'c']);
    // The first query touches a, b and c; the second reads them again (its sums start anew).
    expect(scores(feedback, ['plot', 'chart']).length).toBe(3);
    expect(scores(feedback, ['plot'])).toEqual(scores(twin, ['plot']));
    // Many more tools (ids past the accumulators' size): they grow, and hold no stale sums.
    for (let i = 0; i < 2; i++)
      record(
        ['plot'],
        Array.from({ length: 30 }, (_, j) => `t${j}`),
      );
    for (let i = 0; i < 2; i++)
      record(
        ['chart'],
        Array.from({ length: 30 }, (_, j) => `u${j}`),
      );
    expect(scores(feedback, ['plot', 'chart'])).toEqual(scores(twin, ['plot', 'chart']));
    const plot = scores(feedback, ['plot']);
    expect(plot.length).toBe(33);
    expect(plot).toEqual(scores(twin, ['plot']));
    expect(plot.find(([tool]) => tool === 'a')![1]).toBeCloseTo((2 - 2 + 1) / (4 + 2), 12);
  });

  it('selects the value at a sorted position like a full sort does', () => {
    const rand = seededRandom(7);
    for (let round = 0; round < 200; round++) {
      const length = 1 + Math.floor(rand() * 300);
      // Few distinct values, so ties are common.
      const values = Float64Array.from({ length }, () => Math.floor(rand() * 20) / 7);
      const sorted = Float64Array.from(values).sort();
      const n = Math.floor(rand() * length);
      expect(selectNth(Float64Array.from(values), length, n)).toBe(sorted[n]);
    }
  });
});

describe('score merge', () => {
  it('returns the best k by score, ties by name, exactly as a full sort by score then name', () => {
    const rand = seededRandom(11);
    const names = Array.from({ length: 400 }, (_, i) => `tool_${((i * 7919) % 400).toString(36)}`);
    const merge = new ScoreMerge();
    for (let round = 0; round < 50; round++) {
      merge.begin(names.length);
      const expected: Array<[string, number]> = [];
      for (let id = 0; id < names.length; id++) {
        if (rand() < 0.5) continue;
        const score = Math.floor(rand() * 5) / 4;
        merge.set(id, score);
        expected.push([names[id]!, score]);
      }
      expected.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
      const k = 1 + Math.floor(rand() * 40);
      const top = merge.top(k, (id) => names[id]!).map((id) => [names[id]!, merge.get(id)]);
      expect(top).toEqual(expected.slice(0, k));
    }
  });

  it('forgets what the previous merge touched', () => {
    const merge = new ScoreMerge();
    merge.begin(10);
    merge.set(3, 1);
    merge.begin(10);
    expect(merge.has(3)).toBe(false);
    merge.set(4, 0.5);
    expect(merge.top(5, String)).toEqual([4]);
  });
});

describe('graph credits by entry id', () => {
  const step = (from: string): Step => ({ node: 'x', from, forward: true, weight: 1, count: 1, total: 1 });

  it("sums the paths that reach a tool, keeps the best path's step, and forgets them at the next walk", () => {
    const credits = new GraphCredits();
    credits.begin(10);
    const [a, b, c] = [step('a'), step('b'), step('c')];
    credits.add(3, 0.25, a);
    credits.add(7, 0.125, c);
    credits.add(3, 0.5, b);
    credits.add(3, 0.125, c);
    expect(credits.ids).toEqual([3, 7]);
    expect(credits.score(3)).toBe(0.875);
    expect(credits.step(3)).toBe(b);
    expect(credits.score(7)).toBe(0.125);
    credits.begin(10);
    expect(credits.has(3)).toBe(false);
    expect(credits.ids).toEqual([]);
    credits.add(3, 0.0625, a);
    expect(credits.score(3)).toBe(0.0625);
    expect(credits.step(3)).toBe(a);
    // A larger catalog grows the accumulators.
    credits.begin(1000);
    credits.add(999, 0.5, c);
    expect([credits.has(999), credits.has(3), credits.score(999)]).toEqual([true, false, 0.5]);
  });
});

describe('the walk by entry id', () => {
  const tools = [
    { name: 'first_step', description: 'alpha' },
    { name: 'second_step', description: 'alpha' },
    { name: 'third_step', description: 'gamma' },
    { name: 'unrelated', description: 'delta' },
  ];

  it('keeps one copy of a path reached from both ends, so its extensions are credited once each', () => {
    const search = createToolSearch({ tools });
    for (let i = 0; i < 5; i++) search.recordSequence(['first_step', 'second_step', 'third_step']);
    const hit = search.search('alpha', { limit: 10, expansionDocs: 0 }).find((h) => h.name === 'third_step');
    // w = (5 − 1) / (5 + 2). The first step reaches first_step → second_step both from
    // first_step forward and from second_step backward: one path, kept once in the beam, so
    // third_step is credited w (after second_step) plus w² (its one extension), not w + 2w².
    const w = 4 / 7;
    expect(hit?.score).toBeCloseTo(0.6 * (w + w * w), 5);
  });

  it('returns A→B and B→A as one chain', () => {
    const search = createToolSearch({ tools });
    for (let i = 0; i < 5; i++) {
      search.recordSequence(['first_step', 'second_step']);
      search.recordSequence(['second_step', 'first_step']);
    }
    const { chains } = search.searchDetailed('alpha', { limit: 10, chainLimit: 10, expansionDocs: 0 });
    const sets = chains.map((chain) => [...chain.tools].sort().join(' '));
    expect(sets).toContain('first_step second_step');
    expect(new Set(sets).size).toBe(sets.length);
  });
});

describe('graph and feedback evidence for one tool', () => {
  it('adds the graph credit on top of the feedback already merged, not in place of it', () => {
    const tools = [
      { name: 'parse_invoice', description: 'Parse an invoice document' },
      { name: 'notify_team', description: 'Post a message to a channel' },
      ...Array.from({ length: 8 }, (_, i) => ({ name: `other_${i}`, description: `Unrelated tool ${i}` })),
    ];
    const search = createToolSearch({ tools });
    for (let i = 0; i < 5; i++) search.recordSequence(['parse_invoice', 'notify_team']);
    for (let i = 0; i < 4; i++) search.recordUsage({ query: 'invoice', tools: ['notify_team'] });
    const scoreOf = (options: object): number => {
      const hits = search.search('invoice', { limit: 10, expansionDocs: 0, ...options });
      const hit = hits.find((h) => h.name === 'notify_team');
      if (!hit) throw new Error(`notify_team not returned: ${JSON.stringify(hits)}`);
      return hit.score;
    };
    // notify_team has no lexical match: its score is feedback alone, graph alone, or both summed.
    const feedbackOnly = scoreOf({ graphWeight: 0 });
    const graphOnly = scoreOf({ feedbackWeight: 0 });
    const both = scoreOf({});
    expect(feedbackOnly).toBeGreaterThan(0.1);
    expect(graphOnly).toBeGreaterThan(0.1);
    expect(both).toBeCloseTo(feedbackOnly + graphOnly, 5);
    const reasons = search
      .search('invoice', { limit: 10, expansionDocs: 0 })
      .find((h) => h.name === 'notify_team')!.reasons;
    expect(reasons).toEqual(["used after queries with 'invoice'", 'called after parse_invoice 5 of 5 times']);
  });
});

describe("the result's merge, continued from the walk seeds' merge", () => {
  it('scores every hit as a merge started over would: lexical hits past the seeds, and feedback tools', () => {
    // Twenty tools matching 'report' ever more weakly (longer descriptions), two learned from
    // usage, and a graph edge between two tools the query never reaches (the walk runs, credits
    // nothing here): with the walk, the result's merge goes on from the seeds' merge; without it
    // (depth 0), it starts over. Every hit, score and reason must be the same.
    const tools = [
      ...Array.from({ length: 20 }, (_, i) => ({
        name: `report_${String(i).padStart(2, '0')}`,
        description: `report ${'filler words here '.repeat(i)}`,
      })),
      { name: 'lone_a', description: 'Unrelated tool' },
      { name: 'lone_b', description: 'Another unrelated tool' },
    ];
    const search = createToolSearch({ tools });
    for (let i = 0; i < 3; i++) search.recordSequence(['lone_a', 'lone_b']);
    for (let i = 0; i < 4; i++) search.recordUsage({ query: 'report', tools: ['report_13', 'report_17'] });
    const walked = search.search('report', { limit: 15 });
    const startedOver = search.search('report', { limit: 15, beamDepth: 0 });
    expect(walked).toEqual(startedOver);
    expect(walked).toHaveLength(15);
    const names = walked.map((hit) => hit.name);
    // Lexical hits past the five seeds, and the feedback tools with their learned reason.
    expect(names).toContain('report_12');
    expect(walked.find((hit) => hit.name === 'report_17')!.reasons).toContain(
      "used after queries with 'report'",
    );
  });
});

describe('the lexical guard over the merge', () => {
  it('lifts a strong lexical hit that feedback pushed far below the limit back into the results', () => {
    const tools = [
      { name: 'weather_forecast', description: 'The forecast of the weather for a city' },
      ...Array.from({ length: 12 }, (_, i) => ({ name: `other_${i}`, description: `Unrelated tool ${i}` })),
    ];
    const search = createToolSearch({ tools });
    const used = tools.slice(1, 8).map((tool) => tool.name);
    for (let i = 0; i < 20; i++) search.recordUsage({ query: 'weather forecast', tools: used });
    const query = 'the weather forecast for a city';
    // Without the guard, seven tools the feedback learned rank above the lexical match.
    const unguarded = search.search(query, { limit: 10, lexicalGuard: 0 }).map((hit) => hit.name);
    expect(unguarded.indexOf('weather_forecast')).toBe(7);
    expect(search.search(query, { limit: 1 }).map((hit) => hit.name)).toEqual(['weather_forecast']);
    expect(search.search(query, { limit: 3 }).map((hit) => hit.name)).toEqual([
      'other_0',
      'other_1',
      'weather_forecast',
    ]);
  });
});

describe('split names, memoised by word', () => {
  it('gives the same parts on every call, and a caller changing its copy changes no later answer', () => {
    const first = splitName('srv2.getHTTPServer2x_list');
    expect(first).toEqual(['srv', '2', 'get', 'http', 'server', '2', 'x', 'list']);
    first.length = 0;
    expect(splitName('other.getHTTPServer2x')).toEqual(['other', 'get', 'http', 'server', '2', 'x']);
    expect(splitName('srv2.getHTTPServer2x_list')).toEqual([
      'srv',
      '2',
      'get',
      'http',
      'server',
      '2',
      'x',
      'list',
    ]);
  });
});
