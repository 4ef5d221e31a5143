/**
 * Progress a server sends right before its result reaches the caller. A real child process
 * speaks MCP over stdio by hand and writes its last progress notification and the result in
 * one write, so both arrive in one read: the MCP SDK's client settles the response at once but
 * dispatches notifications a microtask later, which dropped that progress (the conformance
 * scenario `tools-call-with-progress` failed under load for this reason).
 */
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { ToolPool } from '../../../src/tools/index.js';

const SERVER = `
const send = (...messages) => process.stdout.write(messages.map((m) => JSON.stringify(m) + '\\n').join(''));
let buffered = '';
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  let newline;
  while ((newline = buffered.indexOf('\\n')) >= 0) {
    const message = JSON.parse(buffered.slice(0, newline));
    buffered = buffered.slice(newline + 1);
    if (message.method === 'initialize')
      send({ jsonrpc: '2.0', id: message.id, result: {
        protocolVersion: ${JSON.stringify(LATEST_PROTOCOL_VERSION)},
        capabilities: { tools: {} },
        serverInfo: { name: 'progress', version: '1.0.0' },
      } });
    else if (message.method === 'tools/list')
      send({ jsonrpc: '2.0', id: message.id, result: { tools: [
        { name: 'work', description: 'Reports progress, then answers.', inputSchema: { type: 'object' } },
      ] } });
    else if (message.method === 'tools/call') {
      const token = message.params._meta?.progressToken;
      const progress = (value) => ({ jsonrpc: '2.0', method: 'notifications/progress',
        params: { progressToken: token, progress: value, total: 100 } });
      // All three notifications and the result in one write: one read on the client's side.
      send(progress(0), progress(50), progress(100),
        { jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: 'done' }] } });
    }
  }
});
`;

const dir = mkdtempSync(join(tmpdir(), 'codecall-progress-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('progress notifications', () => {
  it('all reach the caller, in order, when they arrive in the same read as the result', async () => {
    const config = parseConfig(
      { mcpServers: { slow: { command: process.execPath, args: ['-e', SERVER] } } },
      { file: join(dir, 'codecall.json'), env: {} },
    );
    const pool = await ToolPool.open(config, { requireAll: true });
    try {
      const seen: Progress[] = [];
      const result = await pool.callResult(
        'slow.work',
        {},
        {
          caller: 'direct',
          onProgress: (progress) => seen.push(progress),
        },
      );
      expect(result.content).toEqual([{ type: 'text', text: 'done' }]);
      expect(seen.map((p) => p.progress)).toEqual([0, 50, 100]);
      // Without a listener no token is sent, and the call still answers.
      expect(await pool.call('slow.work', {}, { caller: 'direct' })).toBe('done');
    } finally {
      await pool.close();
    }
  });
});
