/**
 * Signals and launch paths of the real `codecall` bin: SIGINT/SIGTERM while the MCP servers are
 * still connecting and while a script runs give a message on stderr, exit 130/143, and close the
 * servers (their processes exit); every way of starting the bin runs the CLI.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../fixtures/temp-dir.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin', 'codecall.js');
const SDK = join(ROOT, 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm', 'server');

/**
 * A stdio MCP server that reports to the test over loopback TCP: `started <pid>` when it starts,
 * `called` when its `wait` tool is called (which then never answers). In `hang` mode it never
 * answers `initialize`, like a server stuck starting; like real servers it exits when stdin closes.
 */
const PROBE_SERVER = `
import { connect } from 'node:net';
import { McpServer } from ${JSON.stringify(pathToFileURL(join(SDK, 'mcp.js')).href)};
import { StdioServerTransport } from ${JSON.stringify(pathToFileURL(join(SDK, 'stdio.js')).href)};
const [mode, port] = process.argv.slice(2);
const report = connect(Number(port), '127.0.0.1');
report.write('started ' + process.pid + '\\n');
process.stdin.on('end', () => process.exit(0));
if (mode === 'hang') {
  process.stdin.resume();
} else {
  const server = new McpServer({ name: 'probe', version: '1.0.0' });
  const wait = () => {
    report.write('called\\n');
    return new Promise(() => {});
  };
  server.registerTool('wait', { description: 'Never answers.' }, wait);
  // The tools the demo model's known task looks for.
  server.registerTool('get_team_members', { description: 'Team members. Never answers.' }, wait);
  server.registerTool('get_budget_by_level', { description: 'Budgets by level. Never answers.' }, wait);
  server.registerTool('get_expenses', { description: 'Expense line items. Never answers.' }, wait);
  await server.connect(new StdioServerTransport());
}
`;

interface Probe {
  port: number;
  /** Resolves with the first line that matches. */
  line(pattern: RegExp): Promise<string>;
  /** Resolves when the server's connection closes (its process exited). */
  closed: Promise<void>;
}

let listener: Server;
let probe: Probe;
let dir: string;

beforeEach(async () => {
  dir = tempDir('codecall-signals-');
  let text = '';
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  let onClosed: () => void = () => {};
  const closed = new Promise<void>((r) => (onClosed = r));
  const check = (): void => {
    for (const waiter of [...waiters]) {
      const line = text.split('\n').find((l) => waiter.pattern.test(l));
      if (line !== undefined) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  };
  listener = createServer((socket: Socket) => {
    socket.on('data', (d: Buffer) => {
      text += d.toString();
      check();
    });
    socket.on('close', onClosed);
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  const port = (listener.address() as { port: number }).port;
  probe = {
    port,
    line: (pattern) =>
      new Promise((r) => {
        waiters.push({ pattern, resolve: r });
        check();
      }),
    closed,
  };
});

afterEach(async () => {
  await new Promise<void>((r) => listener.close(() => r()));
});

function writeConfig(mode: 'hang' | 'serve', name = 'probe'): string {
  const server = join(dir, 'probe-server.mjs');
  writeFileSync(server, PROBE_SERVER);
  const config = join(dir, 'codecall.json');
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: { [name]: { command: process.execPath, args: [server, mode, String(probe.port)] } },
      history: { path: join(dir, 'history.sqlite') },
    }),
  );
  return config;
}

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function start(command: string, args: string[], cwd = dir): { child: ChildProcess; done: Promise<Outcome> } {
  const env = { ...process.env };
  delete env.CODECALL_MODEL;
  const child = spawn(command, args, { cwd, stdio: 'pipe', env });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin!.end();
  const done = new Promise<Outcome>((r, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => r({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

function expectInterrupted(outcome: Outcome, command: string, signal: 'SIGINT' | 'SIGTERM'): void {
  expect(outcome.signal).toBeNull();
  expect(outcome.code, outcome.stderr).toBe(signal === 'SIGINT' ? 130 : 143);
  expect(outcome.stderr).toMatch(
    new RegExp(
      `^codecall ${command}: interrupted by ${signal}; stopped the run and closed the MCP servers`,
      'm',
    ),
  );
  expect(outcome.stderr).not.toMatch(/config/i);
}

describe('signals', () => {
  it('exec: SIGINT while the servers are still connecting exits 130 with a message; the server exits', async () => {
    const config = writeConfig('hang');
    writeFileSync(join(dir, 'script.js'), 'console.log("never runs")');
    const { child, done } = start(process.execPath, [BIN, 'exec', 'script.js', '--config', config]);
    await probe.line(/^started \d+$/);
    child.kill('SIGINT');
    const outcome = await done;
    expectInterrupted(outcome, 'exec', 'SIGINT');
    expect(outcome.stdout).toBe('');
    await probe.closed;
  });

  it('exec: SIGTERM while the script waits on a tool exits 143 with a message; the server is closed', async () => {
    const config = writeConfig('serve');
    writeFileSync(join(dir, 'script.js'), 'await tools.probe.wait({}); console.log("never printed");');
    const { child, done } = start(process.execPath, [BIN, 'exec', 'script.js', '--config', config]);
    await probe.line(/^called$/);
    child.kill('SIGTERM');
    const outcome = await done;
    expectInterrupted(outcome, 'exec', 'SIGTERM');
    expect(outcome.stdout).not.toMatch(/never printed/);
    await probe.closed;
  });

  it('run: SIGTERM while the servers are still connecting exits 143 with a message', async () => {
    const config = writeConfig('hang');
    const { child, done } = start(process.execPath, [
      BIN,
      'run',
      'anything',
      '--model',
      'demo',
      '--config',
      config,
    ]);
    await probe.line(/^started \d+$/);
    child.kill('SIGTERM');
    expectInterrupted(await done, 'run', 'SIGTERM');
    await probe.closed;
  });

  it("run: SIGINT while the model's script waits on a tool exits 130 and closes the server", async () => {
    // The demo model's known task searches, then runs a script that calls
    // expenses.get_team_members: here that tool never answers.
    const config = writeConfig('serve', 'expenses');
    const task = 'Which team members exceeded their Q3 travel budget?';
    const { child, done } = start(process.execPath, [
      BIN,
      'run',
      task,
      '--model',
      'demo',
      '--config',
      config,
    ]);
    await probe.line(/^called$/);
    child.kill('SIGINT');
    const outcome = await done;
    expectInterrupted(outcome, 'run', 'SIGINT');
    expect(outcome.stderr).toMatch(/^step 1 · search_tools/m);
    await probe.closed;
  });
});

describe('launching the bin', () => {
  it('runs the CLI by absolute path, relative path, through a symlink, and with --no-node-snapshot', async () => {
    const link = join(dir, 'codecall');
    symlinkSync(BIN, link);
    const ways: [string, string[], string][] = [
      [process.execPath, [BIN, '--version'], dir],
      [process.execPath, [relative(dir, BIN), '--version'], dir],
      [process.execPath, ['bin/codecall.js', '--version'], ROOT],
      [process.execPath, ['--no-node-snapshot', BIN, '--version'], dir],
      [process.execPath, ['--no-node-snapshot', 'bin/codecall.js', '--version'], ROOT],
      [process.execPath, [link, '--version'], dir],
      [link, ['--version'], dir],
      [process.execPath, ['--no-node-snapshot', join(ROOT, 'dist', 'cli', 'main.js'), '--version'], dir],
    ];
    const outcomes = await Promise.all(ways.map(([command, args, cwd]) => start(command, args, cwd).done));
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(outcomes.map((o) => `${o.code} ${o.stdout.trim()}`)).toEqual(ways.map(() => `0 ${version}`));
  });
});
