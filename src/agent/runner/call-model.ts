/**
 * @module
 * One model request of a step. When text is wanted as it is written (`stream()`), a model with
 * a `stream` method is asked through it and each delta reported; a model without one is asked
 * with `generate` and its text reported whole once the response is in. `run()` asks with
 * `generate`: nobody reads the deltas.
 */
import type { GenerateRequest, GenerateResponse, LanguageModel } from '../../providers/language-model.js';

/** Options of {@link callModel}. */
export interface CallModelOptions {
  signal: AbortSignal;
  /** Called with the model's text as it arrives; absent when nobody streams. */
  onTextDelta?: ((text: string) => void) | undefined;
}

/** Asks `model` for one response; see the module comment. */
export async function callModel(
  model: LanguageModel,
  request: GenerateRequest,
  options: CallModelOptions,
): Promise<GenerateResponse> {
  const { signal, onTextDelta } = options;
  if (onTextDelta === undefined) return model.generate(request, { signal });
  if (typeof model.stream === 'function') return model.stream(request, { signal, onTextDelta });
  const response = await model.generate(request, { signal });
  const text = response.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
  if (text !== '') onTextDelta(text);
  return response;
}
