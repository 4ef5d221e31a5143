/**
 * `codecall exec --journal` / `--resume` as a crash and a restart really happen: the CLI process
 * is killed with SIGKILL while a tool call is in flight (once the journal shows the calls before
 * it finished, never on a timer), then the run is resumed from the journal. A ledger MCP server
 * over Streamable HTTP, in this process, counts every side effect, so the tests see how many
 * times each call really reached the server.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { hashArgs } from '../../src/store/run-journal.js';
import { serveHttp, type HttpMcpEndpoint } from '../../src/testing/servers/index.js';

const ROOT = resolve(import.meta.dirname, '../..');
/** The CLI entry itself (not the bin launcher, which re-executes it): SIGKILL must hit the run. */
const MAIN = join(ROOT, 'dist', 'cli', 'main.js');

/** Calls per tool and id the ledger saw. */
const seen = new Map<string, number>();
const waiters = new Set<() => void>();
/** Releases the first call of each `hold*` id (the one the killed run was waiting on). */
const holds: (() => void)[] = [];
const count = (tool: string, id: string): number => seen.get(`${tool}:${id}`) ?? 0;

function note(tool: string, id: string): number {
  const n = count(tool, id) + 1;
  seen.set(`${tool}:${id}`, n);
  for (const waiter of [...waiters]) waiter();
  return n;
}

function until(check: () => boolean): Promise<void> {
  return new Promise((resolveWait) => {
    if (check()) return resolveWait();
    const waiter = (): void => {
      if (!check()) return;
      waiters.delete(waiter);
      resolveWait();
    };
    waiters.add(waiter);
  });
}

function createLedger(): McpServer {
  const server = new McpServer({ name: 'ledger', version: '1.0.0' });
  const text = (value: unknown) => ({ content: [{ type: 'text' as const, text: JSON.stringify(value) }] });
  server.registerTool(
    'charge',
    {
      description: 'Charges once per call (a side effect); returns how many charges id has.',
      inputSchema: { id: z.string() },
    },
    ({ id }) => text({ id, count: note('charge', id) }),
  );
  // The first call of an id never answers until the test ends: the run is killed while it waits.
  const hold =
    (tool: string) =>
    async ({ id }: { id: string }) => {
      const n = note(tool, id);
      if (n === 1) await new Promise<void>((release) => holds.push(release));
      return text({ id, held: n });
    };
  server.registerTool(
    'hold',
    {
      description: 'Reads id (read-only); the first call waits.',
      inputSchema: { id: z.string() },
      annotations: { readOnlyHint: true },
    },
    hold('hold'),
  );
  server.registerTool(
    'hold_unsafe',
    { description: 'Writes id; the first call waits.', inputSchema: { id: z.string() } },
    hold('hold_unsafe'),
  );
  return server;
}

let ledger: HttpMcpEndpoint;
let dir: string;
let config: string;

beforeAll(async () => {
  ledger = await serveHttp(createLedger);
  dir = mkdtempSync(join(tmpdir(), 'codecall-journal-'));
  config = join(dir, 'codecall.json');
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: { ledger: { type: 'http', url: ledger.url } },
      sandbox: { mode: 'in-process', memoryMb: 64 },
      history: { enabled: false },
    }),
  );
});

afterAll(async () => {
  for (const release of holds) release();
  await ledger.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Exec {
  child: ReturnType<typeof spawn>;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

function exec(args: string[], configPath = config): Exec {
  const child = spawn(
    process.execPath,
    ['--no-node-snapshot', MAIN, 'exec', ...args, '--config', configPath],
    {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CODECALL_STATE_DIR: join(dir, 'state') },
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
  }>((resolveDone) => child.once('close', (code, signal) => resolveDone({ code, signal, stdout, stderr })));
  return { child, done };
}

interface Entry {
  type: string;
  name?: string;
  ok?: boolean;
  result?: unknown;
}

function journalOf(path: string): Entry[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Entry);
}

function script(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, body);
  return path;
}

describe('codecall exec --journal / --resume', () => {
  it('resumes a run killed with SIGKILL: the completed charge is not repeated and the output is whole', async () => {
    const file = script(
      'resume.js',
      `const a = await tools.ledger.charge({ id: 'r-first' });
const h = await tools.ledger.hold({ id: 'r-hold' });
const b = await tools.ledger.charge({ id: 'r-second' });
console.log(JSON.stringify({ first: a.count, held: h.held, second: b.count }));`,
    );
    const journal = join(dir, 'resume.jsonl');
    const first = exec([file, '--journal', journal]);
    // The script reaches `hold` only after the charge's result went back to it, which the
    // journal records first.
    await until(() => count('hold', 'r-hold') === 1);
    const before = journalOf(journal);
    expect(before.filter((e) => e.type === 'finished').map((e) => e.name)).toEqual(['ledger.charge']);
    expect(before.filter((e) => e.type === 'started').map((e) => e.name)).toEqual([
      'ledger.charge',
      'ledger.hold',
    ]);
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');
    expect(count('charge', 'r-first')).toBe(1);

    const resumed = await exec([file, '--resume', journal]).done;
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    // `first` is the journaled answer; `hold` (read-only, in flight at the kill) was asked again.
    expect(JSON.parse(resumed.stdout)).toEqual({ first: 1, held: 2, second: 1 });
    expect(count('charge', 'r-first')).toBe(1);
    expect(count('hold', 'r-hold')).toBe(2);
    expect(count('charge', 'r-second')).toBe(1);
    const after = journalOf(journal).filter((e) => e.type === 'finished');
    expect(after.map((e) => e.name)).toEqual(['ledger.charge', 'ledger.hold', 'ledger.charge']);
  });

  it('refuses to repeat a non-idempotent call that was in flight at the kill, unless told to', async () => {
    const file = script(
      'doubt.js',
      `const a = await tools.ledger.charge({ id: 'd-first' });
const h = await tools.ledger.hold_unsafe({ id: 'd-hold' });
console.log(JSON.stringify({ first: a.count, held: h.held }));`,
    );
    const journal = join(dir, 'doubt.jsonl');
    const first = exec([file, '--journal', journal]);
    await until(() => count('hold_unsafe', 'd-hold') === 1);
    first.child.kill('SIGKILL');
    await first.done;

    const refused = await exec([file, '--resume', journal]).done;
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('codecall exec: REPLAY_IN_DOUBT: The call to ledger.hold_unsafe');
    expect(refused.stderr).toContain('--repeat-in-doubt');
    expect(count('charge', 'd-first')).toBe(1);
    expect(count('hold_unsafe', 'd-hold')).toBe(1);

    const repeated = await exec([file, '--resume', journal, '--repeat-in-doubt']).done;
    expect(repeated.stderr).toBe('');
    expect(repeated.code).toBe(0);
    expect(JSON.parse(repeated.stdout)).toEqual({ first: 1, held: 2 });
    expect(count('charge', 'd-first')).toBe(1);
    expect(count('hold_unsafe', 'd-hold')).toBe(2);
  });

  it('stops with REPLAY_DIVERGED when the replayed script makes another call, and makes none', async () => {
    // Math.random differs between the run and its replay: the charged id does too.
    const file = script(
      'diverge.js',
      `const a = await tools.ledger.charge({ id: 'v-' + Math.random() });
const b = await tools.ledger.charge({ id: 'v-after' });
console.log(a.count + b.count);`,
    );
    const journal = join(dir, 'diverge.jsonl');
    const recorded = await exec([file, '--journal', journal]).done;
    expect(recorded.code).toBe(0);
    expect(recorded.stdout).toBe('2\n');
    const charged = [...seen.keys()].filter((key) => key.startsWith('charge:v-')).length;
    expect(charged).toBe(2);

    const diverged = await exec([file, '--resume', journal]).done;
    expect(diverged.code).toBe(1);
    expect(diverged.stdout).toBe('');
    expect(diverged.stderr).toContain(
      'codecall exec: REPLAY_DIVERGED: The replayed script called ledger.charge',
    );
    // No new charge reached the server: the diverging call was refused before it was made.
    expect([...seen.keys()].filter((key) => key.startsWith('charge:v-')).length).toBe(2);
    expect(count('charge', 'v-after')).toBe(1);

    // Another script cannot resume this journal at all.
    const other = script('other.js', `await tools.ledger.charge({ id: 'v-after' });`);
    const refused = await exec([other, '--resume', journal]).done;
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('REPLAY_DIVERGED: The run journal was written by another script');
    expect(count('charge', 'v-after')).toBe(1);
  });

  it('refuses --journal over an existing journal and --resume of a missing one, with the fix', async () => {
    const file = script('usage.js', `console.log(1);`);
    const journal = join(dir, 'usage.jsonl');
    writeFileSync(journal, '{"type":"run","codeHash":"x","at":0}\n');
    const existing = await exec([file, '--journal', journal]).done;
    expect(existing.code).toBe(2);
    expect(existing.stderr).toContain(
      `already holds a run journal: resume that run with --resume ${journal}`,
    );
    const missing = await exec([file, '--resume', join(dir, 'absent.jsonl')]).done;
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no run journal at');
  });
  it('refuses a second --resume while a run drives the journal, naming its pid; nothing is called twice', async () => {
    const file = script(
      'twice.js',
      `const a = await tools.ledger.charge({ id: 't-first' });
const h1 = await tools.ledger.hold({ id: 't-hold-1' });
const h2 = await tools.ledger.hold({ id: 't-hold-2' });
const b = await tools.ledger.charge({ id: 't-second' });
console.log(JSON.stringify({ first: a.count, second: b.count }));`,
    );
    const journal = join(dir, 'twice.jsonl');
    const recorded = exec([file, '--journal', journal]);
    await until(() => count('hold', 't-hold-1') === 1);
    recorded.child.kill('SIGKILL');
    await recorded.done;
    // A resumes, and waits on its first call of t-hold-2: it drives the journal.
    const first = exec([file, '--resume', journal]);
    try {
      await until(() => count('hold', 't-hold-2') === 1);
      const second = await exec([file, '--resume', journal]).done;
      expect(second.code).toBe(1);
      expect(second.stdout).toBe('');
      expect(second.stderr).toContain('codecall exec: JOURNAL_LOCKED: ');
      expect(second.stderr).toContain(`in use by process ${first.child.pid}`);
      // The second run made no call: t-hold-2 (in flight in the first) was not asked again.
      expect(count('hold', 't-hold-2')).toBe(1);
      expect(count('hold', 't-hold-1')).toBe(2);
      expect(count('charge', 't-first')).toBe(1);
    } finally {
      first.child.kill('SIGKILL');
      await first.done;
    }
  });

  it('takes over the lock of a holder killed with SIGKILL, and releases it when the run ends', async () => {
    const file = script(
      'takeover.js',
      `const a = await tools.ledger.charge({ id: 'k-first' });
const h = await tools.ledger.hold({ id: 'k-hold' });
console.log(JSON.stringify({ first: a.count, held: h.held }));`,
    );
    const journal = join(dir, 'takeover.jsonl');
    const lock = `${journal}.lock`;
    const killed = exec([file, '--journal', journal]);
    await until(() => count('hold', 'k-hold') === 1);
    // The lock names the process that drives the journal.
    expect(JSON.parse(readFileSync(lock, 'utf8'))).toMatchObject({ pid: killed.child.pid });
    killed.child.kill('SIGKILL');
    await killed.done;
    // kill -9 ran no exit handler: the lock is left, naming a dead process.
    expect(JSON.parse(readFileSync(lock, 'utf8'))).toMatchObject({ pid: killed.child.pid });

    const resumed = await exec([file, '--resume', journal]).done;
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toEqual({ first: 1, held: 2 });
    expect(count('charge', 'k-first')).toBe(1);
    expect(existsSync(lock)).toBe(false);
  });

  it('refuses a second --journal run on a new file while the first is starting', async () => {
    // A server that answers nothing until released holds the first run in its start-up, before
    // it has written anything to its journal.
    const held: ServerResponse[] = [];
    let released = false;
    let reached!: () => void;
    const gateReached = new Promise<void>((resolveReached) => (reached = resolveReached));
    const gate = createServer((_request, response) => {
      if (released) return response.destroy();
      held.push(response);
      reached();
    });
    await new Promise<void>((resolveListen) => gate.listen(0, '127.0.0.1', resolveListen));
    const gateUrl = `http://127.0.0.1:${(gate.address() as { port: number }).port}/mcp`;
    const gated = join(dir, 'gated.json');
    writeFileSync(
      gated,
      JSON.stringify({
        mcpServers: { ledger: { type: 'http', url: ledger.url }, gate: { type: 'http', url: gateUrl } },
        sandbox: { mode: 'in-process', memoryMb: 64 },
        history: { enabled: false },
      }),
    );
    const file = script('new.js', `console.log((await tools.ledger.charge({ id: 'n-charge' })).count);`);
    const journal = join(dir, 'new.jsonl');
    const first = exec([file, '--journal', journal], gated);
    try {
      await Promise.race([gateReached, first.done]);
      expect(first.child.exitCode).toBe(null);
      const second = await exec([file, '--journal', journal]).done;
      expect(second.code).toBe(1);
      expect(second.stderr).toContain('codecall exec: JOURNAL_LOCKED: ');
      expect(second.stderr).toContain(`in use by process ${first.child.pid}`);
      released = true;
      for (const response of held) response.destroy();
      const done = await first.done;
      expect(done.code).toBe(0);
      expect(done.stdout).toBe('1\n');
      expect(count('charge', 'n-charge')).toBe(1);
      expect(journalOf(journal).filter((e) => e.type === 'run')).toHaveLength(1);
    } finally {
      first.child.kill('SIGKILL');
      await first.done;
      await new Promise<void>((resolveClose) => gate.close(() => resolveClose()));
    }
  });

  it('refuses to resume a journal without its header line', async () => {
    const file = script('headless.js', `console.log((await tools.ledger.charge({ id: 'h-charge' })).count);`);
    const journal = join(dir, 'headless.jsonl');
    // A journal's calls without the line that names its script: it could be any script's.
    const args = { id: 'h-charge' };
    writeFileSync(
      journal,
      [
        { type: 'started', index: 0, name: 'ledger.charge', argsHash: hashArgs(args), args, at: 1 },
        {
          type: 'finished',
          index: 0,
          name: 'ledger.charge',
          argsHash: hashArgs(args),
          ok: true,
          result: { count: 7 },
          at: 2,
        },
      ]
        .map((entry) => `${JSON.stringify(entry)}\n`)
        .join(''),
    );
    const refused = await exec([file, '--resume', journal]).done;
    expect(refused.code).not.toBe(0);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('has no header line');
    expect(count('charge', 'h-charge')).toBe(0);
  });
});
