/**
 * @module
 * A BM25F field weighted 0 does not count: a term found only there is no match (before, such a
 * document was a hit scored 0/0 = NaN, which broke sorting and serialised as `null`).
 */
import { describe, expect, it } from 'vitest';
import { createToolSearch, type SearchableTool } from '../../../src/search/tool-search.js';

const TOOLS: SearchableTool[] = [
  { name: 'get_weather', description: 'Current conditions for a city' },
  { name: 'weather_week', description: 'The weather of the next seven days' },
  { name: 'send_email', description: 'Send a message to someone' },
];

describe('field weights of 0', () => {
  it('a term found only in a field weighted 0 matches nothing, in every mode', () => {
    const search = createToolSearch({
      tools: TOOLS.slice(0, 1).concat(TOOLS[2]!),
      fieldWeights: { name: 0 },
    });
    expect(search.search('weather')).toEqual([]);
    expect(search.search('weather', { mode: 'bm25' })).toEqual([]);
    expect(search.searchDetailed('weather').hits).toEqual([]);
  });

  it('ranks by the fields that count, with finite scores and reasons from them', () => {
    const search = createToolSearch({ tools: TOOLS, fieldWeights: { name: 0 } });
    const hits = search.searchDetailed('weather').hits;
    expect(hits.map((hit) => hit.name)).toEqual(['weather_week']);
    expect(hits[0]!.score).toBe(1);
    expect(hits[0]!.reasons.join(' ')).toContain('description');
    // The same catalog with every field counted finds both.
    const all = createToolSearch({ tools: TOOLS }).search('weather');
    expect(all.map((hit) => hit.name).sort()).toEqual(['get_weather', 'weather_week']);
    expect(all.every((hit) => Number.isFinite(hit.score))).toBe(true);
  });
});
