/**
 * @module
 * Regex tool search with the semantics of Anthropic's regex tool search tool: a Python
 * `re.search()`-style pattern, at most {@link DEFAULT_MAX_REGEX_PATTERN_CHARS} characters, case
 * sensitive unless it starts with `(?i)`, tested against each tool's name, description, argument
 * names and argument descriptions. Pure.
 *
 * Patterns come from models and HTTP clients, so they never run on V8's backtracking engine:
 * they compile for a linear-time engine (RE2 semantics, `util/linear-regex.ts`), where a test
 * costs time linear in the field it is tested against, whatever the pattern. RE2 has no
 * backreferences and no lookaround: such patterns are rejected with a {@link CodecallError}
 * `SEARCH_INVALID_QUERY` whose message says how to rewrite them. Fields are cut to
 * `DEFAULT_MAX_REGEX_FIELD_CHARS` before testing.
 */
import { DEFAULT_REGEX_MAX_PROGRAM_SIZE } from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import { compileLinearRegex, LinearRegexError, type LinearRegex } from '../util/linear-regex.js';

/** Longest pattern accepted (Anthropic's limit). */
export const DEFAULT_MAX_REGEX_PATTERN_CHARS = 200;
/** Characters of one field (name, description…) a pattern is tested against. */
export const DEFAULT_MAX_REGEX_FIELD_CHARS = 2_000;

function invalid(pattern: string, problem: string, fix: string): CodecallError {
  return new CodecallError(
    'SEARCH_INVALID_QUERY',
    `Invalid regex pattern ${JSON.stringify(pattern)}: ${problem}. ${fix}`,
    {
      details: { query: pattern, pattern, problem },
    },
  );
}

/** A validated, compiled regex query. */
export interface RegexQuery {
  /** The pattern as given. */
  pattern: string;
  /** The compiled pattern; `test` runs in time linear in its input. */
  regex: LinearRegex;
}

/** Options of {@link compileRegexQuery}. */
export interface RegexQueryOptions {
  /** @defaultValue {@link DEFAULT_MAX_REGEX_PATTERN_CHARS} */
  maxPatternChars?: number;
  /** @defaultValue {@link DEFAULT_REGEX_MAX_PROGRAM_SIZE} */
  maxProgramSize?: number;
}

/**
 * Validates `pattern` and compiles it for the linear-time engine. Accepts Python's leading
 * `(?i)` (case-insensitive), `(?P<name>…)` groups, `\A` and `\Z`. Throws `SEARCH_INVALID_QUERY`
 * with a fix for anything it cannot run (backreferences, lookaround, bad syntax, too long).
 *
 * @example
 * ```ts
 * compileRegexQuery('(?i)slack.*message').regex.test('Slack: send message'); // true
 * ```
 */
export function compileRegexQuery(pattern: string, options: RegexQueryOptions = {}): RegexQuery {
  const maxChars = options.maxPatternChars ?? DEFAULT_MAX_REGEX_PATTERN_CHARS;
  if (typeof pattern !== 'string' || pattern.trim() === '') {
    throw new CodecallError(
      'SEARCH_INVALID_QUERY',
      'The regex pattern is empty. Pass a pattern such as "weather" or "get_.*_data".',
      {
        details: { query: pattern, pattern },
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
  let ignoreCase = false;
  if (source.startsWith('(?i)')) {
    source = source.slice(4);
    ignoreCase = true;
  }
  try {
    const regex = compileLinearRegex(source, {
      dialect: 'python',
      ignoreCase,
      maxProgramSize: options.maxProgramSize ?? DEFAULT_REGEX_MAX_PROGRAM_SIZE,
    });
    return { pattern, regex };
  } catch (error) {
    if (error instanceof LinearRegexError) throw invalid(pattern, error.problem, error.fix);
    throw error;
  }
}
