/**
 * `codecall serve` answers both MCP eras by default (issue 28): the official SDK v2 client
 * (`@modelcontextprotocol/client`, unmodified) in `auto`, `{ pin: '2026-07-28' }` and `legacy`
 * modes against the real bin, over Streamable HTTP and stdio, in front of the conformance fixture
 * server, gets the gateway's resources, resource templates and prompts in either era (one handler
 * table); a raw stdio client that probes `server/discover` and then falls back to `initialize` on
 * the same connection is served by the 2025-11-25 server; `--mcp-2026=false` turns the 2026 era off.
 */
import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, spawnServe, type ServeProcess } from './serve-helpers.js';
import { tempDir } from '../fixtures/temp-dir.js';

const dir = tempDir('codecall-2026-eras-');
const serves: ServeProcess[] = [];
afterAll(async () => {
  for (const serve of serves) serve.child.kill('SIGTERM');
  await Promise.all(serves.map((serve) => serve.exited));
  rmSync(dir, { recursive: true, force: true });
});

const configPath = join(dir, 'codecall.json');
writeFileSync(
  configPath,
  JSON.stringify({
    mcpServers: {
      fixture: {
        command: process.execPath,
        args: [join(ROOT, 'test', 'fixtures', 'servers', 'conformance-server.mjs')],
      },
    },
    history: { enabled: false },
    serve: { waitForServersMs: 60_000 },
  }),
);

type Mode = NonNullable<
  NonNullable<NonNullable<ConstructorParameters<typeof Client>[1]>['versionNegotiation']>['mode']
>;

/** What the gateway passes through, as one client sees it. */
async function gatewayView(client: Client): Promise<unknown> {
  const { resources } = await client.listResources();
  const { resourceTemplates } = await client.listResourceTemplates();
  const read = await client.readResource({ uri: 'fixture+test://static-text' });
  const { prompts } = await client.listPrompts();
  const prompt = await client.getPrompt({ name: 'fixture__test_simple_prompt' });
  return {
    resources: resources.map((r) => r.uri).filter((uri) => uri.startsWith('fixture+test://static')),
    templates: resourceTemplates.map((t) => t.uriTemplate),
    read: read.contents.map((c) => ({ uri: c.uri, text: 'text' in c ? c.text : undefined })),
    prompts: prompts.map((p) => p.name).includes('fixture__test_simple_prompt'),
    prompt: prompt.messages[0]?.content,
  };
}

const EXPECTED_VIEW = {
  resources: ['fixture+test://static-text', 'fixture+test://static-binary'],
  templates: ['fixture+test://template/{id}/data'],
  read: [{ uri: 'fixture+test://static-text', text: 'This is the content of the static text resource.' }],
  prompts: true,
  prompt: { type: 'text', text: 'This is a simple prompt for testing.' },
};

const CASES: [Mode, 'modern' | 'legacy'][] = [
  ['auto', 'modern'],
  [{ pin: '2026-07-28' }, 'modern'],
  ['legacy', 'legacy'],
];

describe('codecall serve: both MCP eras by default, one handler table', () => {
  it('over Streamable HTTP: the SDK v2 client in auto, pinned and legacy modes gets resources, templates and prompts', async () => {
    const serve = spawnServe(['--http', '--port', '0', '--config', configPath]);
    serves.push(serve);
    const [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)/)) as [string, string];
    await serve.waitFor(/MCP 2025-11-25 and 2026-07-28/);
    const seen: string[] = [];
    for (const [mode, era] of CASES) {
      const client = new Client({ name: 'e2e-eras', version: '1.0.0' }, { versionNegotiation: { mode } });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      try {
        expect(client.getProtocolEra()).toBe(era);
        expect(await gatewayView(client)).toEqual(EXPECTED_VIEW);
        seen.push(client.getProtocolEra() ?? 'none');
      } finally {
        await client.close();
      }
    }
    expect(seen).toEqual(['modern', 'modern', 'legacy']);
  }, 180_000);

  it('over stdio: the SDK v2 client in auto and legacy modes gets the same', async () => {
    const seen: string[] = [];
    for (const [mode, era] of [CASES[0]!, CASES[2]!]) {
      const client = new Client({ name: 'e2e-eras', version: '1.0.0' }, { versionNegotiation: { mode } });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [BIN, 'serve', '--config', configPath],
          cwd: dir,
          stderr: 'pipe',
        }),
      );
      try {
        expect(client.getProtocolEra()).toBe(era);
        expect(await gatewayView(client)).toEqual(EXPECTED_VIEW);
        seen.push(client.getProtocolEra() ?? 'none');
      } finally {
        await client.close();
      }
    }
    expect(seen).toEqual(['modern', 'legacy']);
  }, 180_000);

  it('over stdio: a server/discover probe, then initialize on the same connection, is served in 2025-11-25', async () => {
    const child = spawn(process.execPath, [BIN, 'serve', '--config', configPath], {
      cwd: dir,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const answer = async (id: number): Promise<Record<string, unknown>> => {
      for (let waited = 0; waited < 90_000; waited += 50) {
        const line = stdout.split('\n').find((l) => l.includes(`"id":${id},`) || l.endsWith(`"id":${id}}`));
        if (line !== undefined) return JSON.parse(line) as Record<string, unknown>;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`no answer to request ${id}; stderr: ${stderr}`);
    };
    const send = (message: Record<string, unknown>): void => {
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\n');
    };
    try {
      // What a client in auto mode sends first (the AI SDK's stdio client gives it 1 s, then sends
      // initialize without waiting for the answer: both are in flight here, as there).
      send({
        id: 1,
        method: 'server/discover',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      });
      send({
        id: 2,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      });
      expect((await answer(1)).result).toMatchObject({
        supportedVersions: expect.arrayContaining(['2026-07-28']),
      });
      expect((await answer(2)).result).toMatchObject({
        protocolVersion: '2025-11-25',
        capabilities: { resources: { subscribe: true }, prompts: {} },
      });
      send({ method: 'notifications/initialized' });
      send({ id: 3, method: 'resources/read', params: { uri: 'fixture+test://static-text' } });
      expect((await answer(3)).result).toMatchObject({
        contents: [{ text: 'This is the content of the static text resource.' }],
      });
      expect(stderr).not.toMatch(/Rejected|unexpected error/);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  }, 180_000);

  it('--mcp-2026=false: the SDK v2 client in auto mode falls back to 2025-11-25', async () => {
    const serve = spawnServe(['--http', '--port', '0', '--mcp-2026=false', '--config', configPath]);
    serves.push(serve);
    const [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)/)) as [string, string];
    await serve.waitFor(/2026-07-28 off/);
    const client = new Client(
      { name: 'e2e-eras', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      expect(client.getProtocolEra()).toBe('legacy');
      expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
    } finally {
      await client.close();
    }
  }, 120_000);
});
