import { describe, expect, it } from 'vitest';
import { isCodecallError } from '../../../src/errors.js';
import {
  createToolSearch,
  type SearchableTool,
  type SearchOptions,
} from '../../../src/search/tool-search.js';
import { CATALOG, NAMES } from './catalog.js';

function names(hits: { name: string }[]): string[] {
  return hits.map((h) => h.name);
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isCodecallError(error) ? error.code : `not a CodecallError: ${String(error)}`;
  }
  return undefined;
}

describe('createToolSearch: lexical search', () => {
  const search = createToolSearch({ tools: CATALOG });

  it('answers a sentence, keywords and a tool name', () => {
    expect(search.search('What will the weather be like in Paris tomorrow?')[0]!.name).toBe(
      'weather.get_forecast',
    );
    expect(search.search('send chat message')[0]!.name).toBe('chat.send_message');
    expect(search.search('get_budget_by_level')[0]!.name).toBe('finance.get_budget_by_level');
    expect(search.search('finance.get_expenses')[0]!.name).toBe('finance.get_expenses');
    expect(search.search('getTeamMembers')[0]!.name).toBe('hr.get_team_members');
  });

  it('stems: "expenses" finds "Expense"', () => {
    expect(search.search('expenses')[0]!.name).toBe('finance.get_expenses');
  });

  it('explains lexical matches with the query word and the field', () => {
    const [hit] = search.search('Which expenses did the employee file?', { mode: 'bm25' });
    expect(hit!.name).toBe('finance.get_expenses');
    expect(hit!.reasons.join(' | ')).toMatch(/matches .*'expenses' in name/);
    expect(hit!.reasons.join(' | ')).toMatch(/'employee'.* in description/);
  });

  it('marks exact tool names', () => {
    const [hit] = search.search('chat.send_message');
    expect(hit!.reasons).toContain('exact tool name');
    expect(search.search('send_message')[0]!.reasons).toContain('exact tool name');
  });

  it('honours limit and returns nothing for stop words only', () => {
    expect(search.search('file', { limit: 2 })).toHaveLength(2);
    expect(search.search('what can you do for me')).toEqual([]);
  });

  it('rejects empty queries and bad options with codes', () => {
    expect(codeOf(() => search.search('   '))).toBe('SEARCH_INVALID_QUERY');
    expect(codeOf(() => search.search('x', { limit: 0 }))).toBe('INVALID_ARGUMENT');
    expect(codeOf(() => search.search('x', { beamWidth: -1 }))).toBe('INVALID_ARGUMENT');
    expect(codeOf(() => search.search('x', { mode: 'fuzzy' as never }))).toBe('INVALID_ARGUMENT');
  });

  it('scores are sorted and limited to the catalog', () => {
    const hits = search.search('file text disk channel', { limit: 50 });
    expect(hits.length).toBeGreaterThan(2);
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
    for (const h of hits) expect(NAMES).toContain(h.name);
  });
});

describe('createToolSearch: regex mode', () => {
  const search = createToolSearch({ tools: CATALOG });

  it('tests the pattern against names, descriptions and argument names', () => {
    expect(names(search.search('get_.*', { mode: 'regex' })).sort()).toEqual(
      [
        'finance.get_budget_by_level',
        'finance.get_expenses',
        'hr.get_team_members',
        'weather.get_forecast',
      ].sort(),
    );
    const byArgument = search.search('channel_id', { mode: 'regex' });
    expect(names(byArgument)).toContain('chat.send_message');
    expect(byArgument.find((h) => h.name === 'chat.send_message')!.reasons[0]).toMatch(/argument names/);
  });

  it('is case sensitive unless the pattern starts with (?i)', () => {
    expect(search.search('WEATHER', { mode: 'regex' })).toEqual([]);
    expect(names(search.search('(?i)WEATHER', { mode: 'regex' }))).toEqual(['weather.get_forecast']);
  });

  it('ranks name matches above description matches', () => {
    const hits = search.search('file', { mode: 'regex' });
    expect(hits[0]!.reasons[0]).toMatch(/name/);
  });

  it('turns bad patterns into SEARCH_INVALID_QUERY', () => {
    expect(codeOf(() => search.search('(unclosed', { mode: 'regex' }))).toBe('SEARCH_INVALID_QUERY');
    expect(codeOf(() => search.search('(a)\\1', { mode: 'regex' }))).toBe('SEARCH_INVALID_QUERY');
    expect(codeOf(() => search.search('x'.repeat(201), { mode: 'regex' }))).toBe('SEARCH_INVALID_QUERY');
  });
});

describe('createToolSearch: the tool graph', () => {
  it('pulls in the successors of a lexical hit once usage is recorded', () => {
    // RM3 off: BM25 alone must miss the successor for the graph to be what brings it in.
    const search = createToolSearch({ tools: CATALOG, expansionDocs: 0 });
    const query = 'members of the platform team';
    expect(names(search.search(query, { limit: 3, mode: 'bm25' }))).not.toContain('finance.get_expenses');
    for (let i = 0; i < 40; i++) {
      search.recordSequence(['hr.get_team_members', 'finance.get_expenses', 'finance.get_budget_by_level']);
    }
    for (let i = 0; i < 10; i++) search.recordSequence(['hr.get_team_members', 'weather.get_forecast']);
    const after = search.search(query, { limit: 3 });
    expect(names(after)).toEqual([
      'hr.get_team_members',
      'finance.get_expenses',
      'finance.get_budget_by_level',
    ]);
    const expenses = after.find((h) => h.name === 'finance.get_expenses')!;
    expect(expenses.reasons).toContain('called after hr.get_team_members 40 of 50 times');
    expect(after[2]!.reasons.join(' ')).toMatch(/called after finance.get_expenses 40 of 40 times/);
  });

  it('returns the likely chain in call order, predecessors included', () => {
    const search = createToolSearch({ tools: CATALOG });
    for (let i = 0; i < 20; i++) search.recordSequence(['chat.list_channels', 'chat.send_message']);
    const { chains } = search.searchDetailed('send a message');
    expect(chains[0]!.tools).toEqual(['chat.list_channels', 'chat.send_message']);
    expect(chains[0]!.reasons[0]).toBe('called before chat.send_message 20 of 20 times');
  });

  it('scales graph influence with the evidence behind an edge', () => {
    const lightly = createToolSearch({ tools: CATALOG, inferredEdgeShare: 0 });
    const heavily = createToolSearch({ tools: CATALOG, inferredEdgeShare: 0 });
    for (let i = 0; i < 2; i++) lightly.recordSequence(['weather.get_forecast', 'files.write_file']);
    for (let i = 0; i < 30; i++) heavily.recordSequence(['weather.get_forecast', 'files.write_file']);
    const score = (s: typeof lightly): number =>
      s.search('weather forecast', { limit: 10 }).find((h) => h.name === 'files.write_file')?.score ?? 0;
    expect(score(lightly)).toBeGreaterThan(0);
    expect(score(heavily)).toBeGreaterThan(2 * score(lightly));
  });

  it('does not count a transition seen once as structure', () => {
    // RM3 off: it shapes the cold-start ranking only, and the first run would switch it off.
    const search = createToolSearch({ tools: CATALOG, inferredEdgeShare: 0, expansionDocs: 0 });
    const query = 'weather forecast';
    const before = search.search(query);
    for (const other of NAMES)
      if (other !== 'weather.get_forecast') search.recordSequence(['weather.get_forecast', other]);
    expect(search.search(query)).toEqual(before);
  });

  it('does not reorder lexical hits when usage has no structure', () => {
    const search = createToolSearch({ tools: CATALOG });
    const query = 'read a text file from disk';
    const before = names(search.search(query, { limit: 2 }));
    // Every tool followed by every other tool, equally often: no edge carries information.
    for (let round = 0; round < 20; round++) {
      for (const a of NAMES) for (const b of NAMES) if (a !== b) search.recordSequence([a, b]);
    }
    expect(names(search.search(query, { limit: 2 }))).toEqual(before);
  });

  it('infers cold-start edges from the schemas, below observed usage', () => {
    const search = createToolSearch({ tools: CATALOG, inferredEdgeShare: 0.25 });
    const inferred = search.graphEdges({ includeInferred: true });
    const link = inferred.find((e) => e.from === 'hr.get_team_members' && e.to === 'finance.get_expenses');
    expect(link).toMatchObject({ kind: 'inferred', count: 0 });
    expect(link!.reason).toMatch(/employeeid/);
    const mention = inferred.find((e) => e.from === 'chat.list_channels' && e.to === 'chat.send_message');
    expect(mention?.kind).toBe('inferred');
    expect(search.graphEdges()).toEqual([]);
    search.recordSequence(['hr.get_team_members', 'finance.get_budget_by_level']);
    search.recordSequence(['hr.get_team_members', 'finance.get_budget_by_level']);
    const [observed] = search.graphEdges();
    expect(observed).toMatchObject({
      from: 'hr.get_team_members',
      to: 'finance.get_budget_by_level',
      count: 2,
      probability: 1,
      kind: 'observed',
    });
    expect(observed!.weight).toBeGreaterThan(link!.weight);
  });

  it('walks schema-inferred edges before any usage is recorded', () => {
    // No run recorded: the graph is empty, yet the inferred edges alone bring the next step in.
    const search = createToolSearch({ tools: CATALOG, inferredEdgeShare: 0.25 });
    const result = search.searchDetailed('members of my team', { limit: 10 });
    const hit = result.hits.find((h) => h.name === 'finance.get_expenses');
    expect(hit?.reasons.join(' ')).toMatch(/may follow hr\.get_team_members/);
    expect(result.chains.map((c) => c.tools)).toContainEqual(['hr.get_team_members', 'finance.get_expenses']);
  });

  it('walks the graph as it is after each run, catalog change and per-query option', () => {
    // The walk keeps neighbour lists between queries: each change must reach the next query.
    const search = createToolSearch({ tools: CATALOG });
    const credited = (options: SearchOptions = {}): string[] =>
      search
        .search('read a file', { limit: 10, ...options })
        .filter((h) => h.reasons.some((r) => r.startsWith('called after files.read_file')))
        .map((h) => h.name)
        .sort();
    for (let i = 0; i < 3; i++) search.recordSequence(['files.read_file', 'files.write_file']);
    expect(credited()).toEqual(['files.write_file']);
    for (let i = 0; i < 3; i++) search.recordSequence(['files.read_file', 'chat.send_message']);
    search.recordSequence(['files.read_file', 'hr.get_team_members']);
    expect(credited()).toEqual(['chat.send_message', 'files.write_file']);
    // Seen once: no weight under the default discount (δ = 1), some with δ = 0 for this query.
    expect(credited({ edgeDiscount: 0 })).toEqual([
      'chat.send_message',
      'files.write_file',
      'hr.get_team_members',
    ]);
    search.removeTools(['files.write_file']);
    expect(credited()).toEqual(['chat.send_message']);
  });

  it('filters edges by minCount and uses the count formula for probabilities', () => {
    const search = createToolSearch({ tools: CATALOG });
    for (let i = 0; i < 3; i++) search.recordSequence(['files.read_file', 'files.write_file']);
    search.recordSequence(['files.read_file', 'chat.send_message']);
    const edges = search.graphEdges();
    expect(edges.map((e) => [e.to, e.count, e.probability])).toEqual([
      ['files.write_file', 3, 0.75],
      ['chat.send_message', 1, 0.25],
    ]);
    expect(search.graphEdges({ minCount: 2 }).map((e) => e.to)).toEqual(['files.write_file']);
  });
});

describe('createToolSearch: catalog changes and state', () => {
  it('adds and removes tools incrementally, same ranking as a fresh index', () => {
    const half = CATALOG.slice(0, 4);
    const incremental = createToolSearch({ tools: half });
    incremental.addTools(CATALOG.slice(4));
    incremental.addTools([{ name: 'tmp.delete_file', description: 'Delete a file from disk' }]);
    incremental.removeTools(['tmp.delete_file', 'not.there']);
    const fresh = createToolSearch({ tools: CATALOG });
    for (const q of ['write a file', 'expenses of the team', 'channel message', 'rain in Oslo']) {
      expect(incremental.search(q)).toEqual(fresh.search(q));
    }
    expect(incremental.size).toBe(CATALOG.length);
    expect(incremental.toolNames()).toEqual([...NAMES].sort());
  });

  it('replaces a tool on re-add (list_changed) and forgets removed tools', () => {
    const search = createToolSearch({ tools: CATALOG });
    search.addTools([{ name: 'weather.get_forecast', description: 'Tide tables for a harbour' }]);
    expect(search.search('tide harbour')[0]!.name).toBe('weather.get_forecast');
    expect(search.search('temperature rain wind')).toEqual([]);
    search.removeTools(['weather.get_forecast']);
    expect(search.has('weather.get_forecast')).toBe(false);
    expect(search.search('tide harbour')).toEqual([]);
  });

  it('keeps learned counts across removal and return of a server', () => {
    const search = createToolSearch({ tools: CATALOG });
    for (let i = 0; i < 10; i++)
      search.recordSequence(['hr.get_team_members', 'finance.get_budget_by_level']);
    const budget = CATALOG.find((t) => t.name === 'finance.get_budget_by_level')!;
    search.removeTools([budget.name]);
    expect(names(search.search('team members'))).not.toContain(budget.name);
    search.addTools([budget]);
    expect(names(search.search('team members', { limit: 2 }))).toContain(budget.name);
  });

  it('serializes and restores the learned graph', () => {
    const search = createToolSearch({ tools: CATALOG });
    for (let i = 0; i < 5; i++)
      search.recordSequence(['chat.list_channels', 'chat.send_message', 'files.write_file']);
    const state = JSON.parse(JSON.stringify(search.serialize()));
    expect(state).toMatchObject({ version: 1, sequences: 5 });
    const restored = createToolSearch({ tools: CATALOG, state });
    expect(restored.search('list chat channels')).toEqual(search.search('list chat channels'));
    expect(restored.serialize()).toEqual(search.serialize());
  });

  it('rejects broken state and tools with named fields', () => {
    expect(codeOf(() => createToolSearch({ tools: CATALOG, state: { version: 2 } as never }))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(
      codeOf(() =>
        createToolSearch({
          tools: CATALOG,
          state: { version: 1, sequences: 1, transitions: [['a', 'b', -1]] },
        }),
      ),
    ).toBe('INVALID_ARGUMENT');
    expect(codeOf(() => createToolSearch({ tools: [{ name: '' }] }))).toBe('INVALID_ARGUMENT');
    expect(codeOf(() => createToolSearch({ tools: 'nope' as never }))).toBe('INVALID_ARGUMENT');
    expect(codeOf(() => createToolSearch({ tools: [], graphWeight: Number.NaN }))).toBe('INVALID_ARGUMENT');
  });

  it('survives hostile tool descriptors from untrusted servers', () => {
    const hostile = [
      { name: 'x.a', description: 42, inputSchema: { properties: 'nope' } },
      {
        name: 'x.b',
        description: 'ok '.repeat(100_000),
        inputSchema: { properties: { p: null, q: { description: 7 } } },
      },
      {
        name: 'x.c',
        inputSchema: [] as never,
        outputSchema: { properties: { deep: { properties: { deeper: { properties: { deepest: {} } } } } } },
      },
      { name: 'x.d', description: '\u0000\uffff (?:', server: 'x' },
    ] as unknown as SearchableTool[];
    const search = createToolSearch({ tools: hostile });
    expect(search.size).toBe(4);
    expect(names(search.search('ok', { expansionDocs: 0 }))).toEqual(['x.b']);
    expect(names(search.search('ok'))[0]).toBe('x.b');
    expect(search.search('deep', { mode: 'regex' }).length).toBe(0);
    search.recordSequence(['x.a', 42 as never, 'x.b']);
    expect(() => search.searchDetailed('ok')).not.toThrow();
  });
});
