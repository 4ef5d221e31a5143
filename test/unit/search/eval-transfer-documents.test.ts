/**
 * @module
 * `node scripts/eval-transfer.ts` (scripts/eval-search/transfer-documents.ts): term associations
 * learned from tool documents, on a self-made catalog; and the leave-one-dataset-out split.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_TUNING,
  expansionWords,
  filterBySupport,
  meetsCriterion,
  supportedVariants,
  trainAssociations,
  trainingSetsFor,
  vocabularyOf,
  type TransferSet,
} from '../../../scripts/eval-search/transfer-documents.js';
import type { SearchableTool } from '../../../src/search/index.js';
import { tokenize } from '../../../src/search/tokenize.js';

/** 200 tools of unrelated words, so that the words below stay under the common-term share. */
const FILLER: SearchableTool[] = Array.from({ length: 200 }, (_, i) => ({
  name: `filler_${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`,
  description: `placeholder${String.fromCharCode(97 + (i % 26))} entry${String.fromCharCode(97 + Math.floor(i / 26))}`,
}));

function catalog(name: string, tools: SearchableTool[], queries: TransferSet['queries'] = []): TransferSet {
  return { name, tools: [...tools, ...FILLER], queries };
}

const WEATHER: SearchableTool[] = [
  { name: 'get_forecast', description: 'Weather forecast for a city, in celsius' },
  { name: 'forecast_week', description: 'Weekly weather forecast' },
  { name: 'rain_forecast', description: 'Chance of rain from the weather forecast' },
  // Seen together twice only: below the minimum count of three.
  { name: 'harbor_tide', description: 'Tide tables of a harbor' },
  { name: 'tide_alerts', description: 'Alerts when the harbor tide is high' },
  // Numbers are no associations.
  { name: 'forecast_2024', description: 'Archived weather forecast 2024' },
  { name: 'forecast_2024_rain', description: 'Rain in 2024, weather forecast' },
  { name: 'forecast_2024_wind', description: 'Wind in 2024, weather forecast' },
];

describe('trainAssociations', () => {
  const model = trainAssociations('cooc', [catalog('docs', WEATHER)], []);

  it('associates words that share tool documents at least the minimum number of times', () => {
    expect(model.related.get('weather')).toContain('forecast');
    expect(model.related.get('forecast')).toContain('weather');
    expect(model.related.get('weather')!.length).toBeLessThanOrEqual(DEFAULT_TUNING.perTerm);
    // Two shared documents are too few.
    expect(model.related.get('harbor') ?? []).not.toContain('tide');
    // A surface word per term, for queries and documents.
    expect(model.surface.get('forecast')).toBe('forecast');
  });

  it('leaves numbers out', () => {
    const loose = trainAssociations('cooc', [catalog('docs', WEATHER)], [], {
      minCount: 2,
      perTerm: 10,
      mutual: false,
    });
    expect(loose.related.get('weather')).toContain('rain');
    expect(loose.related.get('weather')).not.toContain('2024');
  });

  it('keeps only pairs that go both ways when asked', () => {
    const loose = trainAssociations('cooc', [catalog('docs', WEATHER)], [], {
      minCount: 2,
      perTerm: 3,
      mutual: false,
    });
    expect(loose.related.get('harbor')).toContain('tide');
    const mutual = trainAssociations('cooc', [catalog('docs', WEATHER)], [], {
      minCount: 2,
      perTerm: 1,
      mutual: true,
    });
    for (const [a, list] of mutual.related) for (const b of list) expect(mutual.related.get(b)).toContain(a);
    expect(mutual.related.size).toBeGreaterThan(0);
  });

  it('learns query words from labelled queries only for cooc+queries', () => {
    const labelled = catalog('labelled', WEATHER, [
      { query: 'umbrella tomorrow?', tools: ['get_forecast'] },
      { query: 'umbrella needed', tools: ['rain_forecast'] },
      { query: 'umbrella or not', tools: ['forecast_week'] },
    ]);
    expect(trainAssociations('cooc', [labelled], [labelled]).related.has('umbrella')).toBe(false);
    expect(trainAssociations('cooc+queries', [labelled], [labelled]).related.get('umbrella')).toContain(
      'forecast',
    );
  });
});

describe('expansionWords', () => {
  const model = trainAssociations('cooc', [catalog('docs', WEATHER)], []);
  const target = vocabularyOf([
    { name: 'city_forecast', description: 'The forecast of a city' },
    { name: 'city_climate', description: 'Weather normals of a city' },
  ]);

  it('adds associated words the catalog has and the query lacks', () => {
    expect(expansionWords('weather in paris', model, target, false)).toContain('forecast');
    expect(expansionWords('weather forecast in paris', model, target, false)).not.toContain('forecast');
  });

  it('expands only words the catalog lacks when asked', () => {
    // `weather` is in the target catalog: no gap to fill.
    expect(expansionWords('weather in paris', model, target, true)).toEqual([]);
    const noWeather = vocabularyOf([{ name: 'city_forecast', description: 'The forecast of a city' }]);
    expect(expansionWords('weather in paris', model, noWeather, true)).toContain('forecast');
  });
});

describe('trainingSetsFor', () => {
  it('leaves the evaluated set out of documents and queries', () => {
    const a = catalog('a', WEATHER, [{ query: 'rain', tools: ['rain_forecast'] }]);
    const b = catalog('b', [], [{ query: 'tide', tools: ['harbor_tide'] }]);
    const c = catalog('c', []);
    const split = trainingSetsFor(a, [a, b], [c]);
    expect(split.others.map((s) => s.name)).toEqual(['b', 'c']);
    expect(split.otherLabelled.map((s) => s.name)).toEqual(['b']);
  });
});

describe('filterBySupport', () => {
  const term = (word: string): string => tokenize(word)[0]!;
  // The evaluated catalog X: 10 tools; `data` is in 8 of them, so sharing two tools with
  // `weather` (in 3) is less than chance there.
  const x: SearchableTool[] = [
    { name: 'one', description: 'weather forecast data' },
    { name: 'two', description: 'weather forecast data' },
    { name: 'three', description: 'weather alert' },
    { name: 'four', description: 'forecast stock' },
    ...Array.from({ length: 6 }, (_, i) => ({ name: `filler${i}`, description: 'data' })),
  ];
  const [weather, forecast, alert, data, stock, librosa] = [
    'weather',
    'forecast',
    'alert',
    'data',
    'stock',
    'librosa',
  ].map(term) as [string, string, string, string, string, string];
  const transferred = {
    related: new Map([[weather, [forecast, alert, data, stock, librosa]]]),
    scored: new Map<string, Array<[string, number]>>([
      [
        weather,
        [
          [forecast, 5],
          [alert, 4],
          [data, 3],
          [stock, 2],
          [librosa, 1],
        ],
      ],
      // Nothing of it is in X: the term goes.
      [librosa, [[stock, 1]]],
    ]),
    surface: new Map([[forecast, 'forecast']]),
  };

  it('keeps an association when one tool of X has both terms (co1)', () => {
    const kept = filterBySupport(transferred, x, 'co1');
    expect(kept.related.get(weather)).toEqual([forecast, alert, data]);
    expect(kept.scored.get(weather)!.map(([b]) => b)).toEqual([forecast, alert, data]);
    expect(kept.scored.has(librosa)).toBe(false);
    expect(kept.surface.get(forecast)).toBe('forecast');
  });

  it('asks for two tools of X with co2', () => {
    expect(filterBySupport(transferred, x, 'co2').related.get(weather)).toEqual([forecast, data]);
  });

  it('asks for more co-occurrence than chance in X with pmi', () => {
    // weather–alert: 1 · 10 > 3 · 1; weather–data: 2 · 10 < 3 · 8.
    const kept = filterBySupport(transferred, x, 'pmi');
    expect(kept.related.get(weather)).toEqual([forecast, alert]);
    expect(kept.scored.get(weather)!.map(([b]) => b)).toEqual([forecast, alert]);
  });

  it('drops a term none of whose associations X supports', () => {
    const kept = filterBySupport({ ...transferred, related: new Map([[weather, [librosa]]]) }, x, 'co1');
    expect(kept.related.has(weather)).toBe(false);
  });
});

describe('supportedVariants', () => {
  it('filters every transferred variant and has the own-documents control', () => {
    const variants = supportedVariants();
    expect(variants.every((v) => v.support !== undefined)).toBe(true);
    expect(new Set(variants.map((v) => v.support))).toEqual(new Set(['co1', 'co2', 'pmi']));
    expect(variants.some((v) => v.model === 'own')).toBe(true);
  });
});

describe('meetsCriterion', () => {
  const level = { changes: [0, 0, 0, 0, 0], mean: 0, recall5: 0 };
  const gain = { changes: [0.2, 0, 0.4, 0.1, 0.3], mean: 0.2, recall5: 0.1 };

  it('asks for a gain on one set and nothing below on any fold of either', () => {
    expect(meetsCriterion([gain, level])).toBe(true);
    expect(meetsCriterion([level, level])).toBe(false);
    expect(meetsCriterion([gain, { ...level, changes: [0, 0, -0.1, 0, 0] }])).toBe(false);
  });

  it('asks for no point of Recall@5 lost', () => {
    expect(meetsCriterion([gain, { ...level, recall5: -0.3 }])).toBe(false);
  });
});
