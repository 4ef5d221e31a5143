/**
 * The rendering of a call's arguments for an approval prompt: exact JSON when everything fits;
 * otherwise every top-level field named, cuts that never split an escape or a surrogate pair,
 * and a note that says what was shortened.
 */
import { describe, expect, it } from 'vitest';
import {
  escapeInvisible,
  renderApprovalArguments,
  renderApprovalCall,
} from '../../../src/tools/approval-text.js';

describe('renderApprovalArguments', () => {
  it('is the JSON of the arguments when every value fits, with nothing noted', () => {
    const args = { path: '/tmp/a', nested: { n: [1, 2] }, quote: 'a"b\\c\n' };
    expect(renderApprovalArguments(args)).toEqual({ text: JSON.stringify(args), note: '' });
    expect(renderApprovalCall({ tool: 'files.remove', args: {} })).toBe('files.remove({})');
  });

  it('cuts long values, keeping every field after them, and says which', () => {
    const { text, note } = renderApprovalArguments(
      { note: 'n'.repeat(50), id: 'ALL-RECORDS', deep: { a: 'x'.repeat(50) } },
      { maxValueChars: 14 },
    );
    expect(text).toBe(
      '{"note":"nnnnnnnnnnnn…" (50 characters),"id":"ALL-RECORDS","deep":{"a":"xxxxxxxx… (58 characters of JSON)}',
    );
    expect(note).toBe(' [shortened: the values of "note", "deep"]');
  });

  it('names the fields past maxFields, up to maxNamedFields, and counts the rest', () => {
    const args = Object.fromEntries(Array.from({ length: 7 }, (_, index) => [`f${index}`, index]));
    expect(renderApprovalArguments(args, { maxFields: 2, maxNamedFields: 3 })).toEqual({
      text: '{"f0":0,"f1":1,… and 5 more fields: "f2", "f3", "f4", and 2 more not named here}',
      note: ' [shortened: 5 fields past the first 2 are named without their values (2 not named)]',
    });
    expect(renderApprovalArguments({ a: 1, b: 2 }, { maxFields: 1 }).text).toBe(
      '{"a":1,… and 1 more field: "b"}',
    );
  });

  it('cuts long field names and says so', () => {
    expect(renderApprovalArguments({ ['k'.repeat(10)]: 1 }, { maxNameChars: 4 })).toEqual({
      text: '{"kkkk…":1}',
      note: ' [shortened: 1 field name cut to 4 characters]',
    });
  });

  it('never cuts inside an escape or a surrogate pair', () => {
    for (let max = 3; max < 20; max++) {
      const { text } = renderApprovalArguments({ v: 'a\u0001\u0002😀😀"\\b' }, { maxValueChars: max });
      const shown = /^\{"v":(".*)" \(\d+ characters\)\}$/.exec(text)?.[1] ?? text;
      // Whatever was kept still parses as the start of a JSON string.
      expect(() => JSON.parse(`${shown.replace(/…$/, '')}"`), `max ${max}: ${text}`).not.toThrow();
      expect(text).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
    }
  });

  it('shows control, bidi and invisible characters as escapes, in names and values', () => {
    const { text } = renderApprovalArguments({ 'a\u202Eb': 'x\u2066y\u200Fz\u0085\ufeff' });
    expect(text).toBe('{"a\\u202eb":"x\\u2066y\\u200fz\\u0085\\ufeff"}');
    expect(JSON.parse(text)).toEqual({ 'a\u202Eb': 'x\u2066y\u200Fz\u0085\ufeff' });
    expect(escapeInvisible('t\u202Eool\u0007\ud800')).toBe('t\\u202eool\\u0007\\ud800');
  });
});
