/**
 * Hostile input schemas from a real MCP server (in-memory transport, real SDK client, real
 * pool): catastrophic `pattern`s against script-chosen strings, patterns RE2 cannot run,
 * schemas that refer to themselves, and a server that churns its tool list. The host's event
 * loop must stay responsive and the validator cache bounded.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isCodecallError } from '../../../src/errors.js';
import { createHostileServer, type HostileTool } from '../../../src/testing/servers/hostile-server.js';
import { inMemoryTransport } from '../../../src/testing/servers/in-memory.js';
import { ToolPool } from '../../../src/tools/tool-pool.js';
import { MAX_STALL_MS, withLoopDelay } from './loop-delay.js';

const SLUG: HostileTool = {
  name: 'slug',
  inputSchema: {
    type: 'object',
    properties: { s: { type: 'string', pattern: '^(\\w+\\s?)*$' } },
    required: ['s'],
  },
};
const KEYS: HostileTool = {
  name: 'keys',
  inputSchema: { type: 'object', patternProperties: { '^(a|aa)+$': { type: 'number' } } },
};
const LOOKAHEAD: HostileTool = {
  name: 'lookahead',
  inputSchema: {
    type: 'object',
    properties: { p: { type: 'string', pattern: '^(?=.*\\d)[a-z\\d]+$' }, n: { type: 'number' } },
  },
};
const SELF_REF: HostileTool = { name: 'self_ref', inputSchema: { $ref: '#' } };
const ALLOF_CYCLE: HostileTool = {
  name: 'allof_cycle',
  inputSchema: {
    type: 'object',
    definitions: { a: { allOf: [{ $ref: '#/definitions/b' }] }, b: { anyOf: [{ $ref: '#/definitions/a' }] } },
    properties: { x: { $ref: '#/definitions/a' } },
  },
};
const TREE: HostileTool = {
  name: 'tree',
  inputSchema: {
    type: 'object',
    properties: { children: { type: 'array', items: { $ref: '#' } }, name: { type: 'string' } },
  },
};

let pool: ToolPool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

async function openPool(tools: HostileTool[], validatorCacheMaxEntries?: number) {
  const hostile = createHostileServer({ tools });
  pool = await ToolPool.open(
    {},
    {
      transports: { hostile: inMemoryTransport(hostile.create) },
      requireAll: true,
      ...(validatorCacheMaxEntries === undefined ? {} : { validatorCacheMaxEntries }),
    },
  );
  return { pool, control: hostile.control };
}

async function outcome(
  promise: Promise<unknown>,
): Promise<{ ok: true } | { ok: false; code: string; message: string }> {
  try {
    await promise;
    return { ok: true };
  } catch (error) {
    if (!isCodecallError(error)) throw error;
    return { ok: false, code: error.code, message: error.message };
  }
}

describe('hostile input schemas', () => {
  it('a catastrophic pattern against a crafted string is checked in linear time; the loop stays responsive', async () => {
    const { pool, control } = await openPool([SLUG, KEYS]);
    const { value, maxStallMs } = await withLoopDelay(async () => {
      const results = [];
      // On a backtracking engine the first takes 2^30 steps; the second 1 MiB of input.
      results.push(
        await outcome(pool.call('hostile.slug', { s: `${'a'.repeat(30)}!` }, { caller: 'direct' })),
      );
      results.push(
        await outcome(pool.call('hostile.slug', { s: `${'ab '.repeat(349_000)}!` }, { caller: 'direct' })),
      );
      results.push(
        await outcome(pool.call('hostile.keys', { [`${'a'.repeat(40)}b`]: 1 }, { caller: 'direct' })),
      );
      results.push(await outcome(pool.call('hostile.slug', { s: 'two words' }, { caller: 'direct' })));
      return results;
    });
    expect(maxStallMs).toBeLessThan(MAX_STALL_MS);
    expect(value[0]).toMatchObject({ ok: false, code: 'TOOL_INPUT_INVALID' });
    expect((value[0] as { message: string }).message).toContain('"s" must match pattern');
    expect(value[1]).toMatchObject({ ok: false, code: 'TOOL_INPUT_INVALID' });
    // The key does not match (after 2^40 steps on a backtracking engine), so nothing applies.
    expect(value[2]).toEqual({ ok: true });
    expect(value[3]).toEqual({ ok: true });
    expect(control.calls).toEqual(['keys', 'slug']);
  });

  it('a pattern RE2 cannot run is skipped with a warning naming it; the rest of the schema still applies', async () => {
    const { pool, control } = await openPool([LOOKAHEAD]);
    expect(await outcome(pool.call('hostile.lookahead', { p: 'abc' }, { caller: 'direct' }))).toEqual({
      ok: true,
    });
    const refused = await outcome(pool.call('hostile.lookahead', { p: 'abc', n: 'x' }, { caller: 'direct' }));
    expect(refused).toMatchObject({ ok: false, code: 'TOOL_INPUT_INVALID' });
    expect((refused as { message: string }).message).toContain('"n" must be number');
    expect(control.calls).toEqual(['lookahead']);
    const warnings = pool.serverStatus()[0]!.warnings.join('\n');
    expect(warnings).toContain(
      'hostile.lookahead: input schema: pattern "^(?=.*\\\\d)[a-z\\\\d]+$" is not checked',
    );
    expect(warnings).toContain('lookahead (?= is not supported');
  });

  it('schemas that refer to themselves without descending are not validated on the host, with the reason; real recursion works', async () => {
    const { pool, control } = await openPool([SELF_REF, ALLOF_CYCLE, TREE]);
    const { value, maxStallMs } = await withLoopDelay(async () => [
      await outcome(pool.call('hostile.self_ref', { a: 1 }, { caller: 'direct' })),
      await outcome(pool.call('hostile.allof_cycle', { x: 1 }, { caller: 'direct' })),
      await outcome(
        pool.call(
          'hostile.tree',
          { name: 'r', children: [{ name: 'c', children: [] }] },
          { caller: 'direct' },
        ),
      ),
      await outcome(pool.call('hostile.tree', { children: [{ name: 5 }] }, { caller: 'direct' })),
    ]);
    expect(maxStallMs).toBeLessThan(MAX_STALL_MS);
    expect(value.slice(0, 3)).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
    expect(value[3]).toMatchObject({ ok: false, code: 'TOOL_INPUT_INVALID' });
    expect((value[3] as { message: string }).message).toContain('"children[0].name" must be string');
    expect(control.calls).toEqual(['self_ref', 'allof_cycle', 'tree']);
    const warnings = pool.serverStatus()[0]!.warnings.join('\n');
    expect(warnings).toContain(
      'hostile.self_ref: input schema: the schema refers to itself without descending into the arguments (# → #)',
    );
    expect(warnings).toContain('#/definitions/a → #/definitions/b → #/definitions/a');
  });

  it('arguments nested too deeply for a recursive schema are refused with a clear message', async () => {
    const { pool } = await openPool([TREE]);
    let deep: Record<string, unknown> = { name: 'leaf' };
    for (let i = 0; i < 20_000; i++) deep = { children: [deep] };
    const result = await outcome(pool.call('hostile.tree', deep, { caller: 'direct' }));
    expect(result).toMatchObject({ ok: false, code: 'TOOL_INPUT_INVALID' });
    expect((result as { message: string }).message).toContain('arguments nest too deeply to validate');
  });

  it('validators are dropped with the tool list on list_changed and bounded per server', async () => {
    const tools = (round: number): HostileTool[] =>
      Array.from({ length: 5 }, (_, i) => ({
        name: `t${i}`,
        inputSchema: {
          type: 'object',
          properties: { v: { type: 'string', pattern: `^r${round}_[a-z]+$` } },
        },
      }));
    const { pool, control } = await openPool(tools(0), 3);
    for (let i = 0; i < 5; i++) await pool.call(`hostile.t${i}`, { v: 'r0_x' }, { caller: 'direct' });
    expect(pool.validatorCount('hostile')).toBe(3);
    for (let round = 1; round <= 20; round++) {
      const changed = new Promise<void>((resolve) => {
        const off = pool.onCatalogChange(() => {
          off();
          resolve();
        });
      });
      await control.setTools(tools(round));
      await changed;
      expect(pool.validatorCount('hostile')).toBe(0);
      await pool.call('hostile.t0', { v: `r${round}_x` }, { caller: 'direct' });
      // The new schema applies: last round's value no longer matches.
      expect(
        await outcome(pool.call('hostile.t0', { v: `r${round - 1}_x` }, { caller: 'direct' })),
      ).toMatchObject({
        ok: false,
        code: 'TOOL_INPUT_INVALID',
      });
      expect(pool.validatorCount('hostile')).toBe(1);
    }
  });
});
