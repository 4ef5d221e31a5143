/**
 * The bytes queued for a stdio MCP server that stops reading its stdin are bounded: a real child
 * process answers `initialize`, then never reads again; the call whose message would queue past
 * `maxQueuedWriteBytes` fails at once with a message saying so, while earlier calls stay pending.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { LinearStdioClientTransport } from '../../../src/tools/stdio-transport.js';

/** Answers `initialize`, then stops reading stdin for good (its pipe fills, writes queue up). */
const STUCK_SERVER = `
let buffered = '';
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  const line = buffered.split('\\n')[0];
  if (!buffered.includes('\\n')) return;
  const request = JSON.parse(line);
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: request.id, result: {
    protocolVersion: ${JSON.stringify(LATEST_PROTOCOL_VERSION)},
    capabilities: { tools: {} },
    serverInfo: { name: 'stuck', version: '1.0.0' },
  } }) + '\\n');
  process.stdin.pause();
  process.stdin.removeAllListeners('data');
});
setInterval(() => {}, 1000);
`;

describe('stdio write backlog', () => {
  it('fails the call that would queue past maxQueuedWriteBytes to a server that stopped reading', async () => {
    const maxQueuedWriteBytes = 256 * 1024;
    const transport = new LinearStdioClientTransport({
      command: process.execPath,
      args: ['-e', STUCK_SERVER],
      maxQueuedWriteBytes,
    });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    const settled: Array<{ index: number; error: string }> = [];
    const calls = Array.from({ length: 40 }, (_, index) =>
      client
        .callTool({ name: 'echo', arguments: { text: 'x'.repeat(32 * 1024) } })
        .catch((error: unknown) => settled.push({ index, error: (error as Error).message })),
    );
    // The refusal is synchronous with the send: wait for it, not for a timer.
    await expect.poll(() => settled.length, { timeout: 10_000 }).toBeGreaterThan(0);
    const first = settled[0]!;
    expect(first.error).toMatch(
      /^The MCP server is not reading its input: \d+ bytes already wait to be written to it, and this message \(\d+ bytes\) would pass the limit of 262144 queued bytes\./s,
    );
    // Calls before it were queued (the pipe and the backlog hold ~64 KB + 256 KB), not refused.
    expect(first.index).toBeGreaterThanOrEqual(Math.floor(maxQueuedWriteBytes / (33 * 1024)));
    expect(first.index).toBeLessThan(40);
    await client.close();
    await Promise.allSettled(calls);
    // Closing fails what was still waiting; every refusal said why.
    expect(settled.filter((s) => s.error.includes('not reading its input')).length).toBeGreaterThan(0);
  });
});
