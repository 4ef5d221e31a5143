/**
 * Large results over stdio, from real child processes: the read buffer is linear in the
 * message size (the SDK's own took 18 s of host CPU for 30 MB on a loaded test machine), and a
 * result that is still arriving when the call's timeout fires is reported as "too large / too
 * slow to read", not as a server that did not answer.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { isCodecallError, type CodecallError } from '../../../src/errors.js';
import { LineReader } from '../../../src/tools/stdio-transport.js';
import { ToolPool } from '../../../src/tools/tool-pool.js';
import { bundleTestServer, removeTestServerBundle } from '../tools/bundle-test-server.js';
afterAll(removeTestServerBundle);
import { MAX_STALL_MS, withLoopDelay } from './loop-delay.js';

const MIB = 1_048_576;
const pools: ToolPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

async function openPool(servers: Record<string, unknown>): Promise<ToolPool> {
  const config = parseConfig({ mcpServers: servers }, { file: join(tmpdir(), 'codecall.json'), env: {} });
  const pool = await ToolPool.open(config, { requireAll: true });
  pools.push(pool);
  return pool;
}

async function rejection(promise: Promise<unknown>): Promise<CodecallError> {
  try {
    await promise;
  } catch (error) {
    if (isCodecallError(error)) return error;
    throw error;
  }
  throw new Error('expected a failure');
}

/** A hand-written stdio MCP server whose `dump` tool sends 2 MiB of its answer, then stalls. */
const STALLING_SERVER = `
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
let buffered = '';
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  let i;
  while ((i = buffered.indexOf('\\n')) >= 0) {
    const m = JSON.parse(buffered.slice(0, i));
    buffered = buffered.slice(i + 1);
    if (m.method === 'initialize')
      send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'stalling', version: '1.0.0' } } });
    else if (m.method === 'tools/list')
      send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'dump', inputSchema: { type: 'object' } }] } });
    else if (m.method === 'tools/call')
      process.stdout.write('{"jsonrpc":"2.0","id":' + m.id + ',"result":{"content":[{"type":"text","text":"' + 'x'.repeat(2 * 1048576));
  }
});
process.stdin.on('end', () => process.exit(0));
`;

describe('LineReader', () => {
  it('splits messages across and within chunks, strips \\r, and refuses more than its limit', () => {
    const reader = new LineReader(1_000);
    const a = JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} });
    const b = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/x' });
    const stream = Buffer.from(`${a}\r\n${b}\n${a}`);
    const seen: unknown[] = [];
    for (let i = 0; i < stream.length; i += 7) {
      reader.append(stream.subarray(i, i + 7));
      for (let m = reader.readMessage(); m !== null; m = reader.readMessage()) seen.push(m);
    }
    expect(seen).toEqual([JSON.parse(a), JSON.parse(b)]);
    expect(reader.pendingBytes).toBe(a.length);
    reader.append(Buffer.from('\n'));
    expect(reader.readMessage()).toEqual(JSON.parse(a));
    expect(reader.pendingBytes).toBe(0);
    expect(() => reader.append(Buffer.alloc(1_001))).toThrow(
      'ReadBuffer exceeded maximum size of 1000 bytes',
    );
  });
});

describe('large results over stdio', () => {
  it('a 30 MiB result arrives within a 10 s call timeout, and the loop stays responsive', async () => {
    const entry = await bundleTestServer();
    const pool = await openPool({
      odd: { command: process.execPath, args: [entry, 'misbehaving'], toolTimeoutMs: 10_000 },
    });
    const { value, maxStallMs } = await withLoopDelay(() =>
      pool.call('odd.huge', { bytes: 30 * MIB }, { caller: 'direct' }),
    );
    expect(typeof value === 'string' && value.length).toBe(30 * MIB);
    expect(maxStallMs).toBeLessThan(MAX_STALL_MS);
  }, 60_000);

  it('a result still arriving at the timeout is "too large / too slow to read", with the bytes read', async () => {
    const pool = await openPool({
      stalling: { command: process.execPath, args: ['-e', STALLING_SERVER], toolTimeoutMs: 1_500 },
    });
    const error = await rejection(pool.call('stalling.dump', {}, { caller: 'direct' }));
    expect(error.code).toBe('TOOL_TIMEOUT');
    expect(error.message).toMatch(
      /^stalling\.dump answered, but its result was too large \/ too slow to read within 1500 ms: \d+ bytes of a message from MCP server "stalling" had arrived/,
    );
    expect(error.message).not.toContain('did not answer');
    expect(error.details.pendingBytes).toBeGreaterThan(2 * MIB);
  }, 30_000);
});
