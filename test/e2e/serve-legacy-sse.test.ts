/**
 * `codecall serve --http --legacy-sse`: the SDK's legacy `SSEClientTransport` (GET /sse + POST
 * /messages) against the real bin; without the flag /sse is not served, and over stdio the flag
 * is a usage error.
 */
import { rmSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnServe, tempServeConfig } from './serve-helpers.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function start(args: string[]) {
  const temp = tempServeConfig();
  dirs.push(temp.dir);
  const serve = spawnServe(['--http', '--port', '0', '--config', temp.configPath, ...args]);
  const [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)/)) as [string, string];
  return { serve, base: url.replace(/\/mcp$/, '') };
}

describe('codecall serve --legacy-sse', () => {
  it('serves the legacy SSE transport beside /mcp', async () => {
    const { serve, base } = await start(['--legacy-sse']);
    try {
      const client = new Client({ name: 'legacy-sse', version: '1.0.0' });
      await client.connect(new SSEClientTransport(new URL(`${base}/sse`)));
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(
        expect.arrayContaining(['search_tools', 'execute_code']),
      );
      const result = (await client.callTool({
        name: 'execute_code',
        arguments: { code: 'console.log(6 * 7)' },
      })) as CallToolResult;
      expect(result.content[0]).toEqual({ type: 'text', text: 'stdout:\n42\n\nexit status: ok' });
      await client.close();
      const stray = await fetch(`${base}/messages?sessionId=nope`, { method: 'POST', body: '{}' });
      expect(stray.status).toBe(404);
      expect(await stray.text()).toMatch(/open \/sse first/);
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });

  it('is off without the flag, and a usage error without --http', async () => {
    const { serve, base } = await start([]);
    try {
      expect((await fetch(`${base}/sse`)).status).toBe(404);
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
    const temp = tempServeConfig();
    dirs.push(temp.dir);
    const stdio = spawnServe(['--legacy-sse', '--config', temp.configPath]);
    expect((await stdio.exited).code).toBe(2);
    expect(stdio.stderr()).toMatch(/--legacy-sse applies to --http only/);
  });
});
