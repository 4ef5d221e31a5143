/**
 * @module
 * The opt-in lexical variants of tool search: Porter or no stemming, verb normalization, RM3
 * pseudo-relevance feedback, and BM25F field weights learned by grid search on training queries.
 */
import { describe, expect, it } from 'vitest';
import { isCodecallError } from '../../../src/errors.js';
import { Bm25Index } from '../../../src/search/bm25.js';
import { evaluateSearch, learnFieldWeights, type EvalQuery } from '../../../src/search/evaluate-search.js';
import { tokenize } from '../../../src/search/tokenize.js';
import { createToolSearch, type SearchableTool } from '../../../src/search/tool-search.js';
import { CATALOG } from './catalog.js';

describe('tokenize: stemming and verb normalization', () => {
  it('stems with the light stemmer by default, Porter or none when asked', () => {
    expect(tokenize('generalization')).toEqual(['generalizate']);
    expect(tokenize('generalization', { stemming: 'porter' })).toEqual(['gener']);
    expect(tokenize('generalization', { stemming: 'none' })).toEqual(['generalization']);
    expect(tokenize('connected connections', { stemming: 'porter' })).toEqual(['connect', 'connect']);
    expect(tokenize('connected connections', { stemming: 'none' })).toEqual(['connected', 'connections']);
  });

  it('maps the verbs of one class onto one term, in every inflection, only when asked', () => {
    const make = ['make a chart', 'made charts', 'generating a chart', 'Create chart', 'generate_chart'];
    for (const text of make) expect(tokenize(text, { verbNormalization: true })).toEqual(['creat', 'chart']);
    expect(tokenize('fetch users', { verbNormalization: true })).toEqual(
      tokenize('list users', { verbNormalization: true }),
    );
    expect(tokenize('removing files', { verbNormalization: true })).toEqual(['delet', 'file']);
    // Off by default, and under another stemmer the class maps onto that stemmer's term.
    expect(tokenize('make a chart')).toEqual(['make', 'chart']);
    expect(tokenize('made generated', { verbNormalization: true, stemming: 'porter' })).toEqual([
      'creat',
      'creat',
    ]);
    // Words outside the classes are untouched.
    expect(tokenize('makeup constructor', { verbNormalization: true })).toEqual(['makeup', 'constructor']);
  });
});

const CHARTS: SearchableTool[] = [
  { name: 'viz.generate_word_cloud_chart', description: 'Generates a word cloud chart from text.' },
  { name: 'viz.chart_theme', description: 'Chart colour themes and palettes for charts.' },
  { name: 'files.remove_file', description: 'Removes a file from the disk.' },
  { name: 'files.make_folder', description: 'Makes a folder.' },
];

describe('createToolSearch: lexical variants', () => {
  it('verb normalization lets the verb users say meet the verb the tool is named with', () => {
    const plain = createToolSearch({ tools: CHARTS, expansionDocs: 0 });
    const verbs = createToolSearch({ tools: CHARTS, verbNormalization: true, expansionDocs: 0 });
    const names = (search: typeof plain, query: string): string[] => search.search(query).map((h) => h.name);
    expect(names(plain, 'make')).toEqual(['files.make_folder']);
    expect(names(verbs, 'make').sort()).toEqual(['files.make_folder', 'viz.generate_word_cloud_chart']);
    expect(names(plain, 'delete')).toEqual([]);
    expect(names(verbs, 'delete')).toEqual(['files.remove_file']);
    expect(verbs.search('delete')[0]!.reasons[0]).toMatch(/'delete' in name/);
  });

  it('stemming applies to the index and the queries alike', () => {
    const tools: SearchableTool[] = [
      { name: 'jobs.status', description: 'Status of running jobs.' },
      { name: 'jobs.connections', description: 'Open connections.' },
    ];
    const names = (options: object, query: string): string[] =>
      createToolSearch({ tools, expansionDocs: 0, ...options })
        .search(query)
        .map((h) => h.name);
    expect(names({}, 'run')).toEqual(['jobs.status']);
    expect(names({ stemming: 'none' }, 'run')).toEqual([]);
    expect(names({ stemming: 'none' }, 'running')).toEqual(['jobs.status']);
    // Porter reduces "connect" and "connections" to one term; the light stemmer does not.
    expect(names({ stemming: 'porter' }, 'connect')).toEqual(['jobs.connections']);
    expect(names({}, 'connect')).toEqual([]);
  });

  it('rejects unknown stemming and non-boolean verb normalization, naming the option', () => {
    for (const bad of [{ stemming: 'snowball' }, { verbNormalization: 'yes' }]) {
      let error: unknown;
      try {
        createToolSearch({ tools: CATALOG, ...(bad as object) });
      } catch (e) {
        error = e;
      }
      expect(isCodecallError(error) && error.code === 'INVALID_ARGUMENT').toBe(true);
      expect((error as Error).message).toContain(Object.keys(bad)[0]!);
    }
  });
});

const RM3_TOOLS: SearchableTool[] = [
  { name: 'weather.current', description: 'Current weather: temperature, humidity, wind and forecast.' },
  { name: 'weather.alerts', description: 'Severe weather alerts: wind, temperature and humidity.' },
  { name: 'weather.radar', description: 'Weather radar maps of wind, temperature and humidity.' },
  { name: 'music.weather_playlist', description: 'Songs for sunny days.' },
  {
    name: 'climate.records',
    description: 'Historical humidity, temperature and wind records from the weather archive.',
  },
];
const CLIMATE = 'climate.records';
const PLAYLIST = 'music.weather_playlist';

/** True when the climate tool (sharing the top hits' other words) outranks the playlist (sharing only "weather"). */
function climateFirst(names: readonly string[]): boolean {
  return names.indexOf(CLIMATE) >= 0 && names.indexOf(CLIMATE) < names.indexOf(PLAYLIST);
}

describe('RM3 pseudo-relevance feedback', () => {
  it('expands the query with the terms of the top hits and re-scores the hits', () => {
    const search = createToolSearch({ tools: RM3_TOOLS, expansionWeight: 0.5 });
    // "weather" alone: the playlist has it in its name, the climate tool only in its description.
    const plain = search.search('weather', { mode: 'bm25', expansionDocs: 0 }).map((h) => h.name);
    expect(plain.slice(0, 3).sort()).toEqual(['weather.alerts', 'weather.current', 'weather.radar']);
    expect(climateFirst(plain)).toBe(false);
    const expanded = search.search('weather', { mode: 'bm25', expansionDocs: 2 }).map((h) => h.name);
    expect(expanded.slice(0, 3).sort()).toEqual(['weather.alerts', 'weather.current', 'weather.radar']);
    expect(climateFirst(expanded)).toBe(true);
    // Only the best first-pass hits are re-scored: with the top 3 alone, the climate tool stays put.
    const narrow = search
      .search('weather', { mode: 'bm25', expansionDocs: 2, expansionRerankDocs: 3 })
      .map((h) => h.name);
    expect(climateFirst(narrow)).toBe(false);
  });

  it('is on by default for queries without learned feedback, and always in bm25 mode', () => {
    const names = (search: ReturnType<typeof createToolSearch>, mode: 'bm25' | 'hybrid'): string[] =>
      search.search('weather', { mode, expansionDocs: 2, expansionWeight: 0.5 }).map((h) => h.name);
    const afterUse = createToolSearch({ tools: RM3_TOOLS });
    expect(climateFirst(names(afterUse, 'hybrid'))).toBe(true);
    for (let i = 0; i < 3; i++) afterUse.recordUsage({ query: 'weather', tools: ['weather.alerts'] });
    expect(climateFirst(names(afterUse, 'hybrid'))).toBe(false);
    expect(climateFirst(names(afterUse, 'bm25'))).toBe(true);
    // Runs without a query (codecall exec) teach the graph, not feedback: "weather" still expands.
    const afterRun = createToolSearch({ tools: RM3_TOOLS });
    afterRun.recordSequence(['music.weather_playlist', 'weather.alerts']);
    expect(climateFirst(names(afterRun, 'hybrid'))).toBe(true);
    // The tested default setting expands too.
    const fresh = createToolSearch({ tools: RM3_TOOLS });
    const scores = (options: object): number[] => fresh.search('weather', options).map((h) => h.score);
    expect(scores({})).not.toEqual(scores({ expansionDocs: 0 }));
    expect(scores({})).toEqual(scores({ expansionDocs: 3, expansionTerms: 10, expansionWeight: 0.2 }));
  });

  it('expansionWhen: always, or for queries without learned feedback', () => {
    const search = createToolSearch({ tools: RM3_TOOLS, expansionDocs: 2, expansionWeight: 0.5 });
    for (let i = 0; i < 3; i++) search.recordUsage({ query: 'weather', tools: ['weather.alerts'] });
    const names = (query: string, expansionWhen: 'always' | 'no-feedback' | 'cold-start'): string[] =>
      search.search(query, { expansionWhen }).map((h) => h.name);
    expect(climateFirst(names('weather', 'always'))).toBe(true);
    expect(climateFirst(names('weather', 'no-feedback'))).toBe(false);
    // Feedback learned for another word only: "weather" has none, so no-feedback expands it.
    const other = createToolSearch({ tools: RM3_TOOLS, expansionDocs: 2, expansionWeight: 0.5 });
    for (let i = 0; i < 3; i++) other.recordUsage({ query: 'songs', tools: [PLAYLIST] });
    const otherNames = (expansionWhen: 'no-feedback' | 'cold-start'): string[] =>
      other.search('weather', { expansionWhen }).map((h) => h.name);
    expect(climateFirst(otherNames('no-feedback'))).toBe(true);
    expect(climateFirst(otherNames('cold-start'))).toBe(false);
  });

  it('re-scores candidates with weighted terms, and only them', () => {
    const index = new Bm25Index([1]);
    index.add(0, [['weather', 'wind']]);
    index.add(1, [['wind']]);
    index.add(2, [['wind', 'music']]);
    // Scores are read before the next call (the index reuses its arrays).
    const windOnly = index.score(['wind'], { k1: 1.2, b: 0.75 });
    const [wind0, wind1] = [windOnly.scores[0]!, windOnly.scores[1]!];
    const first = index.score(['weather', 'wind'], { k1: 1.2, b: 0.75 });
    const [both0, both2] = [first.scores[0]!, first.scores[2]!];
    index.addToCandidates(
      [0, 1],
      new Map([
        ['wind', 0.5],
        ['weather', 2],
        ['absent', 9],
      ]),
      { k1: 1.2, b: 0.75 },
    );
    expect(first.scores[0]).toBeCloseTo(both0 + 0.5 * wind0 + 2 * (both0 - wind0));
    expect(first.scores[1]).toBeCloseTo(wind1 + 0.5 * wind1);
    expect(first.scores[2]).toBe(both2); // not a candidate
  });

  it('checks its options', () => {
    const search = createToolSearch({ tools: RM3_TOOLS });
    expect(() => search.search('weather', { expansionWhen: 'sometimes' as never })).toThrow(/expansionWhen/);
    expect(() => search.search('weather', { expansionWeight: 2 })).toThrow(/expansionWeight/);
    expect(() => search.search('weather', { expansionTerms: 0 })).toThrow(/expansionTerms/);
  });
});

describe('learned field weights', () => {
  // Queries that name a tool's parameters: the parameter-name field carries the signal, and the
  // description of a decoy repeats the query words.
  const tools: SearchableTool[] = [
    {
      name: 'a.lookup',
      description: 'Look things up.',
      inputSchema: { type: 'object', properties: { zip_code: {}, street: {} } },
    },
    { name: 'b.decoy', description: 'Zip code street zip code street guide.' },
    {
      name: 'c.route',
      description: 'Find a route.',
      inputSchema: { type: 'object', properties: { origin: {}, destination: {} } },
    },
    { name: 'd.decoy', description: 'Origin destination origin destination travel.' },
  ];
  const queries: EvalQuery[] = [
    { id: '1', query: 'zip code street', tools: ['a.lookup'] },
    { id: '2', query: 'origin destination', tools: ['c.route'] },
    { id: '3', query: 'street zip', tools: ['a.lookup'] },
    { id: '4', query: 'destination origin', tools: ['c.route'] },
  ];

  it('grid search raises the weight of the field that ranks the labelled tools first', () => {
    const learned = learnFieldWeights(tools, queries, {}, {}, 1);
    expect(learned.description).toBe(1);
    expect(learned.parameterNames).toBeGreaterThan(1);
    const before = evaluateSearch({ tools, test: queries, ks: [1] }).bm25.ndcg[1]!;
    const after = evaluateSearch({ tools, test: queries, ks: [1], index: { fieldWeights: learned } }).bm25
      .ndcg[1]!;
    expect(before).toBeLessThan(1);
    expect(after).toBe(1);
  });

  it('learns per fold from the training folds only, and reports the weights', () => {
    const result = evaluateSearch({ tools, test: queries, ks: [1], folds: 2, learnFieldWeights: true });
    expect(result.learnedFieldWeights).toHaveLength(2);
    expect(result.bm25.ndcg[1]).toBe(1);
    const fixed = evaluateSearch({ tools, test: queries, ks: [1], folds: 2 });
    expect(fixed.learnedFieldWeights).toBeUndefined();
    expect(fixed.bm25.ndcg[1]).toBeLessThan(1);
  });
});
