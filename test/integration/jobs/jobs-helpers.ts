/**
 * Helpers of the jobs tests and bench: a real `redis-server` on a free loopback port (persistence
 * off, in a temp dir, stopped at the end), a probe MCP server over Streamable HTTP that counts its
 * side effects (so a test can tell how many times a tool call really ran, across worker
 * processes), configurations over it, and spawned `codecall worker` processes.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { serveHttp, type HttpMcpEndpoint } from '../../../src/testing/servers/index.js';

export const ROOT = resolve(import.meta.dirname, '../../..');

/** Temp dirs of the configurations below, removed after the test file (under vitest). */
const configDirs: string[] = [];
if (process.env.VITEST === 'true') {
  // Imported only under vitest: the jobs bench imports these helpers too. Registered while the
  // test file that imports this module is collected, so it runs after that file's own hooks.
  const { afterAll } = await import('vitest');
  afterAll(() => {
    for (const dir of configDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
}
/** The CLI entry itself (not the bin launcher, which re-executes it): SIGKILL must hit the worker. */
export const MAIN = join(ROOT, 'dist', 'cli', 'main.js');

/** True when `redis-server` is on PATH. */
export function hasRedisServer(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** A free loopback TCP port. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

/** A running redis-server. */
export interface RedisHandle {
  url: string;
  port: number;
  /** Process id of the redis-server (a test may pause it with SIGSTOP). */
  pid: number;
  stop(): Promise<void>;
}

/** Starts `redis-server` on a free loopback port with persistence off; resolves once it accepts connections. */
export async function startRedis(): Promise<RedisHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'codecall-redis-'));
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  await new Promise<void>((resolveReady, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        child.stdout!.off('data', onData);
        resolveReady();
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${output}`)));
  });
  child.stdout!.resume();
  child.stderr!.resume();
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Side effects the probe server saw. */
export interface ProbeCounts {
  /** `record` calls per key. */
  records: Map<string, number>;
  /** `sleep` calls that started, per key. */
  sleeps: Map<string, number>;
  /** `sleep` calls cut short by a cancelled request. */
  cancelledSleeps: number;
}

/** The probe MCP server. */
export interface ProbeServer extends HttpMcpEndpoint {
  counts: ProbeCounts;
  /** Resolves once `sleep` with `key` has started `times` times in total. */
  sleepStarted(key: string, times?: number): Promise<void>;
  /** Resolves once `record` with `key` has run `times` times in total. */
  recorded(key: string, times?: number): Promise<void>;
}

/** Longest `sleep` the probe accepts. */
const MAX_PROBE_SLEEP_MS = 60_000;

/**
 * Serves the probe over Streamable HTTP on loopback: `record({key})` counts a side effect and
 * returns the count so far; `sleep({ms, key})` waits (ends early when the call is cancelled).
 */
export async function startProbeServer(): Promise<ProbeServer> {
  const counts: ProbeCounts = { records: new Map(), sleeps: new Map(), cancelledSleeps: 0 };
  const waiters = new Set<() => void>();
  const notify = (): void => {
    for (const waiter of [...waiters]) waiter();
  };
  const create = (): McpServer => {
    const server = new McpServer({ name: 'probe', version: '1.0.0' });
    server.registerTool(
      'record',
      {
        description: 'Records one side effect under key; returns the count.',
        inputSchema: { key: z.string() },
      },
      ({ key }) => {
        const count = (counts.records.get(key) ?? 0) + 1;
        counts.records.set(key, count);
        notify();
        return { content: [{ type: 'text', text: JSON.stringify({ key, count }) }] };
      },
    );
    server.registerTool(
      'sleep',
      {
        description: 'Waits ms milliseconds.',
        inputSchema: { ms: z.number().int().min(0).max(MAX_PROBE_SLEEP_MS), key: z.string().optional() },
      },
      async ({ ms, key }, extra) => {
        const name = key ?? 'sleep';
        counts.sleeps.set(name, (counts.sleeps.get(name) ?? 0) + 1);
        notify();
        await new Promise<void>((resolveSleep) => {
          const timer = setTimeout(resolveSleep, ms);
          extra.signal.addEventListener('abort', () => {
            counts.cancelledSleeps++;
            clearTimeout(timer);
            resolveSleep();
          });
        });
        return { content: [{ type: 'text', text: JSON.stringify({ slept: ms }) }] };
      },
    );
    return server;
  };
  const endpoint = await serveHttp(create);
  const until = (check: () => boolean): Promise<void> =>
    new Promise((resolveWait) => {
      if (check()) return resolveWait();
      const waiter = (): void => {
        if (!check()) return;
        waiters.delete(waiter);
        resolveWait();
      };
      waiters.add(waiter);
    });
  return Object.assign(endpoint, {
    counts,
    sleepStarted: (key: string, times = 1) => until(() => (counts.sleeps.get(key) ?? 0) >= times),
    recorded: (key: string, times = 1) => until(() => (counts.records.get(key) ?? 0) >= times),
  });
}

/** A temp dir with `codecall.json` over the probe (in-process sandbox, no history file). */
export function probeConfig(
  probeUrl: string,
  extra: Record<string, unknown> = {},
): { dir: string; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'codecall-jobs-'));
  configDirs.push(dir);
  const path = join(dir, 'codecall.json');
  writeFileSync(
    path,
    JSON.stringify({
      mcpServers: { probe: { type: 'http', url: probeUrl } },
      sandbox: { mode: 'in-process', cpuTimeMs: 5_000, memoryMb: 64 },
      history: { enabled: false },
      ...extra,
    }),
  );
  return { dir, path };
}

/** A configuration over the example expense server (for `run` jobs with the demo model). */
export function expenseConfig(): { dir: string; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'codecall-jobs-'));
  configDirs.push(dir);
  const path = join(dir, 'codecall.json');
  writeFileSync(
    path,
    JSON.stringify({
      mcpServers: {
        expenses: {
          command: process.execPath,
          args: [join(ROOT, 'examples', 'expense-server', 'server.mjs')],
          tools: { flag_expense: { allowedCallers: ['direct'] } },
        },
      },
      sandbox: { mode: 'in-process', memoryMb: 64 },
      history: { enabled: false },
    }),
  );
  return { dir, path };
}

/** A spawned `codecall worker`. */
export interface WorkerProcess {
  child: ChildProcess;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /** Resolves once stderr contains `text`. */
  waitFor(text: string): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns `codecall worker` and resolves once it is consuming. */
export async function spawnWorker(args: string[], env: NodeJS.ProcessEnv = {}): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--no-node-snapshot', MAIN, 'worker', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, ...env },
  });
  let text = '';
  const listeners = new Set<() => void>();
  child.stderr!.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    for (const listener of [...listeners]) listener();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) =>
    child.once('exit', (code, signal) => resolveExit({ code, signal })),
  );
  const waitFor = (needle: string): Promise<void> =>
    new Promise((resolveWait, reject) => {
      const check = (): void => {
        if (!text.includes(needle)) return;
        listeners.delete(check);
        resolveWait();
      };
      listeners.add(check);
      check();
      void exited.then(() => {
        if (!text.includes(needle)) reject(new Error(`worker exited before "${needle}": ${text}`));
      });
    });
  const handle: WorkerProcess = { child, stderr: () => text, waitFor, exited };
  await waitFor('consuming queue');
  return handle;
}
