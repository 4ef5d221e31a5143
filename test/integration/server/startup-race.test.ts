/**
 * `createCodecallServer` in process (the SDK's Client over a linked in-memory pair, an in-process
 * sandbox) in front of a runtime whose servers connect in the background, as `codecall serve`'s
 * do: a script that calls a tool of a server still starting waits for it, a tool of a server that
 * failed is unknown with the reason, and each session's `store` is its own unless the server
 * is told to use the runtime's.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { createCodecallServer, type CodecallServerOptions } from '../../../src/server/index.js';
import { createExpenseServer, inMemoryTransport } from '../../../src/testing/servers/index.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-startup-race-'));
const configPath = join(dir, 'codecall.json');
writeFileSync(
  configPath,
  JSON.stringify({
    mcpServers: {
      // The commands are never spawned: in-memory transports replace them.
      keeper: { command: 'unused' },
      probe: { command: 'unused' },
      broken: { command: 'unused' },
    },
    sandbox: { mode: 'in-process', cpuTimeMs: 1_000, wallTimeMs: 60_000, memoryMb: 64 },
    history: { enabled: false },
  }),
);

let runtime: CodecallRuntime;
let openGate!: () => void;
const gate = new Promise<void>((resolve) => (openGate = resolve));

/** A server whose one tool opens the gate probe's start waits for. */
function createKeeper(): McpServer {
  const keeper = new McpServer({ name: 'keeper', version: '1.0.0' });
  keeper.registerTool('open_gate', { description: 'Lets probe start.' }, () => {
    openGate();
    return { content: [{ type: 'text', text: 'opened' }] };
  });
  return keeper;
}

beforeAll(async () => {
  const probe = inMemoryTransport(() => createExpenseServer());
  runtime = await CodecallRuntime.open({
    load: { path: configPath },
    history: false,
    tools: {
      background: true,
      transports: {
        keeper: inMemoryTransport(createKeeper),
        probe: async () => {
          await gate;
          return probe();
        },
        broken: () => Promise.reject(new Error('spawn unused ENOENT')),
      },
    },
  });
  // The keeper alone: probe waits for the gate, broken fails.
  await runtime.tools.whenStarted('keeper');
  await runtime.tools.whenStarted('broken');
});

afterAll(async () => {
  await runtime?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function connect(
  options: Partial<CodecallServerOptions> = {},
): Promise<{ client: Client; close: () => Promise<void> }> {
  const server = createCodecallServer({ runtime, ...options });
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  return {
    client,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

async function run(client: Client, code: string): Promise<string> {
  const result = (await client.callTool({ name: 'execute_code', arguments: { code } })) as CallToolResult;
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

describe('createCodecallServer while servers start in the background', () => {
  it('a script waits for the starting server of a tool it calls; a failed server’s tool is unknown with the reason', async () => {
    const { client, close } = await connect();
    try {
      expect(runtime.tools.isStarting('probe')).toBe(true);
      expect(await run(client, 'await tools.broken.anything({});')).toContain(
        'Unknown tool "broken.anything": MCP server "broken" failed to start (its command was not found)',
      );
      const ran = await run(
        client,
        [
          // Bound before probe could start: the call must wait for it.
          'await tools.keeper.open_gate({});',
          'const { members } = await tools.probe.get_team_members({});',
          'console.log("members", members.length);',
        ].join('\n'),
      );
      expect(ran).toContain('stdout:\nmembers 20');
      expect(runtime.tools.isStarting('probe')).toBe(false);
    } finally {
      await close();
    }
  });

  it('each session has its own store; store: "runtime" shares the runtime’s', async () => {
    const a = await connect();
    const b = await connect();
    const sharedA = await connect({ store: 'runtime' });
    const sharedB = await connect({ store: 'runtime' });
    try {
      const get = 'console.log(JSON.stringify((await store.get("k")) ?? null));';
      await run(a.client, 'await store.set("k", "a");');
      expect(await run(b.client, get)).toContain('stdout:\nnull');
      expect(await run(a.client, get)).toContain('stdout:\n"a"');
      // Neither is the runtime's store.
      expect(await run(sharedA.client, get)).toContain('stdout:\nnull');
      await run(sharedA.client, 'await store.set("k", "shared");');
      expect(await run(sharedB.client, get)).toContain('stdout:\n"shared"');
      expect(await run(a.client, get)).toContain('stdout:\n"a"');
    } finally {
      await Promise.all([a.close(), b.close(), sharedA.close(), sharedB.close()]);
    }
  });
});
