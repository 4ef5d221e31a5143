import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCodecallError } from '../../../src/errors.js';
import { compileRegexQuery } from '../../../src/search/regex-query.js';
import { WorkerModule } from '../../fixtures/worker-watchdog.js';

/** Patterns run on a worker thread: one that backtracks fails its test instead of hanging it. */
let probes: WorkerModule;
beforeAll(async () => {
  probes = await WorkerModule.open(new URL('../../fixtures/regex-probes.ts', import.meta.url));
}, 60_000);
afterAll(() => probes?.close());

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

  it('translates (?i), (?P<name>), \\A and \\Z', () => {
    expect(compileRegexQuery('\\Aget_x\\Z').regex.test('get_x')).toBe(true);
    expect(compileRegexQuery('\\Aget_x\\Z').regex.test('get_xy')).toBe(false);
    expect(compileRegexQuery('(?i)SLACK').regex.test('slack_post')).toBe(true);
    expect(compileRegexQuery('SLACK').regex.test('slack_post')).toBe(false);
    expect(compileRegexQuery('(?P<v>get)_x').regex.test('get_x')).toBe(true);
  });

  it('runs patterns that backtrack exponentially on V8 in linear time (RE2 semantics)', async () => {
    // Each of these takes seconds to forever on a backtracking engine against this text: on the
    // worker, such a call fails this test after DEFAULT_WORKER_CALL_TIMEOUT_MS.
    const text = `${'a'.repeat(1_990)}!`;
    const words = `${'word '.repeat(399)}!`;
    for (const [pattern, input, matches] of [
      ['(a+)+$', text, false],
      ['(a|aa){1,100}$', text, false],
      ['(a|ab)*c', text, false],
      ['^(\\w+\\s?)*$', words, false],
      ['.*.*.*.*x', text, false],
      ['(x?){20}x{20}', 'x'.repeat(20), true],
      ['(a|aa){1,100}$', 'aaa', true],
    ] as const) {
      expect(await probes.call('regexQueryMatches', [pattern, input]), pattern).toBe(matches);
    }
  });

  it('rejects backreferences, lookbehind, syntax errors and long patterns', () => {
    expect(rejection('(a)\\1')?.message).toMatch(/backreferences/);
    expect(rejection('(?P<x>a)(?P=x)')?.message).toMatch(/backreferences/);
    expect(rejection('(?<=a)b')?.message).toMatch(/lookbehind \(\?<= is not supported: .*linear-time engine/);
    expect(rejection('a(?=b)')?.message).toMatch(
      /lookahead \(\?= is not supported.*Match the following text/,
    );
    expect(rejection('(abc')?.message).toMatch(/missing closing \)/);
    expect(rejection('abc)')?.message).toMatch(/unexpected \)/);
    expect(rejection('[abc')?.message).toMatch(/missing closing \]/);
    expect(rejection('*abc')?.message).toMatch(/missing argument to repetition operator/);
    expect(rejection('a{3,1}')?.code).toBe('SEARCH_INVALID_QUERY');
    expect(rejection('a{2000}')?.message).toMatch(/invalid repeat count/);
    expect(rejection('(a|b|c|d){500}')?.message).toMatch(
      /compiles to \d+ instructions \(the limit is 1000\)/,
    );
    expect(rejection('x'.repeat(201))?.message).toMatch(/201 characters long \(the limit is 200\)/);
    expect(rejection('')?.code).toBe('SEARCH_INVALID_QUERY');
  });

  it('keeps accepted patterns fast on long adversarial text', async () => {
    const text = 'a'.repeat(2_000);
    for (const pattern of ['a.*x', '(?:ab|cd)x', 'a{1,8}b?x', '[a-z]+x']) {
      expect(await probes.call('regexQueryMatches', [pattern, text]), pattern).toBe(false);
    }
  });
});
