/**
 * The gateway recognises an MCP protocol error by its name and code, not by class identity: one
 * made by another copy of the SDK (here another realm) keeps its code on the way to the client.
 */
import { runInNewContext } from 'node:vm';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { upstreamError } from '../../../src/server/gateway.js';

describe('upstreamError', () => {
  it('passes on an MCP error of this SDK copy as it is', () => {
    const error = new McpError(ErrorCode.InvalidParams, 'bad uri');
    expect(upstreamError(error)).toBe(error);
  });

  it('passes on an MCP error made elsewhere (another realm or SDK copy) with its code', () => {
    const foreign = runInNewContext(
      `Object.assign(new Error('MCP error -32002: Resource not found'), { name: 'McpError', code: -32002 })`,
    ) as unknown;
    expect(foreign instanceof McpError).toBe(false);
    const answered = upstreamError(foreign);
    expect(answered.code).toBe(-32002);
    expect(answered.message).toBe('MCP error -32002: Resource not found');
  });

  it('answers anything else as an internal error that names no host detail', () => {
    const answered = upstreamError(Object.assign(new Error('/secret/path'), { code: -32002 }));
    expect(answered.code).toBe(ErrorCode.InternalError);
    expect(answered.message).not.toContain('/secret/path');
  });
});
