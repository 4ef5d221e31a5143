/**
 * `startStdioServer` on in-process streams: newline-delimited JSON-RPC in and out, the bound
 * on one message, and stopping when stdin ends.
 */
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { startStdioServer } from '../../../src/server/index.js';
import { createExpenseServer, inMemoryTransport } from '../../../src/testing/servers/index.js';

let runtime: CodecallRuntime;
beforeAll(async () => {
  runtime = await CodecallRuntime.open({
    config: parseConfig({ mcpServers: {}, history: { enabled: false } }, { file: '<stdio-server.test>' }),
    history: false,
    tools: { transports: { expenses: inMemoryTransport(() => createExpenseServer()) } },
  });
});
afterAll(async () => {
  await runtime?.close();
});

function streams(): { stdin: PassThrough; stdout: PassThrough; lines: () => Promise<unknown> } {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let buffer = '';
  const waiting: ((value: unknown) => void)[] = [];
  const ready: unknown[] = [];
  stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const message = JSON.parse(buffer.slice(0, newline)) as unknown;
      buffer = buffer.slice(newline + 1);
      const waiter = waiting.shift();
      if (waiter) waiter(message);
      else ready.push(message);
    }
  });
  return {
    stdin,
    stdout,
    lines: () => (ready.length > 0 ? Promise.resolve(ready.shift()) : new Promise((r) => waiting.push(r))),
  };
}

const send = (stdin: PassThrough, message: unknown): void => void stdin.write(`${JSON.stringify(message)}\n`);

describe('startStdioServer', () => {
  it('answers JSON-RPC lines on stdout and stops when stdin ends', async () => {
    const io = streams();
    const handle = await startStdioServer({ runtime, stdin: io.stdin, stdout: io.stdout });
    send(io.stdin, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    expect(await io.lines()).toMatchObject({ id: 1, result: { serverInfo: { name: 'codecall' } } });
    send(io.stdin, { jsonrpc: '2.0', method: 'notifications/initialized' });
    send(io.stdin, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: {
        name: 'execute_code',
        arguments: {
          code: 'console.log(await tools.expenses.get_team_members().then((r) => r.members.length))',
        },
      },
    });
    expect(await io.lines()).toMatchObject({
      id: 2,
      result: { content: [{ type: 'text', text: 'stdout:\n20\n\nexit status: ok after 1 tool call' }] },
    });
    io.stdin.end();
    await handle.closed;
  });

  it('a message over maxMessageBytes closes the connection; the runtime stays usable', async () => {
    const io = streams();
    const handle = await startStdioServer({
      runtime,
      stdin: io.stdin,
      stdout: io.stdout,
      maxMessageBytes: 1_000,
    });
    io.stdin.write(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${'x'.repeat(5_000)}"}}\n`);
    await handle.closed;
    expect((await runtime.execute('console.log(1)')).stdout).toBe('1\n');
  });
});
