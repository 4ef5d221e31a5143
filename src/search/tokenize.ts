/**
 * @module
 * Text to search terms: splits identifiers (camelCase, snake_case, kebab-case, dots, `::`),
 * lowercases, drops stop words and applies a light English stemmer, so that a sentence
 * ("send the expense reports"), keywords ("expenses report") and a tool name
 * (`sendExpenseReport`, `finance.send_expense_report`) meet on the same terms. Opt-in lexical
 * variants (measured in docs/search.md): the Porter stemmer (`stemmer` package) or no stemming,
 * and verb normalization (create/make/generate, get/fetch/list/show, delete/remove meet on one
 * term). Pure.
 */
import { stemmer as porterStem } from 'stemmer';
import { DEFAULT_STEMMING } from '../config/defaults.js';
export { DEFAULT_STEMMING };

/**
 * Words too common to carry meaning in a tool query. Query sentences from models are full of
 * them ("Can you help me to…"); tool descriptions rarely need them.
 */
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a an and are as at be been being but by can could did do does doing for from had has have he her ' +
    'here hers him his how i if in into is it its itself just me my myself no nor not of on once only or ' +
    'other our ours out over own please same she should so some such than that the their theirs them ' +
    'then there these they this those through to too under until up very was we were what when where ' +
    'which while who whom why will with would you your yours yourself also about want need needs like ' +
    'help let lets us tell give provide know any all each every e g eg ie etc may might must shall'
  ).split(' '),
);

/** Longest token kept (longer runs are usually ids or hashes, truncated). */
const MAX_TOKEN_CHARS = 40;

/** ASCII character classes of {@link splitHumps}: anything else never starts or ends a hump. */
export const OTHER = 0;
export const LOWER = 1;
export const UPPER = 2;
export const DIGIT = 3;

/** The class of one UTF-16 code unit: {@link LOWER}, {@link UPPER}, {@link DIGIT} or {@link OTHER}. */
export function charClass(code: number): number {
  if (code >= 97 && code <= 122) return LOWER;
  if (code >= 65 && code <= 90) return UPPER;
  if (code >= 48 && code <= 57) return DIGIT;
  return OTHER;
}

/**
 * Splits one identifier-ish word on case humps and digits: `getHTTPResponse2` →
 * `get`, `http`, `response`, `2`. A word splits before an ASCII capital that follows a lowercase
 * letter or a digit, before the last capital of a run followed by a lowercase letter (`HTTPResponse`),
 * and wherever ASCII letters and digits meet; other characters split nothing. One scan of the
 * character codes (a catalog build splits every word it has not seen).
 */
export function splitHumps(word: string): string[] {
  const length = word.length;
  let out: string[] | undefined;
  let start = 0;
  let previous = length > 0 ? charClass(word.charCodeAt(0)) : OTHER;
  for (let i = 1; i < length; i++) {
    const current = charClass(word.charCodeAt(i));
    let split = false;
    if (current === UPPER) {
      split =
        previous === LOWER ||
        previous === DIGIT ||
        (previous === UPPER && i + 1 < length && charClass(word.charCodeAt(i + 1)) === LOWER);
    } else if (current === DIGIT) split = previous === LOWER || previous === UPPER;
    else if (current === LOWER) split = previous === DIGIT;
    if (split) {
      (out ??= []).push(word.slice(start, i));
      start = i;
    }
    previous = current;
  }
  if (out === undefined) return [word];
  out.push(word.slice(start));
  return out;
}

function isVowel(word: string, index: number): boolean {
  const c = word[index];
  return c === 'a' || c === 'e' || c === 'i' || c === 'o' || c === 'u';
}

/**
 * A light English stemmer (plural, `-ing`, `-ed`, `-ly`, `-ation`): enough for "expenses" to
 * meet "expense" and "booking" to meet "book", without Porter's over-stemming of short words.
 */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3 || /[0-9]/.test(w)) return w;
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('xes') || w.endsWith('ches') || w.endsWith('shes')) w = w.slice(0, -2);
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is')) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith('ation')) return `${w.slice(0, -5)}ate`;
  if (w.length > 4 && w.endsWith('ly')) return w.slice(0, -2);
  for (const suffix of ['ing', 'ed']) {
    if (w.length > suffix.length + 2 && w.endsWith(suffix)) {
      let base = w.slice(0, -suffix.length);
      // The base must keep a vowel ("bring" is not "br" + "ing").
      if (![...base].some((_, i) => isVowel(base, i))) continue;
      const last = base[base.length - 1];
      const doubled = last !== undefined && last === base[base.length - 2];
      if (doubled && (!'lsz'.includes(last) || (last === 'l' && base.length > 4))) {
        base = base.slice(0, -1);
      } else if (base.endsWith('at') || base.endsWith('iz') || base.endsWith('bl')) {
        base = `${base}e`;
      }
      return base;
    }
  }
  if (w.endsWith('e') && w.length > 4 && !w.endsWith('ee')) return w.slice(0, -1);
  return w;
}

/** How words are reduced to terms: the light stemmer (default), Porter's, or not at all. */
export type Stemming = 'light' | 'porter' | 'none';

/**
 * Verb classes that {@link TokenizeOptions.verbNormalization} maps onto their first member: the
 * verbs users say and the verbs tools are named with.
 */
export const VERB_CLASSES: readonly (readonly string[])[] = [
  ['create', 'make', 'generate'],
  ['get', 'fetch', 'list', 'show', 'retrieve'],
  ['delete', 'remove'],
];

/** Irregular forms of the verbs above that no stemmer reduces. */
const IRREGULAR: ReadonlyMap<string, string> = new Map([
  ['made', 'make'],
  ['got', 'get'],
  ['gotten', 'get'],
]);

const stemmers: Record<Stemming, (word: string) => string> = {
  light: stem,
  porter: (word) => (/[0-9]/.test(word) ? word : porterStem(word)),
  none: (word) => word,
};

/** Per stemming: stem of a verb form → the stem of its class's first member. */
const verbMaps = new Map<Stemming, Map<string, string>>();

function verbMap(stemming: Stemming): Map<string, string> {
  let map = verbMaps.get(stemming);
  if (!map) {
    map = new Map();
    const reduce = stemmers[stemming];
    for (const members of VERB_CLASSES) {
      const head = reduce(members[0]!);
      for (const verb of members) {
        for (const form of [verb, `${verb}s`, `${verb}es`, `${verb}ing`, `${verb}ed`, `${verb}d`]) {
          map.set(reduce(form), head);
        }
      }
    }
    for (const [form, verb] of IRREGULAR) {
      const members = VERB_CLASSES.find((c) => c.includes(verb))!;
      map.set(reduce(form), reduce(members[0]!));
    }
    verbMaps.set(stemming, map);
  }
  return map;
}

/** Han, Hiragana, Katakana and Hangul: scripts written without spaces between words. */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const CJK_RUNS =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+|[^\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;

/**
 * Scripts without word spaces are indexed as overlapping character pairs ("搜索关键" →
 * "搜索", "索关", "关键"), the usual dictionary-free approach; other runs inside are split as usual.
 */
function pushCjk(run: string, out: string[], reduce: (word: string) => string): void {
  for (const piece of run.matchAll(CJK_RUNS)) {
    const text = piece[0];
    if (!CJK.test(text)) {
      for (const part of splitHumps(text)) if (part !== '') out.push(reduce(part.toLowerCase()));
      continue;
    }
    const chars = [...text];
    if (chars.length === 1) out.push(chars[0]!);
    for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
  }
}

/** Options for {@link tokenize}. */
export interface TokenizeOptions {
  /**
   * Keep stop words (used for tool names, where every part counts).
   * @defaultValue false
   */
  keepStopWords?: boolean;
  /**
   * How words are reduced to terms.
   * @defaultValue {@link DEFAULT_STEMMING}
   */
  stemming?: Stemming;
  /**
   * Map the verbs of {@link VERB_CLASSES} onto one term per class (create/make/generate…).
   * @defaultValue false
   */
  verbNormalization?: boolean;
}

/**
 * The search terms of `text`, in order, with repeats.
 *
 * @example
 * ```ts
 * tokenize('finance.sendExpenseReports'); // ['financ', 'send', 'expens', 'report']
 * ```
 */
export function tokenize(text: string, options: TokenizeOptions = {}): string[] {
  const out: string[] = [];
  const keep = options.keepStopWords === true;
  const stemming = options.stemming ?? DEFAULT_STEMMING;
  const verbs = options.verbNormalization === true;
  const cacheKey = `${keep ? 'k' : 'd'}${stemming}${verbs ? 'v' : ''}`;
  let cache = CACHES.get(cacheKey);
  if (!cache) CACHES.set(cacheKey, (cache = new Map()));
  // Letters and digits of any script; everything else (including _ - . :: /) separates words.
  for (const word of text.split(SEPARATORS)) {
    if (word === '') continue;
    let terms = cache.get(word);
    if (!terms) {
      terms = wordTerms(word, keep, stemmers[stemming], verbs ? verbMap(stemming) : undefined);
      if (word.length <= MAX_TOKEN_CHARS) {
        if (cache.size >= MAX_CACHED_WORDS) cache.clear();
        cache.set(word, terms);
      }
    }
    for (const term of terms) out.push(term);
  }
  return out;
}

const SEPARATORS = /[^\p{L}\p{N}]+/u;
/** Distinct words whose terms are memoised (catalogs repeat words a lot). */
const MAX_CACHED_WORDS = 100_000;
/** One memo per combination of options (stop words kept or not, stemming, verb normalization). */
const CACHES = new Map<string, Map<string, readonly string[]>>();

/** The terms of one run of letters and digits. */
function wordTerms(
  word: string,
  keepStopWords: boolean,
  reduce: (word: string) => string,
  verbs: ReadonlyMap<string, string> | undefined,
): string[] {
  const out: string[] = [];
  if (CJK.test(word)) {
    pushCjk(word, out, reduce);
    return out;
  }
  for (const part of splitHumps(word)) {
    if (part === '') continue;
    const lower = part.toLowerCase().slice(0, MAX_TOKEN_CHARS);
    if (!keepStopWords && STOP_WORDS.has(lower)) continue;
    if (verbs === undefined) {
      out.push(reduce(lower));
      continue;
    }
    const term = reduce(IRREGULAR.get(lower) ?? lower);
    out.push(verbs.get(term) ?? term);
  }
  return out;
}

/** The lowercase identifier words of a name, unstemmed (`get_teamMembers` → `get team members`). */
export function splitName(name: string): string[] {
  const out: string[] = [];
  for (const match of name.matchAll(/[\p{L}\p{N}]+/gu)) {
    for (const part of splitHumps(match[0])) if (part !== '') out.push(part.toLowerCase());
  }
  return out;
}
