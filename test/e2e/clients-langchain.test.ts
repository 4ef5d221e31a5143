/**
 * LangChain's MCP adapters (`@langchain/mcp-adapters`, `MultiServerMCPClient`) against
 * `codecall serve` (the real bin) over stdio and Streamable HTTP, in front of the conformance
 * fixture server: load the tools as LangChain tools and invoke them (a pass-through tool and
 * `execute_code`), list and read a resource. No model.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, spawnServe } from './serve-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-langchain-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const configPath = join(dir, 'codecall.json');
writeFileSync(
  configPath,
  JSON.stringify({
    mcpServers: {
      fixture: {
        command: process.execPath,
        args: [join(ROOT, 'test', 'fixtures', 'servers', 'conformance-server.mjs')],
        deferLoading: false,
      },
    },
    history: { enabled: false },
    serve: { waitForServersMs: 60_000 },
  }),
);

async function exercise(client: MultiServerMCPClient): Promise<void> {
  const tools = await client.getTools();
  // The adapters prefix nothing by default: the names are the gateway's own.
  expect(tools.map((t) => t.name)).toEqual(
    expect.arrayContaining(['search_tools', 'execute_code', 'fixture__test_simple_text']),
  );
  const simple = tools.find((t) => t.name === 'fixture__test_simple_text')!;
  expect(await simple.invoke({})).toBe('This is a simple text response for testing.');

  const execute = tools.find((t) => t.name === 'execute_code')!;
  const run: unknown = await execute.invoke({
    code: "const r = await tools.fixture.read_resource({ uri: 'test://static-text' }); console.log(r.contents[0].text)",
  });
  expect(JSON.stringify(run)).toMatch(/This is the content of the static text resource\./);

  const resources = await client.listResources('codecall');
  expect(resources.codecall?.map((r) => r.uri)).toContain('fixture+test://static-text');
  const contents = await client.readResource('codecall', 'fixture+test://static-text');
  expect(contents).toEqual([
    expect.objectContaining({
      uri: 'fixture+test://static-text',
      text: 'This is the content of the static text resource.',
    }),
  ]);
}

describe('@langchain/mcp-adapters against codecall serve', () => {
  it('over stdio', { timeout: 90_000 }, async () => {
    const client = new MultiServerMCPClient({
      mcpServers: {
        codecall: {
          transport: 'stdio',
          command: process.execPath,
          args: [BIN, 'serve', '--config', configPath],
        },
      },
    });
    try {
      await exercise(client);
    } finally {
      await client.close();
    }
  });

  it('over Streamable HTTP', { timeout: 90_000 }, async () => {
    const serve = spawnServe(['--http', '--port', '0', '--config', configPath]);
    try {
      const [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)/)) as [string, string];
      const client = new MultiServerMCPClient({ mcpServers: { codecall: { transport: 'http', url } } });
      try {
        await exercise(client);
      } finally {
        await client.close();
      }
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });
});
