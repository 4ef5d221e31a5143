/**
 * NameIndex: "did you mean" over thousands of names, cheap and bounded.
 */
import { describe, expect, it } from 'vitest';
import { editDistance, MAX_SUGGESTION_NAME_CHARS, NameIndex } from '../../../src/util/edit-distance.js';
import { withThreadCpu } from '../../fixtures/thread-cpu.js';

const VERBS = ['list', 'get', 'update', 'delete'];
const names = Array.from({ length: 5_000 }, (_, i) => `server_${i % 7}.tool_${i}_${VERBS[i % 4]}_record`);

describe('NameIndex', () => {
  it('suggests the closest names, containing matches first', () => {
    const index = new NameIndex(names);
    expect(index.closest('server_1.tool_8_lst_record')[0]).toBe('server_1.tool_8_list_record');
    expect(index.closest('SERVER_1.TOOL_8_LIST_RECORD', { limit: 1 })).toEqual([
      'server_1.tool_8_list_record',
    ]);
    expect(index.closest('tool_8_list_record', { limit: 1 })).toEqual(['server_1.tool_8_list_record']);
    expect(index.closest('completely_unrelated_name')).toEqual([]);
    for (const found of index.closest('server_1.tool_8_lst_record')) {
      expect(editDistance('server_1.tool_8_lst_record', found)).toBeLessThanOrEqual(6);
    }
  });

  it('compares the names sharing the most trigrams, and of a tie that does not fit, the first listed', () => {
    // One candidate compared: the name sharing every trigram wins over names listed before it.
    const most = new NameIndex(['tool_beta', 'tool_alpha_2', 'tool_gamma', 'tool_alpha'], {
      maxCandidates: 1,
    });
    expect(most.closest('tool_alpha')).toEqual(['tool_alpha']);
    // Three names share as many trigrams and one fits: the first listed is compared.
    const tie = new NameIndex(['x_other', 'tool_alphc', 'tool_alphb', 'tool_alpha'], { maxCandidates: 1 });
    expect(tie.closest('tool_alph')).toEqual(['tool_alphc']);
    // A group that fits is taken whole, and a group sharing fewer trigrams is not compared.
    const groups = new NameIndex(['tool_alphc', 'tool_al', 'tool_alphb'], { maxCandidates: 2 });
    expect(groups.closest('tool_alphz')).toEqual(['tool_alphc', 'tool_alphb']);
    const all = new NameIndex(['tool_alphc', 'tool_al', 'tool_alphb'], { maxCandidates: 3 });
    expect(all.closest('tool_alphz')).toEqual(['tool_alphc', 'tool_al', 'tool_alphb']);
  });

  it('answers thousands of lookups over 5,000 names in well under the cost of full scans', () => {
    const index = new NameIndex(names);
    const queries = Array.from({ length: 1_000 }, (_, i) => `server_${i % 7}.tool_${i * 5}_lst_record`);
    // Warmed up first (a cold JIT is not what is compared); then CPU time of this thread, which
    // other processes on the cores do not inflate.
    for (const query of queries.slice(0, 100)) index.closest(query);
    for (const query of queries.slice(0, 2)) for (const name of names) editDistance(query, name);
    const indexed = withThreadCpu(() => {
      for (const query of queries) index.closest(query);
    });
    // The floor it replaces, measured in the same run: a full edit-distance scan per lookup (for 20
    // lookups). A lookup that scanned every name would cost about as much; the index costs a few
    // times less even on a busy machine (the margin is the index's, not the clock's).
    const scan = withThreadCpu(() => {
      for (const query of queries.slice(0, 20)) for (const name of names) editDistance(query, name);
    });
    expect(indexed.cpuMs / queries.length).toBeLessThan(scan.cpuMs / 20 / 3);
  });

  it('gives no suggestion for names over the length bound, without comparing them', () => {
    const index = new NameIndex(names);
    const huge = `server_1.tool_8_list_record${'x'.repeat(10_000_000)}`;
    const { value, cpuMs } = withThreadCpu(() => [
      index.closest(huge),
      index.closest('x'.repeat(MAX_SUGGESTION_NAME_CHARS + 1)),
    ]);
    expect(value).toEqual([[], []]);
    // Comparing a 10-million-character name with 5,000 names takes seconds of CPU.
    expect(cpuMs).toBeLessThan(200);
  });
});
