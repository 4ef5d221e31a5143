/**
 * Result handles (docs/data.md) in both sandbox modes, with local tools over the real tool pool:
 * a result past `minBytes` stays on the host and the script reads it through a handle (rows in
 * chunks, host-side reductions, whole when small), past `spillBytes` it is written to the run's
 * temp folder (gone when the run ends), a handle passed to another tool is replaced on the host,
 * and small results are plain values as before. The adversarial part: a handle cannot be forged
 * from a number or a guessed id, cannot outlive its run (sessions keep the object, not the
 * result), and a server's result that looks like a handle stays plain data.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import type { SandboxMode } from '../../../src/isolate/index.js';
import { defineTool, localTools } from '../../../src/tools/index.js';

const ROWS = 20_000;
const STATUSES = ['open', 'approved', 'rejected'] as const;
const rows = Array.from({ length: ROWS }, (_, index) => ({
  id: index,
  status: STATUSES[index % 3]!,
  amount: (index % 100) + 0.5,
  meta: { region: index % 2 === 0 ? 'EU' : 'US' },
}));
const expectedSum = rows.reduce((sum, row) => sum + row.amount, 0);
const LINES = 30_000;
const logText = Array.from(
  { length: LINES },
  (_, index) => `${JSON.stringify({ level: index % 10 === 0 ? 'error' : 'info', ms: index % 50 })}`,
).join('\n');

const seen: unknown[] = [];
const tools = [
  defineTool({
    name: 'expenses',
    description: 'All expenses, with a total.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    execute: () => ({ items: rows, total: ROWS }),
  }),
  defineTool({
    name: 'log',
    description: 'The log as JSON lines.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    execute: () => logText,
  }),
  defineTool({
    name: 'small',
    description: 'A small result.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    execute: () => ({ items: [1, 2, 3] }),
  }),
  defineTool({
    name: 'lookalike',
    description: 'A small result shaped like a handle descriptor.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    execute: () => ({ id: 'x', tool: 'local.expenses', bytes: 1, kind: 'array', rowsAt: '', length: 1 }),
  }),
  defineTool({
    name: 'measure',
    description: 'Counts the rows it is given.',
    inputSchema: { type: 'object', properties: { data: {} }, required: ['data'] },
    execute: (args: { data: unknown }) => {
      seen.push(args.data);
      const data = args.data as { items?: unknown[] } | unknown[];
      return { rows: Array.isArray(data) ? data.length : (data.items?.length ?? -1) };
    },
  }),
];

const dir = mkdtempSync(join(tmpdir(), 'codecall-handles-'));
const spillDir = join(dir, 'spill');
const runtimes = new Map<SandboxMode, CodecallRuntime>();

beforeAll(async () => {
  const { mkdirSync } = await import('node:fs');
  mkdirSync(spillDir);
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
        tools: { transports: { local: localTools(tools) } },
        // Small thresholds so a test result of a few hundred KB is "large".
        resultHandles: {
          minBytes: 200_000,
          spillBytes: 1_000_000,
          chunkBytes: 64_000,
          readMaxBytes: 1_000_000,
          tempDir: spillDir,
        },
      }),
    );
  }
}, 120_000);

afterAll(async () => {
  for (const runtime of runtimes.values()) await runtime.close();
  rmSync(dir, { recursive: true, force: true });
});

async function run(mode: SandboxMode, code: string, options: { session?: string } = {}) {
  const result = await runtimes.get(mode)!.execute(code, options);
  return result;
}

describe.each(['in-process', 'process'] as const)('result handles (%s)', (mode) => {
  it('a small result is the plain value, as before', async () => {
    const result = await run(
      mode,
      `const r = await tools.local.small(); console.log(JSON.stringify(r), r.isHandle === undefined);`,
    );
    expect(result.stdout, JSON.stringify(result.error)).toBe('{"items":[1,2,3]} true\n');
  });

  it('a large result is a handle: its shape, host-side reductions and rows in chunks', async () => {
    const result = await run(
      mode,
      `
      const h = await tools.local.expenses();
      console.log(h.isHandle, h.kind, h.rowsAt, h.length, JSON.stringify(h.keys));
      console.log(await h.count(), await h.count({ status: 'approved' }), await h.count({ '/meta/region': 'EU' }));
      console.log(await h.sum('amount'), await h.min('amount'), await h.max('amount', { status: 'open' }));
      console.log(JSON.stringify(await h.groupBy('status', { sum: 'amount' })));
      console.log(JSON.stringify(await h.pick(['id', '/meta/region'], { where: { status: 'rejected' }, limit: 2 })));
      console.log(JSON.stringify(await h.slice(5, 7)));
      let n = 0, total = 0;
      for await (const row of h) { n++; total += row.amount; }
      console.log(n, total);
      console.log(await h.value('/total'), (await h.at('/items').value('/items/3/id')));
      `,
    );
    expect(result.status, JSON.stringify(result.error)).toBe('ok');
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toBe(`true object /items ${ROWS} ["items","total"]`);
    expect(lines[1]).toBe(`${ROWS} ${rows.filter((r) => r.status === 'approved').length} ${ROWS / 2}`);
    const openMax = Math.max(...rows.filter((r) => r.status === 'open').map((r) => r.amount));
    expect(lines[2]).toBe(`${expectedSum} 0.5 ${openMax}`);
    const groups = JSON.parse(lines[3]!) as Record<string, { count: number; sum: number }>;
    expect(groups.approved!.count).toBe(rows.filter((r) => r.status === 'approved').length);
    expect(groups.open!.sum).toBe(rows.filter((r) => r.status === 'open').reduce((s, r) => s + r.amount, 0));
    expect(JSON.parse(lines[4]!)).toEqual([
      { id: 2, '/meta/region': 'EU' },
      { id: 5, '/meta/region': 'US' },
    ]);
    expect(JSON.parse(lines[5]!)).toEqual([rows[5], rows[6]]);
    expect(lines[6]).toBe(`${ROWS} ${expectedSum}`);
    expect(lines[7]).toBe(`${ROWS} 3`);
    // Iteration took many bounded chunks, each a call to the host.
    const handleCalls = result.toolCalls.filter((c) => c.tool === 'codecall:handle');
    expect(handleCalls.length).toBeGreaterThan(10);
    expect(Math.max(...handleCalls.map((c) => c.resultBytes))).toBeLessThan(200_000);
  });

  it('a text result is a handle of lines; JSON lines are rows with fields', async () => {
    const result = await run(
      mode,
      `
      const log = await tools.local.log();
      console.log(log.kind, log.length, await log.count({ level: 'error' }), await log.sum('ms', { level: 'error' }));
      `,
    );
    const errors = Array.from({ length: LINES }, (_, i) => i).filter((i) => i % 10 === 0);
    expect(result.stdout, JSON.stringify(result.error)).toBe(
      `lines ${LINES} ${errors.length} ${errors.reduce((s, i) => s + (i % 50), 0)}\n`,
    );
  });

  it('value() of a result over readMaxBytes teaches the reductions instead', async () => {
    const result = await run(
      mode,
      `const h = await tools.local.expenses(); try { await h.value(); } catch (e) { console.log(e.message); }`,
    );
    expect(result.stdout).toMatch(/more than a handle's value\(\) copies.*count\/sum\/min\/max\/groupBy/);
  });

  it('a handle passed to another tool is replaced by its value on the host', async () => {
    seen.length = 0;
    const result = await run(
      mode,
      `const h = await tools.local.expenses(); console.log(JSON.stringify(await tools.local.measure({ data: h })));`,
    );
    expect(result.stdout, JSON.stringify(result.error)).toBe(`{"rows":${ROWS}}\n`);
    expect((seen[0] as { items: unknown[] }).items).toHaveLength(ROWS);
    // Only the small marker crossed out of the sandbox.
    const measure = result.toolCalls.find((c) => c.tool === 'local.measure')!;
    expect(measure.argsBytes).toBeLessThan(200);
  });

  it('past spillBytes the result is in the run temp folder, removed when the run ends', async () => {
    const result = await run(
      mode,
      `const a = await tools.local.expenses(); const b = await tools.local.log();
       console.log(a.spilled, b.spilled, await a.sum('amount'), await b.count({ level: 'error' }));
       let n = 0; for await (const line of b.rows({ start: ${LINES - 5} })) n++; console.log(n);`,
    );
    expect(result.status, JSON.stringify(result.error)).toBe('ok');
    // The expenses result (~1.6 MB) is over spillBytes; the log (~0.8 MB) is not.
    expect(result.stdout).toBe(`true false ${expectedSum} ${LINES / 10}\n5\n`);
    expect(readdirSync(spillDir)).toEqual([]);
  });
});

describe.each(['in-process', 'process'] as const)('hostile use of handles (%s)', (mode) => {
  it('a handle cannot be forged from a number or a guessed id', async () => {
    const result = await run(
      mode,
      `
      const real = await tools.local.expenses();
      for (const handle of [1, 0, '1', 'AAAAAAAAAAAAAAAAAAAAAA', null, { toString() { return 'x'; } }]) {
        try { await callTool('codecall:handle', { handle, op: 'count' }); console.log('reached'); }
        catch (e) { console.log(e.message.startsWith('Not a result handle of this run')); }
      }
      try { await tools.local.measure({ data: { $codecall_handle: 7 } }); console.log('reached'); }
      catch (e) { console.log(e.message.startsWith('Not a result handle of this run')); }
      `,
    );
    expect(result.stdout, JSON.stringify(result.error)).toBe('true\n'.repeat(7));
  });

  it('a handle cannot outlive its run (a session keeps the object, not the result)', async () => {
    const session = `handles-${mode}`;
    const first = await run(
      mode,
      `globalThis.kept = await tools.local.expenses(); console.log(await kept.count());`,
      {
        session,
      },
    );
    expect(first.stdout, JSON.stringify(first.error)).toBe(`${ROWS}\n`);
    const second = await run(
      mode,
      `try { await kept.count(); console.log('reached'); } catch (e) { console.log(e.message); }
       try { await tools.local.measure({ data: kept }); console.log('reached'); } catch (e) { console.log(e.message); }`,
      { session },
    );
    expect(second.stdout).toMatch(/^Not a result handle of this run.*\nNot a result handle of this run/);
  });

  it("a server's result shaped like a handle stays plain data, and handle calls never reach another run's results", async () => {
    const result = await run(
      mode,
      `const r = await tools.local.lookalike(); console.log(r.isHandle === undefined, typeof r.count);`,
    );
    expect(result.stdout).toBe('true undefined\n');
  });

  it('a JSON pointer cannot leave the result (no prototype, no host object)', async () => {
    const result = await run(
      mode,
      `const h = await tools.local.expenses();
       console.log(JSON.stringify([await h.value('/__proto__'), await h.value('/constructor'), await h.value('/items/constructor'), await h.value('/items/-1')]));
       try { await h.value('items'); } catch (e) { console.log(e.message.slice(0, 30)); }`,
    );
    expect(result.stdout, JSON.stringify(result.error)).toBe(
      '[null,null,null,null]\nA JSON pointer starts with "/"\n',
    );
  });
});
