/**
 * @module
 * `codecall search` and `codecall graph` in-process (the command objects main() dispatches to),
 * against the real expense MCP server over stdio and a real SQLite usage history.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError, type CliIo } from '../../../src/cli/command.js';
import { graphCommand } from '../../../src/cli/commands/graph.js';
import { searchCommand } from '../../../src/cli/commands/search.js';
import { main } from '../../../src/cli/main.js';
import { parseConfig } from '../../../src/config/index.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { SqliteHistoryStore } from '../../../src/store/sqlite-history-store.js';
import { bundleTestServer, removeTestServerBundle } from '../../integration/tools/bundle-test-server.js';
afterAll(removeTestServerBundle);

const dir = mkdtempSync(join(tmpdir(), 'codecall-search-cli-'));
const history = join(dir, '.codecall', 'history.sqlite');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  const server = await bundleTestServer();
  writeFileSync(
    join(dir, 'codecall.json'),
    JSON.stringify({ mcpServers: { expenses: { command: process.execPath, args: [server, 'expenses'] } } }),
  );
}, 60_000);

function io(): { io: CliIo; out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  return {
    // The configuration is found in cwd, not named: trust is the consent to start its server (--trust).
    io: {
      stdout,
      stderr,
      stdin: new PassThrough(),
      cwd: dir,
      env: {},
      signal: new AbortController().signal,
      trust: true,
    },
    out: () => out,
    err: () => err,
  };
}

describe('codecall search and codecall graph', () => {
  it('searches the live catalog without creating a history store', async () => {
    const t = io();
    expect(await searchCommand.run(['expense line items of a member', '--json'], t.io)).toBe(0);
    const result = JSON.parse(t.out());
    expect(result.hits[0]).toMatchObject({ name: 'expenses.get_expenses', server: 'expenses' });
    expect(result.hits[0].reasons[0]).toMatch(/^matches /);
    expect(existsSync(history)).toBe(false);
  });

  it('shows what was learned: graph edges, reasons and chains from the history store', async () => {
    const store = await SqliteHistoryStore.open({ path: history });
    for (let i = 0; i < 5; i++) {
      await store.appendSequence([
        'expenses.get_team_members',
        'expenses.get_expenses',
        'expenses.get_budget_by_level',
      ]);
    }
    await store.close();

    const text = io();
    expect(await searchCommand.run(['who is on the team', '--limit', '3'], text.io)).toBe(0);
    expect(text.out()).toMatch(/^ 1\. expenses\.get_team_members/);
    expect(text.out()).toContain('· called after expenses.get_team_members 5 of 5 times');
    expect(text.out()).toMatch(/Likely chains:\n {2}expenses\.get_team_members → expenses\.get_expenses/);

    const json = io();
    expect(await graphCommand.run(['--format', 'json'], json.io)).toBe(0);
    const graph = JSON.parse(json.out());
    expect(graph.sequences).toBe(5);
    expect(json.err()).toBe(
      `codecall graph: usage history ${history} (key: codecall.json; 5 recorded runs). Each configuration file keeps its own unless history.path or CODECALL_HISTORY_PATH points several at one file.\n`,
    );
    expect(graph.edges).toEqual([
      expect.objectContaining({
        from: 'expenses.get_expenses',
        to: 'expenses.get_budget_by_level',
        count: 5,
        probability: 1,
      }),
      expect.objectContaining({
        from: 'expenses.get_team_members',
        to: 'expenses.get_expenses',
        count: 5,
        probability: 1,
      }),
    ]);

    const mermaid = io();
    expect(await graphCommand.run(['--format', 'mermaid'], mermaid.io)).toBe(0);
    expect(mermaid.out()).toMatch(/^graph LR\n/);
    expect(mermaid.out()).toContain(
      't0["expenses.get_expenses"] -->|"5 (100%)"| t1["expenses.get_budget_by_level"]',
    );

    const dot = io();
    expect(await graphCommand.run(['--format', 'dot', '--history', history], dot.io)).toBe(0);
    expect(dot.out()).toContain('  t2 [label="expenses.get_team_members"];\n');
    expect(dot.out()).toContain('  t0 [label="expenses.get_expenses"];\n');
    expect(dot.out()).toContain('  t2 -> t0 [label="5 (100%)", penwidth=4.00];\n');

    const none = io();
    expect(await graphCommand.run(['--min-count', '6'], none.io)).toBe(0);
    expect(none.out()).toMatch(/No edges yet/);

    const inferred = io();
    expect(await graphCommand.run(['--inferred', '--format', 'json'], inferred.io)).toBe(0);
    expect(JSON.parse(inferred.out()).edges.length).toBeGreaterThanOrEqual(2);
  });

  it('keeps history per configuration file: a second one in the folder starts from the shared store, then learns apart', async () => {
    // Runs after the test above: codecall.json's store (the folder's shared one) holds 5 runs.
    writeFileSync(join(dir, 'other.json'), JSON.stringify({ mcpServers: {} }));
    const other = join(dir, '.codecall', 'history.other.json.sqlite');
    const before = io();
    expect(await graphCommand.run(['--config', join(dir, 'other.json'), '--format', 'json'], before.io)).toBe(
      0,
    );
    expect(before.err()).toContain(
      `usage history ${history} (key: other.json, not yet written: the folder's shared history it will start from; 5 recorded runs)`,
    );
    expect(existsSync(other)).toBe(false);

    const runtime = await CodecallRuntime.open({
      config: parseConfig({ mcpServers: {} }, { file: join(dir, 'other.json'), env: {} }),
    });
    void runtime.recordSequence(['expenses.get_expenses', 'expenses.get_team_members']);
    await runtime.close();
    expect(existsSync(other)).toBe(true);

    const after = io();
    expect(await graphCommand.run(['--config', join(dir, 'other.json'), '--format', 'json'], after.io)).toBe(
      0,
    );
    expect(after.err()).toContain(`usage history ${other} (key: other.json; 6 recorded runs)`);
    expect(JSON.parse(after.out()).sequences).toBe(6);
    const own = io();
    expect(await graphCommand.run(['--format', 'json'], own.io)).toBe(0);
    expect(own.err()).toContain(`usage history ${history} (key: codecall.json; 5 recorded runs)`);
  });

  it('runs regex queries and reports bad ones as query errors', async () => {
    const t = io();
    expect(await searchCommand.run(['--regex', '^expenses\\.get_', '--json'], t.io)).toBe(0);
    expect(
      JSON.parse(t.out())
        .hits.map((h: { name: string }) => h.name)
        .sort(),
    ).toEqual(['expenses.get_budget_by_level', 'expenses.get_expenses', 'expenses.get_team_members']);
    const bad = io();
    expect(await main(['search', '--regex', '(a)\\1'], bad.io)).toBe(2);
    expect(bad.err()).toMatch(
      /Invalid regex pattern .*backreferences .* are not supported: .*linear-time engine/,
    );
  });

  it('rejects bad usage', async () => {
    await expect(searchCommand.run([], io().io)).rejects.toThrow(UsageError);
    await expect(searchCommand.run(['x', '--limit', '0'], io().io)).rejects.toThrow(/--limit/);
    await expect(graphCommand.run(['--format', 'png'], io().io)).rejects.toThrow(
      '--format must be one of text, mermaid, dot, svg, json; got "png".',
    );
    await expect(graphCommand.run(['--format', 'svg', '--out='], io().io)).rejects.toThrow(
      '--out needs a file path: --out <file>.',
    );
    await expect(graphCommand.run(['--min-count', 'lots'], io().io)).rejects.toThrow(/--min-count/);
    // The CLI's one parser (parseCommandArgs): errors name the flag.
    await expect(searchCommand.run(['x', '--limt', '3'], io().io)).rejects.toThrow(
      'unknown option "--limt".',
    );
    await expect(searchCommand.run(['x', '--limit'], io().io)).rejects.toThrow(
      '--limit needs a value: --limit <value>.',
    );
    await expect(graphCommand.run(['--inferred=yes'], io().io)).rejects.toThrow(
      '--inferred takes no value: give --inferred alone.',
    );
    await expect(graphCommand.run(['stray'], io().io)).rejects.toThrow('unknown argument "stray".');
    const help = io();
    expect(await main(['graph', '--help'], help.io)).toBe(0);
    expect(help.out()).toMatch(/--format <f>/);
  });
});
