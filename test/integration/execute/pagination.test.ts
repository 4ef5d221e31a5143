/**
 * `tools.<server>.<tool>.pages(args)` (docs/data.md) over the example expense server, whose
 * `get_expenses` pages with `offset` / `nextOffset`, in both sandbox modes: every page is
 * fetched once, in order, and the declarations offer `pages` only for tools whose input has a
 * cursor, offset or page parameter. A server that repeats its cursor is stopped, not followed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import type { SandboxMode } from '../../../src/isolate/index.js';
import { createExpenseServer, inMemoryTransport } from '../../../src/testing/servers/index.js';
import { defineTool, localTools } from '../../../src/tools/index.js';

const stuck = defineTool({
  name: 'stuck',
  description: 'A paginated tool whose server always returns the same cursor.',
  inputSchema: { type: 'object', properties: { cursor: { type: 'string' } }, additionalProperties: false },
  execute: () => ({ items: [1], nextCursor: 'same' }),
});

const dir = mkdtempSync(join(tmpdir(), 'codecall-pages-'));
const runtimes = new Map<SandboxMode, CodecallRuntime>();

beforeAll(async () => {
  for (const mode of ['in-process', 'process'] as const) {
    const config = parseConfig(
      { sandbox: { mode, workers: 1 } },
      { file: join(dir, 'codecall.json'), env: {} },
    );
    runtimes.set(
      mode,
      await CodecallRuntime.open({
        config,
        history: false,
        tools: {
          transports: {
            expenses: inMemoryTransport(() => createExpenseServer()),
            local: localTools([stuck]),
          },
        },
      }),
    );
  }
}, 120_000);

afterAll(async () => {
  for (const runtime of runtimes.values()) await runtime.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(['in-process', 'process'] as const)('pages() (%s)', (mode) => {
  it('follows nextOffset through every page of get_expenses', async () => {
    const result = await runtimes.get(mode)!.execute(`
      let pages = 0, items = 0, total = 0;
      for await (const page of tools.expenses.get_expenses.pages({ quarter: 'Q3', limit: 7 })) {
        pages++; items += page.items.length; total = page.total;
      }
      console.log(pages, items, total);
    `);
    expect(result.status, JSON.stringify(result.error)).toBe('ok');
    const [pages, items, total] = result.stdout.trim().split(' ').map(Number);
    expect(total).toBeGreaterThan(7);
    expect(items).toBe(total);
    expect(pages).toBe(Math.ceil(total! / 7));
    expect(result.toolCalls.filter((c) => c.tool === 'expenses.get_expenses')).toHaveLength(pages!);
  });

  it('stops with an error when the server repeats its cursor', async () => {
    const result = await runtimes.get(mode)!.execute(`
      let n = 0;
      try { for await (const page of tools.local.stuck.pages()) n++; } catch (e) { console.log(n, e.message); }
    `);
    expect(result.stdout).toMatch(/^2 .*returned the same next cursor twice/);
  });
});

it('the declarations offer pages() for a tool with an offset parameter, and only there', () => {
  const declarations = runtimes.get('in-process')!.declarations();
  const paged = /Paged: `for await \(const page of tools\.([\w.]+)\.pages\(args\)\)`/g;
  // get_expenses has an offset parameter, stuck a cursor; get_team_members and the rest have neither.
  expect([...declarations.matchAll(paged)].map((match) => match[1])).toEqual([
    'expenses.get_expenses',
    'local.stuck',
  ]);
});
