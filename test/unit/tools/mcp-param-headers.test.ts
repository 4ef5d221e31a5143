/**
 * SEP-2243 on the upstream side: the `x-mcp-header` scan that excludes a tool, and the
 * `Mcp-Param-*` values mirrored from a call's arguments (spec 2026-07-28 streamable-http.mdx,
 * § Custom Headers from Tool Parameters, § Value Encoding). The same rules run end to end under
 * the conformance suite's `http-custom-headers` and `http-invalid-tool-headers` scenarios
 * (test/e2e/upstream-conformance.test.ts).
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_UPSTREAM_PARAM_HEADER_SCAN_MAX_NODES,
  DEFAULT_UPSTREAM_PARAM_HEADERS_MAX,
} from '../../../src/config/defaults.js';
import {
  buildParamHeaders,
  encodeParamHeaderValue,
  scanParamHeaders,
} from '../../../src/tools/mcp-param-headers.js';

const object = (properties: Record<string, unknown>) => ({ type: 'object', properties });

describe('scanParamHeaders', () => {
  it('collects annotations reached by properties keys, nested ones included', () => {
    const scan = scanParamHeaders(
      object({
        region: { type: 'string', 'x-mcp-header': 'Region' },
        target: object({ id: { type: 'integer', 'x-mcp-header': 'Target-Id' } }),
        query: { type: 'string' },
      }),
    );
    expect(scan.valid).toBe(true);
    expect(
      scan.valid && [...scan.declarations].sort((a, b) => a.headerName.localeCompare(b.headerName)),
    ).toEqual([
      { path: ['region'], headerName: 'Region' },
      { path: ['target', 'id'], headerName: 'Target-Id' },
    ]);
  });

  it.each([
    ['empty', { v: { type: 'string', 'x-mcp-header': '' } }, /not a non-empty string/],
    ['a space', { v: { type: 'string', 'x-mcp-header': 'My Region' } }, /not an RFC 9110 token/],
    ['a colon', { v: { type: 'string', 'x-mcp-header': 'A:B' } }, /not an RFC 9110 token/],
    ['non-ASCII', { v: { type: 'string', 'x-mcp-header': 'Région' } }, /not an RFC 9110 token/],
    ['a tab', { v: { type: 'string', 'x-mcp-header': 'A\t1' } }, /not an RFC 9110 token/],
    ['type number', { v: { type: 'number', 'x-mcp-header': 'Score' } }, /not "number"/],
    ['type object', { v: { type: 'object', 'x-mcp-header': 'Data' } }, /not "object"/],
    ['no type', { v: { 'x-mcp-header': 'Data' } }, /not none/],
    [
      'a case-insensitive duplicate',
      { a: { type: 'string', 'x-mcp-header': 'MyField' }, b: { type: 'string', 'x-mcp-header': 'myfield' } },
      /declared twice/,
    ],
    [
      'under items',
      { list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } } },
      /not reached by a chain of "properties" keys/,
    ],
    [
      'under anyOf',
      { v: { anyOf: [{ type: 'string', 'x-mcp-header': 'V' }] } },
      /not reached by a chain of "properties" keys/,
    ],
  ])('excludes a tool whose annotation is %s', (_label, properties, reason) => {
    const scan = scanParamHeaders(object(properties));
    expect(scan.valid).toBe(false);
    expect(!scan.valid && scan.reason).toMatch(reason);
  });

  it('refuses an annotation on the schema root and under $defs', () => {
    expect(scanParamHeaders({ type: 'string', 'x-mcp-header': 'Root' }).valid).toBe(false);
    expect(
      scanParamHeaders({ ...object({}), $defs: { d: { type: 'string', 'x-mcp-header': 'D' } } }).valid,
    ).toBe(false);
  });

  it('bounds the walk of a hostile schema by DEFAULT_UPSTREAM_PARAM_HEADER_SCAN_MAX_NODES', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < DEFAULT_UPSTREAM_PARAM_HEADER_SCAN_MAX_NODES + 5; i++) deep = object({ p: deep });
    const scan = scanParamHeaders(deep);
    expect(scan.valid).toBe(false);
    expect(!scan.valid && scan.reason).toContain('DEFAULT_UPSTREAM_PARAM_HEADER_SCAN_MAX_NODES');
  });

  it('bounds the declarations of one tool by DEFAULT_UPSTREAM_PARAM_HEADERS_MAX', () => {
    const properties: Record<string, unknown> = {};
    for (let i = 0; i <= DEFAULT_UPSTREAM_PARAM_HEADERS_MAX; i++)
      properties[`p${i}`] = { type: 'string', 'x-mcp-header': `H${i}` };
    const scan = scanParamHeaders(object(properties));
    expect(!scan.valid && scan.reason).toContain('DEFAULT_UPSTREAM_PARAM_HEADERS_MAX');
  });
});

describe('buildParamHeaders', () => {
  const scan = scanParamHeaders(
    object({
      region: { type: 'string', 'x-mcp-header': 'Region' },
      priority: { type: 'integer', 'x-mcp-header': 'Priority' },
      verbose: { type: 'boolean', 'x-mcp-header': 'Verbose' },
      target: object({ id: { type: 'string', 'x-mcp-header': 'Target' } }),
      query: { type: 'string' },
    }),
  );
  const declarations = scan.valid ? scan.declarations : [];

  it('mirrors annotated arguments only, converted as the spec says', () => {
    expect(
      buildParamHeaders(declarations, {
        region: 'us-west1',
        priority: -7,
        verbose: false,
        target: { id: 'a b' },
        query: 'SELECT 1',
      }),
    ).toEqual({
      'Mcp-Param-Region': 'us-west1',
      'Mcp-Param-Priority': '-7',
      'Mcp-Param-Verbose': 'false',
      'Mcp-Param-Target': 'a b',
    });
  });

  it('omits a null or absent value, an unsafe integer and a non-primitive', () => {
    expect(
      buildParamHeaders(declarations, { region: null, priority: 2 ** 53, verbose: 'yes' as unknown }),
    ).toEqual({ 'Mcp-Param-Verbose': 'yes' });
    expect(buildParamHeaders(declarations, { target: { id: { nested: 1 } } })).toEqual({});
    expect(buildParamHeaders(declarations, undefined)).toEqual({});
  });

  it('encodes unsafe values with the Base64 sentinel (the spec table)', () => {
    expect(encodeParamHeaderValue('us-west1')).toBe('us-west1');
    expect(encodeParamHeaderValue('Hello, 世界')).toBe('=?base64?SGVsbG8sIOS4lueVjA==?=');
    expect(encodeParamHeaderValue(' padded ')).toBe('=?base64?IHBhZGRlZCA=?=');
    expect(encodeParamHeaderValue('line1\nline2')).toBe('=?base64?bGluZTEKbGluZTI=?=');
    expect(encodeParamHeaderValue('=?base64?literal?=')).toBe('=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=');
    expect(encodeParamHeaderValue('a\tb')).toBe('a\tb');
    expect(encodeParamHeaderValue('')).toBe('=?base64??=');
  });
});
