import { describe, expect, it } from 'vitest';
import { splitName, stem, tokenize } from '../../../src/search/tokenize.js';

describe('tokenize', () => {
  it('splits camelCase, snake_case, kebab-case, dots and ::', () => {
    expect(tokenize('getHTTPResponse', { keepStopWords: true })).toEqual(['get', 'http', 'respons']);
    expect(tokenize('list_open-issues.v2::Repo', { keepStopWords: true })).toEqual([
      'list',
      'open',
      'issu',
      'v',
      '2',
      'repo',
    ]);
  });

  it('drops stop words from sentences but keeps them in names when asked', () => {
    expect(tokenize('Can you send me the report?')).toEqual(['send', 'report']);
    expect(tokenize('get_it_done', { keepStopWords: true })).toEqual(['get', 'it', 'done']);
  });

  it('meets plural, -ing and -ed forms on one stem', () => {
    for (const [a, b] of [
      ['expenses', 'expense'],
      ['booking', 'book'],
      ['cancelled', 'cancel'],
      ['queries', 'query'],
      ['messages', 'message'],
      ['running', 'run'],
    ]) {
      expect(stem(a!)).toBe(stem(b!));
    }
    expect(stem('bring')).toBe('bring');
    expect(stem('status')).toBe('status');
  });

  it('indexes CJK text as character pairs and keeps embedded Latin words', () => {
    expect(tokenize('搜索关键词')).toEqual(['搜索', '索关', '关键', '键词']);
    expect(tokenize('使用bing搜索')).toEqual(['使用', 'bing', '搜索']);
  });

  it('bounds token length', () => {
    expect(tokenize('a'.repeat(1000))[0]!.length).toBeLessThanOrEqual(40);
  });

  it('splitName keeps every word unstemmed', () => {
    expect(splitName('finance.getTeamMembers')).toEqual(['finance', 'get', 'team', 'members']);
  });
});
