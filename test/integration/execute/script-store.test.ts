/**
 * `store.set` / `store.get` inside the sandbox, in both sandbox modes: a value set in one run is
 * read in a later run without a session and after the runtime is reopened on the same SQLite
 * history file; over-size values and namespaces are refused with the limit named; another
 * configuration's keys are not visible. Real runtimes over an in-memory MCP server.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { SqliteHistoryStore } from '../../../src/store/sqlite-history-store.js';
import { createCodecallServer } from '../../../src/server/index.js';
import { createMisbehavingServer, inMemoryTransport } from '../../../src/testing/servers/index.js';
import { loadState } from '../../contract/load-state.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-script-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const opened: Array<{ runtime: CodecallRuntime; history: SqliteHistoryStore }> = [];
afterEach(async () => {
  for (const { runtime, history } of opened.splice(0)) {
    await runtime.close();
    await history.close();
  }
});

/** A runtime whose configuration "lives" at `configFile`, with its history at `historyPath`. */
async function open(options: {
  configFile: string;
  historyPath: string;
  sandboxMode: 'in-process' | 'process';
  store?: object;
}): Promise<CodecallRuntime> {
  const config = parseConfig(
    {
      mcpServers: { misc: { command: 'unused-in-memory' } },
      sandbox: { mode: options.sandboxMode },
      ...(options.store ? { store: options.store } : {}),
    },
    { file: options.configFile },
  );
  // The caller's store (configuration files may keep history only inside their folder).
  const history = await SqliteHistoryStore.open({ path: options.historyPath });
  const runtime = await CodecallRuntime.open({
    config,
    history,
    tools: {
      transports: { misc: inMemoryTransport(() => createMisbehavingServer({ name: 'misc' }).server) },
    },
  });
  opened.push({ runtime, history });
  return runtime;
}

describe.each(['in-process', 'process'] as const)('store.set / store.get (%s sandbox)', (sandboxMode) => {
  it('a value set in one run is read by a later run without a session, and after reopening the runtime', async () => {
    const historyPath = join(dir, `${sandboxMode}-persist.sqlite`);
    const configFile = join(dir, `${sandboxMode}-a`, 'codecall.json');
    const first = await open({ configFile, historyPath, sandboxMode });
    const set = await first.execute(
      'await store.set("team", { members: ["ana", "bo"], at: 3 });\nconsole.log(await store.get("missing"));',
    );
    expect(set.error).toBeUndefined();
    expect(set.stdout).toBe('undefined\n');
    const later = await first.execute('console.log(JSON.stringify(await store.get("team")));');
    expect(later.stdout).toBe('{"members":["ana","bo"],"at":3}\n');
    // The store's calls never teach the tool graph.
    await first.flush();
    expect((await loadState(first.history)).sequences).toBe(0);
    await first.close();
    await opened.splice(0)[0]!.history.close();

    const reopened = await open({ configFile, historyPath, sandboxMode });
    const read = await reopened.execute(
      'const team = await store.get("team");\nconsole.log(team.members.join(","));\nawait store.set("team", undefined);\nconsole.log(await store.get("team"));',
    );
    expect(read.error).toBeUndefined();
    expect(read.stdout).toBe('ana,bo\nundefined\n');
  });

  it('keys of another configuration are not visible; store.namespace shares them on purpose', async () => {
    const historyPath = join(dir, `${sandboxMode}-namespaces.sqlite`);
    const a = await open({
      configFile: join(dir, `${sandboxMode}-ns-a`, 'codecall.json'),
      historyPath,
      sandboxMode,
    });
    expect((await a.execute('await store.set("secret", "of a");')).error).toBeUndefined();
    await a.close();
    await opened.splice(0)[0]!.history.close();
    const b = await open({
      configFile: join(dir, `${sandboxMode}-ns-b`, 'codecall.json'),
      historyPath,
      sandboxMode,
    });
    expect((await b.execute('console.log(await store.get("secret"));')).stdout).toBe('undefined\n');
    await b.close();
    await opened.splice(0)[0]!.history.close();
    const named = await open({
      configFile: join(dir, `${sandboxMode}-ns-c`, 'codecall.json'),
      historyPath,
      sandboxMode,
      store: { namespace: join(dir, `${sandboxMode}-ns-a`, 'codecall.json') },
    });
    expect((await named.execute('console.log(await store.get("secret"));')).stdout).toBe('of a\n');
  });

  it('refuses a value over store.maxValueBytes and a namespace over store.maxNamespaceBytes, naming the limit', async () => {
    const runtime = await open({
      configFile: join(dir, `${sandboxMode}-limits`, 'codecall.json'),
      historyPath: join(dir, `${sandboxMode}-limits.sqlite`),
      sandboxMode,
      store: { maxValueBytes: 100, maxNamespaceBytes: 150 },
    });
    const result = await runtime.execute(
      [
        'try { await store.set("big", "x".repeat(200)); } catch (error) { console.log(error.code, error.message); }',
        'await store.set("a", "y".repeat(80));',
        'try { await store.set("b", "z".repeat(80)); } catch (error) { console.log(error.code, error.message); }',
        '// Replacing a value counts only the difference.',
        'await store.set("a", "w".repeat(90));',
        'console.log(String(await store.get("b")), (await store.get("a")).length);',
        'try { await store.get(""); } catch (error) { console.log(error.message); }',
      ].join('\n'),
    );
    expect(result.error).toBeUndefined();
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(
      /^STORE_LIMIT store\.set\("big"\) refused: the value is 202 bytes of JSON; the limit is 100 bytes per value \(store\.maxValueBytes\)/,
    );
    expect(lines[1]).toMatch(
      /^STORE_LIMIT store\.set refused: this configuration's store holds 83 bytes and this value would make it 166; the limit is 150 bytes \(store\.maxNamespaceBytes\)/,
    );
    expect(lines[2]).toBe('undefined 90');
    expect(lines[3]).toBe(
      'store.get and store.set take a key: a non-empty string, e.g. store.set("members", members).',
    );
  });

  it('store.enabled false: scripts have no store', async () => {
    const runtime = await open({
      configFile: join(dir, `${sandboxMode}-off`, 'codecall.json'),
      historyPath: join(dir, `${sandboxMode}-off.sqlite`),
      sandboxMode,
      store: { enabled: false },
    });
    const result = await runtime.execute('console.log(typeof store);');
    expect(result.stdout).toBe('undefined\n');
  });
});

describe('execute_code tells the model about store', () => {
  /** The `execute_code` description an MCP client of `codecall serve` sees. */
  async function executeCodeDescription(runtime: CodecallRuntime): Promise<string> {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createCodecallServer({ runtime }).connect(serverSide);
    const client = new Client({ name: 'store-hint', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      const { tools } = await client.listTools();
      const execute = tools.find((tool) => tool.name === 'execute_code');
      if (execute?.description === undefined) throw new Error('execute_code is not listed');
      return execute.description;
    } finally {
      await client.close();
    }
  }

  it('names store.set / store.get when scripts get them, and not when store.enabled is false', async () => {
    const on = await open({
      configFile: join(dir, 'hint-on', 'codecall.json'),
      historyPath: join(dir, 'hint-on.sqlite'),
      sandboxMode: 'in-process',
    });
    expect(await executeCodeDescription(on)).toContain('`await store.set(key, value)`');
    const off = await open({
      configFile: join(dir, 'hint-off', 'codecall.json'),
      historyPath: join(dir, 'hint-off.sqlite'),
      sandboxMode: 'in-process',
      store: { enabled: false },
    });
    const description = await executeCodeDescription(off);
    expect(description).toContain('Limits per run');
    expect(description).not.toContain('store.');
  });
});
