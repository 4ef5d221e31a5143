/**
 * @module
 * A run's result is acknowledged only once its history is durable: while another process holds
 * the SQLite history file's write lock, `runtime.execute` (and serve's `execute_code`) does not
 * settle; once the lock is released it does, and at that moment a fresh reader of the file
 * already finds the run's call sequence, its approval decisions and its query feedback. A write
 * that fails goes to `onHistoryError` and the result still stands.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { MemoryHistoryStore, type UsageHistoryStore } from '../../../src/store/index.js';
import { SqliteHistoryStore } from '../../../src/store/sqlite-history-store.js';
import { createCodecallServer } from '../../../src/server/index.js';
import {
  createMisbehavingServer,
  inMemoryTransport,
  type MisbehavingServerProbe,
} from '../../../src/testing/servers/index.js';
import type { Approver } from '../../../src/tools/index.js';
import { holdExclusiveLock } from '../../fixtures/hold-sqlite-lock.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-history-durability-'));
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Time a settled promise would have had to settle: generous, never a measured duration. */
const STILL_PENDING_AFTER_MS = 400;

/** A runtime over the misbehaving server (its destructive `destroy` opened to code), warmed up. */
async function open(options: {
  history: UsageHistoryStore;
  onApproval?: Approver;
  onHistoryError?: (error: unknown) => void;
}): Promise<{ runtime: CodecallRuntime; probe: () => MisbehavingServerProbe }> {
  let probe: MisbehavingServerProbe | undefined;
  const config = parseConfig(
    {
      mcpServers: {
        misc: {
          command: 'unused-in-memory',
          tools: { destroy: { allowedCallers: ['direct', 'code_execution'] } },
        },
      },
      history: { enabled: false },
    },
    { file: '<history-durability.test>' },
  );
  const runtime = await CodecallRuntime.open({
    config,
    history: options.history,
    ...(options.onApproval ? { onApproval: options.onApproval } : {}),
    ...(options.onHistoryError ? { onHistoryError: options.onHistoryError } : {}),
    tools: {
      transports: {
        misc: inMemoryTransport(() => {
          const made = createMisbehavingServer({ name: 'misc' });
          probe = made.probe;
          return made.server;
        }),
      },
    },
  });
  cleanups.push(() => runtime.close());
  // The sandbox is started before any lock is taken (a run without calls writes no history).
  const warm = await runtime.execute(`console.log('warm');`);
  expect(warm.status, JSON.stringify(warm.error)).toBe('ok');
  return { runtime, probe: () => probe! };
}

/** A SQLite store on a fresh file that waits long enough for the foreign lock. */
async function openStore(name: string): Promise<{ path: string; store: SqliteHistoryStore }> {
  const path = join(dir, name, 'history.sqlite');
  const store = await SqliteHistoryStore.open({ path, busyTimeoutMs: 60_000 });
  cleanups.push(() => store.close());
  return { path, store };
}

/** Another process's write lock on the file, released in afterEach at the latest. */
async function lock(path: string): Promise<() => Promise<void>> {
  const held = await holdExclusiveLock(path);
  let released: Promise<void> | undefined;
  const release = (): Promise<void> => (released ??= held.release());
  cleanups.push(release);
  return release;
}

interface FileContent {
  runs: string[][];
  approvals: Array<{ tool: string; outcome: string; runId: string | null }>;
  usages: Array<{ query: string; tools: string[] }>;
}

/** What a fresh reader finds committed in the history file. */
function readFile(path: string): FileContent {
  const db = new DatabaseSync(path);
  try {
    const runs = db.prepare('SELECT tools FROM runs ORDER BY id').all() as Array<{ tools: string }>;
    const approvals = db.prepare('SELECT tool, outcome, run_id FROM approvals ORDER BY id').all() as Array<{
      tool: string;
      outcome: string;
      run_id: string | null;
    }>;
    const usages = db.prepare('SELECT query, tools FROM usages ORDER BY id').all() as Array<{
      query: string;
      tools: string;
    }>;
    return {
      runs: runs.map((r) => JSON.parse(r.tools) as string[]),
      approvals: approvals.map((a) => ({ tool: a.tool, outcome: a.outcome, runId: a.run_id })),
      usages: usages.map((u) => ({ query: u.query, tools: JSON.parse(u.tools) as string[] })),
    };
  } finally {
    db.close();
  }
}

/** Whether `promise` is still unsettled after `ms`. */
async function pendingAfter(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const marker = Symbol('pending');
  const first = await Promise.race([
    promise.then(
      () => undefined,
      () => undefined,
    ),
    sleep(ms, marker),
  ]);
  return first === marker;
}

/** `promise`'s value with what the file held at the moment it settled. */
function withFileAtSettle<T>(path: string, promise: Promise<T>): Promise<{ value: T; file: FileContent }> {
  return promise.then((value) => ({ value, file: readFile(path) }));
}

const EMPTY: FileContent = { runs: [], approvals: [], usages: [] };

describe('history is durable before a run is acknowledged', () => {
  it('execute does not settle while the history file is locked; once it does, the run is in the file', async () => {
    const { path, store } = await openStore('run');
    const { runtime } = await open({ history: store });
    const release = await lock(path);
    const called: string[] = [];
    const running = withFileAtSettle(
      path,
      runtime.execute(
        `await tools.misc.echo({ text: 'one' });
         await tools.misc.echo({ text: 'two' });
         console.log('done');`,
        { onToolResult: (event) => called.push(event.name) },
      ),
    );
    // The script's calls are over; its result waits for the history write.
    await expect.poll(() => called).toEqual(['misc.echo', 'misc.echo']);
    expect(await pendingAfter(running, STILL_PENDING_AFTER_MS)).toBe(true);
    expect(readFile(path)).toEqual(EMPTY);

    await release();
    const { value: result, file } = await running;
    expect(result.status, JSON.stringify(result.error)).toBe('ok');
    expect(result.stdout).toBe('done\n');
    expect(file.runs).toEqual([['misc.echo', 'misc.echo']]);
  });

  it("an approved call's audit entry is in the file when the run settles", async () => {
    const { path, store } = await openStore('approved');
    const runIds: string[] = [];
    const { runtime, probe } = await open({
      history: store,
      onApproval: (request) => {
        runIds.push(request.runId ?? '');
        return { approved: true };
      },
    });
    const release = await lock(path);
    const running = withFileAtSettle(
      path,
      runtime.execute(`console.log(await tools.misc.destroy({}));`, { runId: 'approved-run' }),
    );
    await expect.poll(() => probe().destroyed).toBe(1);
    expect(await pendingAfter(running, STILL_PENDING_AFTER_MS)).toBe(true);
    expect(readFile(path)).toEqual(EMPTY);

    await release();
    const { value: result, file } = await running;
    expect(result.status, JSON.stringify(result.error)).toBe('ok');
    expect(result.stdout).toBe('destroyed\n');
    expect(runIds).toEqual(['approved-run']);
    expect(file.approvals).toEqual([{ tool: 'misc.destroy', outcome: 'approved', runId: 'approved-run' }]);
    expect(file.runs).toEqual([['misc.destroy']]);
  });

  it("a denial, the run's only history, is in the file when the run settles", async () => {
    const { path, store } = await openStore('denied');
    let asked = 0;
    const { runtime, probe } = await open({
      history: store,
      onApproval: () => {
        asked++;
        return { approved: false, reason: 'not today' };
      },
    });
    const release = await lock(path);
    const running = withFileAtSettle(
      path,
      runtime.execute(`try { await tools.misc.destroy({}); } catch (error) { console.log(error.code); }`, {
        runId: 'denied-run',
      }),
    );
    await expect.poll(() => asked).toBe(1);
    expect(await pendingAfter(running, STILL_PENDING_AFTER_MS)).toBe(true);
    expect(readFile(path)).toEqual(EMPTY);

    await release();
    const { value: result, file } = await running;
    expect(result.status, JSON.stringify(result.error)).toBe('ok');
    expect(result.stdout).toBe('APPROVAL_DENIED\n');
    expect(probe().destroyed).toBe(0);
    expect(file).toEqual({
      runs: [],
      approvals: [{ tool: 'misc.destroy', outcome: 'denied', runId: 'denied-run' }],
      usages: [],
    });
  });

  it("serve's execute_code answers only once the run and its query feedback are in the file", async () => {
    const { path, store } = await openStore('serve');
    const { runtime, probe } = await open({ history: store });
    const server = createCodecallServer({ runtime });
    const client = new Client({ name: 'history-durability-test', version: '1.0.0' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    await client.connect(clientSide);
    cleanups.push(async () => {
      await client.close();
      await server.close();
    });

    const query = 'slow call with a label';
    const found = (await client.callTool({ name: 'search_tools', arguments: { query } })) as CallToolResult;
    expect(found.isError ?? false).toBe(false);

    const release = await lock(path);
    const answering = withFileAtSettle(
      path,
      client.callTool({
        name: 'execute_code',
        arguments: { code: `console.log((await tools.misc.slow({ ms: 1, label: 'served' })).label);` },
      }) as Promise<CallToolResult>,
    );
    await expect.poll(() => probe().completed).toContain('served');
    expect(await pendingAfter(answering, STILL_PENDING_AFTER_MS)).toBe(true);
    expect(readFile(path)).toEqual(EMPTY);

    await release();
    const { value: answer, file } = await answering;
    expect(answer.isError ?? false).toBe(false);
    expect(JSON.stringify(answer.content)).toContain('served');
    expect(file.runs).toEqual([['misc.slow']]);
    expect(file.usages).toEqual([{ query, tools: ['misc.slow'] }]);
  });

  it('a failed history write goes to onHistoryError before the run settles; the result stands', async () => {
    const errors: unknown[] = [];
    // A store whose writes reject a moment later (after the run's calls are over).
    const failLater = (what: string) => () =>
      sleep(200).then(() => Promise.reject(new Error(`${what}: disk full`)));
    const memory = new MemoryHistoryStore();
    const failing: UsageHistoryStore = {
      loadCounts: () => memory.loadCounts(),
      appendSequence: failLater('append'),
      appendUsage: (usage) => memory.appendUsage(usage),
      listUsages: (options) => memory.listUsages(options),
      appendApproval: failLater('appendApproval'),
      listApprovals: (options) => memory.listApprovals(options),
      getValue: (namespace, key) => memory.getValue(namespace, key),
      setValue: (namespace, key, json, limits) => memory.setValue(namespace, key, json, limits),
      loadShapes: () => memory.loadShapes(),
      mergeShape: (tool, shape) => memory.mergeShape(tool, shape),
      close: () => Promise.resolve(),
      [Symbol.asyncDispose]: () => Promise.resolve(),
    };
    const { runtime, probe } = await open({
      history: failing,
      onApproval: (request) => ({ approved: request.runId !== 'denied' }),
      onHistoryError: (error) => errors.push(error),
    });
    const settled = <T>(promise: Promise<T>) =>
      promise.then((value) => ({
        value,
        reported: errors.splice(0).map((error) => (error as Error).message),
      }));

    // A run whose call sequence fails to be written.
    const run = await settled(
      runtime.execute(`console.log((await tools.misc.echo({ text: 'kept' })).text);`),
    );
    expect(run.value.status, JSON.stringify(run.value.error)).toBe('ok');
    expect(run.value.stdout).toBe('kept\n');
    expect(run.reported).toEqual(['append: disk full']);

    // A run whose only history, a denial, fails to be written.
    const denied = await settled(
      runtime.execute(`try { await tools.misc.destroy({}); } catch (error) { console.log(error.code); }`, {
        runId: 'denied',
      }),
    );
    expect(denied.value.status, JSON.stringify(denied.value.error)).toBe('ok');
    expect(denied.value.stdout).toBe('APPROVAL_DENIED\n');
    expect(denied.reported).toEqual(['appendApproval: disk full']);

    // An approved call: both of its writes fail; its result stands.
    const approved = await settled(runtime.execute(`console.log(await tools.misc.destroy({}));`));
    expect(approved.value.status, JSON.stringify(approved.value.error)).toBe('ok');
    expect(approved.value.stdout).toBe('destroyed\n');
    expect(probe().destroyed).toBe(1);
    expect(approved.reported.sort()).toEqual(['append: disk full', 'appendApproval: disk full']);
  });

  it('a closed SQLite store: the writes are refused, reported to onHistoryError, and the result stands', async () => {
    const { store } = await openStore('closed');
    const errors: unknown[] = [];
    const { runtime } = await open({ history: store, onHistoryError: (error) => errors.push(error) });
    await store.close();
    const { value: result, errors: reported } = await runtime
      .execute(`console.log((await tools.misc.echo({ text: 'still here' })).text);`)
      .then((value) => ({ value, errors: [...errors] }));
    expect(result.status, JSON.stringify(result.error)).toBe('ok');
    expect(result.stdout).toBe('still here\n');
    expect(reported).toHaveLength(1);
    expect(String(reported[0])).toMatch(/closed/i);
  });
});
