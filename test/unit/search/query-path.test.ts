import { describe, expect, it } from 'vitest';
import { Extensions, NeighbourCache, type Step } from '../../../src/search/beam-walk.js';
import { InternedNames } from '../../../src/search/interned-names.js';
import { selectTop } from '../../../src/search/query-expansion.js';
import { coveringDepth, RankedIds } from '../../../src/search/ranked-ids.js';
import { createToolSearch } from '../../../src/search/tool-search.js';
import { seededRandom } from '../../../src/util/seeded-random.js';

describe('ranked ids', () => {
  it('gives the order selectTop gives (score, then id), for one request and for growing ones', () => {
    const random = seededRandom(7);
    const ranked = new RankedIds();
    let compared = 0;
    for (let round = 0; round < 200; round++) {
      const n = 1 + Math.floor(random() * 300);
      const scores = new Float64Array(1_000);
      // Few distinct scores, so ties (broken by id) are everywhere.
      for (let i = 0; i < scores.length; i++) scores[i] = Math.floor(random() * 12) / 4;
      const ids = [...new Set(Array.from({ length: n }, () => Math.floor(random() * 1_000)))];
      const requests = [1 + Math.floor(random() * 40), 1 + Math.floor(random() * 80), ids.length + 3];
      ranked.reset(ids, scores);
      for (const k of requests) {
        expect(ranked.top(k)).toEqual(selectTop(ids, scores, k));
        compared++;
      }
    }
    expect(compared).toBe(600);
  });

  it('covers what a merge top reads when other evidence only adds: the same top as over the whole bound', () => {
    const random = seededRandom(11);
    const ranked = new RankedIds();
    let compared = 0;
    let shorter = 0;
    for (let round = 0; round < 400; round++) {
      const scores = new Float64Array(500);
      // Few distinct scores, so ties at the cut (broken by id here, by name in the merge) are common.
      for (let i = 0; i < scores.length; i++) scores[i] = Math.floor(random() * 10) / 3;
      const ids = [
        ...new Set(Array.from({ length: 1 + Math.floor(random() * 200) }, () => Math.floor(random() * 500))),
      ];
      // Ids the merge adds other evidence to (never negative), whatever their lexical rank.
      const marked = new Set(
        Array.from({ length: Math.floor(random() * 40) }, () => Math.floor(random() * 500)),
      );
      const names = Array.from({ length: 500 }, (_, i) => `t${(i * 7919) % 500}`);
      const extra = Float64Array.from({ length: 500 }, () => Math.floor(random() * 4) / 3);
      const k = 1 + Math.floor(random() * 12);
      const bound = k + marked.size + Math.floor(random() * 5);
      const best = 3;
      const matched = new Set(ids);
      const mergeTop = (lexical: readonly number[]): number[] => {
        const value = new Map<number, number>();
        for (const id of lexical) value.set(id, scores[id]! / best);
        for (const id of marked) value.set(id, (matched.has(id) ? scores[id]! / best : 0) + extra[id]!);
        return [...value.keys()]
          .sort((a, b) => value.get(b)! - value.get(a)! || (names[a]! < names[b]! ? -1 : 1))
          .slice(0, k);
      };
      ranked.reset(ids, scores);
      const whole = ranked.top(bound);
      ranked.reset(ids, scores);
      const covered = ranked.covering(k, bound, best);
      expect(covered).toEqual(whole.slice(0, covered.length));
      expect(mergeTop(covered)).toEqual(mergeTop(whole));
      if (covered.length < whole.length) shorter++;
      compared++;
    }
    expect(compared).toBe(400);
    // The point of it: most merges read less than the whole bound.
    expect(shorter).toBeGreaterThan(200);
  });

  it('answers a shorter request after a longer one from what it took, and a reset forgets it', () => {
    const scores = Float64Array.from([0.5, 3, 1, 3, 2, 0]);
    const ranked = new RankedIds();
    ranked.reset([0, 1, 2, 3, 4, 5], scores);
    expect(ranked.top(3)).toEqual([1, 3, 4]);
    expect(ranked.top(5)).toEqual([1, 3, 4, 2, 0]);
    expect(ranked.top(2)).toEqual([1, 3]);
    expect(ranked.top(10)).toEqual([1, 3, 4, 2, 0, 5]);
    ranked.reset([5, 2, 0], scores);
    expect(ranked.top(2)).toEqual([2, 0]);
  });

  it('gives the best id first (ties by the lower id), −1 for no ids, whatever the depth of the first pass', () => {
    const random = seededRandom(13);
    const ranked = new RankedIds();
    let compared = 0;
    for (let round = 0; round < 200; round++) {
      const scores = new Float64Array(400);
      for (let i = 0; i < scores.length; i++) scores[i] = Math.floor(random() * 6) / 2;
      const ids = [
        ...new Set(Array.from({ length: 1 + Math.floor(random() * 150) }, () => Math.floor(random() * 400))),
      ];
      const depth = Math.floor(random() * 60);
      ranked.reset(ids, scores, depth);
      expect(ranked.first()).toBe(selectTop(ids, scores, 1)[0]);
      for (const k of [1 + Math.floor(random() * 30), 1 + Math.floor(random() * 90), ids.length + 2]) {
        expect(ranked.top(k)).toEqual(selectTop(ids, scores, k));
        compared++;
      }
    }
    expect(compared).toBe(600);
    ranked.reset([], new Float64Array(4), 20);
    expect(ranked.first()).toBe(-1);
    expect(ranked.covering(5, 10, 1)).toEqual([]);
  });

  it('passes over the matches once when the first request reads as deep as the merges will (coveringDepth)', () => {
    const random = seededRandom(17);
    const scores = Float64Array.from({ length: 5_000 }, () => random());
    const ids = Array.from({ length: 5_000 }, (_, i) => i);
    /** Reads of the ids by index, one per id a pass reads. */
    let reads = 0;
    const counted = new Proxy(ids, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    const ranked = new RankedIds();
    // As a feedback query asks: the best hit, the walk's seeds (5), then the result's (10 + 2).
    ranked.reset(counted, scores, coveringDepth(12));
    const first = ranked.first();
    const seeds = ranked.covering(5, 37, scores[first]!);
    const result = ranked.covering(12, 60, scores[first]!);
    expect(reads).toBe(ids.length);
    expect(seeds).toEqual(selectTop(ids, scores, 5));
    expect(result).toEqual(selectTop(ids, scores, 12));
  });
});

describe('neighbour cache', () => {
  const step = (node: string): Step => ({ node, from: 'x', forward: true, weight: 1, count: 1, total: 1 });
  /** The list of `id` in one direction as the walk reads it: ids, weights and step names. */
  const read = (cache: NeighbourCache, id: number, forward: boolean): unknown => {
    const start = cache.start(id, forward);
    if (start < 0) return undefined;
    const end = cache.end(id, forward);
    return {
      ids: [...cache.ids.subarray(start, end)],
      weights: [...cache.weights.subarray(start, end)],
      steps: cache.steps.slice(start, end).map((s) => s.node),
    };
  };

  it('keeps successors and predecessors apart by id, counts what it keeps, and forgets all on clear', () => {
    const cache = new NeighbourCache();
    cache.set(40, true, [1, 2], [0.5, 0.25], [step('a'), step('b')]);
    cache.set(40, false, [3], [0.75], [step('c')]);
    cache.set(3, true, [9], [0.1], [step('d')]);
    cache.set(3, true, [7, 8], [0.3, 0.2], [step('e'), step('f')]); // replaced, not counted twice
    expect(read(cache, 40, true)).toEqual({ ids: [1, 2], weights: [0.5, 0.25], steps: ['a', 'b'] });
    expect(read(cache, 40, false)).toEqual({ ids: [3], weights: [0.75], steps: ['c'] });
    expect(read(cache, 3, true)).toEqual({ ids: [7, 8], weights: [0.3, 0.2], steps: ['e', 'f'] });
    expect(read(cache, 3, false)).toBeUndefined();
    expect(read(cache, 7, true)).toBeUndefined();
    expect(read(cache, 100_000, false)).toBeUndefined();
    expect(cache.size).toBe(3);
    cache.clear();
    expect(cache.size).toBe(0);
    expect(cache.steps).toHaveLength(0);
    expect([read(cache, 40, true), read(cache, 40, false), read(cache, 3, true)]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    // Refilled after a clear from the start of the pool; an empty list is kept too.
    expect(cache.set(5, false, [4], [1], [step('g')])).toBe(0);
    cache.set(6, true, [], [], []);
    expect(read(cache, 5, false)).toEqual({ ids: [4], weights: [1], steps: ['g'] });
    expect(read(cache, 6, true)).toEqual({ ids: [], weights: [], steps: [] });
    expect(cache.size).toBe(2);
  });

  it('keeps every list intact as its pool and its bounds grow', () => {
    const cache = new NeighbourCache();
    const random = seededRandom(11);
    const expected = new Map<number, { ids: number[]; weights: number[]; steps: string[] }>();
    for (let id = 0; id < 300; id++) {
      const n = Math.floor(random() * 6);
      const list = {
        ids: Array.from({ length: n }, () => Math.floor(random() * 10_000)),
        weights: Array.from({ length: n }, () => random()),
        steps: Array.from({ length: n }, (_, i) => `${id}:${i}`),
      };
      const slot = 7 * id; // ids far apart, so the bounds grow many times
      cache.set(slot, id % 2 === 0, list.ids, list.weights, list.steps.map(step));
      expected.set(slot, list);
    }
    expect(cache.size).toBe(300);
    const got = [...expected.keys()].map((slot) => read(cache, slot, (slot / 7) % 2 === 0));
    expect(got).toEqual([...expected.values()]);
    // The other direction of each was never set.
    expect(
      [...expected.keys()].filter((slot) => read(cache, slot, (slot / 7) % 2 !== 0) !== undefined),
    ).toEqual([]);
  });
});

describe('walk extensions', () => {
  it('are taken in the order of a stable sort by score, descending, then none is left', () => {
    const random = seededRandom(5);
    const extensions = new Extensions();
    let compared = 0;
    for (let round = 0; round < 50; round++) {
      extensions.reset();
      const n = Math.floor(random() * 150); // past the initial 64 slots: they grow
      // Few distinct scores, so ties (first pushed first) are everywhere.
      const scores = Array.from({ length: n }, () => (1 + Math.floor(random() * 6)) / 8);
      scores.forEach((score, i) => extensions.push(i % 5, 1_000 + i, i % 2 === 0, score));
      const expected = scores.map((score, i) => ({ score, i })).sort((a, b) => b.score - a.score);
      const taken: Array<{ score: number; i: number }> = [];
      const columns: number[][] = [];
      for (let c = extensions.next(); c >= 0; c = extensions.next()) {
        taken.push({ score: scores[c]!, i: c });
        columns.push([extensions.path[c]!, extensions.entry[c]!, extensions.forward[c]!]);
      }
      expect(taken).toEqual(expected);
      expect(columns).toEqual(expected.map(({ i }) => [i % 5, 1_000 + i, i % 2 === 0 ? 1 : 0]));
      compared += n;
    }
    expect(compared).toBeGreaterThan(2_000);
  });
});

describe('feedback tools mapped to catalog entries', () => {
  it('bumps its version when an id stops naming its name (released, then reused)', () => {
    const names = new InternedNames();
    const a = names.intern('a');
    names.retain(a);
    const start = names.version;
    names.intern('b');
    expect(names.version).toBe(start);
    names.release(a);
    const released = names.version;
    expect(released).toBeGreaterThan(start);
    expect(names.intern('c')).toBe(a);
    expect(names.version).toBeGreaterThan(released);
  });

  it('follows the catalog: a tool removed loses its feedback, a tool added back (new entry) regains it', () => {
    const tools = [
      { name: 'plots.draw_chart', description: 'Render numbers' },
      { name: 'files.read_table', description: 'Read a table from disk' },
    ];
    const search = createToolSearch({ tools });
    for (let i = 0; i < 3; i++) search.recordUsage({ query: 'make a graph', tools: ['plots.draw_chart'] });
    const learned = (): string | undefined =>
      search
        .search('graph')
        .find((hit) => hit.reasons.some((reason) => reason.startsWith('used after queries')))?.name;
    expect(learned()).toBe('plots.draw_chart');
    search.removeTools(['plots.draw_chart']);
    expect(search.search('graph').map((hit) => hit.name)).not.toContain('plots.draw_chart');
    search.addTools([tools[0]!]);
    expect(learned()).toBe('plots.draw_chart');
  });

  it('maps a feedback id reused for another tool to that tool, not to the one it named before', () => {
    const names = [
      ...Array.from({ length: 330 }, (_, i) => `old.tool${i}`),
      ...Array.from({ length: 65 }, (_, i) => `new.tool${i}`),
    ];
    const search = createToolSearch({ tools: names.map((name) => ({ name, description: 'a tool' })) });
    const learn = (query: string, tool: string): void => {
      search.recordUsage({ query, tools: [tool] });
      search.recordUsage({ query, tools: [tool] });
    };
    // The first 32 old tools are read by a query, so their ids are mapped to their entries...
    for (let i = 0; i < 32; i++) learn('xylophone', `old.tool${i}`);
    expect(search.search('xylophone').map((hit) => hit.name)).toHaveLength(10);
    // ...then forgotten (a term keeps its strongest 256 tools once it passes 320), freeing their
    // ids, which the new tools of another term take.
    for (let i = 32; i < 330; i++) learn('xylophone', `old.tool${i}`);
    for (let i = 0; i < 65; i++) learn('yodel', `new.tool${i}`);
    // The query reads the term's 32 strongest tools: the newest, whose ids were reused.
    const hits = search.search('yodel', { limit: 32 });
    expect(hits).toHaveLength(32);
    for (const hit of hits) expect(hit.name).toMatch(/^new\.tool/);
  });
});
