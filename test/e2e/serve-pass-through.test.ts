/**
 * Pass-through fidelity of `codecall serve`: a real SDK client spawns the real bin over stdio in
 * front of `@modelcontextprotocol/server-everything` (stdio) and calls its tools directly. The
 * client gets what the upstream server sent: images, embedded resources, `structuredContent`
 * (checked by the client's SDK against the forwarded `outputSchema`), `isError`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT } from './serve-helpers.js';

const EVERYTHING = join(
  ROOT,
  'node_modules',
  '@modelcontextprotocol',
  'server-everything',
  'dist',
  'index.js',
);
const dir = mkdtempSync(join(tmpdir(), 'codecall-serve-pass-'));
let client: Client;

beforeAll(async () => {
  const configPath = join(dir, 'codecall.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      mcpServers: {
        everything: {
          command: process.execPath,
          args: [EVERYTHING, 'stdio'],
          allowedCallers: ['direct', 'code_execution'],
          deferLoading: false,
        },
      },
      sandbox: { cpuTimeMs: 2_000, memoryMb: 64 },
      history: { enabled: false },
      serve: { waitForServersMs: 60_000 },
    }),
  );
  client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'serve', '--config', configPath],
      cwd: dir,
      stderr: 'pipe',
    }),
  );
});

afterAll(async () => {
  await client?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('codecall serve passes upstream tool results through', () => {
  it('keeps images', async () => {
    const result = (await client.callTool({
      name: 'everything__get_tiny_image',
      arguments: {},
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const image = result.content.find((block) => block.type === 'image');
    expect(image).toMatchObject({ type: 'image', mimeType: 'image/png' });
    // The PNG itself, not a descriptor: base64 that decodes to the PNG signature.
    const data = Buffer.from((image as { data: string }).data, 'base64');
    expect(data.subarray(1, 4).toString('latin1')).toBe('PNG');
  });

  it('keeps structuredContent and forwards the outputSchema it conforms to', async () => {
    const { tools } = await client.listTools();
    const listed = tools.find((t) => t.name === 'everything__get_structured_content');
    expect(listed?.outputSchema?.properties).toHaveProperty('temperature');
    const result = (await client.callTool({
      name: 'everything__get_structured_content',
      arguments: { location: 'Chicago' },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({
      temperature: expect.any(Number),
      conditions: expect.any(String),
      humidity: expect.any(Number),
    });
  });

  it('keeps embedded resources, with their blob', async () => {
    const result = (await client.callTool({
      name: 'everything__get_resource_reference',
      arguments: { resourceType: 'Blob', resourceId: 2 },
    })) as CallToolResult;
    expect(result.content.map((block) => block.type)).toEqual(['text', 'resource', 'text']);
    const { resource } = result.content[1] as { resource: { uri: string; blob: string } };
    expect(resource.uri).toMatch(/2$/);
    expect(Buffer.from(resource.blob, 'base64').toString()).toMatch(/^Resource 2: This is a base64 blob/);
  });

  it('keeps the upstream isError result and its text', async () => {
    const result = (await client.callTool({
      name: 'everything__get_resource_reference',
      arguments: { resourceType: 'Blob', resourceId: 0 },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([
      { type: 'text', text: 'Invalid resourceId: 0. Must be a finite positive integer.' },
    ]);
  });
});
