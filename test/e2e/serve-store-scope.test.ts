/**
 * @module
 * Whose `store` a script of `codecall serve` reads (the real bin): over HTTP, where every
 * client sends the same static bearer token, each MCP session has its own, so one client never
 * reads what another kept; `store.scope: "shared"` shares the configuration's among them all.
 * Over stdio (one client per process) the store is the configuration's, so it outlives the
 * process.
 */
import { rmSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, spawnServe, tempServeConfig } from './serve-helpers.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const TOKEN = 'one-static-token-for-every-client';

async function run(client: Client, code: string): Promise<string> {
  const result = (await client.callTool({ name: 'execute_code', arguments: { code } })) as CallToolResult;
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

const SET = 'await store.set("secret", "kept by A"); console.log("set");';
const GET = 'console.log(JSON.stringify((await store.get("secret")) ?? null));';

/** Two clients of one `codecall serve --http` with the same bearer token: what B reads of A's key. */
async function twoHttpClients(extra: Record<string, unknown>): Promise<{ a: string; b: string }> {
  const temp = tempServeConfig(extra);
  dirs.push(temp.dir);
  const serve = spawnServe(['--http', '--port', '0', '--token', TOKEN, '--config', temp.configPath]);
  try {
    const [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)/)) as [string, string];
    const connect = async (name: string): Promise<Client> => {
      const client = new Client({ name, version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), {
          requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
        }),
      );
      return client;
    };
    const a = await connect('e2e-store-a');
    const b = await connect('e2e-store-b');
    try {
      expect(await run(a, SET)).toContain('stdout:\nset');
      const read = { b: await run(b, GET), a: await run(a, GET) };
      return read;
    } finally {
      await a.close();
      await b.close();
    }
  } finally {
    serve.child.kill('SIGTERM');
    await serve.exited;
  }
}

describe('codecall serve: whose store a script reads', () => {
  it('over HTTP with one shared token, each MCP session has its own store', async () => {
    const { a, b } = await twoHttpClients({});
    expect(b).toContain('stdout:\nnull');
    expect(a).toContain('stdout:\n"kept by A"');
  });

  it('store.scope "shared" gives every HTTP client the configuration’s store', async () => {
    const { a, b } = await twoHttpClients({ store: { scope: 'shared' } });
    expect(b).toContain('stdout:\n"kept by A"');
    expect(a).toContain('stdout:\n"kept by A"');
  });

  it('over stdio (one client) the store is the configuration’s: it outlives the process', async () => {
    const temp = tempServeConfig();
    dirs.push(temp.dir);
    const session = async (code: string): Promise<string> => {
      const client = new Client({ name: 'e2e-store-stdio', version: '1.0.0' });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [BIN, 'serve', '--config', temp.configPath],
          cwd: temp.workDir,
          stderr: 'pipe',
        }),
      );
      try {
        return await run(client, code);
      } finally {
        await client.close();
      }
    };
    expect(await session(SET)).toContain('stdout:\nset');
    expect(await session(GET)).toContain('stdout:\n"kept by A"');
  });
});
