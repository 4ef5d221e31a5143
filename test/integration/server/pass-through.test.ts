/**
 * Direct (pass-through) calls of `createCodecallServer` return the upstream result as it came:
 * the SDK's Client over an in-memory pair, a real runtime, and a low-level SDK server upstream
 * that answers with audio, an embedded resource, `_meta` and `structuredContent`, or `isError`.
 * Inside `execute_code` the same tool still gives the script a plain value with descriptors.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { createCodecallServer } from '../../../src/server/index.js';
import { inMemoryTransport } from '../../../src/testing/servers/index.js';

const WAV = Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1').toString('base64');

/** Upstream: `clip` answers with audio, a resource, _meta and structuredContent; `broken` with isError. */
function mediaServer(): Server {
  const server = new Server({ name: 'media', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      {
        name: 'clip',
        description: 'A short audio clip.',
        inputSchema: { type: 'object' },
        outputSchema: { type: 'object', properties: { seconds: { type: 'number' } }, required: ['seconds'] },
      },
      { name: 'broken', description: 'Always fails.', inputSchema: { type: 'object' } },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) =>
    request.params.name === 'clip'
      ? {
          content: [
            { type: 'audio', data: WAV, mimeType: 'audio/wav' },
            {
              type: 'resource',
              resource: { uri: 'media://clip/1', mimeType: 'text/plain', text: 'transcript' },
            },
          ],
          structuredContent: { seconds: 1.5 },
          _meta: { 'example.com/trace': 'abc123' },
        }
      : {
          content: [{ type: 'text', text: 'the encoder is offline' }],
          isError: true,
          _meta: { 'example.com/retry-after': 30 },
        },
  );
  return server;
}

const dir = mkdtempSync(join(tmpdir(), 'codecall-pass-through-'));
let runtime: CodecallRuntime;
let client: Client;

beforeAll(async () => {
  const configPath = join(dir, 'codecall.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      mcpServers: {
        media: { command: 'unused', deferLoading: false, allowedCallers: ['direct', 'code_execution'] },
      },
      sandbox: { cpuTimeMs: 1_000, memoryMb: 64 },
      history: { enabled: false },
    }),
  );
  runtime = await CodecallRuntime.open({
    load: { path: configPath },
    history: false,
    tools: { transports: { media: inMemoryTransport(mediaServer) } },
  });
  const server = createCodecallServer({ runtime });
  client = new Client({ name: 'test-client', version: '1.0.0' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
});

afterAll(async () => {
  await client?.close();
  await runtime?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('pass-through calls keep the upstream result', () => {
  it('audio, embedded resources, structuredContent with its outputSchema, and _meta', async () => {
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === 'media__clip')?.outputSchema).toEqual({
      type: 'object',
      properties: { seconds: { type: 'number' } },
      required: ['seconds'],
    });
    const result = (await client.callTool({ name: 'media__clip', arguments: {} })) as CallToolResult;
    expect(result).toEqual({
      content: [
        { type: 'audio', data: WAV, mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'media://clip/1', mimeType: 'text/plain', text: 'transcript' } },
      ],
      structuredContent: { seconds: 1.5 },
      _meta: { 'example.com/trace': 'abc123' },
    });
  });

  it('isError results with their own text and _meta', async () => {
    const result = (await client.callTool({ name: 'media__broken', arguments: {} })) as CallToolResult;
    expect(result).toEqual({
      content: [{ type: 'text', text: 'the encoder is offline' }],
      isError: true,
      _meta: { 'example.com/retry-after': 30 },
    });
  });

  it('scripts still get plain values (structuredContent), not the raw result', async () => {
    const run = (await client.callTool({
      name: 'execute_code',
      arguments: { code: 'console.log(JSON.stringify(await tools.media.clip()))' },
    })) as CallToolResult;
    expect(run.content[0]).toEqual({
      type: 'text',
      text: 'stdout:\n{"seconds":1.5}\n\nexit status: ok after 1 tool call',
    });
  });
});
