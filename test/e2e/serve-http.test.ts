/**
 * `codecall serve --http` as clients run it: the real bin on 127.0.0.1 (port 0), the MCP SDK's
 * Streamable HTTP client, `@modelcontextprotocol/inspector-cli` over HTTP, the bind rules, and
 * SIGTERM. The `@modelcontextprotocol/conformance` suite runs in serve-conformance.test.ts.
 */
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { alive, descendants, ROOT, spawnServe, tempServeConfig } from './serve-helpers.js';

const run = promisify(execFile);
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function text(result: unknown): string {
  return (result as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

async function startServe(args: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const temp = tempServeConfig();
  dirs.push(temp.dir);
  const serve = spawnServe(['--http', '--port', '0', '--config', temp.configPath, ...args], { env });
  const [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)/)) as [string, string];
  return { serve, url, temp };
}

describe('codecall serve --http', () => {
  it('serves the SDK client and inspector-cli, exits on SIGTERM', async () => {
    const { serve, url, temp } = await startServe();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    await serve.waitFor(/loopback only; Origin and Host are checked/);

    const client = new Client({ name: 'e2e-http', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const script = readFileSync(join(ROOT, 'examples', 'scripts', 'over-budget.ts'), 'utf8');
    const report = await client.callTool({ name: 'execute_code', arguments: { code: script } });
    expect(text(report)).toMatch(/team members exceeded their Q3 travel budget/);
    const hog = await client.callTool({
      name: 'execute_code',
      arguments: { code: 'const a = []; for (;;) a.push("x".repeat(1e6));' },
    });
    expect(hog.isError).toBe(true);
    const next = await client.callTool({ name: 'execute_code', arguments: { code: 'console.log(1 + 1)' } });
    expect(text(next)).toBe('stdout:\n2\n\nexit status: ok');
    await client.close();

    const inspector = join(ROOT, 'node_modules', '.bin', 'mcp-inspector-cli');
    const listed = await run(inspector, ['--cli', url, '--transport', 'http', '--method', 'tools/list'], {
      cwd: temp.workDir,
    });
    expect((JSON.parse(listed.stdout) as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual([
      'search_tools',
      'execute_code',
    ]);
    const searched = await run(
      inspector,
      [
        '--cli',
        url,
        '--transport',
        'http',
        '--method',
        'tools/call',
        '--tool-name',
        'search_tools',
        '--tool-arg',
        'query=budget by level',
      ],
      { cwd: temp.workDir },
    );
    expect(text(JSON.parse(searched.stdout))).toMatch(/expenses\.get_budget_by_level/);

    const tree = descendants(serve.child.pid!);
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toEqual({ code: 0, signal: null });
    await expect.poll(() => tree.filter(alive), { timeout: 10_000 }).toEqual([]);
    expect(serve.stderr()).toMatch(/shutting down/);
  });

  it('refuses to bind beyond loopback without a token, and says a token is required when it has one', async () => {
    const temp = tempServeConfig();
    dirs.push(temp.dir);
    const refused = spawnServe(['--http', '--host', '0.0.0.0', '--port', '0', '--config', temp.configPath], {
      env: { CODECALL_SERVE_TOKEN: '' },
    });
    expect((await refused.exited).code).toBe(2);
    expect(refused.stderr()).toMatch(/Refusing to serve on 0\.0\.0\.0 without a bearer token/);

    const { serve, url } = await startServe(['--host', '0.0.0.0'], { CODECALL_SERVE_TOKEN: 'e2e-secret' });
    await serve.waitFor(/every request needs "Authorization: Bearer <token>"/);
    const port = new URL(url).port;
    const local = `http://127.0.0.1:${port}/mcp`;
    const anonymous = new Client({ name: 'anonymous', version: '1.0.0' });
    await expect(anonymous.connect(new StreamableHTTPClientTransport(new URL(local)))).rejects.toThrow(
      /Unauthorized/,
    );
    const client = new Client({ name: 'authorized', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(local), {
        requestInit: { headers: { authorization: 'Bearer e2e-secret' } },
      }),
    );
    expect((await client.listTools()).tools.length).toBe(2);
    await client.close();
    serve.child.kill('SIGINT');
    expect((await serve.exited).code).toBe(0);
  });

  it("takes host, port and the bearer token from the configuration's serve section", async () => {
    const temp = tempServeConfig({
      serve: { host: '0.0.0.0', port: 0, token: '${E2E_CONFIG_TOKEN}', maxConcurrentRuns: 1 },
    });
    dirs.push(temp.dir);
    const serve = spawnServe(['--http', '--config', temp.configPath], {
      env: { CODECALL_SERVE_TOKEN: '', E2E_CONFIG_TOKEN: 'config-secret' },
    });
    const [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)/)) as [string, string];
    expect(url).toMatch(/^http:\/\/0\.0\.0\.0:\d+\/mcp$/);
    await serve.waitFor(/every request needs "Authorization: Bearer <token>"/);
    const local = `http://127.0.0.1:${new URL(url).port}/mcp`;
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const post = (headers: Record<string, string>): Promise<Response> =>
      fetch(local, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: JSON.stringify(initialize),
      });
    const anonymous = await post({});
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await post({ authorization: 'Bearer wrong' })).status).toBe(401);
    const client = new Client({ name: 'authorized', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(local), {
        requestInit: { headers: { authorization: 'Bearer config-secret' } },
      }),
    );
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('execute_code');
    await client.close();
    serve.child.kill('SIGTERM');
    expect((await serve.exited).code).toBe(0);
  });
});
