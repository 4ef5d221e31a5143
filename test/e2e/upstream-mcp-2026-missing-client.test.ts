/**
 * `@modelcontextprotocol/client` is an optional peer: without it, a server whose
 * `mcpServers.<name>.protocol` asks for the 2026-07-28 revision fails to start with the install
 * command, and a server on the default 2025-11-25 never needs it. The real bin, spawned, with a
 * resolve hook that makes the package unresolvable with Node's own error (an install without it).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './temp-root.js';
import { hidePackagesHook } from '../fixtures/hide-packages.js';

const BIN = join(REPO_ROOT, 'bin', 'codecall.js');
const dir = mkdtempSync(join(tmpdir(), 'codecall-no-v2-client-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const hide = hidePackagesHook(['@modelcontextprotocol/client']);

function tools(config: unknown): Promise<{ code: number | null; output: string }> {
  const file = join(dir, `codecall-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(config));
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, 'tools', '--config', file], {
      cwd: dir,
      stdio: 'pipe',
      env: { ...process.env, CODECALL_STATE_DIR: dir, NODE_OPTIONS: `--import ${hide}` },
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, output }));
    child.stdin.end();
  });
}

describe('without the optional @modelcontextprotocol/client', () => {
  it('a 2026-07-28 server fails to start naming the install; the default needs no package', async () => {
    const pinned = await tools({
      mcpServers: { up: { type: 'http', url: 'http://127.0.0.1:9/mcp', protocol: '2026-07-28' } },
    });
    expect(pinned.code).not.toBe(0);
    expect(pinned.output).toMatch(
      /MCP server "up" did not start: .*run `npm install @modelcontextprotocol\/client`.* Or remove "protocol" from mcpServers\.up/,
    );
    expect(pinned.output).not.toMatch(/check "url" and "headers"/);
    // The same unreachable server on the default revision fails for what it is, not for the package.
    const legacy = await tools({ mcpServers: { up: { type: 'http', url: 'http://127.0.0.1:9/mcp' } } });
    expect(legacy.code).not.toBe(0);
    expect(legacy.output).toMatch(/MCP server "up" did not start/);
    expect(legacy.output).not.toMatch(/@modelcontextprotocol\/client/);
  }, 120_000);
});
