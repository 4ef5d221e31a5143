/**
 * The AI SDK's MCP client (`@ai-sdk/mcp`) against `codecall serve` (the real bin) over stdio
 * and Streamable HTTP, in front of the conformance fixture server: list and call tools (also
 * through `tools()`, as a model would), list and read a resource, get a prompt. No model.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMCPClient, type MCPClient } from '@ai-sdk/mcp';
import { Experimental_StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, spawnServe } from './serve-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-ai-sdk-'));
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

async function exercise(client: MCPClient): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name)).toEqual(
    expect.arrayContaining(['search_tools', 'execute_code', 'fixture__test_simple_text']),
  );
  const direct = await client.callTool({ name: 'fixture__test_simple_text', arguments: {} });
  expect(direct.content).toEqual([{ type: 'text', text: 'This is a simple text response for testing.' }]);
  const set = await client.tools();
  const run = await set.execute_code!.execute!(
    {
      code: "const r = await tools.fixture.read_resource({ uri: 'test://static-text' }); console.log(r.contents[0].text)",
    },
    { toolCallId: 'call-1', messages: [], context: {} },
  );
  expect(JSON.stringify(run)).toMatch(/This is the content of the static text resource\./);
  const { resources } = await client.listResources();
  expect(resources.map((r) => r.uri)).toContain('fixture+test://static-text');
  const read = await client.readResource({ uri: 'fixture+test://static-binary' });
  expect(read.contents[0]).toMatchObject({ uri: 'fixture+test://static-binary', mimeType: 'image/png' });
  const prompt = await client.getPrompt({ name: 'fixture__test_simple_prompt' });
  expect(prompt.messages[0]?.content).toEqual({ type: 'text', text: 'This is a simple prompt for testing.' });
}

describe('@ai-sdk/mcp against codecall serve', () => {
  it('over stdio', { timeout: 90_000 }, async () => {
    const client = await createMCPClient({
      transport: new Experimental_StdioMCPTransport({
        command: process.execPath,
        args: [BIN, 'serve', '--config', configPath],
      }),
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
      const client = await createMCPClient({ transport: { type: 'http', url } });
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
