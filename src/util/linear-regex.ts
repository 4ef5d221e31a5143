/**
 * @module
 * Linear-time regular expressions for every pattern that comes from outside codecall (search
 * queries, `pattern` and `patternProperties` of server schemas). They run on `re2js`, a pure
 * JavaScript port of RE2: matching time is linear in the input, so no pattern can backtrack
 * exponentially on V8's engine and freeze the host's event loop.
 *
 * RE2 has no backreferences, lookahead or lookbehind; patterns that use them are refused with
 * a {@link LinearRegexError} whose `problem` names the construct and whose `fix` says how to
 * rewrite it. Two bounds keep one test cheap: the pattern's length and the size of its compiled
 * program (`DEFAULT_REGEX_MAX_PROGRAM_SIZE` in config/defaults.ts; `(a|b){1000}` compiles to thousands of
 * instructions, and each input character may visit all of them).
 */
import { RE2JS } from 're2js';

/** Dialect a pattern is written in. */
export type RegexDialect =
  /** ECMA-262, as JSON Schema's `pattern` (`\uXXXX`, `[^]`, `(?<name>…)`). */
  | 'ecma'
  /** Python `re`, as Anthropic's regex tool search (`(?i)`, `(?P<name>…)`, `\A`, `\Z`). */
  | 'python';

/** Options of {@link compileLinearRegex}. */
export interface LinearRegexOptions {
  /** @defaultValue `"ecma"` */
  dialect?: RegexDialect;
  /** Match case-insensitively. @defaultValue false */
  ignoreCase?: boolean;
  /** Largest compiled program accepted (RE2's program size); callers pass `DEFAULT_REGEX_MAX_PROGRAM_SIZE`. */
  maxProgramSize: number;
}

/** A compiled linear-time pattern; `test` has `RegExp.prototype.test`'s meaning (search, not full match). */
export interface LinearRegex {
  /** The pattern as given. */
  readonly source: string;
  /** True when the pattern matches somewhere in `text`. */
  test(text: string): boolean;
  toString(): string;
}

/** A pattern the linear-time engine cannot run, with what to do instead. */
export class LinearRegexError extends Error {
  /** What is wrong, e.g. "lookahead (?= is not supported". */
  readonly problem: string;
  /** How to rewrite the pattern. */
  readonly fix: string;

  constructor(problem: string, fix: string) {
    super(`${problem}. ${fix}`);
    this.name = 'LinearRegexError';
    this.problem = problem;
    this.fix = fix;
  }
}

const LINEAR_ENGINE_NOTE = 'patterns run on a linear-time engine (RE2 syntax)';

/**
 * Finds constructs RE2 lacks, outside character classes and escapes, and rewrites the few
 * dialect spellings it spells differently. Throws {@link LinearRegexError}.
 */
function translate(pattern: string, dialect: RegexDialect): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === undefined)
        throw new LinearRegexError('it ends with a lone backslash', 'Escape it as "\\\\".');
      if (!inClass && (/[1-9]/.test(next) || (next === 'k' && pattern[i + 2] === '<'))) {
        throw new LinearRegexError(
          `backreferences (\\${next}…) are not supported: ${LINEAR_ENGINE_NOTE}`,
          'Match the repeated text itself instead of referring back to a group.',
        );
      }
      if (next === 'Z' && dialect === 'python') {
        out += '\\z';
        i++;
        continue;
      }
      if (next === 'u' && dialect === 'ecma') {
        const braced = /^\{([0-9A-Fa-f]{1,6})\}/.exec(pattern.slice(i + 2, i + 10));
        const plain = /^[0-9A-Fa-f]{4}/.exec(pattern.slice(i + 2, i + 6));
        if (braced) {
          out += `\\x{${braced[1]}}`;
          i += 1 + braced[0].length;
          continue;
        }
        if (plain) {
          out += `\\x{${plain[0]}}`;
          i += 5;
          continue;
        }
      }
      out += c + next;
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      out += c;
      continue;
    }
    if (c === '[') {
      if (dialect === 'ecma' && pattern.startsWith('[^]', i)) {
        out += '(?s:.)';
        i += 2;
        continue;
      }
      if (dialect === 'ecma' && pattern.startsWith('[]', i)) {
        out += '[^\\x{0}-\\x{10FFFF}]';
        i += 1;
        continue;
      }
      inClass = true;
      out += c;
      // A `]` right after `[` or `[^` is a literal in RE2 (and Python).
      if (pattern[i + 1] === '^') out += pattern[++i];
      if (pattern[i + 1] === ']') out += pattern[++i];
      continue;
    }
    if (c === '(' && pattern[i + 1] === '?') {
      const head = pattern.slice(i + 2, i + 4);
      if (head.startsWith('=') || head.startsWith('!')) {
        throw new LinearRegexError(
          `lookahead (?${head[0]} is not supported: ${LINEAR_ENGINE_NOTE}`,
          'Match the following text directly, or search for two patterns separately.',
        );
      }
      if (head === '<=' || head === '<!') {
        throw new LinearRegexError(
          `lookbehind (?${head} is not supported: ${LINEAR_ENGINE_NOTE}`,
          'Match the preceding text directly.',
        );
      }
      if (head === 'P=') {
        throw new LinearRegexError(
          `backreferences ((?P=name)) are not supported: ${LINEAR_ENGINE_NOTE}`,
          'Match the repeated text itself instead of referring back to a group.',
        );
      }
    }
    out += c;
  }
  return out;
}

/** RE2's parse error without its prefix: "missing closing ): `(a`". */
function re2Problem(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^error parsing regexp: /, '');
}

/**
 * Compiles `pattern` for the linear-time engine. Throws {@link LinearRegexError} for syntax RE2
 * does not support (backreferences, lookaround) or cannot parse, and for patterns whose program
 * is over `maxProgramSize`.
 *
 * @example
 * ```ts
 * compileLinearRegex('^(\\w+\\s?)*$', { maxProgramSize: 1_000 }).test('a'.repeat(100_000) + '!'); // false, in milliseconds
 * ```
 */
export function compileLinearRegex(pattern: string, options: LinearRegexOptions): LinearRegex {
  const dialect = options.dialect ?? 'ecma';
  const maxProgramSize = options.maxProgramSize;
  const source = translate(pattern, dialect);
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(source, options.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (error) {
    throw new LinearRegexError(
      `it does not parse as RE2 syntax (${re2Problem(error)})`,
      'Fix the syntax: escape literal characters such as ( [ + with a backslash; RE2 has no backreferences or lookaround, and repeats at most {1000}.',
    );
  }
  const size = compiled.programSize();
  if (size > maxProgramSize) {
    throw new LinearRegexError(
      `it compiles to ${size} instructions (the limit is ${maxProgramSize})`,
      'Use smaller repetition counts ({m,n}) or fewer alternatives.',
    );
  }
  const text = `/${pattern}/${options.ignoreCase ? 'i' : ''} (re2)`;
  return {
    source: pattern,
    test: (input: string) => compiled.test(input),
    toString: () => text,
  };
}
