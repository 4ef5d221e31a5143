/**
 * @module
 * Optional embeddings for tool search: any `embed(texts)` function (a hosted API, a local model),
 * tool vectors computed once per tool text and kept in an optional {@link EmbeddingCache}, cosine
 * ranking, and reciprocal-rank fusion (Cormack, Clarke & Büttcher, 2009) of that ranking with
 * BM25 + graph. Off unless an embedder is given; search never depends on it being reachable.
 */
import { createHash } from 'node:crypto';
import { CodecallError, isCodecallError } from '../errors.js';
import { DEFAULT_EMBEDDING_BATCH_SIZE, DEFAULT_EMBEDDING_TIMEOUT_MS } from '../config/defaults.js';
export { DEFAULT_EMBEDDING_BATCH_SIZE, DEFAULT_EMBEDDING_TIMEOUT_MS };

/**
 * Turns texts into vectors, one per text, in order, all of one dimension. Any provider fits:
 * OpenAI-compatible `/v1/embeddings` ({@link createOpenAIEmbedder}), a local model, a test fake.
 */
export type EmbedFunction = (texts: string[]) => Promise<number[][]>;

/**
 * A store of tool vectors keyed by a hash of the embedded text (the store adds the model to the
 * key), so restarts and unchanged tools cost no embedding calls. {@link SqliteEmbeddingCache}
 * keeps them on disk.
 */
export interface EmbeddingCache {
  /** Vectors for `keys`, in order; `undefined` where absent. */
  get(keys: readonly string[]): Promise<Array<Float32Array | undefined>>;
  /** Stores vectors (the store may evict old ones to stay within its bound). */
  set(entries: ReadonlyArray<readonly [string, Float32Array]>): Promise<void>;
}

/** Characters of one tool's text that are embedded (name, description, parameter names). */
export const DEFAULT_EMBEDDING_TEXT_CHARS = 2_000;
/** Largest vector dimension accepted from an embedder. */
export const DEFAULT_MAX_EMBEDDING_DIMENSIONS = 8_192;
/** The `k` of reciprocal-rank fusion: a hit at rank `r` of one list adds `1 / (k + r)`. */
export const DEFAULT_RRF_K = 60;
/** Hits taken from each list (lexical + graph, and embedding) before fusing. */
export const DEFAULT_FUSION_DEPTH = 50;
/** The hit whose score tells whether a ranking has a head (a page of results, as RM3's rule reads). */
export const DEFAULT_FUSION_FLAT_RANK = 10;

/**
 * True when a ranking has no head: at least `rank` of its hits score `share` of the best or more,
 * so the order of its page says little and an embedding may reorder it. A ranking with a head
 * (one or a few hits clearly above the rest, or fewer than `rank` hits) is kept as it is: with a
 * weak embedding model, reordering it lost more queries than it won (docs/search.md, "Fused
 * against lexical, per fold"). `share` 0 calls every ranking headless. One pass over `scores`.
 */
export function hasNoHead(
  scores: readonly number[],
  share: number,
  rank: number = DEFAULT_FUSION_FLAT_RANK,
): boolean {
  if (share <= 0) return true;
  if (scores.length < rank) return false;
  let best = 0;
  for (const score of scores) if (score > best) best = score;
  const floor = share * best;
  let level = 0;
  for (const score of scores) if (score >= floor && ++level >= rank) return true;
  return false;
}

/** A tool's embedding text: its name, description and parameter names, bounded. */
export function embeddingText(name: string, description: string, parameterNames: string): string {
  return [name, description, parameterNames]
    .filter((part) => part !== '')
    .join('\n')
    .slice(0, DEFAULT_EMBEDDING_TEXT_CHARS);
}

/** The cache key of one text (the cache adds its model). */
export function textHash(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}

function embeddingFailed(message: string, cause?: unknown): CodecallError {
  return new CodecallError('SEARCH_EMBEDDING_FAILED', message, {
    details: { field: 'embed' },
    ...(cause !== undefined ? { cause } : {}),
  });
}

/** Unit-length Float32 copies of `vectors`, checked against `count` and one dimension. */
export function checkVectors(vectors: unknown, count: number, dimensions?: number): Float32Array[] {
  if (!Array.isArray(vectors) || vectors.length !== count) {
    throw embeddingFailed(
      `The embedder returned ${Array.isArray(vectors) ? `${vectors.length} vectors` : 'no array'} for ${count} texts; it must return one vector (number[]) per text, in order.`,
    );
  }
  // Every vector of one model has the first one's length.
  const expected = dimensions ?? (Array.isArray(vectors[0]) ? (vectors[0] as unknown[]).length : undefined);
  return vectors.map((vector: unknown, i) => {
    if (
      !Array.isArray(vector) ||
      vector.length === 0 ||
      vector.length > DEFAULT_MAX_EMBEDDING_DIMENSIONS ||
      (expected !== undefined && vector.length !== expected)
    ) {
      throw embeddingFailed(
        `The embedder's vector ${i} has ${Array.isArray(vector) ? vector.length : 'no'} dimensions; expected ${
          expected !== undefined && expected <= DEFAULT_MAX_EMBEDDING_DIMENSIONS
            ? expected
            : `1 to ${DEFAULT_MAX_EMBEDDING_DIMENSIONS}`
        } (every vector of one model has the same length).`,
      );
    }
    const out = new Float32Array(vector.length);
    let norm = 0;
    for (let d = 0; d < vector.length; d++) {
      const x = vector[d] as unknown;
      if (typeof x !== 'number' || !Number.isFinite(x)) {
        throw embeddingFailed(
          `The embedder's vector ${i} has a non-finite value at ${d}; vectors must be numbers.`,
        );
      }
      out[d] = x;
      norm += x * x;
    }
    norm = Math.sqrt(norm);
    if (norm > 0) for (let d = 0; d < out.length; d++) out[d]! /= norm;
    return out;
  });
}

/** Runs `promise` with a deadline; the error names what timed out and the fix. */
async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(embeddingFailed(`The embedder did not answer within ${ms} ms; check that it is running.`)),
      ms,
    );
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Calls `embed` on `texts` in batches, returning checked unit vectors. */
async function embedAll(
  embed: EmbedFunction,
  texts: readonly string[],
  dimensions: number | undefined,
): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let i = 0; i < texts.length; i += DEFAULT_EMBEDDING_BATCH_SIZE) {
    const batch = texts.slice(i, i + DEFAULT_EMBEDDING_BATCH_SIZE);
    let raw: unknown;
    try {
      raw = await withTimeout(Promise.resolve(embed([...batch])), DEFAULT_EMBEDDING_TIMEOUT_MS);
    } catch (error) {
      if (isCodecallError(error)) throw error;
      throw embeddingFailed(`The embedder failed: ${(error as Error)?.message ?? String(error)}`, error);
    }
    out.push(...checkVectors(raw, batch.length, dimensions ?? out[0]?.length));
  }
  return out;
}

/** Vectors of the catalog's tools, embedded on demand and kept while their text is unchanged. */
export class ToolEmbeddings {
  readonly #embed: EmbedFunction;
  readonly #cache: EmbeddingCache | undefined;
  /** Tool name → the hash of the text embedded and its unit vector. */
  readonly #vectors = new Map<string, { hash: string; vector: Float32Array }>();
  /** Tool name → the text it should have a vector for. */
  readonly #texts = new Map<string, string>();
  #dimensions: number | undefined;
  /** Serialises catalog updates so concurrent searches embed each text once. */
  #updating: Promise<void> = Promise.resolve();

  constructor(embed: EmbedFunction, cache?: EmbeddingCache) {
    this.#embed = embed;
    this.#cache = cache;
  }

  /** Declares the text of a tool (its vector is computed by the next {@link update}). */
  set(name: string, text: string): void {
    this.#texts.set(name, text);
  }

  delete(name: string): void {
    this.#texts.delete(name);
    this.#vectors.delete(name);
  }

  /** Embeds the tools whose text has no vector yet (from the cache first). */
  update(): Promise<void> {
    const run = this.#updating.then(() => this.#update());
    // A failed update must not poison the next one.
    this.#updating = run.catch(() => {});
    return run;
  }

  async #update(): Promise<void> {
    const missing: Array<[string, string, string]> = [];
    for (const [name, text] of this.#texts) {
      const hash = textHash(text);
      if (this.#vectors.get(name)?.hash !== hash) missing.push([name, text, hash]);
    }
    if (missing.length === 0) return;
    const cached = this.#cache ? await this.#cache.get(missing.map(([, , hash]) => hash)) : [];
    const toEmbed: Array<[string, string, string]> = [];
    missing.forEach((item, i) => {
      const vector = cached[i];
      if (vector && (this.#dimensions === undefined || vector.length === this.#dimensions)) {
        this.#dimensions ??= vector.length;
        this.#vectors.set(item[0], { hash: item[2], vector });
      } else toEmbed.push(item);
    });
    if (toEmbed.length === 0) return;
    const vectors = await embedAll(
      this.#embed,
      toEmbed.map(([, text]) => text),
      this.#dimensions,
    );
    this.#dimensions ??= vectors[0]?.length;
    const fresh: Array<[string, Float32Array]> = [];
    toEmbed.forEach(([name, , hash], i) => {
      this.#vectors.set(name, { hash, vector: vectors[i]! });
      fresh.push([hash, vectors[i]!]);
    });
    await this.#cache?.set(fresh);
  }

  /** The unit vector of a query. */
  async embedQuery(text: string): Promise<Float32Array> {
    return (await embedAll(this.#embed, [text], this.#dimensions))[0]!;
  }

  /** The `k` tools most similar to `query` (cosine), best first, among those with a vector. */
  rank(query: Float32Array, k: number): Array<[string, number]> {
    const top: Array<[string, number]> = [];
    for (const [name, { vector }] of this.#vectors) {
      if (!this.#texts.has(name) || vector.length !== query.length) continue;
      let dot = 0;
      for (let d = 0; d < vector.length; d++) dot += vector[d]! * query[d]!;
      if (top.length === k && dot <= top[k - 1]![1]) continue;
      let at = top.length;
      while (at > 0 && (top[at - 1]![1] < dot || (top[at - 1]![1] === dot && top[at - 1]![0] > name))) at--;
      top.splice(at, 0, [name, dot]);
      if (top.length > k) top.pop();
    }
    return top;
  }
}

/**
 * Reciprocal-rank fusion of ranked name lists: each list adds `weight / (k + rank)` (rank from 1)
 * to each of its names. Returns names with their fused score, best first (ties keep the order of
 * the first list, then the second…).
 */
export function fuseRankings(
  lists: ReadonlyArray<{ names: readonly string[]; weight: number }>,
  k: number = DEFAULT_RRF_K,
): Array<[string, number]> {
  const scores = new Map<string, number>();
  const firstSeen = new Map<string, number>();
  let position = 0;
  for (const { names, weight } of lists) {
    // A list of weight 0 adds nothing, not even its names.
    if (!(weight > 0)) continue;
    names.forEach((name, i) => {
      scores.set(name, (scores.get(name) ?? 0) + weight / (k + i + 1));
      if (!firstSeen.has(name)) firstSeen.set(name, position++);
    });
  }
  return [...scores].sort((a, b) => b[1] - a[1] || firstSeen.get(a[0])! - firstSeen.get(b[0])!);
}
