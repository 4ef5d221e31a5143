/**
 * Stdio servers started ahead of their MCP client (`prespawnStdioServers`, `codecall exec`): the
 * tool pool adopts the very process that was started (same pid, tools called through it), stops
 * the ones it does not run, and reports a process that failed to start or exited before adoption
 * like one it spawned itself. The environment is the MCP SDK's default plus the server's `env`.
 */
import { join, resolve } from 'node:path';
import { DEFAULT_INHERITED_ENV_VARS, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import type { CodecallConfig } from '../../../src/config/types.js';
import {
  inheritedEnvironment,
  INHERITED_ENV_VARS,
  prespawnStdioServers,
  type PrespawnedServer,
} from '../../../src/tools/prespawn.js';
import { ToolPool, type ServerErrorEvent } from '../../../src/tools/index.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const EXPENSE_SERVER = join(ROOT, 'examples', 'expense-server', 'server.mjs');
const pools: ToolPool[] = [];
const started: PrespawnedServer[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
  for (const server of started.splice(0)) if (server.child.exitCode === null) server.child.kill('SIGKILL');
});

function configOf(mcpServers: Record<string, unknown>): CodecallConfig {
  return parseConfig({ mcpServers }, { file: join(ROOT, 'codecall.json'), env: {} });
}

function prespawn(config: CodecallConfig): Map<string, PrespawnedServer> {
  const servers = prespawnStdioServers(config);
  started.push(...servers.values());
  return servers;
}

/** Resolves when the process has exited and its pipes closed. */
function closedOf(server: PrespawnedServer): Promise<void> {
  return server.closed ? Promise.resolve() : new Promise((r) => server.child.once('close', () => r()));
}

describe.skipIf(process.platform === 'win32')('prespawned stdio servers', () => {
  it('the pool adopts the started process: same pid, its tools answer through it', async () => {
    const config = configOf({ expenses: { command: process.execPath, args: [EXPENSE_SERVER] } });
    const prespawned = prespawn(config);
    const pid = prespawned.get('expenses')!.child.pid;
    expect(pid).toBeGreaterThan(0);
    const pool = await ToolPool.open(config, { prespawned, requireAll: true });
    pools.push(pool);
    expect(prespawned.get('expenses')!.adopted).toBe(true);
    expect(pool.serverStatus().find((s) => s.name === 'expenses')?.pid).toBe(pid);
    const result = await pool.call('expenses.get_team_members', {}, { caller: 'direct' });
    expect(JSON.stringify(result)).toContain('members');
    await pool.close();
    await closedOf(prespawned.get('expenses')!);
  });

  it('a process for a server the pool does not run is stopped', async () => {
    const config = configOf({ expenses: { command: process.execPath, args: [EXPENSE_SERVER] } });
    const prespawned = prespawn(config);
    const pool = await ToolPool.open(configOf({}), { prespawned });
    pools.push(pool);
    await closedOf(prespawned.get('expenses')!);
    expect(prespawned.get('expenses')!.adopted).toBe(false);
  });

  it('a process that exited before adoption, or never started, fails the server like a spawn of its own', async () => {
    const config = configOf({
      early: {
        command: process.execPath,
        args: ['-e', 'console.error("fatal: token rejected"); process.exit(3)'],
      },
      missing: { command: join(ROOT, 'no-such-server-binary') },
    });
    const prespawned = prespawn(config);
    await closedOf(prespawned.get('early')!);
    await prespawned
      .get('missing')!
      .started()
      .catch(() => undefined);
    const errors: ServerErrorEvent[] = [];
    const pool = await ToolPool.open(config, { prespawned, onServerError: (e) => errors.push(e) });
    pools.push(pool);
    const byServer = new Map(errors.map((e) => [e.server, e.error.message]));
    expect(byServer.get('early')).toContain('did not start');
    expect(byServer.get('early')).toContain('fatal: token rejected');
    expect(byServer.get('missing')).toContain('ENOENT');
  });

  it('passes the environment the SDK would: its inherited variables, then the server env', () => {
    expect(inheritedEnvironment()).toEqual(getDefaultEnvironment());
    expect(inheritedEnvironment({ PATH: '/bin', HOME: '() { evil; }', SECRET: 's' })).toEqual({
      PATH: '/bin',
    });
    expect(INHERITED_ENV_VARS).toEqual(DEFAULT_INHERITED_ENV_VARS);
  });
});
