import { describe, expect, it } from 'vitest';
import { Bm25Index } from '../../../src/search/bm25.js';

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
    incremental.remove(0, [['a', 'a', 'z'], ['z']]);
    incremental.remove(7, [['b', 'x'], ['c']]);
    incremental.remove(42, [['a']]);
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
