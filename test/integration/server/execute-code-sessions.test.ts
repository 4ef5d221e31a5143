/**
 * @module
 * `execute_code` sessions through `startHttpServer` (what `codecall serve --http` runs) with real
 * SDK clients over Streamable HTTP: a client's second script reads its first script's state;
 * two clients using the same session name never see each other's; ending an MCP session
 * disposes its sandbox sessions; a bad session name is an error naming the field.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parseConfig } from '../../../src/config/index.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { startHttpServer } from '../../../src/server/index.js';
import { createExpenseServer, inMemoryTransport } from '../../../src/testing/servers/index.js';

let runtime: CodecallRuntime;

beforeAll(async () => {
  runtime = await CodecallRuntime.open({
    config: parseConfig(
      { mcpServers: {}, sandbox: { workers: 1 }, history: { enabled: false } },
      { file: '<execute-code-sessions.test>' },
    ),
    history: false,
    tools: { transports: { expenses: inMemoryTransport(() => createExpenseServer()) } },
  });
});

afterAll(async () => {
  await runtime?.close();
});

async function connect(url: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: 'sessions-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

async function run(
  client: Client,
  code: string,
  session?: string,
): Promise<{ text: string; isError: boolean }> {
  const result = (await client.callTool({
    name: 'execute_code',
    arguments: session === undefined ? { code } : { code, session },
  })) as CallToolResult;
  return {
    text: result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n'),
    isError: result.isError === true,
  };
}

describe('execute_code sessions over codecall serve --http', () => {
  it('keeps state per client session; two clients with the same session name never share it', async () => {
    await using http = await startHttpServer({ runtime, port: 0 });
    const a = await connect(http.url);
    const b = await connect(http.url);
    const { tools } = await a.client.listTools();
    const schema = tools.find((tool) => tool.name === 'execute_code')!.inputSchema;
    expect(Object.keys(schema.properties ?? {})).toEqual(['code', 'session']);

    const fetched = await run(
      a.client,
      "const { members } = await tools.expenses.get_team_members({ level: 'L3' }); const owner = 'A'; console.log(members.length > 0);",
      'work',
    );
    expect(fetched.text).toContain('stdout:\ntrue');
    expect((await run(a.client, 'console.log(owner, members.length > 0);', 'work')).text).toContain(
      'stdout:\nA true',
    );
    // Client B, same session name: nothing of A's.
    expect((await run(b.client, 'console.log(typeof owner, typeof members);', 'work')).text).toContain(
      'stdout:\nundefined undefined',
    );
    await run(b.client, "const owner = 'B';", 'work');
    expect((await run(a.client, 'console.log(owner);', 'work')).text).toContain('stdout:\nA');
    // Without a session, a script sees none of it.
    expect((await run(a.client, 'console.log(typeof owner);')).text).toContain('stdout:\nundefined');
    expect(runtime.sandbox.sessionCount).toBe(2);

    await a.transport.terminateSession();
    await a.client.close();
    await expect.poll(() => runtime.sandbox.sessionCount).toBe(1);
    expect((await run(b.client, 'console.log(owner);', 'work')).text).toContain('stdout:\nB');
    await b.transport.terminateSession();
    await b.client.close();
    await expect.poll(() => runtime.sandbox.sessionCount).toBe(0);
  });

  it('refuses a session name that is not a short plain name, naming the field', async () => {
    await using http = await startHttpServer({ runtime, port: 0 });
    const { client, transport } = await connect(http.url);
    for (const session of ['', 'x'.repeat(65), 'a b', 7]) {
      const result = (await client.callTool({
        name: 'execute_code',
        arguments: { code: 'console.log(1)', session },
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toContain(
        'execute_code \\"session\\" must be a name of 1 to 64',
      );
    }
    await transport.terminateSession();
    await client.close();
  });
});
