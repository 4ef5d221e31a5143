import { describe, expect, it } from 'vitest';
import { Bm25Index } from '../../../src/search/bm25.js';
import { seededRandom } from '../../../src/util/seeded-random.js';

const OPTIONS = { k1: 1.2, b: 0.75 };

describe('Bm25Index', () => {
  it('ranks rarer terms and heavier fields higher', () => {
    const index = new Bm25Index([3, 1]);
    index.add(1, [
      ['send', 'message'],
      ['post', 'text'],
    ]);
    index.add(2, [
      ['list', 'channel'],
      ['send', 'message', 'channel'],
    ]);
    index.add(3, [
      ['read', 'file'],
      ['file', 'text'],
    ]);
    const { scores, ids } = index.score(['message'], OPTIONS);
    expect(ids.sort()).toEqual([1, 2]);
    expect(scores[1]!).toBeGreaterThan(scores[2]!);
    const rare = index.score(['read'], OPTIONS).scores[3]!;
    const common = index.score(['text'], OPTIONS).scores[3]!;
    expect(rare).toBeGreaterThan(common);
  });

  it('gives the same scores after add/remove as a fresh build', () => {
    const docs: Array<[number, string[][]]> = [
      [1, [['a', 'b'], ['c']]],
      [2, [['b'], ['c', 'c', 'd']]],
      [3, [['e'], ['a', 'd']]],
    ];
    const incremental = new Bm25Index([2, 1]);
    incremental.add(0, [['a', 'a', 'z'], ['z']]);
    for (const [id, fields] of docs) incremental.add(id, fields);
    incremental.add(7, [['b', 'x'], ['c']]);
    incremental.remove(0);
    incremental.remove(7);
    incremental.remove(42);
    const fresh = new Bm25Index([2, 1]);
    for (const [id, fields] of docs) fresh.add(id, fields);
    const scores = (index: Bm25Index, term: string): Array<[number, number]> => {
      const { scores, ids } = index.score([term], OPTIONS);
      return ids.map((id) => [id, scores[id]!] as [number, number]).sort((x, y) => x[0] - y[0]);
    };
    for (const term of ['a', 'b', 'c', 'd', 'x', 'z']) {
      expect(scores(incremental, term)).toEqual(scores(fresh, term));
    }
    expect(() => incremental.add(7, [['a'], []])).toThrow(/used before/);
    expect(() => incremental.add(5, [['a'], []])).toThrow(/used before/);
    expect(incremental.size).toBe(3);
    expect(incremental.documentFrequency('z')).toBe(0);
  });

  it('scores a changed index as a fresh build, when queries ran before each change', () => {
    // Queries keep a frozen view of each posting they read; every add and remove must retire it.
    const docs: Array<[number, string[][]]> = [
      [0, [['a', 'b'], ['c']]],
      [1, [['b'], ['c', 'c', 'd']]],
      [2, [['e'], ['a', 'd', 'd', 'd']]],
      [3, [['a', 'c'], []]],
    ];
    const scores = (index: Bm25Index, terms: string[], b = 0.75): Array<[number, number]> => {
      const { scores, ids } = index.score(terms, { k1: 1.2, b });
      return ids.map((id) => [id, scores[id]!] as [number, number]).sort((x, y) => x[0] - y[0]);
    };
    const fresh = (live: ReadonlyArray<[number, string[][]]>): Bm25Index => {
      const index = new Bm25Index([2, 1]);
      for (const [id, fields] of live) index.add(id, fields);
      return index;
    };
    const incremental = new Bm25Index([2, 1]);
    const live: Array<[number, string[][]]> = [];
    const queries = [['a'], ['c', 'd'], ['a', 'b', 'c', 'd', 'e']];
    for (const doc of docs) {
      for (const query of queries) incremental.score(query, OPTIONS);
      incremental.add(...doc);
      live.push(doc);
      for (const query of queries) expect(scores(incremental, query)).toEqual(scores(fresh(live), query));
    }
    incremental.remove(docs[1]![0]);
    live.splice(1, 1);
    for (const query of queries) {
      expect(scores(incremental, query)).toEqual(scores(fresh(live), query));
      // Another b is another length normalisation: not the view built for 0.75.
      expect(scores(incremental, query, 0.2)).toEqual(scores(fresh(live), query, 0.2));
    }
    expect(scores(incremental, ['c', 'd']).map(([id]) => id)).toEqual([0, 2, 3]);
  });

  it('re-scores candidates with the index as it is now', () => {
    const index = new Bm25Index([1, 1]);
    index.add(0, [['a', 'x'], []]);
    index.add(1, [['a'], ['x', 'x']]);
    index.score(['a', 'x'], OPTIONS);
    index.add(2, [['x'], ['x', 'y', 'z', 'w']]);
    const twin = new Bm25Index([1, 1]);
    twin.add(0, [['a', 'x'], []]);
    twin.add(1, [['a'], ['x', 'x']]);
    twin.add(2, [['x'], ['x', 'y', 'z', 'w']]);
    const rerank = (target: Bm25Index): number[] => {
      const { scores } = target.score(['a'], OPTIONS);
      target.addToCandidates([0, 1], new Map([['x', 0.5]]), OPTIONS);
      return [scores[0]!, scores[1]!];
    };
    expect(rerank(index)).toEqual(rerank(twin));
    // A second rerank on the same index reads only its own terms (nothing of the first one stays).
    const other = (target: Bm25Index): number[] => {
      const { scores } = target.score(['a'], OPTIONS);
      target.addToCandidates([0, 1], new Map([['a', 0.3]]), OPTIONS);
      return [scores[0]!, scores[1]!];
    };
    const once = new Bm25Index([1, 1]);
    once.add(0, [['a', 'x'], []]);
    once.add(1, [['a'], ['x', 'x']]);
    once.add(2, [['x'], ['x', 'y', 'z', 'w']]);
    expect(other(index)).toEqual(other(once));
    expect(other(index)[1]).not.toEqual(rerank(twin)[1]);
  });

  it('adds to each candidate the weighted score the term alone gives it', () => {
    const index = new Bm25Index([3, 1]);
    index.add(0, [['a', 'x'], ['b']]);
    index.add(1, [['a'], ['x', 'x', 'c']]);
    index.add(2, [['x'], ['x', 'y', 'z', 'w']]);
    index.add(3, [['a', 'b'], ['c']]);
    const alone = (term: string): number[] => {
      const { scores } = index.score([term], OPTIONS);
      return [0, 1, 2, 3].map((id) => (index.matched(id) ? scores[id]! : 0));
    };
    const a = alone('a');
    const x = alone('x');
    const { scores } = index.score(['a'], OPTIONS);
    index.addToCandidates([0, 1, 3], new Map([['x', 0.5]]), OPTIONS);
    for (const id of [0, 1, 3]) expect(scores[id]).toBeCloseTo(a[id]! + 0.5 * x[id]!, 12);
    expect(x[0]).toBeGreaterThan(0);
    expect(x[1]).toBeGreaterThan(0);
  });

  it('gives the field-weighted term counts and length of a document from its forward index', () => {
    const index = new Bm25Index([3, 1, 0.5]);
    index.add(0, [['get', 'user'], ['users'], ['get', 'a', 'user', 'by', 'user', 'id']]);
    index.add(1, [['other'], [], []]);
    const counts: Array<[string, number]> = [];
    index.termCounts(0, [3, 1, 0.5], (term, count) => counts.push([term, count]));
    expect(counts).toEqual([
      ['get', 3.5],
      ['user', 4],
      ['users', 1],
      ['a', 0.5],
      ['by', 0.5],
      ['id', 0.5],
    ]);
    expect(index.weightedLength(0, [3, 1, 0.5])).toBe(3 * 2 + 1 + 0.5 * 6);
    expect(index.weightedLength(0, [1, 0, 0])).toBe(2);
    index.remove(0);
    const after: string[] = [];
    index.termCounts(0, [3, 1, 0.5], (term) => after.push(term));
    expect(after).toEqual([]);
    expect(index.weightedLength(0, [3, 1, 0.5])).toBe(0);
  });

  it('reports the fields that contain a term', () => {
    const index = new Bm25Index([1, 1, 1]);
    index.add(1, [['x'], [], ['x', 'y']]);
    expect(index.fieldsContaining(1, 'x')).toEqual([0, 2]);
    expect(index.fieldsContaining(1, 'q')).toEqual([]);
  });

  it('counts repeats per field exactly, saturating only past what a packed field holds', () => {
    const index = new Bm25Index([1, 1, 1, 1, 1]);
    index.add(0, [['a'], ['a', 'a'], [], ['a', 'a', 'a', 'a'], Array<string>(100).fill('a')]);
    index.add(1, [[], [], [], [], ['a']]);
    expect(index.fieldsContaining(0, 'a')).toEqual([0, 1, 3, 4]);
    const twin = new Bm25Index([1, 1, 1, 1, 1]);
    twin.add(0, [['a'], ['a', 'a'], [], ['a', 'a', 'a', 'a'], Array<string>(100).fill('a')]);
    twin.add(1, [[], [], [], [], ['a']]);
    const other = new Bm25Index([1, 1, 1, 1, 1]);
    other.add(0, [['a'], ['a'], [], ['a', 'a', 'a', 'a'], Array<string>(100).fill('a')]);
    other.add(1, [[], [], [], [], ['a']]);
    const score = (index: Bm25Index): number => index.score(['a'], OPTIONS).scores[0]!;
    expect(score(index)).toBe(score(twin));
    expect(score(index)).toBeGreaterThan(score(other));
  });

  it('scores nothing on an empty index', () => {
    expect(new Bm25Index([1]).score(['a'], OPTIONS).ids).toEqual([]);
  });
});

describe('Bm25Index postings: main segment, delta segment, rebuilds', () => {
  /** Every document's scores for each query, as a fresh index of the same documents gives them. */
  const snapshot = (index: Bm25Index, queries: string[][]): string => {
    const out: string[] = [];
    for (const query of queries) {
      const { scores, ids } = index.score(query, OPTIONS);
      const sorted = [...ids].sort((x, y) => x - y);
      out.push(sorted.map((id) => `${id}:${scores[id]}`).join(' '));
    }
    return out.join('\n');
  };
  const fresh = (live: ReadonlyMap<number, string[][]>): Bm25Index => {
    const index = new Bm25Index([2, 1]);
    for (const id of [...live.keys()].sort((x, y) => x - y)) index.add(id, live.get(id)!);
    return index;
  };

  it('scores as a fresh build through batches, single adds and removals between queries', () => {
    const random = seededRandom(11);
    const word = (): string => `w${Math.floor(random() ** 2 * 300)}`;
    const doc = (id: number): string[][] => [
      [word(), word(), `u${id}`],
      Array.from({ length: 2 + Math.floor(random() * 8) }, word),
    ];
    const index = new Bm25Index([2, 1]);
    const live = new Map<number, string[][]>();
    let next = 0;
    for (; next < 1_000; next++) {
      const fields = doc(next);
      index.add(next, fields);
      live.set(next, fields);
    }
    index.seal();
    const queries = [['w0'], ['w1', 'w7'], ['w150', 'u5', 'w3'], ['u999', 'w299'], ['absent', 'w12']];
    let compared = 0;
    for (let step = 0; step < 2_400; step++) {
      // Mostly single adds, then mostly removals: the delta fills, merges, and removed documents
      // pile up until a rebuild drops them.
      const removing = step < 1_200 ? random() < 0.3 : random() < 0.8;
      if (removing && live.size > 0) {
        const ids = [...live.keys()];
        const id = ids[Math.floor(random() * ids.length)]!;
        index.remove(id);
        live.delete(id);
      } else {
        const fields = doc(next);
        index.add(next, fields);
        live.set(next++, fields);
      }
      if (step % 40 === 0) {
        expect(snapshot(index, queries), `step ${step}`).toBe(snapshot(fresh(live), queries));
        compared++;
      }
    }
    expect(compared).toBe(60);
    expect(index.size).toBe(live.size);
  });

  it('forgets terms no document holds after many removals, and scores the rest as a fresh build', () => {
    const index = new Bm25Index([2, 1]);
    const live = new Map<number, string[][]>();
    // Each document has a term of its own: removing most of them leaves thousands of dead terms.
    for (let id = 0; id < 12_000; id++) {
      const fields = [[`only${id}`, `group${id % 50}`], [`group${id % 7}`]];
      index.add(id, fields);
      live.set(id, fields);
    }
    const queries = [['group3'], ['only11999', 'group1'], ['only5', 'group6'], ['only12']];
    index.score(['group3'], OPTIONS);
    for (let id = 0; id < 12_000; id++) {
      if (id % 10 === 0) continue;
      index.remove(id);
      live.delete(id);
    }
    expect(index.documentFrequency('only5')).toBe(0);
    expect(index.documentFrequency('only10')).toBe(1);
    const holding = [...live.values()].filter((fields) => fields.flat().includes('group3')).length;
    expect(holding).toBeGreaterThan(100);
    expect(index.documentFrequency('group3')).toBe(holding);
    expect(snapshot(index, queries)).toBe(snapshot(fresh(live), queries));
    const counts: string[] = [];
    index.termCounts(10, [2, 1], (term, count) => counts.push(`${term}=${count}`));
    expect(counts).toEqual(['only10=2', 'group10=2', 'group3=1']);
    expect(index.fieldsContaining(10, 'group3')).toEqual([1]);
    // New documents after the renumbering get terms of their own again.
    index.add(20_000, [['only5', 'fresh'], []]);
    live.set(20_000, [['only5', 'fresh'], []]);
    expect(snapshot(index, [...queries, ['fresh']])).toBe(snapshot(fresh(live), [...queries, ['fresh']]));
  });
});
