/**
 * @module
 * The reasons search gives for each hit, in words the model reads: which query words matched
 * which fields, which graph edge brought a tool in, and the query's own words for its terms.
 */
import type { Bm25Index } from './bm25.js';
import { describeLink } from './catalog-links.js';
import type { Step } from './beam-walk.js';
import { tokenize, type TokenizeOptions } from './tokenize.js';

/** Names of the BM25F fields, in index order, as reasons name them. */
export const FIELD_LABELS = [
  'name',
  'server',
  'description',
  'parameter names',
  'parameter descriptions',
  'input examples',
] as const;

/** Query words quoted per field in a lexical reason. */
const MAX_WORDS_PER_FIELD = 4;
/** Characters of a query word quoted in a reason. */
const MAX_QUOTED_WORD_CHARS = 40;

/** A score as results show it: six decimals. */
export function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

/** The reason of a graph step: an observed transition with its counts, or an inferred link. */
export function describeStep(step: Step): string {
  if (step.link) {
    return step.forward
      ? `may follow ${step.from}: ${describeLink(step.from, step.node, step.link)}`
      : `may precede ${step.from}: ${describeLink(step.node, step.from, step.link)}`;
  }
  return `called ${step.forward ? 'after' : 'before'} ${step.from} ${step.count} of ${step.total} times`;
}

/**
 * `matches 'word' in name; 'other' in description`, or undefined when no term matched. `terms`
 * are the query's distinct terms and `looked` their term ids (`index.lookup(terms)`), found once
 * per query; `masks` is scratch space reused across hits.
 */
export function lexicalReason(
  index: Bm25Index,
  id: number,
  terms: readonly string[],
  looked: readonly number[],
  originals: Map<string, string>,
  masks: number[] = [],
): string | undefined {
  index.fieldMasks(id, looked, masks);
  // Field by field, in index order: the query words (at most a few) found in it.
  let parts = '';
  for (let field = 0; field < FIELD_LABELS.length; field++) {
    let words = '';
    let count = 0;
    for (let j = 0; j < terms.length && count < MAX_WORDS_PER_FIELD; j++) {
      if ((masks[j]! & (1 << field)) === 0) continue;
      words += `${count++ > 0 ? ', ' : ''}'${originals.get(terms[j]!) ?? terms[j]!}'`;
    }
    if (count > 0) parts += `${parts === '' ? '' : '; '}${words} in ${FIELD_LABELS[field]}`;
  }
  return parts === '' ? undefined : `matches ${parts}`;
}

/** Maps each search term of `text` to the word of the query it came from. */
export function originalWords(text: string, lexical: TokenizeOptions): Map<string, string> {
  const out = new Map<string, string>();
  for (const word of text.split(/\s+/)) {
    const clean = word.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
    for (const term of tokenize(clean, lexical))
      if (!out.has(term)) out.set(term, clean.slice(0, MAX_QUOTED_WORD_CHARS));
  }
  return out;
}
