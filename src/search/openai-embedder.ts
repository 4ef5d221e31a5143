/**
 * @module
 * A ready {@link EmbedFunction} for OpenAI-compatible `POST /v1/embeddings` endpoints (OpenAI,
 * Ollama, vLLM, LM Studio, llama.cpp server…) over plain `fetch`: one request per batch, a
 * deadline per request, a bounded response, and errors that name the endpoint and the fix
 * (never the key).
 */
import { CodecallError } from '../errors.js';
import {
  DEFAULT_EMBEDDING_BATCH_SIZE,
  DEFAULT_EMBEDDING_TIMEOUT_MS,
  type EmbedFunction,
} from './embeddings.js';

/** Bytes of one embeddings response that are read (larger answers are refused). */
export const DEFAULT_EMBEDDING_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
/** Characters of an error response quoted in the error message. */
const ERROR_BODY_CHARS = 300;

/** Options of {@link createOpenAIEmbedder}. */
export interface OpenAIEmbedderOptions {
  /**
   * The API base, up to and including `/v1`: `https://api.openai.com/v1`,
   * `http://localhost:11434/v1` (Ollama), `http://localhost:8000/v1` (vLLM),
   * `http://localhost:1234/v1` (LM Studio).
   */
  baseUrl: string;
  /** The embedding model (`text-embedding-3-small`, `nomic-embed-text`…). */
  model: string;
  /** Sent as `Authorization: Bearer …` when given (local servers usually need none). */
  apiKey?: string | undefined;
  /** Asks for shorter vectors where the model supports it (`dimensions` of the OpenAI API). */
  dimensions?: number | undefined;
  /**
   * Texts per request.
   * @defaultValue {@link DEFAULT_EMBEDDING_BATCH_SIZE}
   */
  batchSize?: number;
  /**
   * Deadline of one request.
   * @defaultValue {@link DEFAULT_EMBEDDING_TIMEOUT_MS}
   */
  timeoutMs?: number;
  /**
   * Bytes of one response that are read.
   * @defaultValue {@link DEFAULT_EMBEDDING_MAX_RESPONSE_BYTES}
   */
  maxResponseBytes?: number;
  /** The `fetch` to use (a proxy-aware one, say). @defaultValue globalThis.fetch */
  fetch?: typeof globalThis.fetch;
}

function failed(message: string, details: Record<string, unknown>, cause?: unknown): CodecallError {
  return new CodecallError('SEARCH_EMBEDDING_FAILED', message, {
    details,
    ...(cause !== undefined ? { cause } : {}),
  });
}

function positive(value: number | undefined, fallback: number, field: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) {
    throw new CodecallError('INVALID_ARGUMENT', `Embedder option "${field}" must be a positive integer.`, {
      details: { field },
    });
  }
  return value;
}

/** Reads at most `max` bytes of a response body as text; longer bodies are refused. */
async function readBounded(response: Response, max: number, url: string): Promise<string> {
  const length = Number(response.headers.get('content-length') ?? NaN);
  if (Number.isFinite(length) && length > max) {
    await response.body?.cancel();
    throw failed(`${url} answered ${length} bytes, more than the ${max} read; lower batchSize.`, { url });
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel();
      throw failed(`${url} answered more than the ${max} bytes read; lower batchSize.`, { url });
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * An embedder for an OpenAI-compatible `/v1/embeddings` endpoint.
 *
 * @example
 * ```ts
 * const embed = createOpenAIEmbedder({ baseUrl: 'http://localhost:11434/v1', model: 'nomic-embed-text' });
 * const search = createToolSearch({ tools, embed });
 * const { hits } = await search.searchAsync('make a chart of sales');
 * ```
 */
export function createOpenAIEmbedder(options: OpenAIEmbedderOptions): EmbedFunction {
  if (typeof options !== 'object' || options === null) {
    throw new CodecallError('INVALID_ARGUMENT', 'createOpenAIEmbedder needs { baseUrl, model }.', {
      details: { field: 'options' },
    });
  }
  let base: URL;
  try {
    base = new URL(String(options.baseUrl).replace(/\/+$/, '') + '/');
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `Embedder "baseUrl" must be an http(s) URL up to /v1 (e.g. http://localhost:11434/v1); got ${JSON.stringify(options.baseUrl)}.`,
      { details: { field: 'baseUrl' } },
    );
  }
  if (typeof options.model !== 'string' || options.model.trim() === '') {
    throw new CodecallError('INVALID_ARGUMENT', 'Embedder "model" must be a non-empty string.', {
      details: { field: 'model' },
    });
  }
  const url = new URL('embeddings', base).toString();
  const batchSize = positive(options.batchSize, DEFAULT_EMBEDDING_BATCH_SIZE, 'batchSize');
  const timeoutMs = positive(options.timeoutMs, DEFAULT_EMBEDDING_TIMEOUT_MS, 'timeoutMs');
  const maxBytes = positive(
    options.maxResponseBytes,
    DEFAULT_EMBEDDING_MAX_RESPONSE_BYTES,
    'maxResponseBytes',
  );
  const dimensions =
    options.dimensions === undefined ? undefined : positive(options.dimensions, 0, 'dimensions');
  const doFetch = options.fetch ?? globalThis.fetch;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;

  const request = async (input: string[]): Promise<number[][]> => {
    let response: Response;
    try {
      response = await doFetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          model: options.model,
          input,
          encoding_format: 'float',
          ...(dimensions ? { dimensions } : {}),
        }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      const timedOut = (error as Error)?.name === 'TimeoutError';
      throw failed(
        timedOut
          ? `${url} did not answer within ${timeoutMs} ms; check that the embedding server is running.`
          : `Cannot reach ${url}: ${(error as Error)?.message ?? String(error)}. Check baseUrl and that the server is running.`,
        { url },
        error,
      );
    }
    const text = await readBounded(response, maxBytes, url);
    if (!response.ok) {
      const hint =
        response.status === 401 || response.status === 403
          ? ' Check the API key.'
          : response.status === 404
            ? ' Check baseUrl (it ends with /v1) and the model name.'
            : '';
      throw failed(`${url} answered HTTP ${response.status}: ${text.slice(0, ERROR_BODY_CHARS)}.${hint}`, {
        url,
        status: response.status,
      });
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (error) {
      throw failed(
        `${url} answered something that is not JSON; is it an OpenAI-compatible API?`,
        { url },
        error,
      );
    }
    const data = (body as { data?: unknown } | null)?.data;
    if (!Array.isArray(data) || data.length !== input.length) {
      throw failed(
        `${url} answered ${Array.isArray(data) ? data.length : 'no'} embeddings for ${input.length} inputs; expected { data: [{ index, embedding }] } with one per input.`,
        { url },
      );
    }
    const out = new Array<number[]>(input.length);
    data.forEach((item: unknown, position) => {
      const { index, embedding } = (item ?? {}) as { index?: unknown; embedding?: unknown };
      const at = typeof index === 'number' ? index : position;
      if (
        !Number.isInteger(at) ||
        at < 0 ||
        at >= input.length ||
        out[at] !== undefined ||
        !Array.isArray(embedding)
      ) {
        throw failed(
          `${url} answered a malformed embedding at data[${position}] (needs index and embedding: number[]).`,
          {
            url,
          },
        );
      }
      out[at] = embedding as number[];
    });
    return out;
  };

  return async (texts: string[]): Promise<number[][]> => {
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += batchSize)
      out.push(...(await request(texts.slice(i, i + batchSize))));
    return out;
  };
}
