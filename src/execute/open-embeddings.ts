/**
 * @module
 * From the configuration's `search.embeddings` section to the options of `createToolSearch`: an
 * OpenAI-compatible embedder or a model on disk (`onnx`), and, unless turned off, its on-disk
 * vector cache.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { CodecallError } from '../errors.js';
import {
  createOnnxEmbedder,
  createOpenAIEmbedder,
  type EmbedFunction,
  type EmbeddingCache,
  type OnnxPooling,
} from '../search/index.js';
import { SqliteEmbeddingCache } from '../store/index.js';
import {
  DEFAULT_EMBEDDING_CACHE_PATH,
  DEFAULT_ONNX_EMBEDDING_BATCH_SIZE,
  DEFAULT_ONNX_MODEL_MAX_BYTES,
  DEFAULT_ONNX_TOKENIZER_FILE,
} from '../config/defaults.js';
export { DEFAULT_EMBEDDING_CACHE_PATH };

/** The `search.embeddings.onnx` section: a sentence-embedding model already on disk. */
export interface OnnxEmbeddingsConfig {
  /** The `.onnx` file, relative to the configuration's folder or absolute. */
  model: string;
  /** Its `tokenizer.json`. @defaultValue `tokenizer.json` beside the model, then in its parent folder */
  tokenizer?: string | undefined;
  /** @defaultValue `'mean'` */
  pooling?: OnnxPooling | undefined;
  /** @defaultValue true */
  normalize?: boolean | undefined;
  /** @defaultValue `DEFAULT_ONNX_EMBEDDING_MAX_TOKENS` */
  maxTokens?: number | undefined;
  /** The model output to read. @defaultValue `last_hidden_state`, `token_embeddings` or `sentence_embedding` */
  output?: string | undefined;
  /** @defaultValue `DEFAULT_ONNX_EMBEDDING_THREADS` */
  threads?: number | undefined;
}

/** The `search.embeddings` section of the configuration: `baseUrl` + `model`, or `onnx`. */
export interface EmbeddingsConfig {
  /** The API base up to `/v1` (OpenAI, Ollama, vLLM, LM Studio…). */
  baseUrl?: string | undefined;
  /** The API's embedding model. */
  model?: string | undefined;
  /** `${VAR}` expansion keeps it out of the file: `"apiKey": "${OPENAI_API_KEY}"`. */
  apiKey?: string | undefined;
  dimensions?: number | undefined;
  /** A model on disk instead of an API (nothing is downloaded). */
  onnx?: OnnxEmbeddingsConfig | undefined;
  /** The vector cache file, or `false` for none. @defaultValue {@link DEFAULT_EMBEDDING_CACHE_PATH} */
  cache?: string | false | undefined;
  /** @defaultValue `DEFAULT_EMBEDDING_CACHE_MAX_ENTRIES` */
  maxCacheEntries?: number | undefined;
  /** Texts per request (per run of an `onnx` model). @defaultValue `DEFAULT_EMBEDDING_BATCH_SIZE`; `DEFAULT_ONNX_EMBEDDING_BATCH_SIZE` with `onnx` */
  batchSize?: number | undefined;
  /** Deadline of one request. @defaultValue `DEFAULT_EMBEDDING_TIMEOUT_MS` */
  timeoutMs?: number | undefined;
  /** Weight of the embedding ranking in the fusion. @defaultValue `DEFAULT_EMBEDDING_WEIGHT` */
  weight?: number | undefined;
  /** Hits of the default ranking kept in place by the fusion. @defaultValue `DEFAULT_EMBEDDING_GUARD` */
  guard?: number | undefined;
  /** Fuse only rankings whose 10th hit scores at least this share of the best. @defaultValue `DEFAULT_EMBEDDING_FLAT_SHARE` */
  flatShare?: number | undefined;
}

/** SHA-256 of a file (read in a stream, at most `max` bytes), or `undefined` when it cannot be read. */
async function fileHash(path: string, max: number): Promise<string | undefined> {
  try {
    const hash = createHash('sha256');
    let total = 0;
    for await (const chunk of createReadStream(path)) {
      total += (chunk as Buffer).byteLength;
      if (total > max) return undefined;
      hash.update(chunk as Buffer);
    }
    return hash.digest('base64url');
  } catch {
    return undefined;
  }
}

/**
 * The cache's model name for a model on disk: the hashes of its files and the settings that
 * change its vectors, so a changed file never reuses old vectors. `undefined` when a file cannot
 * be read yet (then no cache: the embedder reports what is missing).
 */
async function onnxCacheModel(
  config: OnnxEmbeddingsConfig,
  model: string,
  tokenizer: string | undefined,
): Promise<string | undefined> {
  const modelHash = await fileHash(model, DEFAULT_ONNX_MODEL_MAX_BYTES);
  const candidates = tokenizer
    ? [tokenizer]
    : [
        join(dirname(model), DEFAULT_ONNX_TOKENIZER_FILE),
        join(dirname(model), '..', DEFAULT_ONNX_TOKENIZER_FILE),
      ];
  let tokenizerHash: string | undefined;
  for (const path of candidates) {
    tokenizerHash = await fileHash(path, DEFAULT_ONNX_MODEL_MAX_BYTES);
    if (tokenizerHash) break;
  }
  if (!modelHash || !tokenizerHash) return undefined;
  const settings = [
    config.pooling ?? 'mean',
    config.normalize ?? true,
    config.maxTokens ?? '',
    config.output ?? '',
  ];
  return `onnx:${modelHash}:${tokenizerHash}:${settings.join(':')}`;
}

/** What {@link openEmbeddings} returns: spread into `createToolSearch`, close when done. */
export interface OpenedEmbeddings {
  embed: EmbedFunction;
  embeddingCache?: EmbeddingCache;
  embeddingWeight?: number;
  embeddingGuard?: number;
  embeddingFlatShare?: number;
  close(): Promise<void>;
}

/**
 * Opens the embedder (and its cache) a configuration describes.
 *
 * @example
 * ```ts
 * const embeddings = await openEmbeddings({ baseUrl: 'http://localhost:11434/v1', model: 'nomic-embed-text' }, configDir);
 * const search = createToolSearch({ tools, ...embeddings });
 * await search.searchAsync('make a chart of sales');
 * await embeddings.close();
 * ```
 */
export async function openEmbeddings(config: EmbeddingsConfig, baseDir: string): Promise<OpenedEmbeddings> {
  if (
    typeof config !== 'object' ||
    config === null ||
    (config.onnx === undefined) === (config.baseUrl === undefined)
  ) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      'search.embeddings needs { baseUrl, model } (an embeddings API) or { onnx: { model } } (a model on disk), exactly one.',
      { details: { field: 'search.embeddings' } },
    );
  }
  const local = (path: string): string => (isAbsolute(path) ? path : resolve(baseDir, path));
  let embed: EmbedFunction;
  let cacheModel: string | undefined;
  if (config.onnx !== undefined) {
    const onnx = config.onnx;
    const model = local(onnx.model);
    const tokenizer = onnx.tokenizer === undefined ? undefined : local(onnx.tokenizer);
    embed = createOnnxEmbedder({
      modelPath: model,
      tokenizerPath: tokenizer,
      pooling: onnx.pooling,
      normalize: onnx.normalize,
      maxTokens: onnx.maxTokens,
      outputName: onnx.output,
      threads: onnx.threads,
      batchSize: config.batchSize ?? DEFAULT_ONNX_EMBEDDING_BATCH_SIZE,
    });
    cacheModel = config.cache === false ? undefined : await onnxCacheModel(onnx, model, tokenizer);
  } else {
    embed = createOpenAIEmbedder({
      baseUrl: config.baseUrl!,
      model: config.model!,
      apiKey: config.apiKey,
      dimensions: config.dimensions,
      ...(config.batchSize !== undefined ? { batchSize: config.batchSize } : {}),
      ...(config.timeoutMs !== undefined ? { timeoutMs: config.timeoutMs } : {}),
    });
    cacheModel = `${config.model}${config.dimensions ? `@${config.dimensions}` : ''}`;
  }
  const out: OpenedEmbeddings = { embed, close: () => Promise.resolve() };
  if (config.weight !== undefined) out.embeddingWeight = config.weight;
  if (config.guard !== undefined) out.embeddingGuard = config.guard;
  if (config.flatShare !== undefined) out.embeddingFlatShare = config.flatShare;
  if (config.cache !== false && cacheModel !== undefined) {
    const path = config.cache ?? DEFAULT_EMBEDDING_CACHE_PATH;
    const cache = await SqliteEmbeddingCache.open({
      path: path === ':memory:' ? path : local(path),
      model: cacheModel,
      ...(config.maxCacheEntries !== undefined ? { maxEntries: config.maxCacheEntries } : {}),
    });
    out.embeddingCache = cache;
    out.close = () => cache.close();
  }
  return out;
}
