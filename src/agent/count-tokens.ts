/**
 * @module
 * Token counting for the savings meter, with a real BPE tokenizer: js-tiktoken's `o200k_base`
 * (GPT-4o / GPT-4.1 family). Claude's tokenizer is not public and differs by a few percent, so
 * the counts are an estimate — used consistently for both sides of the comparison (what entered
 * the model's context vs. what direct tool calling would have cost), which is what matters.
 *
 * The ranks are loaded lazily on first use (≈0.5 s once per process). Long runs of one character
 * class (letters, punctuation, whitespace — 200 KB of `aaaa…` or `====…`) make BPE quadratic, so
 * such runs are counted in short slices: exact for ordinary text, a close estimate for those runs.
 *
 * BPE costs about 0.4 ms per KB, so the agent never counts on its own thread:
 * {@link countTokensOffThread} sends texts to one worker thread (started on first use, `unref`ed,
 * loading the ranks there), and falls back to counting here only when the worker cannot run
 * (no built `dist/agent/count-tokens-worker.js`, or the worker died).
 *
 * js-tiktoken is an optional peer dependency. Without it, every count is an estimate from the
 * text's length ({@link estimateTokens}), and {@link tokenizerName} says so (`'estimate'`): the
 * savings report carries that name, so a figure is never mistaken for a tokenizer's count.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Tiktoken, TiktokenBPE } from 'js-tiktoken/lite';
import type { GenerateRequest, Message, ToolDefinition } from '../providers/language-model.js';
import { findDistFile } from '../util/dist-file.js';
import { explainImportError, isPackageMissing } from '../util/optional-package.js';

/** Runs this long of one character class are counted in slices (BPE cost is quadratic in run length). */
const LONG_RUN = /[\p{L}\p{M}]{64,}|[^\s\p{L}\p{N}]{64,}|\s{64,}/gu;
/** Characters per slice of a long run. */
const RUN_SLICE_CHARS = 32;
/** Distinct slices whose counts are memoised (repeated runs cost one encode). */
const MAX_MEMO_ENTRIES = 4_096;
/** Characters per token of the estimate used without js-tiktoken (o200k_base averages about 4 on English and JSON). */
const ESTIMATE_CHARS_PER_TOKEN = 4;

/** What counted the tokens: js-tiktoken's `o200k_base`, or the length estimate when js-tiktoken is not installed. */
export type TokenizerName = 'o200k_base' | 'estimate';

const require = createRequire(import.meta.url);
/** The loaded encoder; `null` once js-tiktoken was found missing. */
let encoder: Tiktoken | null | undefined;
let installed: boolean | undefined;
const sliceMemo = new Map<string, number>();

/** The optional package that counts tokens, and the feature named when it cannot load. */
const TOKENIZER_PACKAGE = 'js-tiktoken';
const TOKENIZER_FEATURE = 'Token counting (o200k_base)';

/**
 * Returns when `error` says js-tiktoken itself is not installed (counts fall back to the
 * estimate); throws any other failure to load it (a package it imports is missing), explained.
 */
function rethrowUnlessTokenizerMissing(error: unknown): void {
  if (!isPackageMissing(error, TOKENIZER_PACKAGE)) {
    throw explainImportError(error, TOKENIZER_PACKAGE, TOKENIZER_FEATURE);
  }
}

/**
 * The tokenizer {@link countTokens} uses in this process: `'o200k_base'` when js-tiktoken is
 * installed, else `'estimate'` (see {@link estimateTokens}). Checks the install without loading it.
 *
 * @example
 * ```ts
 * if (tokenizerName() === 'estimate') console.warn('token counts are estimates: npm install js-tiktoken');
 * ```
 */
export function tokenizerName(): TokenizerName {
  if (installed === undefined) {
    try {
      require.resolve('js-tiktoken/lite');
      installed = true;
    } catch (error) {
      rethrowUnlessTokenizerMissing(error);
      installed = false;
    }
  }
  return installed && encoder !== null ? 'o200k_base' : 'estimate';
}

function getEncoder(): Tiktoken | null {
  if (encoder === undefined) {
    // Synchronous lazy load: the ranks are several MB and only needed once something is counted.
    // The tokenizer module itself is required here too, so importing codecall does not load it.
    try {
      const { Tiktoken: Encoder } = require('js-tiktoken/lite') as { Tiktoken: typeof Tiktoken };
      const ranks = require('js-tiktoken/ranks/o200k_base') as TiktokenBPE & { default?: TiktokenBPE };
      encoder = new Encoder(ranks.default ?? ranks);
    } catch (error) {
      rethrowUnlessTokenizerMissing(error);
      encoder = null;
    }
  }
  return encoder;
}

/**
 * The token estimate used when js-tiktoken is not installed: one token per
 * {@link ESTIMATE_CHARS_PER_TOKEN} characters, rounded up.
 *
 * @example
 * ```ts
 * estimateTokens('Hello, world!'); // 4
 * ```
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / ESTIMATE_CHARS_PER_TOKEN);
}

function encodeLength(text: string): number {
  const bpe = getEncoder();
  if (bpe === null) return estimateTokens(text);
  // Special-token text such as `<|endoftext|>` is counted as ordinary text, never rejected.
  return bpe.encode(text, [], []).length;
}

function countSlice(slice: string): number {
  const known = sliceMemo.get(slice);
  if (known !== undefined) return known;
  const count = encodeLength(slice);
  if (sliceMemo.size < MAX_MEMO_ENTRIES) sliceMemo.set(slice, count);
  return count;
}

/**
 * Number of `o200k_base` tokens in `text` (an estimate of what any model would count; see the
 * module comment), or {@link estimateTokens} when js-tiktoken is not installed
 * ({@link tokenizerName}).
 *
 * @example
 * ```ts
 * countTokens('Hello, world!'); // 4
 * ```
 */
export function countTokens(text: string): number {
  if (text === '') return 0;
  if (getEncoder() === null) return estimateTokens(text);
  let total = 0;
  let last = 0;
  for (const match of text.matchAll(LONG_RUN)) {
    const start = match.index;
    if (start > last) total += encodeLength(text.slice(last, start));
    const run = match[0];
    for (let offset = 0; offset < run.length; offset += RUN_SLICE_CHARS) {
      total += countSlice(run.slice(offset, offset + RUN_SLICE_CHARS));
    }
    last = start + run.length;
  }
  if (last < text.length) total += encodeLength(text.slice(last));
  return total;
}

/** Tokens of tool definitions as a provider sends them (name, description, input schema as JSON). */
export function countToolDefinitionTokens(tools: readonly ToolDefinition[]): number {
  let total = 0;
  for (const tool of tools) {
    total += countTokens(
      JSON.stringify({ name: tool.name, description: tool.description, input_schema: tool.inputSchema }),
    );
  }
  return total;
}

function countMessage(message: Message): number {
  switch (message.role) {
    case 'user':
      return countTokens(message.content);
    case 'assistant': {
      let total = 0;
      for (const part of message.content) {
        total +=
          part.type === 'text'
            ? countTokens(part.text)
            : countTokens(part.name) +
              countTokens(typeof part.input === 'string' ? part.input : JSON.stringify(part.input ?? {}));
      }
      return total;
    }
    case 'tool': {
      let total = 0;
      for (const result of message.results) total += countTokens(result.content);
      return total;
    }
  }
}

/**
 * Tokens of everything a request puts in the model's context: system prompt, every message
 * (text, tool-call names and arguments, tool results) and every tool definition. Per-message
 * framing tokens of each provider are not counted.
 */
export function countMessageTokens(request: GenerateRequest): number {
  let total = request.system === undefined ? 0 : countTokens(request.system);
  for (const message of request.messages) total += countMessage(message);
  return total + countToolDefinitionTokens(request.tools);
}

/** A request to the counting worker and its answer. */
export interface CountTokensMessage {
  id: number;
  texts: string[];
}
/** The counting worker's answer to a {@link CountTokensMessage}. */
export interface CountTokensReply {
  id: number;
  counts: number[];
}

interface PendingCount {
  texts: string[];
  resolve: (counts: number[]) => void;
}

/** One worker thread per process that counts tokens; `undefined` once it cannot run. */
class CountingWorker {
  readonly #worker: Worker;
  readonly #pending = new Map<number, PendingCount>();
  #nextId = 0;
  #broken = false;

  constructor(entry: string) {
    this.#worker = new Worker(entry);
    this.#worker.unref();
    this.#worker.on('message', (reply: CountTokensReply) => {
      const pending = this.#pending.get(reply.id);
      if (pending === undefined) return;
      this.#pending.delete(reply.id);
      if (this.#pending.size === 0) this.#worker.unref();
      pending.resolve(reply.counts);
    });
    const fail = (): void => {
      this.#broken = true;
      // What was sent and never answered is counted here instead.
      for (const pending of this.#pending.values()) pending.resolve(pending.texts.map(countTokens));
      this.#pending.clear();
    };
    this.#worker.on('error', fail);
    this.#worker.on('exit', fail);
  }

  get broken(): boolean {
    return this.#broken;
  }

  count(texts: string[]): Promise<number[]> {
    const id = this.#nextId++;
    return new Promise((resolve) => {
      this.#pending.set(id, { texts, resolve });
      // Keep the process alive while an answer is due, not after.
      this.#worker.ref();
      this.#worker.postMessage({ id, texts } satisfies CountTokensMessage);
    });
  }
}

let countingWorker: CountingWorker | undefined;
let workerUnavailable = false;

function getCountingWorker(): CountingWorker | undefined {
  if (countingWorker?.broken) {
    countingWorker = undefined;
    workerUnavailable = true;
  }
  if (countingWorker === undefined && !workerUnavailable) {
    const entry = findDistFile('agent/count-tokens-worker.js');
    if (entry === undefined) workerUnavailable = true;
    else {
      try {
        countingWorker = new CountingWorker(entry);
      } catch {
        workerUnavailable = true;
      }
    }
  }
  return countingWorker;
}

/**
 * Counts each text like {@link countTokens}, on a worker thread, so the caller's event loop never
 * stalls on BPE (about 0.4 ms per KB). Texts sent together are counted in one round trip. When
 * the worker cannot run, counts here, after yielding once (`setImmediate`).
 *
 * @example
 * ```ts
 * const [a, b] = await countTokensOffThread(['Hello, world!', JSON.stringify(rows)]);
 * ```
 */
export async function countTokensOffThread(texts: readonly string[]): Promise<number[]> {
  if (texts.every((text) => text === '')) return texts.map(() => 0);
  const worker = getCountingWorker();
  if (worker !== undefined) return worker.count([...texts]);
  await new Promise((resolve) => setImmediate(resolve));
  return texts.map(countTokens);
}
