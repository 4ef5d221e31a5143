/**
 * The `Mcp-Param-*` header check of the 2026-07-28 leg (SEP-2243), with the cases of the
 * conformance suite's `http-custom-header-server-validation` scenario.
 */
import { describe, expect, it } from 'vitest';
import { paramHeaderMismatch } from '../../../src/server/mcp-param-headers.js';

const schema = {
  type: 'object',
  properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, other: { type: 'string' } },
};
const check = (args: unknown, header?: string): string | undefined =>
  paramHeaderMismatch(schema, args, new Headers(header === undefined ? {} : { 'Mcp-Param-Region': header }));

describe('paramHeaderMismatch', () => {
  it('accepts a literal header, a Base64-wrapped one and a value that only looks wrapped', () => {
    expect(check({ region: 'Hello' }, 'Hello')).toBeUndefined();
    expect(
      check({ region: 'Hello' }, `=?base64?${Buffer.from('Hello').toString('base64')}?=`),
    ).toBeUndefined();
    expect(check({ region: 'SGVsbG8=' }, 'SGVsbG8=')).toBeUndefined();
    expect(check({ region: '=?base64?SGVsbG8=' }, '=?base64?SGVsbG8=')).toBeUndefined();
    expect(check({}, undefined)).toBeUndefined();
  });

  it('refuses bad padding, characters outside Base64, a mismatch and a missing header', () => {
    expect(check({ region: 'Hello' }, '=?base64?SGVsbG8?=')).toMatch(/not valid Base64/);
    expect(check({ region: 'Hello' }, '=?base64?SGVs!!!bG8=?=')).toMatch(/not valid Base64/);
    expect(check({ region: 'Hello' }, 'World')).toMatch(/does not match the argument "region"/);
    expect(check({ region: 'Hello' })).toMatch(/Mcp-Param-Region is missing/);
  });

  it('ignores schemas without x-mcp-header', () => {
    expect(
      paramHeaderMismatch({ type: 'object', properties: { a: {} } }, { a: 1 }, new Headers()),
    ).toBeUndefined();
    expect(paramHeaderMismatch(undefined, { a: 1 }, new Headers())).toBeUndefined();
  });

  it("reads the declarations as the upstream side does: nested paths, and the spec's integer and boolean forms", () => {
    const nested = {
      type: 'object',
      properties: {
        filter: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } },
        limit: { type: 'integer', 'x-mcp-header': 'Limit' },
        dry: { type: 'boolean', 'x-mcp-header': 'Dry' },
      },
    };
    const headers = new Headers({ 'Mcp-Param-Limit': '5', 'Mcp-Param-Dry': 'true' });
    expect(paramHeaderMismatch(nested, { filter: { region: 'eu' }, limit: 5, dry: true }, headers)).toMatch(
      /Mcp-Param-Region is missing: the argument "filter.region"/,
    );
    headers.set('Mcp-Param-Region', 'eu');
    expect(
      paramHeaderMismatch(nested, { filter: { region: 'eu' }, limit: 5, dry: true }, headers),
    ).toBeUndefined();
  });
});
