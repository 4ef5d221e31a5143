/**
 * The tool pool against our servers over Streamable HTTP on loopback (a real SDK client and a
 * real node:http server).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import {
  createExpenseData,
  createExpenseServer,
  createMisbehavingServer,
  overBudgetMembers,
  serveHttp,
  type HttpMcpEndpoint,
} from '../../../src/testing/servers/index.js';
import { ToolPool, type CatalogTool } from '../../../src/tools/index.js';

const cleanup: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const item of cleanup.splice(0).reverse()) await item.close();
});

const code = { caller: 'code_execution' } as const;

async function open(
  endpoints: Record<string, HttpMcpEndpoint>,
  headers: Record<string, string> = {},
): Promise<ToolPool> {
  const config = parseConfig(
    {
      mcpServers: Object.fromEntries(
        Object.entries(endpoints).map(([name, e]) => [name, { type: 'http', url: e.url, headers }]),
      ),
    },
    { file: '/project/codecall.json', env: {} },
  );
  const pool = await ToolPool.open(config, { requireAll: true });
  cleanup.push(pool);
  return pool;
}

describe('Streamable HTTP servers', () => {
  it('answers the over-budget question through real HTTP calls', async () => {
    const endpoint = await serveHttp(() => createExpenseServer());
    cleanup.push(endpoint);
    const pool = await open({ expenses: endpoint }, { Authorization: 'Bearer test' });
    const { members } = (await pool.call('expenses.get_team_members', {}, code)) as {
      members: { id: string; level: string }[];
    };
    const over: string[] = [];
    for (const member of members) {
      const page = (await pool.call(
        'expenses.get_expenses',
        { member_id: member.id, quarter: 'Q3', category: 'travel' },
        code,
      )) as { items: { amount: number; status: string }[] };
      const budget = (await pool.call(
        'expenses.get_budget_by_level',
        { level: member.level, quarter: 'Q3' },
        code,
      )) as {
        budgets: { travel: number };
      };
      const spent = page.items.filter((i) => i.status !== 'rejected').reduce((s, i) => s + i.amount, 0);
      if (spent > budget.budgets.travel) over.push(member.id);
    }
    const expected = overBudgetMembers(createExpenseData(), 'Q3', 'travel').map((o) => o.member.id);
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(members.length);
    expect(over).toEqual(expected);
    expect(endpoint.sessions()).toBe(1);
  });

  it('follows list_changed over HTTP', async () => {
    const endpoint = await serveHttp(() => createMisbehavingServer().server);
    cleanup.push(endpoint);
    const pool = await open({ odd: endpoint });
    const changes: (readonly CatalogTool[])[] = [];
    pool.onCatalogChange((c) => changes.push(c));
    await pool.call('odd.add_tool', { name: 'late', value: 'over http' }, code);
    await expect
      .poll(() => changes.some((c) => c.some((t) => t.name === 'odd.late')), { timeout: 5_000 })
      .toBe(true);
    expect(await pool.call('odd.late', {}, code)).toBe('over http');
  });

  it('reports an unreachable URL as a failed server', async () => {
    const config = parseConfig(
      { mcpServers: { gone: { type: 'http', url: 'http://127.0.0.1:9/mcp' } } },
      { file: '/project/codecall.json', env: {} },
    );
    const pool = await ToolPool.open(config);
    cleanup.push(pool);
    const [status] = pool.serverStatus();
    expect(status).toMatchObject({ name: 'gone', state: 'failed', transport: 'http' });
    expect(status!.error).toContain('mcpServers.gone');
  });
});
