/**
 * @module
 * Maps Gemini `generateContent` responses to a provider-neutral {@link GenerateResponse}: text
 * parts (thoughts left out) and `functionCall` parts in order, with each call's
 * `thoughtSignature` kept as `providerData`; the finish reason; usage with the implicit-cache
 * hits (`cachedContentTokenCount`) as cache reads. A streamed answer is folded chunk by chunk by
 * {@link GeminiResponseAccumulator}, which reports text as it comes.
 */
import type { GenerateContentResponse } from '@google/genai';
import { CodecallError } from '../../errors.js';
import type { ContentPart, GenerateResponse, StopReason } from '../language-model.js';
import { GEMINI_SYNTHETIC_ID_PREFIX } from './convert-to-gemini.js';

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

const REFUSALS = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'LANGUAGE',
]);

/** `STOP` → `end_turn` (`tool_use` when calls came), `MAX_TOKENS`, safety blocks → `refusal`. */
export function mapGeminiFinishReason(reason: unknown, hasToolCalls: boolean): StopReason {
  if (hasToolCalls) return 'tool_use';
  if (reason === 'STOP') return 'end_turn';
  if (reason === 'MAX_TOKENS') return 'max_tokens';
  if (typeof reason === 'string' && REFUSALS.has(reason)) return 'refusal';
  return 'other';
}

/** Folds one or more response chunks (a whole response is one chunk) into a response. */
export class GeminiResponseAccumulator {
  readonly #content: ContentPart[] = [];
  readonly #onTextDelta: ((text: string) => void) | undefined;
  #finishReason: unknown;
  #blockReason: unknown;
  #usage: Record<string, unknown> = {};
  #sawCandidate = false;
  #calls = 0;
  #last: unknown;

  constructor(onTextDelta?: (text: string) => void) {
    this.#onTextDelta = onTextDelta;
  }

  add(chunk: GenerateContentResponse): void {
    this.#last = chunk;
    const c = record(chunk);
    if (c['usageMetadata'] !== undefined) this.#usage = record(c['usageMetadata']);
    const feedback = record(c['promptFeedback']);
    if (feedback['blockReason'] !== undefined) this.#blockReason = feedback['blockReason'];
    const candidate = Array.isArray(c['candidates']) ? record(c['candidates'][0]) : undefined;
    if (candidate === undefined) return;
    this.#sawCandidate = true;
    if (candidate['finishReason'] !== undefined) this.#finishReason = candidate['finishReason'];
    const parts = record(candidate['content'])['parts'];
    if (!Array.isArray(parts)) return;
    for (const raw of parts) {
      const part = record(raw);
      const call = record(part['functionCall']);
      if (typeof call['name'] === 'string') {
        const id =
          typeof call['id'] === 'string' && call['id'] !== ''
            ? call['id']
            : `${GEMINI_SYNTHETIC_ID_PREFIX}${this.#calls}`;
        this.#calls += 1;
        const signature = part['thoughtSignature'];
        this.#content.push({
          type: 'tool_call',
          id,
          name: call['name'],
          input: call['args'] ?? {},
          ...(typeof signature === 'string' ? { providerData: { thoughtSignature: signature } } : {}),
        });
      } else if (typeof part['text'] === 'string' && part['thought'] !== true && part['text'] !== '') {
        const previous = this.#content.at(-1);
        if (previous?.type === 'text') previous.text += part['text'];
        else this.#content.push({ type: 'text', text: part['text'] });
        this.#onTextDelta?.(part['text']);
      }
    }
  }

  /**
   * The response so far, as a whole.
   *
   * @throws CodecallError `PROVIDER_REQUEST_FAILED` when nothing came (an empty stream), or a
   * stream ended before a finish reason (the connection closed early).
   */
  finish(options: { streamed: boolean }): GenerateResponse {
    const blocked = !this.#sawCandidate && this.#blockReason !== undefined;
    if (!blocked && (!this.#sawCandidate || (options.streamed && this.#finishReason === undefined))) {
      throw new CodecallError(
        'PROVIDER_REQUEST_FAILED',
        `Gemini ${options.streamed ? 'stream ended before a finish reason' : 'response had no candidates'}: the answer is missing or incomplete.`,
        { details: { provider: 'Gemini', retryable: false } },
      );
    }
    const cacheReadTokens = count(this.#usage['cachedContentTokenCount']);
    return {
      content: this.#content,
      stopReason: blocked
        ? 'refusal'
        : mapGeminiFinishReason(
            this.#finishReason,
            this.#content.some((part) => part.type === 'tool_call'),
          ),
      usage: {
        // promptTokenCount already counts the cached tokens.
        inputTokens: count(this.#usage['promptTokenCount']) + count(this.#usage['toolUsePromptTokenCount']),
        outputTokens: count(this.#usage['candidatesTokenCount']) + count(this.#usage['thoughtsTokenCount']),
        cacheReadTokens,
        cacheWriteTokens: 0,
      },
      raw: this.#last,
    };
  }
}

/** Converts one whole `generateContent` response. */
export function convertFromGeminiResponse(response: GenerateContentResponse): GenerateResponse {
  const accumulator = new GeminiResponseAccumulator();
  accumulator.add(response);
  return accumulator.finish({ streamed: false });
}
