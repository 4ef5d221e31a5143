/**
 * @module
 * Regex tool search with the semantics of Anthropic's regex tool search tool: a Python
 * `re.search()`-style pattern, at most {@link DEFAULT_MAX_REGEX_PATTERN_CHARS} characters, case
 * sensitive unless it starts with `(?i)`, tested against each tool's name, description, argument
 * names and argument descriptions. Pure.
 *
 * JavaScript regular expressions backtrack, so a hostile or careless pattern could take
 * exponential (`(a+)+`) or high-polynomial (`.*.*.*x`) time. Patterns are therefore checked
 * statically before they run, and rejected with a {@link CodecallError} `SEARCH_INVALID_QUERY`
 * whose message says how to rewrite them:
 *
 * - no backreferences (`\1`, `\k<name>`, `(?P=name)`) and no lookbehind;
 * - no repeated group that itself repeats or alternates (`(a+)+`, `(a|ab)*`, `(\w+\s?)*`);
 * - per alternative, at most one unbounded repetition (`*`, `+`, `{n,}`) and at most
 *   {@link MAX_BOUNDED_CHOICES} ways to match the bounded ones (`?`, `{m,n}`) combined.
 *
 * Under these rules a test costs O(n²) in the field length n at worst; fields are cut to
 * `DEFAULT_MAX_REGEX_FIELD_CHARS` before testing, so one test is bounded.
 */
import { CodecallError } from '../errors.js';

/** Longest pattern accepted (Anthropic's limit). */
export const DEFAULT_MAX_REGEX_PATTERN_CHARS = 200;
/** Characters of one field (name, description…) a pattern is tested against. */
export const DEFAULT_MAX_REGEX_FIELD_CHARS = 2_000;
/** Product of the choices of bounded repetitions (`?` = 2, `{1,4}` = 4) in one alternative. */
export const MAX_BOUNDED_CHOICES = 64;

function invalid(pattern: string, problem: string, fix: string): CodecallError {
  return new CodecallError(
    'SEARCH_INVALID_QUERY',
    `Invalid regex pattern ${JSON.stringify(pattern)}: ${problem}. ${fix}`,
    {
      details: { pattern, problem },
    },
  );
}

/** Cost of a piece of pattern, as the checker sees it. */
interface Cost {
  /** Unbounded repetitions along the worst alternative. */
  unbounded: number;
  /** Product of bounded choices along the worst alternative. */
  choices: number;
  /** Contains any repetition with a choice, or an alternation. */
  varies: boolean;
}

/** Parses a quantifier at `i`; returns its length and bounds, or undefined. */
function quantifierAt(source: string, i: number): { length: number; min: number; max: number } | undefined {
  const c = source[i];
  let q: { length: number; min: number; max: number } | undefined;
  if (c === '*') q = { length: 1, min: 0, max: Infinity };
  else if (c === '+') q = { length: 1, min: 1, max: Infinity };
  else if (c === '?') q = { length: 1, min: 0, max: 1 };
  else if (c === '{') {
    const m = /^\{(\d{1,4})(,(\d{0,4}))?\}/.exec(source.slice(i));
    if (m) {
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      q = { length: m[0].length, min, max };
    }
  }
  if (q && (source[i + q.length] === '?' || source[i + q.length] === '+')) q.length++; // lazy / possessive
  return q;
}

/**
 * Walks the pattern once, checking the rules of the module comment. Returns the cost of the
 * group starting at `start` (the whole pattern at 0) and the index after it.
 */
function analyse(pattern: string, source: string, start: number, depth: number): { cost: Cost; end: number } {
  if (depth > 20) throw invalid(pattern, 'groups nest too deeply', 'Use at most 20 levels of parentheses.');
  const alternatives: Cost[] = [];
  let current: Cost = { unbounded: 0, choices: 1, varies: false };
  let i = start;
  const applyQuantifier = (atom: Cost): void => {
    const q = quantifierAt(source, i);
    if (!q) {
      current.unbounded += atom.unbounded;
      current.choices *= atom.choices;
      current.varies ||= atom.varies;
      return;
    }
    i += q.length;
    if (q.min > q.max)
      throw invalid(pattern, `the repetition {${q.min},${q.max}} is reversed`, 'Write {min,max}.');
    const hasChoice = q.max !== q.min;
    if (atom.varies && (hasChoice || q.max > 1)) {
      throw invalid(
        pattern,
        'a repeated group repeats or alternates inside (like (a+)+ or (a|ab)*), which can take exponential time',
        'Repeat a simple group or character class instead, e.g. "get_[a-z_]*" or "(get|list)_users".',
      );
    }
    current.varies ||= hasChoice || atom.varies;
    current.unbounded += atom.unbounded;
    current.choices *= atom.choices;
    if (q.max === Infinity) current.unbounded++;
    else if (hasChoice) current.choices *= q.max - q.min + 1;
  };
  while (i < source.length) {
    const c = source[i]!;
    if (c === ')') break;
    if (c === '|') {
      alternatives.push(current);
      current = { unbounded: 0, choices: 1, varies: false };
      i++;
      continue;
    }
    if (c === '\\') {
      const next = source[i + 1];
      if (next === undefined) throw invalid(pattern, 'it ends with a lone backslash', 'Escape it as "\\\\".');
      if (/[1-9]/.test(next) || next === 'k') {
        throw invalid(
          pattern,
          'backreferences are not supported',
          'Match the text itself instead of \\1 or \\k<name>.',
        );
      }
      i += 2;
      applyQuantifier({ unbounded: 0, choices: 1, varies: false });
      continue;
    }
    if (c === '[') {
      // A character class: skip to its closing bracket (escapes inside are literal).
      let j = i + 1;
      if (source[j] === '^') j++;
      if (source[j] === ']') j++;
      while (j < source.length && source[j] !== ']') j += source[j] === '\\' ? 2 : 1;
      if (j >= source.length)
        throw invalid(
          pattern,
          'a "[" is never closed',
          'Close the character class with "]" or escape it as "\\[".',
        );
      i = j + 1;
      applyQuantifier({ unbounded: 0, choices: 1, varies: false });
      continue;
    }
    if (c === '(') {
      let j = i + 1;
      if (source[j] === '?') {
        const rest = source.slice(j);
        if (rest.startsWith('?<=') || rest.startsWith('?<!')) {
          throw invalid(pattern, 'lookbehind is not supported', 'Match the preceding text directly.');
        }
        const head = /^\?(?::|=|!|<[A-Za-z_][A-Za-z0-9_]*>|[ims]*(?:-[ims]+)?:)/.exec(rest);
        if (!head)
          throw invalid(
            pattern,
            `the group "(${rest.slice(0, 4)}" is not understood`,
            'Use (…), (?:…), (?i:…), (?=…), (?!…) or (?<name>…).',
          );
        j += head[0].length;
      }
      const inner = analyse(pattern, source, j, depth + 1);
      if (source[inner.end] !== ')')
        throw invalid(pattern, 'a "(" is never closed', 'Close the group with ")" or escape it as "\\(".');
      i = inner.end + 1;
      applyQuantifier(inner.cost);
      continue;
    }
    if (quantifierAt(source, i) && c !== '{') {
      throw invalid(pattern, `"${c}" has nothing to repeat`, `Escape it as "\\${c}" to match it literally.`);
    }
    i++;
    applyQuantifier({ unbounded: 0, choices: 1, varies: false });
  }
  alternatives.push(current);
  const cost: Cost = {
    unbounded: Math.max(...alternatives.map((a) => a.unbounded)),
    choices: Math.max(...alternatives.map((a) => a.choices)),
    varies: alternatives.length > 1 || alternatives.some((a) => a.varies),
  };
  for (const a of alternatives) {
    if (a.unbounded > 1) {
      throw invalid(
        pattern,
        'it has more than one unbounded repetition (*, +, {n,}) in one alternative, which can take polynomial time',
        'Keep one per alternative, e.g. "get_.*_data" or "database.*query|query.*database".',
      );
    }
    if (a.choices > MAX_BOUNDED_CHOICES) {
      throw invalid(
        pattern,
        'its optional parts (?, {m,n}) combine into too many ways to match',
        'Use fewer optional parts.',
      );
    }
  }
  return { cost, end: i };
}

/** A validated, compiled regex query. */
export interface RegexQuery {
  /** The pattern as given. */
  pattern: string;
  regex: RegExp;
}

/**
 * Validates `pattern` and compiles it. Accepts Python's leading `(?i)` (case-insensitive) and
 * `(?P<name>…)` groups. Throws `SEARCH_INVALID_QUERY` with a fix for anything else it cannot run
 * safely.
 *
 * @example
 * ```ts
 * compileRegexQuery('(?i)slack.*message').regex.test('Slack: send message'); // true
 * ```
 */
export function compileRegexQuery(pattern: string, options: { maxPatternChars?: number } = {}): RegexQuery {
  const maxChars = options.maxPatternChars ?? DEFAULT_MAX_REGEX_PATTERN_CHARS;
  if (typeof pattern !== 'string' || pattern.trim() === '') {
    throw new CodecallError(
      'SEARCH_INVALID_QUERY',
      'The regex pattern is empty. Pass a pattern such as "weather" or "get_.*_data".',
      {
        details: { pattern },
      },
    );
  }
  if (pattern.length > maxChars) {
    throw invalid(
      pattern.slice(0, 40) + '…',
      `it is ${pattern.length} characters long (the limit is ${maxChars})`,
      'Search for a shorter, distinctive part of the tool name or description.',
    );
  }
  let source = pattern;
  let flags = '';
  if (source.startsWith('(?i)')) {
    source = source.slice(4);
    flags += 'i';
  }
  if (/\(\?P=/.test(source)) {
    throw invalid(pattern, 'backreferences are not supported', 'Match the text itself instead of (?P=name).');
  }
  source = source
    .replace(/\(\?P</g, '(?<')
    .replace(/\\A/g, '^')
    .replace(/\\Z/g, '$');
  const parsed = analyse(pattern, source, 0, 0);
  if (parsed.end < source.length)
    throw invalid(pattern, 'it has an unmatched ")"', 'Remove it or escape it as "\\)".');
  let regex: RegExp;
  try {
    regex = new RegExp(source, flags);
  } catch (error) {
    throw invalid(
      pattern,
      (error as Error).message.replace(/^Invalid regular expression: /, ''),
      'Fix the syntax (escape literal characters such as ( [ + with a backslash).',
    );
  }
  return { pattern, regex };
}
