import { describe, expect, it } from 'vitest';
import { isCodecallError } from '../../../src/errors.js';
import { compileRegexQuery } from '../../../src/search/regex-query.js';

function rejection(pattern: string): { code: string; message: string } | undefined {
  try {
    compileRegexQuery(pattern);
  } catch (error) {
    if (!isCodecallError(error)) throw error;
    return { code: error.code, message: error.message };
  }
  return undefined;
}

describe('compileRegexQuery', () => {
  it('accepts the patterns models write', () => {
    for (const pattern of [
      'weather',
      'get_.*_data',
      'database.*query|query.*database',
      '(?i)slack',
      '^(get|list)_users?$',
      '\\bsend\\b',
      '[a-z]+_file',
      '(?P<verb>get|set)_config',
      'a{2,4}b',
      '(?i:Slack).*message',
    ]) {
      expect(rejection(pattern), pattern).toBeUndefined();
    }
  });

  it('translates (?i) and (?P<name>)', () => {
    expect(compileRegexQuery('(?i)SLACK').regex.test('slack_post')).toBe(true);
    expect(compileRegexQuery('SLACK').regex.test('slack_post')).toBe(false);
    expect(compileRegexQuery('(?P<v>get)_x').regex.test('get_x')).toBe(true);
  });

  it('rejects patterns that could backtrack catastrophically, saying how to fix them', () => {
    for (const pattern of [
      '(a+)+$',
      '(a|ab)*c',
      '(\\w+\\s?)*$',
      '.*.*x',
      'a*a*a*x',
      '\\w+\\s*\\w+x',
      '(x?){20}',
    ]) {
      const r = rejection(pattern);
      expect(r?.code, pattern).toBe('SEARCH_INVALID_QUERY');
      expect(r!.message).toMatch(/e\.g\.|Use|Keep|Repeat/);
    }
  });

  it('rejects backreferences, lookbehind, syntax errors and long patterns', () => {
    expect(rejection('(a)\\1')?.message).toMatch(/backreferences/);
    expect(rejection('(?P<x>a)(?P=x)')?.message).toMatch(/backreferences/);
    expect(rejection('(?<=a)b')?.message).toMatch(/lookbehind/);
    expect(rejection('(abc')?.message).toMatch(/never closed/);
    expect(rejection('abc)')?.message).toMatch(/unmatched/);
    expect(rejection('[abc')?.message).toMatch(/never closed/);
    expect(rejection('*abc')?.message).toMatch(/nothing to repeat/);
    expect(rejection('a{3,1}')?.code).toBe('SEARCH_INVALID_QUERY');
    expect(rejection('x'.repeat(201))?.message).toMatch(/201 characters long \(the limit is 200\)/);
    expect(rejection('')?.code).toBe('SEARCH_INVALID_QUERY');
  });

  it('keeps accepted patterns fast on long adversarial text', () => {
    const text = 'a'.repeat(2_000);
    for (const pattern of ['a.*x', '(?:ab|cd)x', 'a{1,8}b?x', '[a-z]+x']) {
      const { regex } = compileRegexQuery(pattern);
      expect(regex.test(text)).toBe(false);
    }
  });
});
