import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CodecallRuntime, type ToolResultEvent } from '../../../src/execute/index.js';
import { SqliteHistoryStore } from '../../../src/store/sqlite-history-store.js';
import { loadState } from '../../contract/load-state.js';

const CONFIG = resolve(import.meta.dirname, '../../../examples/codecall.json');
const dir = mkdtempSync(join(tmpdir(), 'codecall-runtime-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('CodecallRuntime over the example expense server', () => {
  it('searches the live catalog, runs code, and learns the call order durably', async () => {
    const historyPath = join(dir, 'history.sqlite');
    const store = await SqliteHistoryStore.open({ path: historyPath });
    const runtime = await CodecallRuntime.open({ load: { path: CONFIG }, history: store });
    try {
      const found = runtime.searchTools('expense line items of a team member');
      expect(found.hits.map((h) => h.name)).toContain('expenses.get_expenses');
      expect(found.declarations).toMatch(/get_expenses/);
      expect(found.hits.every((h) => h.reasons.length > 0)).toBe(true);

      const script = `
        const { members } = await tools.expenses.get_team_members({});
        const first = members[0];
        const expenses = await tools.expenses.get_expenses({ member_id: first.id, quarter: 'Q3' });
        console.log(typeof first.id, Array.isArray(expenses.items ?? expenses));
      `;
      for (let i = 0; i < 3; i++) {
        const result = await runtime.execute(script);
        expect(result.status, JSON.stringify(result.error)).toBe('ok');
        expect(result.stdout).toBe('string true\n');
      }
      await runtime.flush();
      const edge = runtime.search
        .graphEdges()
        .find((e) => e.from === 'expenses.get_team_members' && e.to === 'expenses.get_expenses');
      expect(edge?.count).toBe(3);
    } finally {
      await runtime.close();
    }
    const reopened = await SqliteHistoryStore.open({ path: historyPath });
    const state = await loadState(reopened);
    await reopened.close();
    expect(JSON.stringify(state)).toMatch(/get_team_members/);
  });

  it('tells onToolResult about each call of the run, with its result; a throwing listener is ignored', async () => {
    const runtime = await CodecallRuntime.open({ load: { path: CONFIG }, history: false });
    try {
      const events: ToolResultEvent[] = [];
      const result = await runtime.execute(
        `
        const { members } = await tools.expenses.get_team_members({});
        try { await tools.expenses.get_expenses({ member_id: 42 }); } catch { console.log('refused'); }
        console.log(members.length);
        `,
        {
          onToolResult: (event) => {
            events.push(event);
            throw new Error('listener failure');
          },
        },
      );
      expect(result.status, JSON.stringify(result.error)).toBe('ok');
      expect(events.map((e) => [e.name, e.ok])).toEqual([
        ['expenses.get_team_members', true],
        ['expenses.get_expenses', false],
      ]);
      const members = (events[0]!.result as { members: unknown[] }).members;
      expect(result.stdout).toBe(`refused\n${members.length}\n`);
      expect(events[0]!.args).toEqual({});
      expect(events[1]!.args).toEqual({ member_id: 42 });
      expect((events[1]!.result as Error).message).toMatch(/member_id/);
      // The sandbox received the same result the listener saw.
      expect(result.toolCalls[0]!.resultBytes).toBe(Buffer.byteLength(JSON.stringify(events[0]!.result)));
    } finally {
      await runtime.close();
    }
  });

  it('enforces allowedCallers on the host for tools closed to code', async () => {
    const runtime = await CodecallRuntime.open({ load: { path: CONFIG }, history: false });
    try {
      const closed = runtime.catalog().find((t) => !t.allowedCallers.includes('code_execution'));
      expect(closed?.name).toBe('expenses.flag_expense');
      await expect(runtime.callTool(closed!.name, {}, { caller: 'code_execution' })).rejects.toThrow(
        /allowedCallers/,
      );
      const result = await runtime.execute(
        `await tools.expenses.flag_expense({ expense_id: 'x', reason: 'y' });`,
      );
      expect(result.status).toBe('error');
      expect(result.stderr + (result.error?.message ?? '')).toMatch(/allowedCallers/);
    } finally {
      await runtime.close();
    }
  });
});

describe('CodecallRuntime.open', () => {
  it('opens the usage history while the MCP servers start, not after', async () => {
    const work = mkdtempSync(join(dir, 'concurrent-'));
    const historyPath = join(work, 'history.sqlite');
    // A server that starts only once the history database exists: opening the history after
    // the servers would leave it waiting, and it gives up after 10 s (then open rejects).
    const server = join(work, 'waits-for-history.mjs');
    const expenses = pathToFileURL(
      resolve(import.meta.dirname, '../../../examples/expense-server/server.mjs'),
    ).href;
    writeFileSync(
      server,
      `import { existsSync } from 'node:fs';
       const until = Date.now() + 10_000;
       while (!existsSync(${JSON.stringify(historyPath)})) {
         if (Date.now() > until) { console.error('no history database'); process.exit(1); }
         await new Promise((r) => setTimeout(r, 10));
       }
       await import(${JSON.stringify(expenses)});`,
    );
    const config = join(work, 'codecall.json');
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { expenses: { command: process.execPath, args: [server] } },
        history: { path: historyPath },
      }),
    );
    const runtime = await CodecallRuntime.open({ load: { path: config } });
    try {
      expect(runtime.tools.catalog().map((t) => t.name)).toContain('expenses.get_team_members');
    } finally {
      await runtime.close();
    }
  });

  const TEAM_THEN_EXPENSES = `
    const { members } = await tools.expenses.get_team_members({});
    await tools.expenses.get_expenses({ member_id: members[0].id, quarter: 'Q3' });
    console.log('done');
  `;

  it('builds the search index at the first search, not for runs; what runs taught it is kept', async () => {
    const runtime = await CodecallRuntime.open({ load: { path: CONFIG }, history: false });
    try {
      const result = await runtime.execute(TEAM_THEN_EXPENSES);
      expect(result.stdout, JSON.stringify(result.error)).toBe('done\n');
      expect(runtime.started()).toEqual({ sandbox: true, searchIndex: false });
      const found = runtime.searchTools('expense line items of a team member');
      expect(runtime.started().searchIndex).toBe(true);
      expect(found.hits.map((h) => h.name)).toContain('expenses.get_expenses');
      const edge = runtime.search
        .graphEdges()
        .find((e) => e.from === 'expenses.get_team_members' && e.to === 'expenses.get_expenses');
      expect(edge?.count).toBe(1);
    } finally {
      await runtime.close();
    }
  });

  it("with parts.sandbox 'lazy', searching starts no sandbox and the first run starts it", async () => {
    const runtime = await CodecallRuntime.open({
      load: { path: CONFIG },
      history: false,
      parts: { sandbox: 'lazy' },
    });
    try {
      const found = await runtime.findTools('expense line items of a team member');
      expect(found.hits.map((h) => h.name)).toContain('expenses.get_expenses');
      const declarations = runtime.declarations();
      expect(declarations).toMatch(/get_expenses/);
      expect(runtime.started()).toEqual({ sandbox: false, searchIndex: true });
      expect(() => runtime.sandbox).toThrow(/starts at the first run/);
      const result = await runtime.execute(TEAM_THEN_EXPENSES);
      expect(result.stdout, JSON.stringify(result.error)).toBe('done\n');
      expect(runtime.started().sandbox).toBe(true);
      expect(runtime.declarations()).toBe(declarations);
    } finally {
      await runtime.close();
    }
  });

  it("with parts.sandbox 'lazy', startSandbox() starts it before any run, once", async () => {
    const runtime = await CodecallRuntime.open({
      load: { path: CONFIG },
      history: false,
      parts: { servers: false, sandbox: 'lazy' },
    });
    try {
      expect(runtime.started().sandbox).toBe(false);
      await Promise.all([runtime.startSandbox(), runtime.startSandbox()]);
      expect(runtime.started().sandbox).toBe(true);
      const pool = runtime.sandbox;
      await runtime.startSandbox();
      expect(runtime.sandbox).toBe(pool);
      const result = await runtime.execute('console.log(1 + 1)');
      expect(result.stdout).toBe('2\n');
      expect(runtime.sandbox).toBe(pool);
    } finally {
      await runtime.close();
    }
  });

  it('with parts.servers false, starts no MCP server', async () => {
    const runtime = await CodecallRuntime.open({
      load: { path: CONFIG },
      history: false,
      parts: { servers: false, sandbox: 'lazy' },
    });
    try {
      expect(runtime.tools.serverStatus()).toEqual([]);
      expect(runtime.catalog()).toEqual([]);
    } finally {
      await runtime.close();
    }
  });
});
