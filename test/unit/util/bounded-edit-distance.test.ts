import { expect, it } from 'vitest';
import { boundedEditDistance, editDistance } from '../../../src/util/edit-distance.js';
it('boundedEditDistance equals editDistance when within max, else max + 1', () => {
  const words = [
    '',
    'a',
    'ab',
    'abc',
    'kitten',
    'sitting',
    'hostile.tool_100_lst_record',
    'hostile.tool_100_list_record',
    'tool_1_get_record',
    'xyz',
    'abcdefgh',
    'hgfedcba',
  ];
  let n = 0;
  for (const a of words)
    for (const b of words)
      for (const max of [0, 1, 2, 3, 5, 8]) {
        const d = editDistance(a, b);
        expect(boundedEditDistance(a, b, max), `${a}|${b}|${max}`).toBe(d <= max ? d : max + 1);
        n++;
      }
  expect(n).toBeGreaterThan(100);
});
