/**
 * The OpenAI Agents SDK's MCP server classes against `codecall serve` (the real bin) over stdio
 * and Streamable HTTP, with a configuration of five servers that start only when the test lets
 * them (no timer to race) plus the conformance fixture server: connect, list tools, call
 * `execute_code`, list and read a resource. No model.
 *
 * codecall answers `initialize` and `tools/list` without waiting for its upstream servers: the
 * five gated ones cannot start before the test opens their gates, after those answers, so a
 * codecall that waited for them would never answer, whatever the client's timeout. The SDK's
 * session timeout (5 s by default) is raised here because over stdio it also covers spawning
 * `codecall serve` and its start-up, which a loaded machine stretches past 5 s (4.8 s with an
 * empty configuration at load average 24 on 2 cores): that wait is not codecall's.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MCPServerStdio, MCPServerStreamableHttp } from '@openai/agents';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, spawnServe } from './serve-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-agents-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SLOW = ['slow1', 'slow2', 'slow3', 'slow4', 'slow5'];

/** A configuration of five gated servers (gates under `name`) and the conformance fixture. */
function config(name: string): { path: string; open: () => void } {
  const gate = (server: string): string => join(dir, `${name}-${server}.gate`);
  const path = join(dir, `${name}.json`);
  writeFileSync(
    path,
    JSON.stringify({
      mcpServers: {
        ...Object.fromEntries(
          SLOW.map((server) => [
            server,
            {
              command: process.execPath,
              args: [join(ROOT, 'test', 'fixtures', 'servers', 'gated-expense-server.mjs'), gate(server)],
            },
          ]),
        ),
        fixture: {
          command: process.execPath,
          args: [join(ROOT, 'test', 'fixtures', 'servers', 'conformance-server.mjs')],
        },
      },
      history: { enabled: false },
    }),
  );
  return { path, open: () => SLOW.forEach((server) => writeFileSync(gate(server), '')) };
}

/** The SDK's session timeout (initialize, lists, reads) in seconds; see the module comment. */
const SESSION_TIMEOUT_SECONDS = 60;

type AgentsServer = MCPServerStdio | MCPServerStreamableHttp;

async function exercise(server: AgentsServer, open: () => void): Promise<void> {
  // Connected (initialize answered) while no slow server has started.
  const tools = await server.listTools();
  expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['search_tools', 'execute_code']));
  const early = await server.callTool('execute_code', { code: 'console.log(6 * 7)' });
  expect(JSON.stringify(early)).toMatch(/stdout:\\n42/);
  expect(JSON.stringify(early)).toMatch(/MCP servers still starting: [^.]*slow1/);

  await expect
    .poll(async () => (await server.listResources()).resources.map((r) => r.uri), { timeout: 20_000 })
    .toContain('fixture+test://static-text');
  const read = await server.readResource('fixture+test://static-text');
  expect(read.contents).toEqual([
    {
      uri: 'fixture+test://static-text',
      mimeType: 'text/plain',
      text: 'This is the content of the static text resource.',
    },
  ]);

  open();
  await expect
    .poll(
      async () =>
        JSON.stringify(
          await server.callTool('execute_code', {
            code: "await tools.slow5.get_team_members(); console.log('slow5 answered')",
          }),
        ),
      { timeout: 30_000, interval: 500 },
    )
    .toMatch(/stdout:\\nslow5 answered/);
}

describe('OpenAI Agents SDK MCP servers', () => {
  it(
    'MCPServerStdio spawns codecall serve in front of five slow-starting servers',
    { timeout: 150_000 },
    async () => {
      const { path, open } = config('stdio');
      const server = new MCPServerStdio({
        command: process.execPath,
        args: [BIN, 'serve', '--config', path],
        clientSessionTimeoutSeconds: SESSION_TIMEOUT_SECONDS,
      });
      await server.connect();
      try {
        await exercise(server, open);
      } finally {
        await server.close();
      }
    },
  );

  it(
    'MCPServerStreamableHttp talks to codecall serve --http in front of them',
    { timeout: 150_000 },
    async () => {
      const { path, open } = config('http');
      const serve = spawnServe(['--http', '--port', '0', '--config', path]);
      try {
        const [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)/)) as [string, string];
        const server = new MCPServerStreamableHttp({
          url,
          clientSessionTimeoutSeconds: SESSION_TIMEOUT_SECONDS,
        });
        await server.connect();
        try {
          await exercise(server, open);
        } finally {
          await server.close();
        }
      } finally {
        serve.child.kill('SIGTERM');
        await serve.exited;
      }
    },
  );
});
