import { describe, expect, it } from 'vitest';
import { DEFAULT_BUILD_MEMO_TEXTS } from '../../../src/config/defaults.js';
import { exactKeys, hashKey, keyHashes } from '../../../src/search/exact-name-table.js';
import { BuildMemo, indexedFields, SearchEntries } from '../../../src/search/search-entries.js';
import { splitHumps, tokenize } from '../../../src/search/tokenize.js';
import { createToolSearch } from '../../../src/search/tool-search.js';
import { seededRandom } from '../../../src/util/seeded-random.js';

/** The rules splitHumps follows, as the four regular expressions they were first written with. */
function splitByRegex(word: string): string[] {
  if (/^[a-z]*$|^[A-Z][a-z]*$/.test(word)) return [word];
  return word
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/([a-zA-Z])([0-9])/g, '$1 $2')
    .replace(/([0-9])([a-zA-Z])/g, '$1 $2')
    .split(' ');
}

describe('splitHumps', () => {
  it('splits names on case humps and digits', () => {
    expect(splitHumps('getHTTPResponse2')).toEqual(['get', 'HTTP', 'Response', '2']);
    expect(splitHumps('v12Beta')).toEqual(['v', '12', 'Beta']);
    expect(splitHumps('ABCDef')).toEqual(['ABC', 'Def']);
    expect(splitHumps('éTÉ')).toEqual(['éTÉ']);
    expect(splitHumps('plain')).toEqual(['plain']);
  });

  it('splits every word as the regular expressions of its rules do', () => {
    const random = seededRandom(3);
    const alphabet = 'aBzZ09xYé1Qk';
    let checked = 0;
    for (let i = 0; i < 20_000; i++) {
      const length = 1 + Math.floor(random() * 9);
      let word = '';
      for (let j = 0; j < length; j++) word += alphabet[Math.floor(random() * alphabet.length)];
      expect(splitHumps(word), word).toEqual(splitByRegex(word));
      checked++;
    }
    expect(checked).toBe(20_000);
  });
});

describe('catalog build memo', () => {
  const lexical = { stemming: 'light' as const, verbNormalization: false };

  it('gives each tool the fields tokenising it alone gives, for texts shared between tools', () => {
    const entries = new SearchEntries();
    const memo = new BuildMemo();
    const description = 'Returns the weather forecast of a city for the next days';
    const inputSchema = {
      type: 'object',
      // "to" is a stop word: kept in parameter names, dropped from descriptions.
      properties: {
        to: { type: 'string', description: 'The day to forecast up to' },
        city: { type: 'string', description: 'The city, e.g. Paris' },
      },
    };
    for (const [index, server] of ['weather', 'weather', 'climate'].entries()) {
      const { entry } = entries.add({
        name: `${server}.get_forecast${index}`,
        server,
        description,
        inputSchema,
      });
      const fields = indexedFields(entry, lexical, memo);
      expect(fields).toEqual(indexedFields(entry, lexical));
      expect(fields[3]).toEqual(['to', 'city']);
      expect(fields[4]).toEqual(tokenize('The day to forecast up to\nThe city, e.g. Paris', lexical));
    }
  });

  it('keeps stop words where the field keeps them, even for a text seen in a field that drops them', () => {
    const memo = new BuildMemo();
    const text = 'for the win';
    expect(memo.terms(text, lexical, false)).toEqual(tokenize(text, lexical));
    expect(memo.terms(text, { ...lexical, keepStopWords: true }, true)).toEqual(['for', 'the', 'win']);
  });

  it('holds at most its bound of texts', () => {
    const memo = new BuildMemo();
    const first = memo.terms('text 0', lexical, false);
    for (let i = 1; i <= DEFAULT_BUILD_MEMO_TEXTS; i++) memo.terms(`text ${i}`, lexical, false);
    // Cleared when full: the first text is tokenised again (an equal, new array).
    const again = memo.terms('text 0', lexical, false);
    expect(again).toEqual(first);
    expect(again).not.toBe(first);
    expect(memo.terms('text 0', lexical, false)).toBe(again);
  });

  it('ranks a catalog of shared texts as tools added one at a time do', () => {
    const tools = Array.from({ length: 60 }, (_, i) => ({
      name: `srv${i % 4}.tool_${i}`,
      server: `srv${i % 4}`,
      description: ['send an email message', 'read the calendar of a team', 'list open issues'][i % 3],
      inputSchema: { type: 'object', properties: { [`p${i % 5}`]: { description: 'the team or email' } } },
    }));
    const built = createToolSearch({ tools });
    const oneByOne = createToolSearch({ tools: [] });
    for (const tool of tools) oneByOne.addTools([tool]);
    for (const query of ['email to the team', 'calendar', 'issues p3', 'srv2 message']) {
      expect(built.searchDetailed(query)).toEqual(oneByOne.searchDetailed(query));
    }
  });
});

describe('exact-name table', () => {
  it('hashes the keys of ASCII names in one scan as the key strings hash', () => {
    const random = seededRandom(5);
    const pieces = [
      'get',
      'Get',
      'HTTP',
      'Response',
      'v2',
      '12',
      '.',
      '::',
      ':',
      '__',
      '_',
      '-',
      '/',
      ' ',
      'a',
      'Z',
      'é',
      'x9Y',
    ];
    const servers = ['', 'srv', 'Srv', 'get', 'github', 'g'];
    let checked = 0;
    for (let i = 0; i < 20_000; i++) {
      const server = servers[Math.floor(random() * servers.length)]!;
      let name = random() < 0.6 ? server : '';
      const length = 1 + Math.floor(random() * 6);
      for (let j = 0; j < length; j++) name += pieces[Math.floor(random() * pieces.length)];
      const scanned: number[] = [];
      keyHashes(name, server, scanned);
      const expected = [...new Set(exactKeys(name, server).map(hashKey))];
      expect(scanned.sort(), `${name} (${server})`).toEqual(expected.sort());
      checked++;
    }
    expect(checked).toBe(20_000);
  });

  it('finds tools by full, bare and split names, in the order they were added, after removals and re-adds', () => {
    const entries = new SearchEntries();
    const add = (name: string, server: string): void => void entries.add({ name, server });
    add('mail.send_message', 'mail');
    add('chat.send_message', 'chat');
    add('chat.sendMessage', 'chat');
    add('Météo.prévision', 'Météo');
    expect(entries.exactNames('send_message')).toEqual(new Set(['mail.send_message', 'chat.send_message']));
    // The bare name is lowercased before it is split: `sendMessage` is not `send message` there.
    expect(entries.exactNames('Send Message')).toEqual(new Set(['mail.send_message', 'chat.send_message']));
    expect(entries.exactNames('chat send message')).toEqual(
      new Set(['chat.send_message', 'chat.sendMessage']),
    );
    expect(entries.exactNames('CHAT.SENDMESSAGE')).toEqual(new Set(['chat.sendMessage']));
    expect(entries.exactNames('prévision')).toEqual(new Set(['Météo.prévision']));
    expect(entries.exactNames('send')).toBeUndefined();
    entries.remove('mail.send_message');
    expect([...entries.exactNames('send_message')!]).toEqual(['chat.send_message']);
    add('mail.send_message', 'mail');
    expect([...entries.exactNames('send message')!]).toEqual(['chat.send_message', 'mail.send_message']);
    // Many tools: the table grows and keeps finding each one.
    for (let i = 0; i < 5_000; i++) add(`srv${i % 9}.tool${i}Name`, `srv${i % 9}`);
    expect([...entries.exactNames('tool4321name')!]).toEqual(['srv1.tool4321Name']);
    expect([...entries.exactNames('srv 1 tool 4321 name')!]).toEqual(['srv1.tool4321Name']);
    expect([...entries.exactNames('tool 4321 name')!]).toEqual(['srv1.tool4321Name']);
    expect(entries.exactNames('tool 4321')).toBeUndefined();
    expect([...entries.exactNames('send_message')!]).toEqual(['chat.send_message', 'mail.send_message']);
  });
});
