/**
 * Pure parts of the tool layer: names, caller policy, input validation, result normalization.
 */
import { describe, expect, it } from 'vitest';
import { isCodecallError } from '../../../src/errors.js';
import { JsonText } from '../../../src/util/json-text.js';
import {
  assertCallerAllowed,
  assignIdentifiers,
  compileInputValidator,
  INPUT_VALIDATION_DIALECTS,
  normalizeToolResult,
  normalizeToolResultText,
  resolveAllowedCallers,
  toIdentifier,
  toolErrorText,
  warmInputValidation,
} from '../../../src/tools/index.js';
import { matchesToolPattern } from '../../../src/tools/policy.js';

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (isCodecallError(error)) return `${error.code}: ${error.message}`;
    throw error;
  }
  return 'no error';
}

describe('names', () => {
  it('makes identifier-safe names', () => {
    expect(toIdentifier('get-expenses')).toBe('get_expenses');
    expect(toIdentifier('2fa')).toBe('_2fa');
    expect(toIdentifier('delete')).toBe('delete_');
    expect(toIdentifier('then')).toBe('then_');
    expect(toIdentifier('__proto__')).toBe('__proto___');
    expect(toIdentifier('Bing CN::search')).toBe('Bing_CN__search');
    expect(toIdentifier('')).toBe('_');
  });

  it('deduplicates collisions deterministically, whatever the input order', () => {
    const a = assignIdentifiers(['get-data', 'get_data', 'get.data']);
    const b = assignIdentifiers(['get.data', 'get_data', 'get-data']);
    expect([...a.entries()].sort()).toEqual([...b.entries()].sort());
    expect(new Set(a.values()).size).toBe(3);
    expect(a.get('get-data')).toBe('get_data');
  });
});

describe('allowedCallers policy', () => {
  it('resolves tool over server over annotations over the default', () => {
    expect(resolveAllowedCallers({ tool: ['direct'], server: ['code_execution'] })).toEqual({
      allowedCallers: ['direct'],
      source: 'tool',
    });
    expect(
      resolveAllowedCallers({ server: ['code_execution'], annotations: { destructiveHint: true } }),
    ).toEqual({
      allowedCallers: ['code_execution'],
      source: 'server',
    });
    expect(resolveAllowedCallers({ annotations: { destructiveHint: true } })).toEqual({
      allowedCallers: ['direct'],
      source: 'annotations',
    });
    expect(
      resolveAllowedCallers({ annotations: { readOnlyHint: true, destructiveHint: true } }).allowedCallers,
    ).toEqual(['direct', 'code_execution']);
    expect(resolveAllowedCallers({})).toEqual({
      allowedCallers: ['direct', 'code_execution'],
      source: 'default',
    });
    expect(resolveAllowedCallers({ tool: [] }).allowedCallers).toEqual([]);
  });

  it('names the tool and the key that would open it', () => {
    const target = {
      name: 'fs.delete_file',
      server: 'fs',
      tool: 'delete_file',
      allowedCallers: ['direct' as const],
      allowedCallersSource: 'annotations' as const,
    };
    expect(() => assertCallerAllowed(target, 'direct')).not.toThrow();
    const message = messageOf(() => assertCallerAllowed(target, 'code_execution'));
    expect(message).toContain('TOOL_NOT_ALLOWED');
    expect(message).toContain('fs.delete_file');
    expect(message).toContain('mcpServers.fs.tools.delete_file.allowedCallers');
    expect(message).toContain('["direct","code_execution"]');
  });
});

describe('client tool patterns', () => {
  it('matches `*` as any run of characters, anchored at both ends', () => {
    const cases: [string, string, boolean][] = [
      ['delete_file', 'delete_file', true],
      ['delete_file', 'delete_files', false],
      ['delete_*', 'delete_file', true],
      ['delete_*', 'delete_', true],
      ['delete_*', 'undelete_file', false],
      ['*_file', 'delete_file', true],
      ['*_file', 'delete_file_now', false],
      ['*', '', true],
      ['a*b*c', 'abc', true],
      ['a*b*c', 'aXbYc', true],
      ['a*b*c', 'acb', false],
      ['ab*ba', 'aba', false], // prefix and suffix may not overlap
      ['a*a*a', 'aaa', true],
      ['a*a*a', 'aa', false],
      ['*x*y*', 'yx', false],
      ['*x*y*', 'axbyc', true],
      ['*.*', 'get.data', true],
      ['get.*', 'getXdata', false], // regex characters are literal
      ['*ab*ab*', 'abab', true],
      ['*ab*ab*', 'aab', false],
    ];
    expect(cases.map(([pattern, tool]) => matchesToolPattern(pattern, tool))).toEqual(
      cases.map(([, , expected]) => expected),
    );
  });
});

describe('input validation', () => {
  it('warms up by compiling and passing its sample in both dialects (draft-07 and 2020-12 ajv)', () => {
    expect(INPUT_VALIDATION_DIALECTS.some((d) => d.includes('draft-07'))).toBe(true);
    expect(INPUT_VALIDATION_DIALECTS.some((d) => d.includes('2020-12'))).toBe(true);
    // The sample arguments must pass the warm-up schema: a warm-up that failed would throw.
    for (const dialect of INPUT_VALIDATION_DIALECTS) expect(() => warmInputValidation(dialect)).not.toThrow();
    expect(() => warmInputValidation()).not.toThrow();
  });

  it('names fields, expected types, enum values and unknown keys', () => {
    const validator = compileInputValidator('s.t', {
      type: 'object',
      properties: {
        name: { type: 'string' },
        nested: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
        list: { type: 'array', items: { type: 'number' } },
      },
      required: ['name'],
      additionalProperties: false,
    });
    expect(validator.ok).toBe(true);
    expect(() => validator.validate({ name: 'x', nested: { n: 1 }, list: [1] })).not.toThrow();
    const message = messageOf(() => validator.validate({ nme: 'x', nested: {}, list: [1, 'two'] }));
    expect(message).toContain('TOOL_INPUT_INVALID');
    expect(message).toContain('missing required field "name"');
    expect(message).toContain('unknown field "nme" (did you mean "name"?)');
    expect(message).toContain('missing required field "nested.n"');
    expect(message).toContain('"list[1]" must be number');
  });

  it('supports 2020-12 schemas and survives schemas that do not compile', () => {
    const modern = compileInputValidator('s.a', {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: 'urn:same-id',
      type: 'object',
      properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] } },
    });
    expect(modern.ok).toBe(true);
    expect(() => modern.validate({ pair: ['a', 1] })).not.toThrow();
    expect(messageOf(() => modern.validate({ pair: [1, 1] }))).toContain('"pair[0]" must be string');
    // The same $id from another server does not collide.
    expect(compileInputValidator('s.b', { $id: 'urn:same-id', type: 'object' }).ok).toBe(true);
    const broken = compileInputValidator('s.c', { type: 'object', properties: { a: { $ref: '#/nowhere' } } });
    expect(broken.ok).toBe(false);
    expect(() => broken.validate({ a: 1 })).not.toThrow();
    expect(messageOf(() => broken.validate('not an object'))).toContain('arguments must be an object');
  });
});

describe('result normalization', () => {
  it('prefers structuredContent, parses JSON text, keeps other text, and describes binaries', () => {
    expect(
      normalizeToolResult({ structuredContent: { a: 1 }, content: [{ type: 'text', text: 'x' }] }),
    ).toEqual({ a: 1 });
    expect(normalizeToolResult({ content: [{ type: 'text', text: ' [1,2]' }] })).toEqual([1, 2]);
    expect(normalizeToolResult({ content: [{ type: 'text', text: '42' }] })).toBe('42');
    expect(normalizeToolResult({ content: [{ type: 'text', text: '{broken' }] })).toBe('{broken');
    expect(normalizeToolResult({ content: [] })).toBeNull();
    expect(normalizeToolResult({})).toBeNull();
    const big = Buffer.alloc(3_000_000).toString('base64');
    const out = normalizeToolResult({
      content: [{ type: 'audio', data: big, mimeType: 'audio/wav' }, { type: 'weird' }],
    });
    expect(out).toEqual([
      { type: 'audio', mimeType: 'audio/wav', bytes: 3_000_000, note: 'audio data omitted' },
      { type: 'weird', note: 'unsupported content omitted' },
    ]);
  });

  it('for a script, keeps one JSON-looking text block as the server sent it (JsonText)', () => {
    const text = ' \n{ "a" : [1, 2] }';
    const kept = normalizeToolResultText({ content: [{ type: 'text', text }] });
    expect(JsonText.isInstance(kept) && kept.text).toBe(text);
    expect(JsonText.isInstance(kept) && kept.bytes).toBe(Buffer.byteLength(text));
    expect(JsonText.isInstance(kept) && kept.value()).toEqual({ a: [1, 2] });
    const broken = normalizeToolResultText({ content: [{ type: 'text', text: '{broken' }] });
    expect(JsonText.isInstance(broken) && broken.value()).toBe('{broken');
    // Everything else is the value normalizeToolResult gives.
    expect(normalizeToolResultText({ content: [{ type: 'text', text: '42' }] })).toBe('42');
    expect(
      normalizeToolResultText({ structuredContent: { a: 1 }, content: [{ type: 'text', text: '[2]' }] }),
    ).toEqual({ a: 1 });
    expect(
      normalizeToolResultText({
        content: [
          { type: 'text', text: '[1]' },
          { type: 'text', text: 'x' },
        ],
      }),
    ).toEqual([[1], 'x']);
    expect(normalizeToolResultText({ content: [] })).toBeNull();
  });

  it('extracts and bounds the error text of isError results', () => {
    expect(toolErrorText({ isError: true, content: [{ type: 'text', text: 'nope' }] })).toBe('nope');
    expect(toolErrorText({ isError: true })).toContain('without a message');
    const long = toolErrorText({ isError: true, content: [{ type: 'text', text: 'e'.repeat(10_000) }] }, 100);
    expect(long.length).toBeLessThan(200);
    expect(long).toContain('more characters cut');
  });
});
