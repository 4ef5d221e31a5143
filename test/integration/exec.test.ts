/**
 * The executor end to end in one process: real isolates (in-process sandbox mode), the real tool
 * pool, in-process MCP servers over the SDK's in-memory transport.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { CodecallRuntime } from '../../src/execute/index.js';
import {
  createExpenseData,
  createExpenseServer,
  createMisbehavingServer,
  inMemoryTransport,
  overBudgetMembers,
  type MisbehavingServerProbe,
} from '../../src/testing/servers/index.js';

const OVER_BUDGET = `
const { members } = await tools.expenses.get_team_members();
const budgets = {};
for (const level of [...new Set(members.map((m) => m.level))]) {
  budgets[level] = (await tools.expenses.get_budget_by_level({ level, quarter: 'Q3' })).budgets.travel;
}
const { items } = await tools.expenses.get_expenses({ quarter: 'Q3', category: 'travel' });
const spent = {};
for (const item of items) if (item.status !== 'rejected') spent[item.memberId] = (spent[item.memberId] ?? 0) + item.amount;
const over = members.filter((m) => (spent[m.id] ?? 0) > budgets[m.level]);
console.log(over.length + ' over budget');
for (const m of over) console.log(m.id + ' ' + (spent[m.id]).toFixed(2) + ' > ' + budgets[m.level]);
`;

let session: CodecallRuntime;
const sequences: string[][] = [];
const probes: MisbehavingServerProbe[] = [];

beforeAll(async () => {
  const config = parseConfig(
    { sandbox: { mode: 'in-process', wallTimeMs: 20_000 } },
    { file: '/project/codecall.json', env: {} },
  );
  session = await CodecallRuntime.open({
    config,
    // Usage history in memory and no script store: nothing is written next to the configuration.
    history: false,
    store: () => undefined,
    tools: {
      transports: {
        expenses: inMemoryTransport(() => createExpenseServer()),
        odd: inMemoryTransport(() => {
          const { server, probe } = createMisbehavingServer();
          probes.push(probe);
          return server;
        }),
      },
    },
    onSequence: (sequence) => {
      sequences.push(sequence);
    },
  });
});

afterAll(async () => {
  await session?.close();
});

describe('executor', () => {
  it('aggregates thousands of line items in the sandbox and returns only what was printed', async () => {
    sequences.length = 0;
    const result = await session.executor.execute(OVER_BUDGET);
    expect(result.error).toBeUndefined();
    expect(result.status).toBe('ok');
    const expected = overBudgetMembers(createExpenseData(), 'Q3', 'travel');
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toBe(`${expected.length} over budget`);
    expect(lines.slice(1).map((l) => l.split(' ')[0])).toEqual(expected.map((e) => e.member.id));
    const levels = new Set(createExpenseData().members.map((m) => m.level)).size;
    expect(result.toolCalls.map((c) => c.tool)).toEqual([
      'expenses.get_team_members',
      ...Array<string>(levels).fill('expenses.get_budget_by_level'),
      'expenses.get_expenses',
    ]);
    expect(result.stats.toolResultBytes).toBeGreaterThan(50 * result.stats.stdoutBytes);
    expect(sequences).toEqual([result.toolCalls.map((c) => c.tool)]);
  });

  it('refuses a tool not opened to code, naming the tool and the allowedCallers key', async () => {
    const result = await session.executor.execute(
      `await tools.expenses.delete_expense({ expense_id: 'exp-00001' });`,
    );
    expect(result.status).toBe('error');
    expect(result.error!.message).toContain('expenses.delete_expense');
    expect(result.error!.message).toContain('mcpServers.expenses.tools.delete_expense.allowedCallers');
    expect(result.toolCalls).toMatchObject([{ tool: 'expenses.delete_expense', ok: false }]);
    const viaCallTool = await session.executor.execute(
      `try { await callTool('expenses.delete_expense', { expense_id: 'exp-00001' }); } catch (e) { console.log(e.message); }`,
    );
    expect(viaCallTool.status).toBe('ok');
    expect(viaCallTool.stdout).toContain('allowedCallers');
  });

  it('lets a script catch argument errors and isError results, with field names and server messages', async () => {
    const result = await session.executor.execute(`
      try { await tools.expenses.get_expenses({ quarter: 'Q9' }); } catch (e) { console.log('args:', e.message); }
      try { await tools.odd.fail({ message: 'upstream said no' }); } catch (e) { console.log('server:', e.message); }
      console.log('done');
    `);
    expect(result.status).toBe('ok');
    expect(result.stdout).toMatch(/args: .*"quarter" must be one of "Q1", "Q2", "Q3", "Q4"/);
    expect(result.stdout).toContain('server: odd.fail returned an error: upstream said no');
    expect(result.stdout).toContain('done');
  });

  it('reports a syntax error as a result', async () => {
    const result = await session.executor.execute('const = 1;');
    expect(result.status).toBe('error');
    expect(result.error!.code).toBe('SYNTAX_ERROR');
  });

  it('aborts a run and cancels the tool call in flight on the server', async () => {
    const controller = new AbortController();
    const pending = session.executor.execute(`await tools.odd.slow({ ms: 60000, label: 'run-abort' });`, {
      signal: controller.signal,
    });
    // Abort once the call is in flight on the server.
    await expect.poll(() => probes.flatMap((p) => p.started), { timeout: 10_000 }).toContain('run-abort');
    controller.abort();
    const result = await pending;
    expect(result.status).toBe('error');
    expect(result.error!.code).toBe('ABORTED');
    await expect.poll(() => probes.flatMap((p) => p.cancelled)).toContain('run-abort');
  });

  it('declares only the tools opened to code', () => {
    const text = session.executor.declarations();
    expect(text).toContain('get_expenses(');
    expect(text).not.toContain('delete_expense(');
    const codeTools = session.executor.codeTools().map((t) => t.name);
    expect(codeTools).toContain('expenses.get_expenses');
    expect(codeTools).not.toContain('odd.destroy');
  });
});
