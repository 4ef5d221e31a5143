/**
 * @module
 * `npm run eval-search` (scripts/eval-search.ts): a developer tool that measures tool search on labelled data (Recall@k, NDCG@k,
 * completeness@k): BM25 alone, plus the learned graph, plus query feedback, side by side,
 * optionally with k-fold cross-validation over a file of queries and their call chains.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CodecallError, isCodecallError } from '../../src/errors.js';
import {
  evaluateSearch,
  type EvalIndexOptions,
  type EvalQuery,
  type EvaluateSearchResult,
} from '../../src/search/evaluate-search.js';
import type { RankingOptions, SearchFieldWeights } from '../../src/search/options.js';
import type { Stemming } from '../../src/search/tokenize.js';
import type { SearchableTool } from '../../src/search/tool-search.js';
import { parseCommandArgs, UsageError, type CliCommand, type CliIo } from '../../src/cli/command.js';
import { createOnnxEmbedder } from '../../src/search/onnx-embedder.js';
import { createOpenAIEmbedder } from '../../src/search/openai-embedder.js';
import type { EmbedFunction } from '../../src/search/embeddings.js';
import {
  DEFAULT_EMBEDDING_FLAT_SHARE,
  DEFAULT_EMBEDDING_GUARD,
  DEFAULT_EMBEDDING_WEIGHT,
  DEFAULT_MAX_EMBEDDING_GUARD,
} from '../../src/config/defaults.js';
import { evaluateColdStart, formatColdStart } from './cold-start.js';
import { evaluateFusion, formatFusion } from './fusion.js';
import { evalSearchHelp } from './help.js';

/** Environment variable naming the development data folder. */
export const DATA_DIR_ENV = 'CODECALL_DATA_DIR';

/**
 * The codecall checkout's root: the nearest folder above this module with a package.json (this
 * module sits in scripts/eval-search/).
 */
function packageRoot(): string {
  let dir = fileURLToPath(new URL('.', import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = resolve(dir, '..');
    if (parent === dir) break;
    dir = parent;
  }
  return dir;
}

/**
 * The development data folder: `$CODECALL_DATA_DIR`, else `../shared/data` next to the codecall
 * package, whatever the current directory.
 */
export function defaultDataDir(env: Readonly<Record<string, string | undefined>>): string {
  const fromEnv = env[DATA_DIR_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return resolve(fromEnv);
  return resolve(packageRoot(), '..', 'shared', 'data');
}

const FIELD_NAMES: ReadonlyArray<keyof SearchFieldWeights> = [
  'name',
  'server',
  'description',
  'parameterNames',
  'parameterDescriptions',
  'examples',
];

function parseFieldWeights(value: string): Partial<SearchFieldWeights> {
  const out: Partial<SearchFieldWeights> = {};
  for (const part of value.split(',')) {
    const [field, raw] = part.split('=').map((x) => x.trim());
    if (!FIELD_NAMES.includes(field as keyof SearchFieldWeights) || raw === undefined) {
      throw new UsageError(
        `--field-weights takes field=weight pairs with fields ${FIELD_NAMES.join(', ')}; got "${part}".`,
      );
    }
    const weight = number(raw, `--field-weights ${field}`, false)!;
    if (weight < 0) throw new UsageError(`--field-weights ${field} must be ≥ 0; got ${raw}.`);
    out[field as keyof SearchFieldWeights] = weight;
  }
  return out;
}

function formatWeights(weights: SearchFieldWeights): string {
  return FIELD_NAMES.map((f) => `${f}=${weights[f]}`).join(',');
}

/** Lines read from one data file. */
const MAX_LINES = 1_000_000;

function readJsonLines(path: string, cwd: string, what: string): unknown[] {
  const full = resolve(cwd, path);
  let text: string;
  try {
    text = readFileSync(full, 'utf8');
  } catch (error) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `Cannot read the ${what} file ${full}: ${(error as Error).message}. Check the path.`,
      {
        details: { field: what, path: full },
        cause: error,
      },
    );
  }
  const out: unknown[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length && out.length < MAX_LINES; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    try {
      out.push(JSON.parse(line));
    } catch (error) {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `${full}:${i + 1}: not valid JSON (${(error as Error).message}). Each line must be one JSON object.`,
        { details: { field: what, path: full, line: i + 1 } },
      );
    }
  }
  return out;
}

function toTools(rows: unknown[], path: string): SearchableTool[] {
  return rows.map((row, i) => {
    const r = row as Record<string, unknown> | null;
    if (typeof r !== 'object' || r === null || typeof r.name !== 'string' || r.name === '') {
      throw new CodecallError('INVALID_ARGUMENT', `${path}: tool ${i + 1} needs a string "name".`, {
        details: { field: 'tools', path, index: i },
      });
    }
    return r as unknown as SearchableTool;
  });
}

function toQueries(rows: unknown[], path: string): EvalQuery[] {
  return rows.map((row, i) => {
    const r = row as Record<string, unknown> | null;
    const tools = Array.isArray(row) ? row : r?.tools;
    if (!Array.isArray(tools) || tools.some((t) => typeof t !== 'string')) {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `${path}: line ${i + 1} needs "tools": an array of tool names in call order.`,
        { details: { field: 'sequences', path, index: i } },
      );
    }
    const query = !Array.isArray(row) && typeof r?.query === 'string' ? r.query : '';
    const id =
      !Array.isArray(row) && (typeof r?.id === 'string' || typeof r?.id === 'number')
        ? String(r.id)
        : String(i + 1);
    return { id, query, tools: tools as string[] };
  });
}

function number(value: string | undefined, flag: string, integer: boolean): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || (integer && !Number.isInteger(n))) {
    throw new UsageError(`${flag} must be ${integer ? 'an integer' : 'a number'}; got "${value}".`);
  }
  return n;
}

function percent(value: number | undefined): string {
  return ((value ?? 0) * 100).toFixed(1);
}

function table(result: EvaluateSearchResult, tools: number): string {
  const lines: string[] = [];
  const setting =
    result.folds > 0
      ? `${result.folds}-fold cross-validation; each fold learned from ~${Math.round(result.trainChains / result.folds)} chains and ~${Math.round(result.trainUsages / result.folds)} queries`
      : `learned from ${result.trainChains} chains and ${result.trainUsages} queries`;
  lines.push(`${result.queries} queries, ${tools} tools (${setting})`);
  if (result.skipped > 0)
    lines.push(`${result.skipped} queries skipped: none of their tools is in the catalog`);
  if (result.unknownTools > 0)
    lines.push(`${result.unknownTools} labelled tools are not in the catalog (they count as misses)`);
  result.learnedFieldWeights?.forEach((weights, fold) =>
    lines.push(`fold ${fold + 1}: field weights learned on its training queries: ${formatWeights(weights)}`),
  );
  lines.push('');
  const rows: string[][] = [['metric', 'BM25', '+graph', '+feedback', 'change']];
  const metrics: Array<[string, keyof EvaluateSearchResult['bm25']]> = [
    ['Recall', 'recall'],
    ['NDCG', 'ndcg'],
    ['Completeness', 'completeness'],
  ];
  for (const k of result.ks) {
    for (const [label, key] of metrics) {
      const a = result.bm25[key][k] ?? 0;
      const g = result.graph[key][k] ?? 0;
      const b = result.hybrid[key][k] ?? 0;
      const delta = (Number(percent(b)) - Number(percent(a))).toFixed(1);
      rows.push([
        `${label}@${k}`,
        percent(a),
        percent(g),
        percent(b),
        `${delta.startsWith('-') ? '' : '+'}${delta}`,
      ]);
    }
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  rows.forEach((r, i) => {
    lines.push(
      r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('   '),
    );
    if (i === 0) lines.push(widths.map((w) => '-'.repeat(w)).join('   '));
  });
  lines.push(
    '',
    "Percentages; change in points (+feedback against BM25). Completeness@k: all of a query's tools in the top k.",
    'BM25: the lexical ranking, with RM3 query expansion unless --expansion-docs 0 (by default only where the first pass is not flat); +graph and +feedback use RM3 only as --expansion-when says (default: for queries without learned feedback whose first pass is not flat).',
  );
  return `${lines.join('\n')}\n`;
}

/** Environment variable holding the API key of `--embeddings-base-url` (never a flag: it would show in `ps`). */
export const EMBEDDINGS_API_KEY_ENV = 'CODECALL_EMBEDDINGS_API_KEY';

/**
 * The embedder the flags name, as `search.embeddings` would: `--embeddings-onnx <model.onnx or
 * its folder>` (tokenizer beside it unless `--embeddings-tokenizer`), or `--embeddings-base-url`
 * with `--embeddings-model` (an OpenAI-compatible `/v1/embeddings`; key from
 * {@link EMBEDDINGS_API_KEY_ENV}).
 */
function embedderFrom(
  values: Record<string, string | boolean | undefined>,
  io: CliIo,
): { embed: EmbedFunction; label: string } | undefined {
  const onnx = values['embeddings-onnx'] as string | undefined;
  const baseUrl = values['embeddings-base-url'] as string | undefined;
  const onnxOnly = ['embeddings-tokenizer', 'embeddings-pooling'].filter((f) => values[f] !== undefined);
  if (onnx !== undefined && baseUrl !== undefined)
    throw new UsageError('--embeddings-onnx and --embeddings-base-url exclude each other: give one.');
  if (onnx === undefined && onnxOnly.length > 0)
    throw new UsageError(`--${onnxOnly[0]} belongs to --embeddings-onnx.`);
  if (onnx !== undefined) {
    let modelPath = resolve(io.cwd, onnx);
    if (existsSync(modelPath) && statSync(modelPath).isDirectory()) modelPath = join(modelPath, 'model.onnx');
    const pooling = values['embeddings-pooling'] as string | undefined;
    if (pooling !== undefined && pooling !== 'mean' && pooling !== 'cls')
      throw new UsageError(`--embeddings-pooling must be mean or cls; got "${pooling}".`);
    const tokenizer = values['embeddings-tokenizer'] as string | undefined;
    return {
      embed: createOnnxEmbedder({
        modelPath,
        ...(tokenizer !== undefined ? { tokenizerPath: resolve(io.cwd, tokenizer) } : {}),
        ...(pooling !== undefined ? { pooling } : {}),
      }),
      label: modelPath,
    };
  }
  if (baseUrl !== undefined) {
    const model = values['embeddings-model'] as string | undefined;
    if (model === undefined || model === '')
      throw new UsageError('--embeddings-base-url needs --embeddings-model <name> (e.g. nomic-embed-text).');
    const apiKey = io.env[EMBEDDINGS_API_KEY_ENV];
    return {
      embed: createOpenAIEmbedder({ baseUrl, model, ...(apiKey ? { apiKey } : {}) }),
      label: `${model} at ${baseUrl}`,
    };
  }
  if (values['embeddings-model'] !== undefined)
    throw new UsageError('--embeddings-model belongs to --embeddings-base-url.');
  return undefined;
}

/** The eval-search command (flags in {@link evalSearchHelp}). */
export const evalSearchCommand: CliCommand = {
  ...evalSearchHelp,
  async run(argv: string[], io: CliIo): Promise<number> {
    const { values }: { values: Record<string, string | boolean | undefined> } = parseCommandArgs({
      args: argv,
      options: {
        tools: { type: 'string' },
        test: { type: 'string' },
        train: { type: 'string' },
        'train-queries': { type: 'string' },
        folds: { type: 'string' },
        k: { type: 'string' },
        json: { type: 'boolean' },
        seed: { type: 'string' },
        'beam-width': { type: 'string' },
        'beam-depth': { type: 'string' },
        'graph-weight': { type: 'string' },
        'evidence-prior': { type: 'string' },
        'edge-discount': { type: 'string' },
        'inferred-edge-share': { type: 'string' },
        'feedback-weight': { type: 'string' },
        'lexical-guard': { type: 'string' },
        dataset: { type: 'string' },
        'data-dir': { type: 'string' },
        stemming: { type: 'string' },
        'verb-normalization': { type: 'boolean' },
        'expansion-docs': { type: 'string' },
        'expansion-terms': { type: 'string' },
        'expansion-weight': { type: 'string' },
        'expansion-when': { type: 'string' },
        'expansion-flat-share': { type: 'string' },
        'cold-start': { type: 'boolean' },
        'expansion-rerank-docs': { type: 'string' },
        'field-weights': { type: 'string' },
        'learn-field-weights': { type: 'boolean' },
        'embeddings-onnx': { type: 'string' },
        'embeddings-tokenizer': { type: 'string' },
        'embeddings-pooling': { type: 'string' },
        'embeddings-base-url': { type: 'string' },
        'embeddings-model': { type: 'string' },
        'embedding-weights': { type: 'string' },
        'embedding-guards': { type: 'string' },
        'embedding-flat-shares': { type: 'string' },
      },
      allowPositionals: false,
    });
    let toolsPath = values.tools as string | undefined;
    let folds = number(values.folds as string | undefined, '--folds', true);
    let testPath = values.test as string | undefined;
    let trainPath = values.train as string | undefined;
    const dataset = values.dataset as string | undefined;
    if (dataset !== undefined) {
      if (!/^[\w.-]+$/.test(dataset) || dataset.startsWith('.'))
        throw new UsageError(
          `--dataset takes a folder name such as ultratool or toolbench; got "${dataset}".`,
        );
      if (toolsPath || testPath || trainPath)
        throw new UsageError('--dataset chooses --tools, --test and --train: give one or the other.');
      const dataDir =
        values['data-dir'] !== undefined
          ? resolve(io.cwd, values['data-dir'] as string)
          : defaultDataDir(io.env);
      const folder = join(dataDir, dataset);
      toolsPath = join(folder, 'tools.jsonl');
      if (!existsSync(toolsPath)) {
        throw new CodecallError(
          'INVALID_ARGUMENT',
          `No data set "${dataset}": ${toolsPath} is missing. Set --data-dir or ${DATA_DIR_ENV} to the data folder.`,
          { details: { field: 'dataset', path: toolsPath } },
        );
      }
      const dev = join(folder, 'dev.jsonl');
      if (existsSync(dev)) testPath = trainPath = dev;
      else trainPath = join(folder, 'train.jsonl');
      folds ??= 5;
    } else if (values['data-dir'] !== undefined) {
      throw new UsageError('--data-dir only applies with --dataset.');
    }
    if (!toolsPath) throw new UsageError('--tools <path> (or --dataset <name>) is required.');
    if (!testPath) {
      if (folds === undefined || folds < 2 || !trainPath) {
        throw new UsageError(
          'Give --test <queries.jsonl>, or --train <chains.jsonl> with --folds N (N ≥ 2) to cross-validate.',
        );
      }
      testPath = trainPath;
    }
    const ks = ((values.k as string | undefined) ?? '5,10')
      .split(',')
      .map((k) => number(k.trim(), '--k', true)!);
    if (ks.some((k) => k < 1)) throw new UsageError('--k values must be positive integers, e.g. --k 5,10.');
    const ranking: RankingOptions = {};
    const set = (
      key: Exclude<keyof RankingOptions, 'expansionWhen'>,
      flag: string,
      integer: boolean,
    ): void => {
      const v = number(values[flag] as string | undefined, `--${flag}`, integer);
      if (v !== undefined) ranking[key] = v;
    };
    set('beamWidth', 'beam-width', true);
    set('beamDepth', 'beam-depth', true);
    set('graphWeight', 'graph-weight', false);
    set('evidencePrior', 'evidence-prior', false);
    set('edgeDiscount', 'edge-discount', false);
    set('inferredEdgeShare', 'inferred-edge-share', false);
    set('feedbackWeight', 'feedback-weight', false);
    set('lexicalGuard', 'lexical-guard', true);
    set('expansionDocs', 'expansion-docs', true);
    set('expansionTerms', 'expansion-terms', true);
    set('expansionWeight', 'expansion-weight', false);
    set('expansionRerankDocs', 'expansion-rerank-docs', true);
    set('expansionFlatShare', 'expansion-flat-share', false);
    const when = values['expansion-when'] as string | undefined;
    if (when !== undefined) {
      if (when !== 'selective' && when !== 'no-feedback' && when !== 'cold-start' && when !== 'always') {
        throw new UsageError(
          `--expansion-when must be selective, no-feedback, cold-start or always; got "${when}".`,
        );
      }
      ranking.expansionWhen = when;
    }
    const indexOptions: EvalIndexOptions = {};
    const stemming = values.stemming as string | undefined;
    if (stemming !== undefined) {
      if (stemming !== 'light' && stemming !== 'porter' && stemming !== 'none')
        throw new UsageError(`--stemming must be light, porter or none; got "${stemming}".`);
      indexOptions.stemming = stemming satisfies Stemming;
    }
    if (values['verb-normalization'] === true) indexOptions.verbNormalization = true;
    if (values['field-weights'] !== undefined)
      indexOptions.fieldWeights = parseFieldWeights(values['field-weights'] as string);
    const learnFieldWeights = values['learn-field-weights'] === true;

    const tools = toTools(readJsonLines(toolsPath, io.cwd, 'tools'), toolsPath);
    const test = toQueries(readJsonLines(testPath, io.cwd, 'test'), testPath);
    const sameFile = trainPath !== undefined && resolve(io.cwd, trainPath) === resolve(io.cwd, testPath);
    const train =
      trainPath !== undefined && !sameFile
        ? toQueries(readJsonLines(trainPath, io.cwd, 'train'), trainPath).map((q) => q.tools)
        : [];
    if (sameFile && (folds === undefined || folds < 2)) {
      throw new UsageError(
        '--train and --test are the same file: add --folds N (N ≥ 2) so no query is tested on its own chain.',
      );
    }
    const trainQueriesPath = values['train-queries'] as string | undefined;
    const trainUsages =
      trainQueriesPath !== undefined
        ? toQueries(readJsonLines(trainQueriesPath, io.cwd, 'train-queries'), trainQueriesPath).filter(
            (q) => q.query.trim() !== '',
          )
        : [];
    const seed = number(values.seed as string | undefined, '--seed', true);
    const embedder = embedderFrom(values, io);
    if (embedder !== undefined) {
      if (values['cold-start'] === true || learnFieldWeights)
        throw new UsageError(
          'The embedding options measure fusion at cold start and with usage: drop --cold-start and --learn-field-weights.',
        );
      if (folds === undefined || folds < 2)
        throw new UsageError('Fusion is measured per fold: give --folds N (N ≥ 2), or --dataset.');
      const weights = (
        (values['embedding-weights'] as string | undefined) ?? String(DEFAULT_EMBEDDING_WEIGHT)
      )
        .split(',')
        .map((w) => number(w.trim(), '--embedding-weights', false)!);
      if (weights.some((w) => w < 0))
        throw new UsageError('--embedding-weights takes non-negative numbers, e.g. 0.5,1.');
      const guards = ((values['embedding-guards'] as string | undefined) ?? String(DEFAULT_EMBEDDING_GUARD))
        .split(',')
        .map((g) => number(g.trim(), '--embedding-guards', true)!);
      if (guards.some((g) => g < 0 || g > DEFAULT_MAX_EMBEDDING_GUARD))
        throw new UsageError(
          `--embedding-guards takes integers from 0 to ${DEFAULT_MAX_EMBEDDING_GUARD}, e.g. 0,5.`,
        );
      const flatShares = (
        (values['embedding-flat-shares'] as string | undefined) ?? String(DEFAULT_EMBEDDING_FLAT_SHARE)
      )
        .split(',')
        .map((f) => number(f.trim(), '--embedding-flat-shares', false)!);
      if (flatShares.some((f) => f < 0 || f > 1))
        throw new UsageError('--embedding-flat-shares takes numbers from 0 to 1, e.g. 0,0.75.');
      const started = Date.now();
      const fusion = await evaluateFusion({
        tools,
        queries: test,
        folds,
        ks,
        embed: embedder.embed,
        weights,
        guards,
        flatShares,
        ranking,
        index: indexOptions,
        ...(seed !== undefined ? { seed } : {}),
        onProgress: (done, total) =>
          io.stderr.write(
            `eval-search: fold ${done}/${total} done (${((Date.now() - started) / 1000).toFixed(1)} s)\n`,
          ),
      });
      io.stdout.write(
        values.json
          ? `${JSON.stringify({ tools: tools.length, model: embedder.label, ranking, index: indexOptions, ...fusion }, null, 2)}\n`
          : formatFusion(fusion, tools.length, embedder.label),
      );
      return fusion.embeddingErrors.length > 0 ? 1 : 0;
    }
    for (const flag of ['embedding-weights', 'embedding-guards', 'embedding-flat-shares'])
      if (values[flag] !== undefined)
        throw new UsageError(`--${flag} needs --embeddings-onnx or --embeddings-base-url.`);
    if (values['cold-start'] === true) {
      if (learnFieldWeights)
        throw new UsageError('--cold-start measures fixed options: drop --learn-field-weights.');
      const coldStart = evaluateColdStart({
        tools,
        queries: test,
        folds: folds ?? 1,
        ks,
        ranking,
        index: indexOptions,
        ...(seed !== undefined ? { seed } : {}),
      });
      io.stdout.write(
        values.json
          ? `${JSON.stringify({ tools: tools.length, ranking, index: indexOptions, ...coldStart }, null, 2)}\n`
          : formatColdStart(coldStart, tools.length, ranking),
      );
      return 0;
    }
    io.stderr.write(
      `eval-search: ${tools.length} tools, ${test.length} queries${train.length ? `, ${train.length} training chains` : ''}${
        folds && folds > 1 ? `, ${folds} folds` : ''
      }\n`,
    );
    const started = Date.now();
    const result = evaluateSearch({
      tools,
      test,
      train,
      trainUsages,
      ks,
      ranking,
      index: indexOptions,
      learnFieldWeights,
      ...(folds !== undefined ? { folds } : {}),
      ...(seed !== undefined ? { seed } : {}),
      onProgress: (done, total) => {
        if (total > 1)
          io.stderr.write(
            `eval-search: fold ${done}/${total} done (${((Date.now() - started) / 1000).toFixed(1)} s)\n`,
          );
      },
    });
    if (values.json) {
      io.stdout.write(
        `${JSON.stringify({ tools: tools.length, ranking, index: indexOptions, ...result }, null, 2)}\n`,
      );
    } else {
      io.stdout.write(table(result, tools.length));
    }
    return 0;
  },
};

/**
 * Runs eval-search with `argv` as the CLI runs a command, and resolves with the exit code:
 * `--help` prints the usage (0); a usage error prints it with the message (2); a codecall error
 * (a file that does not parse, a missing dataset) prints the message (2).
 */
export async function runEvalSearch(argv: string[], io: CliIo): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.stdout.write(`${evalSearchHelp.usage.trimEnd()}\n`);
    return 0;
  }
  try {
    return await evalSearchCommand.run(argv, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`eval-search: ${error.message}\n\n${evalSearchHelp.usage.trimEnd()}\n`);
      return 2;
    }
    if (isCodecallError(error)) {
      io.stderr.write(`eval-search: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}
