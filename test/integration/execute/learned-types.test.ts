/**
 * Learned result types and handles in the declarations (docs/data.md), over real MCP servers
 * (the example expense server and a small SDK server, over in-memory transports): a tool without
 * an `outputSchema` is declared with the shape of the results the runtime saw, with a note; a
 * declared `outputSchema` wins; a contradicting result widens the shape; `structuredContent` is
 * what is learned where a server sends it; values that look like ids or secrets never reach the
 * declarations; the shapes live in the history store, so another runtime on it starts with them;
 * a result held as a handle is learned from the host's copy; and the declarations always say
 * what a handle is, with the configured threshold.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseConfig } from '../../../src/config/index.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { MemoryHistoryStore } from '../../../src/store/index.js';
import { createExpenseServer, inMemoryTransport } from '../../../src/testing/servers/index.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-learned-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A server whose tools have no outputSchema: answers vary per call (`variant`). */
function createVaryingServer(): McpServer {
  const server = new McpServer({ name: 'vary', version: '1.0.0' });
  server.registerTool(
    'lookup',
    { description: 'Looks up an account.', inputSchema: { variant: z.number() } },
    ({ variant }) => {
      const record = {
        accountId: `acct_${variant}9f8e7d6c5b4a`,
        apiToken: 'sk_live_abcdefghijklmnop',
        tier: variant % 2 === 0 ? 'gold' : 'silver',
        code: 'Xq7Zr',
        score: variant === 3 ? 'high' : variant,
        ...(variant === 1 ? { extra: true } : {}),
      };
      return { content: [{ type: 'text', text: JSON.stringify(record) }] };
    },
  );
  server.registerTool(
    'structured',
    { description: 'Sends structuredContent beside a text that is not its JSON.', inputSchema: {} },
    () => ({
      content: [{ type: 'text', text: 'see structuredContent' }],
      structuredContent: { rows: [{ n: 1 }, { n: 2 }], done: true },
    }),
  );
  return server;
}

async function openRuntime(
  history: MemoryHistoryStore | undefined,
  file: Record<string, unknown> = {},
  mode: 'in-process' | 'process' = 'in-process',
): Promise<CodecallRuntime> {
  const config = parseConfig(
    { sandbox: { mode, workers: 1 }, ...file },
    { file: join(dir, 'codecall.json'), env: {} },
  );
  return CodecallRuntime.open({
    config,
    ...(history !== undefined ? { history } : {}),
    tools: {
      transports: {
        expenses: inMemoryTransport(() => createExpenseServer()),
        vary: inMemoryTransport(() => createVaryingServer()),
      },
    },
  });
}

/** The declaration line of one tool (its signature). */
function signatureOf(declarations: string, member: string): string {
  const start = declarations.indexOf(`    ${member}(`);
  expect(start, `no declaration of ${member}`).toBeGreaterThanOrEqual(0);
  const end = declarations.indexOf('>;\n', start);
  return declarations.slice(start, end + 2);
}

describe('learned result types', () => {
  it('get_expenses is declared with the shape of its results after a run, and another runtime on the same history starts with it', async () => {
    // The SQLite history of the configuration: what a second process would open.
    const file = { history: { path: join(dir, 'history.sqlite') } };
    const runtime = await openRuntime(undefined, file);
    try {
      expect(signatureOf(runtime.declarations(), 'get_expenses')).toMatch(/\): Promise<unknown>;$/);
      const result = await runtime.execute(`
        const a = await tools.expenses.get_expenses({ quarter: 'Q3', limit: 30 });
        const b = await tools.expenses.get_expenses({ quarter: 'Q3', offset: 10000 });
        const team = await tools.expenses.get_team_members({});
        console.log(a.items.length, b.items.length, team.members.length > 0);
      `);
      expect(result.status, JSON.stringify(result.error)).toBe('ok');
      expect(result.stdout.trim()).toBe('30 0 true');
      await runtime.flush();
      const declarations = runtime.declarations();
      const signature = signatureOf(declarations, 'get_expenses');
      expect(signature).toContain('items: {');
      expect(signature).toContain('amount: number;');
      expect(signature).toContain('total: number;');
      expect(signature).toContain('nextOffset: number | null;');
      // A field of few values is a union of the literals each seen at least twice.
      expect(signature).toMatch(/category: "[a-z]+"( \| "[a-z]+")+;/);
      expect(signature).toMatch(/quarter: "Q3";/);
      // An id is never a literal, however few values it takes.
      expect(signature).toContain('id: string;');
      expect(signature).toContain('memberId: string;');
      expect(declarations).toContain('Result type inferred from 2 results (the server declares none)');
      // get_team_members declares an outputSchema: it wins, and nothing is learned of it.
      const kept = await runtime.history.loadShapes();
      expect(kept.map((s) => s.tool)).toEqual(['expenses.get_expenses']);
      expect(kept[0]!.shape.seen).toBe(2);
    } finally {
      await runtime.close();
    }
    const second = await openRuntime(undefined, file);
    try {
      const signature = signatureOf(second.declarations(), 'get_expenses');
      expect(signature).toContain('nextOffset: number | null;');
      const found = second.searchTools('expense line items', { limit: 3 });
      expect(found.declarations).toContain('Result type inferred from 2 results');
    } finally {
      await second.close();
    }
  });

  it('a contradicting result widens the shape; ids, tokens and values seen once never reach the declarations; structuredContent is learned', async () => {
    const history = new MemoryHistoryStore();
    const runtime = await openRuntime(history);
    try {
      const result = await runtime.execute(`
        for (const variant of [1, 2, 3, 4]) await tools.vary.lookup({ variant });
        const s = await tools.vary.structured({});
        console.log(s.rows.length);
      `);
      expect(result.status, JSON.stringify(result.error)).toBe('ok');
      await runtime.flush();
      const declarations = runtime.declarations();
      const lookup = signatureOf(declarations, 'lookup');
      expect(lookup).toContain('score: number | string;');
      expect(lookup).toContain('extra?: boolean;');
      expect(lookup).toContain('tier: "gold" | "silver";');
      expect(lookup).toContain('accountId: string;');
      expect(lookup).toContain('apiToken: string;');
      // "Xq7Zr" looks like a word but was seen as a short code: key "code" is never literal.
      expect(lookup).toContain('code: string;');
      for (const value of ['acct_', 'sk_live', 'Xq7Zr', 'high']) expect(declarations).not.toContain(value);
      const structured = signatureOf(declarations, 'structured');
      expect(structured).toContain('rows: {');
      expect(structured).toContain('n: number;');
      expect(structured).toContain('done: boolean;');
      // The stored shape holds no id or token either.
      const stored = JSON.stringify(await history.loadShapes());
      for (const value of ['acct_', 'sk_live', 'Xq7Zr']) expect(stored).not.toContain(value);
    } finally {
      await runtime.close();
    }
  });

  it('a run with learn: false teaches no shape', async () => {
    const history = new MemoryHistoryStore();
    const runtime = await openRuntime(history);
    try {
      const result = await runtime.execute('await tools.vary.lookup({ variant: 2 });', { learn: false });
      expect(result.status).toBe('ok');
      await runtime.flush();
      expect(await history.loadShapes()).toEqual([]);
      expect(signatureOf(runtime.declarations(), 'lookup')).toMatch(/Promise<unknown>;$/);
    } finally {
      await runtime.close();
    }
  });
});

describe.each(['in-process', 'process'] as const)('handles and the declarations (%s)', (mode) => {
  it('resultHandles.minBytes from the configuration makes a handle, the declarations name the threshold, and the held result is learned', async () => {
    const history = new MemoryHistoryStore();
    const runtime = await openRuntime(history, { resultHandles: { minBytes: 2048, spillBytes: 4096 } }, mode);
    try {
      const before = runtime.declarations();
      expect(before).toContain('A result of 2 KiB or more arrives as a ResultHandle');
      expect(before).toContain('interface ResultHandle {');
      expect(before).toContain('sum(field: string, where?: Where): Promise<number | null>;');
      const result = await runtime.execute(`
        const page = await tools.expenses.get_expenses({ quarter: 'Q3', limit: 100 });
        console.log(page.isHandle, page.kind, page.rowsAt, page.spilled, (await page.count()) === page.length);
      `);
      expect(result.status, JSON.stringify(result.error)).toBe('ok');
      expect(result.stdout.trim()).toBe('true object /items true true');
      await runtime.flush();
      const signature = signatureOf(runtime.declarations(), 'get_expenses');
      expect(signature).toContain('amount: number;');
      expect(runtime.declarations()).toContain('Result type inferred from 1 result (');
    } finally {
      await runtime.close();
    }
  });
});

it('a spill threshold below the hold threshold is refused, naming both keys', () => {
  expect(() =>
    parseConfig(
      { resultHandles: { minBytes: 4096, spillBytes: 1024 } },
      { file: join(dir, 'c.json'), env: {} },
    ),
  ).toThrow(/resultHandles\.spillBytes \(1024\) must be at least resultHandles\.minBytes \(4096\)/);
  const config = parseConfig({}, { file: join(dir, 'c.json'), env: {} });
  expect(config.resultHandles).toEqual({
    minBytes: 16 * 1_048_576,
    spillBytes: 128 * 1_048_576,
    linkRoots: [],
  });
});
