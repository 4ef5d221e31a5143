/**
 * Trace context on the 2026-07-28 leg (`codecall serve --http --mcp-2026`): a 2026 client's
 * `_meta.traceparent` (MCP 2026-07-28 basic/index, "OpenTelemetry trace context") reaches the
 * upstream call a script makes, unchanged with `serve.telemetry` off. The official SDK v2 client
 * pinned to 2026-07-28 against the real bin, and a real stdio MCP server that answers with the
 * `traceparent` its request carried.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, spawnServe, tempServeConfig, type ServeProcess } from './serve-helpers.js';

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

const dirs: string[] = [];
const serves: ServeProcess[] = [];
afterAll(async () => {
  for (const serve of serves) serve.child.kill('SIGTERM');
  await Promise.all(serves.map((serve) => serve.exited));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A stdio MCP server whose `echo_meta` answers with the `traceparent` of its request's `_meta`. */
function writeProbeServer(dir: string): string {
  const sdk = (path: string): string =>
    pathToFileURL(join(ROOT, 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm', path)).href;
  const path = join(dir, 'probe-server.mjs');
  writeFileSync(
    path,
    `import { Server } from ${JSON.stringify(sdk('server/index.js'))};
import { StdioServerTransport } from ${JSON.stringify(sdk('server/stdio.js'))};
import { CallToolRequestSchema, ListToolsRequestSchema } from ${JSON.stringify(sdk('types.js'))};
const server = new Server({ name: 'probe', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [{ name: 'echo_meta', description: 'Echoes the request trace context.', inputSchema: { type: 'object' } }],
}));
server.setRequestHandler(CallToolRequestSchema, (request) => ({
  content: [{ type: 'text', text: JSON.stringify({ traceparent: request.params._meta?.traceparent ?? null }) }],
}));
await server.connect(new StdioServerTransport());
`,
  );
  return path;
}

describe('trace context on the 2026-07-28 leg', () => {
  it("a 2026 client's traceparent reaches the upstream call of its script", async () => {
    const temp = tempServeConfig();
    dirs.push(temp.dir);
    const probe = writeProbeServer(temp.dir);
    const config = temp.configPath;
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { probe: { command: process.execPath, args: [probe] } },
        sandbox: { cpuTimeMs: 2_000, memoryMb: 64 },
        history: { enabled: false },
        serve: { waitForServersMs: 60_000 },
      }),
    );
    const serve = spawnServe(['--http', '--mcp-2026', '--port', '0', '--config', config]);
    serves.push(serve);
    const [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)/)) as [string, string];
    const client = new Client(
      { name: 'e2e-2026-trace', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    expect(client.getProtocolEra()).toBe('modern');
    const ran = (await client.callTool({
      name: 'execute_code',
      arguments: { code: 'console.log((await tools.probe.echo_meta({})).traceparent)' },
      _meta: { traceparent: TRACEPARENT },
    })) as { content: { type: string; text?: string }[] };
    expect(ran.content[0]?.text).toBe(`stdout:\n${TRACEPARENT}\n\nexit status: ok after 1 tool call`);
    await client.close();
  }, 180_000);
});
