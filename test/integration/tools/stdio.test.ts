/**
 * The tool pool against real MCP servers from the npm registry, spawned over stdio, plus our
 * misbehaving server in a child process (crash and reconnect). Children must exit on close.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { isCodecallError, type CodecallError } from '../../../src/errors.js';
import { ToolPool, type ServerErrorEvent } from '../../../src/tools/index.js';
import { bundleTestServer, removeTestServerBundle } from './bundle-test-server.js';
afterAll(removeTestServerBundle);

const ROOT = resolve(import.meta.dirname, '../../..');
const bin = (name: string): string => join(ROOT, 'node_modules', '.bin', name);
const pools: ToolPool[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A temp folder removed after the test. */
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function rejection(promise: Promise<unknown>): Promise<CodecallError> {
  try {
    await promise;
  } catch (error) {
    if (isCodecallError(error)) return error;
    throw error;
  }
  throw new Error('expected a failure');
}

const code = { caller: 'code_execution' } as const;

describe('stdio servers', () => {
  it('connects to everything, memory and filesystem concurrently; a failing server is reported with its stderr', async () => {
    const dir = tempDir('codecall-fs-');
    writeFileSync(join(dir, 'hello.txt'), 'hello from disk');
    const config = parseConfig(
      {
        mcpServers: {
          everything: { command: process.execPath, args: [bin('mcp-server-everything')] },
          memory: {
            command: process.execPath,
            args: [bin('mcp-server-memory')],
            env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') },
          },
          filesystem: { command: process.execPath, args: [bin('mcp-server-filesystem'), dir] },
          broken: {
            command: process.execPath,
            args: ['-e', 'console.error("fatal: API token rejected by upstream"); process.exit(1)'],
          },
        },
      },
      { file: join(dir, 'codecall.json'), env: {} },
    );
    const events: ServerErrorEvent[] = [];
    const pool = await ToolPool.open(config, { onServerError: (e) => events.push(e) });
    pools.push(pool);

    const status = Object.fromEntries(pool.serverStatus().map((s) => [s.name, s]));
    expect(status.everything!.state).toBe('connected');
    expect(status.memory!.state).toBe('connected');
    expect(status.filesystem!.state).toBe('connected');
    expect(status.broken!.state).toBe('failed');
    expect(status.broken!.error).toContain('fatal: API token rejected by upstream');
    expect(events.map((e) => e.server)).toEqual(['broken']);

    expect(await pool.call('everything.echo', { message: 'hi' }, code)).toContain('hi');
    expect(await pool.call('everything.get-sum', { a: 2, b: 3 }, code)).toContain('5');
    const graph = await pool.call('memory.read_graph', {}, code);
    expect(graph).toMatchObject({ entities: [], relations: [] });
    const file = await pool.call('filesystem.read_text_file', { path: join(dir, 'hello.txt') }, code);
    expect(JSON.stringify(file)).toContain('hello from disk');
    // server-filesystem's write tools are not read-only: open to code unless annotated destructive.
    const write = pool.get('filesystem.write_file')!;
    expect(write.allowedCallers).toEqual(
      write.annotations?.destructiveHint === true ? ['direct'] : ['direct', 'code_execution'],
    );

    const pids = pool
      .serverStatus()
      .map((s) => s.pid)
      .filter((p): p is number => p !== undefined);
    expect(pids).toHaveLength(3);
    await pool.close();
    await expect.poll(() => pids.filter(alive), { timeout: 10_000 }).toEqual([]);
  });

  it('reconnects a server that crashes mid-run: the call in flight fails clearly, later calls work', async () => {
    const entry = await bundleTestServer();
    const config = parseConfig(
      { mcpServers: { odd: { command: process.execPath, args: [entry, 'misbehaving', '--allow-crash'] } } },
      { file: join(ROOT, 'codecall.json'), env: {} },
    );
    const events: ServerErrorEvent[] = [];
    const pool = await ToolPool.open(config, {
      onServerError: (e) => events.push(e),
      reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
    });
    pools.push(pool);
    const firstPid = pool.serverStatus()[0]!.pid!;
    const crash = await rejection(pool.call('odd.crash', {}, code));
    expect(crash.code).toBe('SERVER_UNAVAILABLE');
    expect(crash.message).toContain('disconnected during the call to odd.crash');
    expect(events.some((e) => e.phase === 'disconnect')).toBe(true);
    // The next call waits for the restart and succeeds on a new process.
    expect(await pool.call('odd.echo', { text: 'again' }, code)).toEqual({ text: 'again' });
    const status = pool.serverStatus()[0]!;
    expect(status.state).toBe('connected');
    expect(status.pid).not.toBe(firstPid);
  });

  it('a server that fails to restart: callers learn its state, never its command line or secrets', async () => {
    const entry = await bundleTestServer();
    const dir = tempDir('codecall-restart-');
    // Starts the real server once; every later start fails, as a server whose token expired.
    const wrapper = join(dir, 'start-once.mjs');
    writeFileSync(
      wrapper,
      "import { existsSync, writeFileSync } from 'node:fs';\n" +
        "import { pathToFileURL } from 'node:url';\n" +
        'const [marker, entry] = process.argv.slice(2);\n' +
        'if (existsSync(marker)) process.exit(1);\n' +
        "writeFileSync(marker, '');\n" +
        'process.argv.splice(2, 2);\n' +
        'await import(pathToFileURL(entry).href);\n',
    );
    const marker = join(dir, 'started');
    const config = parseConfig(
      {
        mcpServers: {
          odd: {
            command: process.execPath,
            args: [wrapper, marker, entry, 'misbehaving', '--allow-crash', '--api-key=${API_KEY}'],
          },
        },
      },
      { file: join(dir, 'codecall.json'), env: { API_KEY: 'sk-live-SECRET-42' } },
    );
    const events: ServerErrorEvent[] = [];
    const pool = await ToolPool.open(config, {
      onServerError: (e) => events.push(e),
      reconnect: { initialDelayMs: 10, maxDelayMs: 20, maxAttempts: 2 },
    });
    pools.push(pool);
    expect(existsSync(marker)).toBe(true);
    await rejection(pool.call('odd.crash', {}, code));
    await expect.poll(() => events.some((e) => e.phase === 'reconnect'), { timeout: 10_000 }).toBe(true);
    const down = await rejection(pool.call('odd.echo', { text: 'x' }, code));
    expect(down.code).toBe('SERVER_UNAVAILABLE');
    expect(down.message).toContain('MCP server "odd" is unavailable');
    for (const leak of ['sk-live-SECRET-42', dir, process.execPath, '--api-key'])
      expect(down.message).not.toContain(leak);
    // The developer's report names the keys to check, still without the expanded arguments.
    const report = events.find((e) => e.phase === 'reconnect')!.error.message;
    expect(report).toContain('mcpServers.odd');
    expect(report).not.toContain('--api-key=sk-live');
  });

  it('a missing cwd is named as the cause, not "command"', async () => {
    const dir = tempDir('codecall-cwd-');
    const config = parseConfig(
      { mcpServers: { s: { command: process.execPath, args: ['-e', '0'], cwd: 'no-such-dir' } } },
      { file: join(dir, 'codecall.json'), env: {} },
    );
    const pool = await ToolPool.open(config);
    pools.push(pool);
    const status = pool.serverStatus()[0]!;
    expect(status.state).toBe('failed');
    expect(status.error).toContain('"cwd" of mcpServers.s');
    expect(status.error).toContain(join(dir, 'no-such-dir'));
    expect(status.error).not.toContain('check "command"');
  });

  it('a server that never answers: the connect timeout names the server, its stderr, the env names passed and how to pass more', async () => {
    const dir = tempDir('codecall-stuck-');
    // Prints what a launcher behind a custom CA prints, and the names of its real environment, then hangs.
    const script =
      'console.error("npm error code SELF_SIGNED_CERT_IN_CHAIN");' +
      'console.error("child env: " + Object.keys(process.env).sort().join(","));' +
      'setInterval(() => {}, 60_000);';
    const config = parseConfig(
      {
        mcpServers: {
          stuck: {
            command: process.execPath,
            args: ['-e', script],
            env: { STUCK_API_TOKEN: 'sk-stuck-SECRET-7' },
            connectTimeoutMs: 4_000,
          },
        },
      },
      { file: join(dir, 'codecall.json'), env: {} },
    );
    const saved = process.env.NODE_EXTRA_CA_CERTS;
    process.env.NODE_EXTRA_CA_CERTS = join(dir, 'corporate-ca.pem');
    const events: ServerErrorEvent[] = [];
    try {
      const pool = await ToolPool.open(config, { onServerError: (event) => events.push(event) });
      pools.push(pool);
    } finally {
      if (saved === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
      else process.env.NODE_EXTRA_CA_CERTS = saved;
    }
    expect(events.map((e) => [e.server, e.phase, e.error.code])).toEqual([
      ['stuck', 'connect', 'SERVER_START_FAILED'],
    ]);
    const error = events[0]!.error;
    const { message } = error;
    expect(message).toContain(
      'MCP server "stuck" did not start: no answer within 4000 ms (connectTimeoutMs).',
    );
    expect(message).toContain('npm error code SELF_SIGNED_CERT_IN_CHAIN');
    // The names the error lists are exactly those the child saw.
    const childNames = /child env: (.*)/.exec(message)![1]!.split(',');
    const environment = error.details.environment as { inherited: string[]; configured: string[] };
    expect([...environment.inherited, ...environment.configured].sort()).toEqual(childNames);
    expect(environment.configured).toEqual(['STUCK_API_TOKEN']);
    expect(environment.inherited).toContain('PATH');
    expect(message).toContain(
      `Environment passed to it (names only): inherited ${environment.inherited.join(', ')}; from "env": STUCK_API_TOKEN.`,
    );
    expect(message).toContain('A stdio server inherits only ');
    // Other variables of the list may be set on the machine running the test: only ours is certain.
    expect(error.details.environment).toMatchObject({
      notPassed: expect.arrayContaining(['NODE_EXTRA_CA_CERTS']),
    });
    expect(message).toMatch(/\nSet here but not passed: NODE_EXTRA_CA_CERTS[,.]/);
    expect(message).toContain(
      'Pass a variable with "env": { "NODE_EXTRA_CA_CERTS": "${NODE_EXTRA_CA_CERTS}" } in mcpServers.stuck.',
    );
    expect(message).toContain('raise mcpServers.stuck.connectTimeoutMs (now 4000)');
    // Names, never values.
    expect(message).not.toContain('sk-stuck-SECRET-7');
    expect(message).not.toContain('corporate-ca.pem');
  });
});
