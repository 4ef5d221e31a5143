/**
 * @module
 * A ready {@link EmbedFunction} for a sentence-embedding model already on disk: an `.onnx` file run
 * by `onnxruntime-node` and its `tokenizer.json` read by `@huggingface/tokenizers` (both optional
 * peers, imported on the first call). Texts are tokenized, cut to the model's token budget, run in
 * bounded batches, mean-pooled over the attention mask (or the first token taken) and scaled to
 * unit length. Nothing is ever downloaded: a missing file is an error that names it and the fix.
 */
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type * as Ort from 'onnxruntime-node';
import type * as Tokenizers from '@huggingface/tokenizers';
import { CodecallError, isCodecallError } from '../errors.js';
import {
  DEFAULT_ONNX_EMBEDDING_BATCH_SIZE,
  DEFAULT_ONNX_EMBEDDING_MAX_TOKENS,
  DEFAULT_ONNX_EMBEDDING_MAX_TOKENS_LIMIT,
  DEFAULT_ONNX_EMBEDDING_THREADS,
  DEFAULT_ONNX_MODEL_MAX_BYTES,
  DEFAULT_ONNX_TOKENIZER_FILE,
  DEFAULT_ONNX_TOKENIZER_MAX_BYTES,
} from '../config/defaults.js';
import { importOptional } from '../util/optional-package.js';
import type { EmbedFunction } from './embeddings.js';

/** How token vectors become one text vector. */
export type OnnxPooling = 'mean' | 'cls';

/** Options of {@link createOnnxEmbedder}. */
export interface OnnxEmbedderOptions {
  /** The `.onnx` file (e.g. `all-MiniLM-L6-v2/onnx/model.onnx`); an absolute path or one relative to the working folder. */
  modelPath: string;
  /**
   * The model's `tokenizer.json` (Hugging Face tokenizers format). A `tokenizer_config.json`
   * beside it is read too when present.
   * @defaultValue `tokenizer.json` in the model's folder, then in its parent (the layout of
   * Hugging Face repositories with an `onnx/` folder)
   */
  tokenizerPath?: string | undefined;
  /**
   * `mean`: the average of the token vectors the attention mask keeps (sentence-transformers'
   * MiniLM, mpnet, bge with mean pooling); `cls`: the first token's vector (bge, e5 with CLS pooling).
   * Ignored when the model's output is already one vector per text (rank 2).
   * @defaultValue `'mean'`
   */
  pooling?: OnnxPooling | undefined;
  /** Scale each vector to unit length. @defaultValue true */
  normalize?: boolean | undefined;
  /**
   * Tokens of one text the model reads (special tokens included); longer texts are cut, their
   * closing special tokens kept. Use the model's own limit or less.
   * @defaultValue {@link DEFAULT_ONNX_EMBEDDING_MAX_TOKENS}
   */
  maxTokens?: number | undefined;
  /** Texts per run of the model. @defaultValue {@link DEFAULT_ONNX_EMBEDDING_BATCH_SIZE} */
  batchSize?: number | undefined;
  /**
   * The model output to read: `[batch, tokens, dim]` (pooled here) or `[batch, dim]` (taken as is).
   * @defaultValue `last_hidden_state`, else `token_embeddings`, else `sentence_embedding`
   */
  outputName?: string | undefined;
  /** Threads of one run (onnxruntime's `intraOpNumThreads`). @defaultValue {@link DEFAULT_ONNX_EMBEDDING_THREADS} */
  threads?: number | undefined;
}

/**
 * The variable that stops onnxruntime's telemetry uploader (started on Linux and macOS since 1.29
 * unless it is `1` when the runtime first loads). Read by the native library from the process
 * environment, which only the main thread can change.
 */
export const ONNX_RUNTIME_TELEMETRY_VARIABLE = 'ORT_DISABLE_TELEMETRY';

/**
 * Sets `ORT_DISABLE_TELEMETRY=1` unless the user set it: the local embedder sends nothing anywhere.
 * Call on the main thread before a worker that runs the model starts (a worker's `process.env` is
 * its own copy, which native code does not see).
 */
export function disableOnnxRuntimeTelemetry(): void {
  process.env[ONNX_RUNTIME_TELEMETRY_VARIABLE] ??= '1';
}

/** The inputs codecall feeds; a model that needs any other cannot be run. */
const KNOWN_INPUTS = ['input_ids', 'attention_mask', 'token_type_ids'] as const;
/** Outputs tried in order when `outputName` is not given. */
const DEFAULT_OUTPUTS = ['last_hidden_state', 'token_embeddings', 'sentence_embedding'] as const;
/** Special tokens at a text's end kept when it is cut (BERT's `[SEP]`, RoBERTa's `</s>`). */
const MAX_CLOSING_SPECIAL_TOKENS = 2;

type OrtModule = typeof Ort;
type TokenizersModule = typeof Tokenizers;

interface Loaded {
  ort: OrtModule;
  session: Ort.InferenceSession;
  tokenizer: Tokenizers.Tokenizer;
  /** Ids the tokenizer adds as special tokens (kept when a text is cut). */
  special: Set<number>;
  inputs: Array<{ name: (typeof KNOWN_INPUTS)[number]; type: 'int64' | 'int32' }>;
  output: string;
}

function failed(message: string, path: string | undefined, field: string, cause?: unknown): CodecallError {
  return new CodecallError('SEARCH_EMBEDDING_FAILED', message, {
    details: { field, ...(path !== undefined ? { path } : {}) },
    ...(cause !== undefined ? { cause } : {}),
  });
}

function positive(value: number | undefined, fallback: number, field: string, max = Infinity): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `ONNX embedder option "${field}" must be an integer from 1 to ${max === Infinity ? 'any size' : max}; got ${String(value)}.`,
      { details: { field } },
    );
  }
  return value;
}

/** Size and modification time of each file, or `absent`: a failed load is retried when they change. */
async function signatureOf(paths: readonly string[]): Promise<string> {
  const parts = await Promise.all(
    paths.map(async (path) => {
      try {
        const s = await stat(path);
        return `${s.size}:${s.mtimeMs}`;
      } catch {
        return 'absent';
      }
    }),
  );
  return parts.join('|');
}

/** The first of `candidates` that is a file, or the first candidate (its absence is reported on load). */
async function firstFile(candidates: readonly string[]): Promise<string> {
  for (const path of candidates) {
    try {
      if ((await stat(path)).isFile()) return path;
    } catch {
      // Try the next place.
    }
  }
  return candidates[0]!;
}

/** Reads a JSON file of at most `max` bytes; errors name the file and the option that sets it. */
async function readJson(path: string, max: number, field: string, what: string): Promise<unknown> {
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch (error) {
    throw failed(
      `No ${what} at ${path}: copy the model's tokenizer.json there or set ${field} to its path (codecall downloads nothing).`,
      path,
      field,
      error,
    );
  }
  if (size > max) {
    throw failed(
      `The ${what} ${path} has ${size} bytes, more than the ${max} read; is it the right file?`,
      path,
      field,
    );
  }
  try {
    return JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw failed(
      `The ${what} ${path} is not JSON (${(error as Error)?.message ?? String(error)}); give the model's tokenizer.json.`,
      path,
      field,
      error,
    );
  }
}

/**
 * An embedder that runs a sentence-embedding model on disk. The model and tokenizer load on the
 * first call (`PACKAGE_MISSING` names the install command when `onnxruntime-node` or
 * `@huggingface/tokenizers` is absent); a load that failed is tried again once either file changes.
 * Runs on the calling thread: `CodecallRuntime.findTools` calls it on the search worker.
 *
 * @example
 * ```ts
 * const embed = createOnnxEmbedder({ modelPath: 'models/all-MiniLM-L6-v2/onnx/model.onnx' });
 * const search = createToolSearch({ tools, embed });
 * const { hits } = await search.searchAsync('plot my book sales');
 * ```
 */
export function createOnnxEmbedder(options: OnnxEmbedderOptions): EmbedFunction {
  if (typeof options !== 'object' || options === null) {
    throw new CodecallError('INVALID_ARGUMENT', 'createOnnxEmbedder needs { modelPath }.', {
      details: { field: 'options' },
    });
  }
  if (typeof options.modelPath !== 'string' || options.modelPath.trim() === '') {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      'ONNX embedder option "modelPath" must be the path of an .onnx file.',
      {
        details: { field: 'modelPath' },
      },
    );
  }
  const pooling = options.pooling ?? 'mean';
  if (pooling !== 'mean' && pooling !== 'cls') {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `ONNX embedder option "pooling" must be "mean" or "cls"; got ${JSON.stringify(pooling)}.`,
      {
        details: { field: 'pooling' },
      },
    );
  }
  const normalize = options.normalize ?? true;
  const maxTokens = positive(
    options.maxTokens,
    DEFAULT_ONNX_EMBEDDING_MAX_TOKENS,
    'maxTokens',
    DEFAULT_ONNX_EMBEDDING_MAX_TOKENS_LIMIT,
  );
  if (maxTokens < MAX_CLOSING_SPECIAL_TOKENS + 1) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `ONNX embedder option "maxTokens" must be at least ${MAX_CLOSING_SPECIAL_TOKENS + 1}.`,
      {
        details: { field: 'maxTokens' },
      },
    );
  }
  const batchSize = positive(options.batchSize, DEFAULT_ONNX_EMBEDDING_BATCH_SIZE, 'batchSize');
  const threads = positive(options.threads, DEFAULT_ONNX_EMBEDDING_THREADS, 'threads');
  const modelPath = options.modelPath;
  const tokenizerCandidates = options.tokenizerPath
    ? [options.tokenizerPath]
    : [
        join(dirname(modelPath), DEFAULT_ONNX_TOKENIZER_FILE),
        join(dirname(modelPath), '..', DEFAULT_ONNX_TOKENIZER_FILE),
      ];

  const open = async (): Promise<Loaded> => {
    disableOnnxRuntimeTelemetry();
    const ort = await importOptional<OrtModule>('onnxruntime-node', 'The local (ONNX) embedder');
    const { Tokenizer } = await importOptional<TokenizersModule>(
      '@huggingface/tokenizers',
      'The local (ONNX) embedder',
    );
    let size: number;
    try {
      const s = await stat(modelPath);
      if (!s.isFile()) throw new Error('not a file');
      size = s.size;
    } catch (error) {
      throw failed(
        `No embedding model at ${modelPath}: give modelPath (search.embeddings.onnx.model) the path of an .onnx file already on disk; codecall downloads nothing.`,
        modelPath,
        'modelPath',
        error,
      );
    }
    if (size > DEFAULT_ONNX_MODEL_MAX_BYTES) {
      throw failed(
        `The embedding model ${modelPath} has ${size} bytes, more than the ${DEFAULT_ONNX_MODEL_MAX_BYTES} loaded; use a smaller (or quantized) model.`,
        modelPath,
        'modelPath',
      );
    }
    const tokenizerPath = await firstFile(tokenizerCandidates);
    const tokenizerJson = await readJson(
      tokenizerPath,
      DEFAULT_ONNX_TOKENIZER_MAX_BYTES,
      'tokenizerPath',
      'tokenizer',
    );
    const configPath = join(dirname(tokenizerPath), 'tokenizer_config.json');
    let tokenizerConfig: unknown = {};
    try {
      if ((await stat(configPath)).isFile())
        tokenizerConfig = await readJson(
          configPath,
          DEFAULT_ONNX_TOKENIZER_MAX_BYTES,
          'tokenizerPath',
          'tokenizer config',
        );
    } catch (error) {
      if (isCodecallError(error)) throw error;
      // No tokenizer_config.json: the tokenizer's defaults apply.
    }
    let tokenizer: Tokenizers.Tokenizer;
    try {
      tokenizer = new Tokenizer(tokenizerJson as object, (tokenizerConfig ?? {}) as object);
      tokenizer.encode('codecall');
    } catch (error) {
      throw failed(
        `The tokenizer ${tokenizerPath} cannot be used (${(error as Error)?.message ?? String(error)}); give the tokenizer.json that came with the model.`,
        tokenizerPath,
        'tokenizerPath',
        error,
      );
    }
    const special = new Set<number>();
    for (const [id, token] of tokenizer.get_added_tokens_decoder()) if (token.special) special.add(id);

    let session: Ort.InferenceSession;
    try {
      session = await ort.InferenceSession.create(modelPath, {
        executionProviders: ['cpu'],
        intraOpNumThreads: threads,
        interOpNumThreads: 1,
        graphOptimizationLevel: 'all',
      });
    } catch (error) {
      throw failed(
        `Cannot load ${modelPath} as an ONNX model (${(error as Error)?.message ?? String(error)}); give an .onnx export of the model (e.g. optimum-cli export onnx), not its .safetensors or .bin weights.`,
        modelPath,
        'modelPath',
        error,
      );
    }
    const inputs: Loaded['inputs'] = [];
    for (const meta of session.inputMetadata) {
      const name = meta.name as (typeof KNOWN_INPUTS)[number];
      if (!KNOWN_INPUTS.includes(name)) {
        await session.release();
        throw failed(
          `The model ${modelPath} needs the input "${meta.name}", which codecall does not feed (it feeds ${KNOWN_INPUTS.join(', ')}); export a text-embedding model with those inputs.`,
          modelPath,
          'modelPath',
        );
      }
      const type = meta.isTensor && meta.type === 'int32' ? 'int32' : 'int64';
      inputs.push({ name, type });
    }
    if (!inputs.some((input) => input.name === 'input_ids')) {
      await session.release();
      throw failed(
        `The model ${modelPath} has no "input_ids" input (its inputs: ${session.inputNames.join(', ') || 'none'}); export a text-embedding model that takes token ids.`,
        modelPath,
        'modelPath',
      );
    }
    const output =
      options.outputName ?? DEFAULT_OUTPUTS.find((name) => session.outputNames.includes(name)) ?? undefined;
    if (output === undefined || !session.outputNames.includes(output)) {
      await session.release();
      throw failed(
        `The model ${modelPath} has no output "${output ?? DEFAULT_OUTPUTS.join('" or "')}" (its outputs: ${session.outputNames.join(', ') || 'none'}); set outputName (search.embeddings.onnx.output) to the one with token or sentence vectors.`,
        modelPath,
        'outputName',
      );
    }
    return { ort, session, tokenizer, special, inputs, output };
  };

  let loading: Promise<Loaded> | undefined;
  let failure: { error: unknown; signature: string } | undefined;
  const load = async (): Promise<Loaded> => {
    if (failure) {
      if ((await signatureOf([modelPath, ...tokenizerCandidates])) === failure.signature) throw failure.error;
      failure = undefined;
    }
    loading ??= (async () => {
      const signature = await signatureOf([modelPath, ...tokenizerCandidates]);
      try {
        return await open();
      } catch (error) {
        loading = undefined;
        failure = { error, signature };
        throw error;
      }
    })();
    return loading;
  };

  /** Token ids of `text`, cut to `maxTokens` with its closing special tokens kept. */
  const tokenize = (loaded: Loaded, text: string): { ids: number[]; typeIds: number[] } => {
    const encoding = loaded.tokenizer.encode(text, { add_special_tokens: true, return_token_type_ids: true });
    let ids = encoding.ids;
    let typeIds = encoding.token_type_ids ?? ids.map(() => 0);
    if (ids.length > maxTokens) {
      let closing = 0;
      while (closing < MAX_CLOSING_SPECIAL_TOKENS && loaded.special.has(ids[ids.length - 1 - closing]!))
        closing++;
      ids = [...ids.slice(0, maxTokens - closing), ...ids.slice(ids.length - closing)];
      typeIds = [...typeIds.slice(0, maxTokens - closing), ...typeIds.slice(typeIds.length - closing)];
    }
    return { ids, typeIds };
  };

  const run = async (loaded: Loaded, texts: readonly string[]): Promise<number[][]> => {
    const encoded = texts.map((text) => tokenize(loaded, text));
    const rows = encoded.length;
    const width = Math.max(1, ...encoded.map((e) => e.ids.length));
    const ids = new Array<number>(rows * width).fill(0);
    const mask = new Array<number>(rows * width).fill(0);
    const typeIds = new Array<number>(rows * width).fill(0);
    encoded.forEach((e, row) => {
      e.ids.forEach((id, column) => {
        ids[row * width + column] = id;
        mask[row * width + column] = 1;
        typeIds[row * width + column] = e.typeIds[column] ?? 0;
      });
    });
    const values = { input_ids: ids, attention_mask: mask, token_type_ids: typeIds };
    const feeds: Record<string, Ort.Tensor> = {};
    for (const input of loaded.inputs) {
      const data = values[input.name];
      feeds[input.name] =
        input.type === 'int32'
          ? new loaded.ort.Tensor('int32', Int32Array.from(data), [rows, width])
          : new loaded.ort.Tensor(
              'int64',
              BigInt64Array.from(data, (n) => BigInt(n)),
              [rows, width],
            );
    }
    let result: Ort.InferenceSession.ReturnType;
    try {
      result = await loaded.session.run(feeds, [loaded.output]);
    } catch (error) {
      throw failed(
        `The model ${modelPath} failed on a batch of ${rows} texts of up to ${width} tokens (${(error as Error)?.message ?? String(error)}); if the model reads fewer tokens, lower maxTokens.`,
        modelPath,
        'modelPath',
        error,
      );
    }
    const tensor = result[loaded.output] as Ort.Tensor | undefined;
    const dims = tensor?.dims ?? [];
    if (!tensor || tensor.type !== 'float32' || !(tensor.data instanceof Float32Array)) {
      throw failed(
        `The model ${modelPath}'s output "${loaded.output}" is ${tensor ? tensor.type : 'missing'}, not float32; export the model in float32 or set outputName.`,
        modelPath,
        'outputName',
      );
    }
    const data = tensor.data;
    const tokenLevel = dims.length === 3;
    if (!(tokenLevel || dims.length === 2) || dims[0] !== rows || (tokenLevel && dims[1] !== width)) {
      throw failed(
        `The model ${modelPath}'s output "${loaded.output}" has shape [${dims.join(', ')}]; expected [${rows}, ${width}, dim] (token vectors) or [${rows}, dim]. Set outputName to such an output.`,
        modelPath,
        'outputName',
      );
    }
    const dim = dims[dims.length - 1]!;
    const out: number[][] = [];
    for (let row = 0; row < rows; row++) {
      const vector = new Array<number>(dim).fill(0);
      if (!tokenLevel) {
        for (let d = 0; d < dim; d++) vector[d] = data[row * dim + d]!;
      } else if (pooling === 'cls') {
        const base = row * width * dim;
        for (let d = 0; d < dim; d++) vector[d] = data[base + d]!;
      } else {
        let kept = 0;
        for (let column = 0; column < width; column++) {
          if (mask[row * width + column] === 0) continue;
          kept++;
          const base = (row * width + column) * dim;
          for (let d = 0; d < dim; d++) vector[d]! += data[base + d]!;
        }
        for (let d = 0; d < dim; d++) vector[d] = vector[d]! / Math.max(kept, 1);
      }
      if (normalize) {
        let norm = 0;
        for (const v of vector) norm += v * v;
        norm = Math.sqrt(norm);
        if (norm > 0) for (let d = 0; d < dim; d++) vector[d] = vector[d]! / norm;
      }
      out.push(vector);
    }
    return out;
  };

  return async (texts: string[]): Promise<number[][]> => {
    const loaded = await load();
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += batchSize)
      out.push(...(await run(loaded, texts.slice(i, i + batchSize))));
    return out;
  };
}
