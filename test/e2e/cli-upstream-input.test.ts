/**
 * `codecall exec` and an upstream MCP server that asks during a call (a real SDK 1.x server over
 * loopback HTTP whose tool elicits a confirmation): the real bin without a terminal fails the
 * call with a message saying what to do (the effect never happens); in a pseudo-terminal
 * (util-linux `script`) the person answers the form and the call goes on.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import { serveHttp, type HttpMcpEndpoint } from '../../src/testing/servers/index.js';
import { REPO_ROOT } from './temp-root.js';

const BIN = join(REPO_ROOT, 'bin', 'codecall.js');
const dir = mkdtempSync(join(tmpdir(), 'codecall-cli-upstream-input-'));
const CONFIG = join(dir, 'codecall.json');
const SCRIPT = join(dir, 'wipe.ts');
const wiped: string[] = [];
let upstream: HttpMcpEndpoint | undefined;

beforeAll(async () => {
  upstream = await serveHttp(() => {
    const server = new McpServer({ name: 'asking', version: '1.0.0' });
    server.registerTool(
      'wipe',
      { description: 'Wipes a table after asking.', inputSchema: { table: z.string() } },
      async ({ table }) => {
        const answer = await server.server.elicitInput({
          message: `Wipe ${table}?`,
          requestedSchema: {
            type: 'object',
            properties: { confirm: { type: 'boolean', title: 'Confirm' } },
            required: ['confirm'],
          },
        });
        const yes = answer.action === 'accept' && answer.content?.confirm === true;
        if (yes) wiped.push(table);
        return { content: [{ type: 'text', text: yes ? `wiped ${table}` : `kept ${table}` }] };
      },
    );
    return server;
  });
  writeFileSync(
    CONFIG,
    JSON.stringify({
      mcpServers: { asking: { type: 'http', url: upstream.url, allowedCallers: ['code_execution'] } },
      sandbox: { mode: 'in-process', cpuTimeMs: 5_000, memoryMb: 64 },
      history: { enabled: false },
    }),
  );
  writeFileSync(
    SCRIPT,
    `try { console.log(await tools.asking.wipe({ table: 'users' })); }
     catch (error) { console.log('failed:', error.message); }`,
  );
});
afterAll(async () => {
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;

describe('codecall exec and an upstream server that asks', () => {
  it('without a terminal fails the call, naming what to do', async () => {
    const child = spawn(process.execPath, [BIN, 'exec', SCRIPT, '--config', CONFIG], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /failed: .*codecall exec cannot answer this elicitation\/create request: the server asks "Wipe users\?" and there is no terminal to ask \(stdin is not a TTY\); run codecall exec in a terminal/,
    );
    expect(wiped).toEqual([]);
  }, 120_000);

  it.skipIf(!hasScript)(
    'in a terminal asks the form and passes the answer on',
    async () => {
      const command = [process.execPath, BIN, 'exec', SCRIPT, '--config', CONFIG]
        .map((part) => `'${part}'`)
        .join(' ');
      const child = spawn('script', ['-qec', command, '/dev/null'], {
        cwd: dir,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let output = '';
      const waiters: [string, () => void][] = [];
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        for (const waiter of [...waiters])
          if (output.includes(waiter[0])) {
            waiters.splice(waiters.indexOf(waiter), 1);
            waiter[1]();
          }
      });
      const seen = (text: string): Promise<void> =>
        output.includes(text) ? Promise.resolve() : new Promise((resolve) => waiters.push([text, resolve]));
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      await seen('an MCP server asks: Wipe users?');
      child.stdin.write('a\r');
      await seen('Confirm (y/n, required): ');
      child.stdin.write('y\r');
      expect(await exited).toBe(0);
      expect(output).toContain('wiped users');
      expect(wiped).toEqual(['users']);
    },
    120_000,
  );
});
