/**
 * @module
 * From the configuration's `search.embeddings` section to the options of `createToolSearch`: an
 * OpenAI-compatible embedder and, unless turned off, its on-disk vector cache.
 */
import { isAbsolute, resolve } from 'node:path';
import { CodecallError } from '../errors.js';
import { createOpenAIEmbedder, type EmbedFunction, type EmbeddingCache } from '../search/index.js';
import { SqliteEmbeddingCache } from '../store/index.js';
import { DEFAULT_EMBEDDING_CACHE_PATH } from '../config/defaults.js';
export { DEFAULT_EMBEDDING_CACHE_PATH };

/** The `search.embeddings` section of the configuration. */
export interface EmbeddingsConfig {
  /** The API base up to `/v1` (OpenAI, Ollama, vLLM, LM Studio…). */
  baseUrl: string;
  model: string;
  /** `${VAR}` expansion keeps it out of the file: `"apiKey": "${OPENAI_API_KEY}"`. */
  apiKey?: string | undefined;
  dimensions?: number | undefined;
  /** The vector cache file, or `false` for none. @defaultValue {@link DEFAULT_EMBEDDING_CACHE_PATH} */
  cache?: string | false | undefined;
  /** @defaultValue `DEFAULT_EMBEDDING_CACHE_MAX_ENTRIES` */
  maxCacheEntries?: number | undefined;
  /** Texts per request. @defaultValue `DEFAULT_EMBEDDING_BATCH_SIZE` */
  batchSize?: number | undefined;
  /** Deadline of one request. @defaultValue `DEFAULT_EMBEDDING_TIMEOUT_MS` */
  timeoutMs?: number | undefined;
  /** Weight of the embedding ranking in the fusion. @defaultValue 1 */
  weight?: number | undefined;
}

/** What {@link openEmbeddings} returns: spread into `createToolSearch`, close when done. */
export interface OpenedEmbeddings {
  embed: EmbedFunction;
  embeddingCache?: EmbeddingCache;
  embeddingWeight?: number;
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
  if (typeof config !== 'object' || config === null) {
    throw new CodecallError('INVALID_ARGUMENT', 'search.embeddings needs { baseUrl, model }.', {
      details: { field: 'search.embeddings' },
    });
  }
  const embed = createOpenAIEmbedder({
    baseUrl: config.baseUrl,
    model: config.model,
    apiKey: config.apiKey,
    dimensions: config.dimensions,
    ...(config.batchSize !== undefined ? { batchSize: config.batchSize } : {}),
    ...(config.timeoutMs !== undefined ? { timeoutMs: config.timeoutMs } : {}),
  });
  const out: OpenedEmbeddings = { embed, close: () => Promise.resolve() };
  if (config.weight !== undefined) out.embeddingWeight = config.weight;
  if (config.cache !== false) {
    const path = config.cache ?? DEFAULT_EMBEDDING_CACHE_PATH;
    const cache = await SqliteEmbeddingCache.open({
      path: path === ':memory:' || isAbsolute(path) ? path : resolve(baseDir, path),
      model: `${config.model}${config.dimensions ? `@${config.dimensions}` : ''}`,
      ...(config.maxCacheEntries !== undefined ? { maxEntries: config.maxCacheEntries } : {}),
    });
    out.embeddingCache = cache;
    out.close = () => cache.close();
  }
  return out;
}
