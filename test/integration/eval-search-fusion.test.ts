/**
 * @module
 * `npm run eval-search -- --embeddings-onnx <model>`: fused ranking against the ranking it fuses,
 * per fold, with the tests' tiny ONNX model (test/fixtures/tiny-onnx-model.ts: chart words share
 * one dimension, money words another…) run through the product's ONNX embedder; and the word
 * vector converter (scripts/eval-search/word-vectors-to-onnx.ts) on a self-made GloVe text file.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/command.js';
import { createOnnxEmbedder } from '../../src/search/onnx-embedder.js';
import { runEvalSearch } from '../../scripts/eval-search/command.js';
import { chooseVariant, type FusionGroup, type FusionResult } from '../../scripts/eval-search/fusion.js';
import { writeWordVectorModel } from '../../scripts/eval-search/word-vectors-to-onnx.js';
import { tempDir } from '../fixtures/temp-dir.js';
import { writeTinyModel } from '../fixtures/tiny-onnx-model.js';

const jsonl = (rows: unknown[]): string => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

function io(cwd: string): { io: CliIo; out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  return {
    io: { stdout, stderr, stdin: new PassThrough(), cwd, env: {}, signal: new AbortController().signal },
    out: () => out,
    err: () => err,
  };
}

/** A catalog and queries where some words meet only through the tiny model's meanings. */
function writeData(dir: string): void {
  writeFileSync(
    join(dir, 'tools.jsonl'),
    jsonl([
      { name: 'viz.draw_chart', description: 'Draw a chart.' },
      { name: 'ledger.totals', description: 'Totals of revenue.' },
      { name: 'mail.send_email', description: 'Send an email message.' },
      { name: 'weather.get_forecast', description: 'Forecast of rain.' },
    ]),
  );
  writeFileSync(
    join(dir, 'queries.jsonl'),
    jsonl([
      // No tool has "plot", "graph" or "money": only the embedding finds these.
      { id: '1', query: 'plot', tools: ['viz.draw_chart'] },
      { id: '2', query: 'graph', tools: ['viz.draw_chart'] },
      { id: '3', query: 'money', tools: ['ledger.totals'] },
      { id: '4', query: 'email', tools: ['mail.send_email'] },
      { id: '5', query: 'rain', tools: ['weather.get_forecast'] },
      { id: '6', query: 'message', tools: ['mail.send_email'] },
    ]),
  );
}

interface FusionJson {
  variants: Array<{ weight: number; guard: number; flatShare: number }>;
  embeddingErrors: string[];
  folds: Array<{
    queries: number;
    lexical: Record<string, number>;
    lexicalFused: Array<Record<string, number>>;
  }>;
  all: {
    queries: number;
    lexical: Record<string, number>;
    lexicalFused: Array<Record<string, number>>;
    usage: Record<string, number>;
    usageFused: Array<Record<string, number>>;
  };
}

describe('the variant a data set chooses', () => {
  /** A group whose variants change NDCG@10 by `cold[v]` and `usage[v]` (fractions). */
  const group = (cold: number[], usage: number[]): FusionGroup => ({
    queries: 10,
    lexical: { 10: 0.5 },
    lexicalFused: cold.map((c) => ({ 10: 0.5 + c })),
    usage: { 10: 0.6 },
    usageFused: usage.map((u) => ({ 10: 0.6 + u })),
  });
  const result = (folds: FusionGroup[], all: FusionGroup): FusionResult => ({
    ks: [10],
    variants: [
      { weight: 1, guard: 0, flatShare: 0 },
      { weight: 0.1, guard: 7, flatShare: 0.75 },
    ],
    skipped: 0,
    embeddingErrors: [],
    folds,
    all,
  });

  it('is the largest mean change of the two settings among variants with no fold below the unfused ranking', () => {
    // Variant 0 gains more on the whole but loses on fold 2 with usage: variant 1 is chosen.
    const folds = [group([0.05, 0.01], [0.04, 0]), group([0.03, 0], [-0.001, 0.002])];
    expect(chooseVariant(result(folds, group([0.04, 0.005], [0.02, 0.001])), 10)).toBe(1);
    // Without that loss, variant 0.
    const level = [group([0.05, 0.01], [0.04, 0]), group([0.03, 0], [0.001, 0.002])];
    expect(chooseVariant(result(level, group([0.04, 0.005], [0.02, 0.001])), 10)).toBe(0);
    // Every variant loses somewhere: none.
    const losing = [group([-0.01, 0.01], [0, -0.01]), group([0, 0], [0, 0])];
    expect(chooseVariant(result(losing, group([0, 0], [0, 0])), 10)).toBeUndefined();
  });
});

describe('eval-search --embeddings-onnx', () => {
  it('measures fused against lexical ranking per fold and weight (weight 0 is the lexical ranking)', async () => {
    const dir = tempDir('codecall-eval-fusion-');
    writeData(dir);
    writeTinyModel(dir);
    const t = io(dir);
    const code = await runEvalSearch(
      [
        '--tools',
        'tools.jsonl',
        '--train',
        'queries.jsonl',
        '--folds',
        '2',
        '--embeddings-onnx',
        '.',
        '--embedding-weights',
        '0,1',
        '--embedding-guards',
        '0,5',
        '--json',
      ],
      t.io,
    );
    expect(t.err()).not.toMatch(/embedding error/);
    expect(code).toBe(0);
    const result = JSON.parse(t.out()) as FusionJson;
    // The flat share is the default's: these rankings have a head or nothing at all.
    expect(result.variants).toEqual([
      { weight: 0, guard: 0, flatShare: 0.75 },
      { weight: 0, guard: 5, flatShare: 0.75 },
      { weight: 1, guard: 0, flatShare: 0.75 },
      { weight: 1, guard: 5, flatShare: 0.75 },
    ]);
    expect(result.embeddingErrors).toEqual([]);
    expect(result.folds.map((fold) => fold.queries)).toEqual([3, 3]);
    expect(result.all.queries).toBe(6);
    // Lexical finds "email", "rain" and "message" (3 of 6); the fused ranking also "plot",
    // "graph" (chart words) and "money" (revenue).
    expect(result.all.lexical['10']).toBeCloseTo(0.5, 5);
    expect(result.all.lexicalFused[0]!['10']).toBeCloseTo(0.5, 5);
    expect(result.all.lexicalFused[1]!['10']).toBeCloseTo(0.5, 5);
    expect(result.all.lexicalFused[2]!['10']).toBeCloseTo(1, 5);
    // The guard keeps lexical hits first; the embedding's finds follow them.
    expect(result.all.lexicalFused[3]!['10']).toBeCloseTo(1, 5);
    expect(result.all.usageFused[2]!['10']).toBeGreaterThan(result.all.usage['10']!);
  });

  it('prints a row per variant with its change per fold and the variant the data set chooses, and stops on a missing model, naming it', async () => {
    const dir = tempDir('codecall-eval-fusion-');
    writeData(dir);
    writeTinyModel(dir);
    const t = io(dir);
    const args = ['--tools', 'tools.jsonl', '--train', 'queries.jsonl', '--folds', '2'];
    expect(await runEvalSearch([...args, '--embeddings-onnx', 'model.onnx'], t.io)).toBe(0);
    // NDCG@10 of the unfused ranking per fold and all, cold start then with usage.
    expect(t.out()).toMatch(/^unfused +66\.7 +33\.3 +50\.0 +66\.7 +33\.3 +50\.0$/m);
    // The defaults' row: the change per fold in points.
    expect(t.out()).toMatch(
      /^w=0\.1 g=7 f=0\.75 +\+33\.33 +\+66\.67 +\+50\.00 +\+33\.33 +\+66\.67 +\+50\.00$/m,
    );
    expect(t.out()).toMatch(/chosen on this data set .*: w=0\.1 g=7 f=0\.75$/m);

    const missing = io(dir);
    // The model is loaded before any fold: a missing one stops the run, naming the file.
    expect(await runEvalSearch([...args, '--embeddings-onnx', 'nowhere/model.onnx'], missing.io)).toBe(2);
    expect(missing.err()).toMatch(/nowhere[/\\]model\.onnx/);
  });

  it('rejects flags that do not go together, naming the fix', async () => {
    const dir = tempDir('codecall-eval-fusion-');
    writeData(dir);
    const run = async (extra: string[]) => {
      const t = io(dir);
      const code = await runEvalSearch(
        ['--tools', 'tools.jsonl', '--train', 'queries.jsonl', ...extra],
        t.io,
      );
      return { code, err: t.err() };
    };
    expect(await run(['--folds', '2', '--embeddings-onnx', 'm.onnx', '--cold-start'])).toMatchObject({
      code: 2,
      err: expect.stringMatching(/drop --cold-start/),
    });
    expect(
      await run([
        '--folds',
        '2',
        '--embeddings-onnx',
        'm.onnx',
        '--embeddings-base-url',
        'http://127.0.0.1:1',
      ]),
    ).toMatchObject({ code: 2, err: expect.stringMatching(/exclude each other/) });
    expect(await run(['--folds', '2', '--embeddings-base-url', 'http://127.0.0.1:1'])).toMatchObject({
      code: 2,
      err: expect.stringMatching(/--embeddings-model/),
    });
    expect(await run(['--folds', '2', '--embedding-weights', '1'])).toMatchObject({
      code: 2,
      err: expect.stringMatching(/needs --embeddings-onnx/),
    });
    expect(
      await run(['--folds', '2', '--embeddings-onnx', 'm.onnx', '--embedding-weights=-1']),
    ).toMatchObject({ code: 2, err: expect.stringMatching(/non-negative/) });
  });
});

describe('word-vectors-to-onnx', () => {
  it('turns GloVe text vectors into a model whose mean-pooled vectors are the words’ average', async () => {
    const dir = tempDir('codecall-word-vectors-');
    // A word2vec-style header line, a stop word (no row) and an upper-case word (skipped).
    writeFileSync(
      join(dir, 'vectors.txt'),
      ['3 2', 'chart 1 0', 'the 5 5', 'Chart 9 9', 'money 0 2', 'graph 3 0', ''].join('\n'),
    );
    const written = await writeWordVectorModel(join(dir, 'vectors.txt'), join(dir, 'out'));
    expect(written).toMatchObject({ words: 3, dimensions: 2 });
    const embed = createOnnxEmbedder({ modelPath: written.model, normalize: false });
    const [chart, both, unknown, withStop] = await embed(['Chart', 'chart money', 'zebra', 'the chart']);
    expect(chart).toEqual([1, 0]);
    expect(both).toEqual([0.5, 1]);
    // A word out of the vocabulary is [UNK]: a zero row, counted in the mean.
    expect(unknown).toEqual([0, 0]);
    expect(withStop).toEqual([0.5, 0]);
  });

  it('projects out the common direction (all-but-the-top) and weights rare words up (SIF)', async () => {
    const dir = tempDir('codecall-word-vectors-');
    // Spread along x (the top principal direction), a little along y; mean zero.
    writeFileSync(
      join(dir, 'vectors.txt'),
      ['alpha 2 0.1', 'beta -2 0.1', 'gamma 2 -0.1', 'delta -2 -0.1', ''].join('\n'),
    );
    const processed = await writeWordVectorModel(join(dir, 'vectors.txt'), join(dir, 'out'), {
      removeComponents: 1,
      sif: 1,
    });
    const embed = createOnnxEmbedder({ modelPath: processed.model, normalize: false });
    const [alpha, gamma] = await embed(['alpha', 'gamma']);
    // x is gone; SIF scales rank r by a / (a + p(r)), p(r) = 1 / (r · H4), H4 = 25/12.
    const weight = (rank: number) => 1 / (1 + 12 / (25 * rank));
    expect(alpha![0]).toBeCloseTo(0, 5);
    expect(alpha![1]).toBeCloseTo(0.1 * weight(1), 5);
    expect(gamma![0]).toBeCloseTo(0, 5);
    expect(gamma![1]).toBeCloseTo(-0.1 * weight(3), 5);
  });
});
