import { describe, expect, it } from 'vitest';
import { isCodecallError } from '../../../src/errors.js';
import { ToolGraph, transitionsOf } from '../../../src/search/tool-graph.js';

describe('transitionsOf', () => {
  it('collapses repeats and counts a transition once per run', () => {
    expect(transitionsOf(['a', 'a', 'b', 'a', 'b', 'c'])).toEqual([
      ['a', 'b'],
      ['b', 'a'],
      ['b', 'c'],
    ]);
  });

  it('skips invalid names and bounds the run', () => {
    expect(transitionsOf(['a', 7 as never, 'b', '', 'c'])).toEqual([]);
    expect(transitionsOf(['a', 'b', 'c', 'd'], 2)).toEqual([['a', 'b']]);
  });
});

describe('ToolGraph', () => {
  it('derives probabilities from counts on read', () => {
    const graph = new ToolGraph();
    graph.record(['a', 'b']);
    graph.record(['a', 'b']);
    graph.record(['a', 'c']);
    expect(graph.count('a', 'b') / graph.outTotal('a')).toBeCloseTo(2 / 3);
    expect(graph.inTotal('b')).toBe(2);
    expect([...graph.predecessors('c')]).toEqual([['a', 1]]);
    expect(graph.sequences).toBe(3);
  });

  it('round-trips its state and merges loaded counts', () => {
    const graph = new ToolGraph();
    graph.record(['a', 'b', 'c']);
    const copy = new ToolGraph();
    copy.load(graph.toState());
    copy.load(graph.toState());
    expect(copy.count('b', 'c')).toBe(2);
    expect(copy.sequences).toBe(2);
  });

  it('rejects malformed state with the failing field', () => {
    const graph = new ToolGraph();
    for (const state of [
      null,
      { version: 1 },
      { version: 1, sequences: -1, transitions: [] },
      { version: 1, transitions: [['a', 'b', 1.5]] },
    ]) {
      try {
        graph.load(state);
        expect.unreachable();
      } catch (error) {
        expect(isCodecallError(error) && error.code).toBe('INVALID_ARGUMENT');
      }
    }
  });
});
