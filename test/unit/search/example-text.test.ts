/**
 * @module
 * Tool documents expanded from example arguments: the values of `inputExamples` and of JSON
 * Schema `examples` (schema and properties) are the BM25F field `examples`, with its weight and its
 * reason; hostile examples (huge, deep, cyclic, wide, throwing, non-string) stay within the named
 * bounds and never throw.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SEARCH_EXAMPLE_MAX_CHARS,
  DEFAULT_SEARCH_EXAMPLE_MAX_DEPTH,
  DEFAULT_SEARCH_MAX_EXAMPLES_PER_TOOL,
} from '../../../src/config/defaults.js';
import { exampleText } from '../../../src/search/example-text.js';
import { createToolSearch, type SearchableTool } from '../../../src/search/tool-search.js';

const TOOLS: SearchableTool[] = [
  {
    name: 'geo.lookup',
    description: 'Find a place.',
    inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
    inputExamples: [{ q: 'Reykjavik harbour' }, { q: 'Lisbon', limit: 3 }],
  },
  {
    name: 'fx.convert',
    description: 'Convert an amount.',
    inputSchema: {
      type: 'object',
      properties: {
        from: { type: 'string', description: 'Currency code.', examples: ['EUR', 'USD'] },
        amount: { type: 'number' },
      },
      examples: [{ from: 'JPY', amount: 1200 }],
    },
  },
  { name: 'geo.route', description: 'Route between two places.' },
];

describe('the examples field', () => {
  it('finds a tool by the values of its inputExamples, and says so', () => {
    const search = createToolSearch({ tools: TOOLS });
    const [hit, ...rest] = search.search('reykjavik');
    expect(hit?.name).toBe('geo.lookup');
    expect(hit?.reasons[0]).toBe("matches 'reykjavik' in input examples");
    expect(rest).toEqual([]);
  });

  it('reads JSON Schema examples of the input schema and of its properties', () => {
    const search = createToolSearch({ tools: TOOLS });
    expect(search.search('usd').map((h) => h.name)).toEqual(['fx.convert']);
    expect(search.search('jpy').map((h) => h.name)).toEqual(['fx.convert']);
    // Numbers are words too.
    expect(search.search('1200').map((h) => h.name)).toEqual(['fx.convert']);
  });

  it('weighs as fieldWeights.examples says', () => {
    // A word in the description and in another tool's examples: the weight moves the order.
    const tools: SearchableTool[] = [
      { name: 'a.one', description: 'Harbour maps.' },
      { name: 'b.two', description: 'Maps.', inputExamples: [{ where: 'harbour' }] },
    ];
    const low = createToolSearch({ tools, fieldWeights: { examples: 0.1 } });
    const high = createToolSearch({ tools, fieldWeights: { examples: 10 } });
    expect(low.search('harbour').map((h) => h.name)).toEqual(['a.one', 'b.two']);
    expect(high.search('harbour').map((h) => h.name)).toEqual(['b.two', 'a.one']);
  });

  it('leaves a catalog without examples ranked exactly as before', () => {
    const plain = TOOLS.map(({ inputExamples: _, ...tool }) => tool);
    const a = createToolSearch({ tools: plain });
    const b = createToolSearch({ tools: plain, fieldWeights: { examples: 5 } });
    for (const query of ['place', 'convert an amount', 'route', 'currency code'])
      expect(b.search(query)).toEqual(a.search(query));
  });
});

describe('exampleText bounds hostile examples', () => {
  it('cuts huge strings and many examples to the named bounds', () => {
    const huge = 'x'.repeat(1_000_000);
    expect(exampleText([{ a: huge }], undefined)).toHaveLength(DEFAULT_SEARCH_EXAMPLE_MAX_CHARS);
    const many = Array.from({ length: 100_000 }, (_, i) => ({ v: `w${i}` }));
    const text = exampleText(many, undefined);
    expect(text.split('\n')).toEqual(
      Array.from({ length: DEFAULT_SEARCH_MAX_EXAMPLES_PER_TOOL }, (_, i) => `w${i}`),
    );
    const wideArray = exampleText([{ list: Array.from({ length: 100_000 }, (_, i) => i) }], undefined);
    expect(wideArray.split('\n')).toHaveLength(DEFAULT_SEARCH_MAX_EXAMPLES_PER_TOOL);
  });

  it('stops at the depth bound, on cycles, on wide objects and on throwing getters', () => {
    let deep: Record<string, unknown> = { leaf: 'bottom' };
    for (let i = 0; i < 100_000; i++) deep = { next: deep };
    expect(exampleText([deep], undefined)).toBe('');
    let shallow: Record<string, unknown> = { leaf: 'bottom' };
    for (let i = 0; i < DEFAULT_SEARCH_EXAMPLE_MAX_DEPTH - 1; i++) shallow = { next: shallow };
    expect(exampleText([shallow], undefined)).toBe('bottom');

    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    expect(exampleText([cyclic], undefined).split('\n')[0]).toBe('loop');

    const wide = Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`k${i}`, `v${i}`]));
    const started = Date.now();
    expect(exampleText([wide], undefined).length).toBeLessThanOrEqual(DEFAULT_SEARCH_EXAMPLE_MAX_CHARS);
    expect(Date.now() - started).toBeLessThan(5_000);

    const trap = { ok: 'kept' } as Record<string, unknown>;
    Object.defineProperty(trap, 'bad', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    expect(exampleText([trap], undefined)).toBe('kept');
  });

  it('reads strings, finite numbers and booleans only, and ignores what is not an array', () => {
    expect(exampleText([{ a: 1.5, b: true, c: null, d: Number.NaN, e: 'text' }], undefined)).toBe(
      '1.5\ntrue\ntext',
    );
    expect(exampleText('not an array', { examples: 'nor this', properties: [] })).toBe('');
    expect(exampleText(undefined, { properties: { p: { examples: [{ deep: ['x'] }] } } })).toBe('x');
  });

  it('indexes a catalog of hostile tools without throwing', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const search = createToolSearch({
      tools: [
        { name: 'h.one', inputExamples: [cyclic, 'plain word', 42] },
        { name: 'h.two', inputExamples: 'nope' as never },
        { name: 'h.three', inputSchema: { type: 'object', examples: { not: 'array' } } },
      ],
    });
    expect(search.search('plain').map((h) => h.name)).toEqual(['h.one']);
  });
});
