/**
 * Host-stall classes through the library API (`CodecallRuntime`) against a hostile MCP server
 * with thousands of tools (in-memory transport, real SDK client, real sandbox): regex searches
 * that backtrack exponentially on V8, `$ref` DAGs in the declarations of search hits, and
 * scripts that flood unknown tool names. The host's event loop stays responsive throughout.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { isCodecallError } from '../../../src/errors.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { createHostileServer, type HostileTool } from '../../../src/testing/servers/hostile-server.js';
import { inMemoryTransport } from '../../../src/testing/servers/in-memory.js';
import { DEFAULT_MAX_SUGGESTION_LOOKUPS_PER_RUN } from '../../../src/config/defaults.js';
import { MAX_STALL_MS, withLoopDelay, withLoopWatchdog } from './loop-delay.js';

const TOOL_COUNT = 5_000;

/** Properties that `$ref` each other as a DAG: each level names the one below twice (2^40 paths). */
function refDag(levels: number): Record<string, unknown> {
  const properties: Record<string, unknown> = { p0: { type: 'string' } };
  for (let i = 1; i <= levels; i++) {
    properties[`p${i}`] = {
      type: 'object',
      properties: { left: { $ref: `#/properties/p${i - 1}` }, right: { $ref: `#/properties/p${i - 1}` } },
    };
  }
  return { type: 'object', properties };
}

function catalog(): HostileTool[] {
  const tools: HostileTool[] = [
    // Descriptions a backtracking `(a|aa)+$` explores exponentially.
    { name: 'aaaa', description: `${'a'.repeat(1_990)}!` },
    { name: 'dag_report', description: 'Renders the quarterly dag report.', inputSchema: refDag(40) },
  ];
  for (let i = tools.length; i < TOOL_COUNT; i++) {
    tools.push({
      name: `tool_${i}_${['list', 'get', 'update', 'delete'][i % 4]}_record`,
      description: `Tool ${i}.`,
    });
  }
  return tools;
}

let dir: string;
let runtime: CodecallRuntime;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'codecall-host-stalls-'));
  const hostile = createHostileServer({ tools: catalog() });
  const config = parseConfig(
    { mcpServers: {}, sandbox: { workers: 1 } },
    { file: join(dir, 'codecall.json'), env: {} },
  );
  runtime = await CodecallRuntime.open({
    config,
    history: false,
    tools: { transports: { hostile: inMemoryTransport(hostile.create) }, requireAll: true },
  });
  expect(runtime.tools.catalog()).toHaveLength(TOOL_COUNT);
  // Warm the sandbox and the compiler, whose first start is not what these tests measure.
  expect((await runtime.execute('console.log(1)')).status).toBe('ok');
}, 60_000);

afterAll(async () => {
  await runtime?.close();
  rmSync(dir, { recursive: true, force: true });
});

function searchError(query: string): string | undefined {
  try {
    runtime.searchTools(query, { regex: true });
  } catch (error) {
    if (isCodecallError(error)) return `${error.code}: ${error.message}`;
    throw error;
  }
  return undefined;
}

describe('host stalls through the library API', () => {
  it('regex searches that backtrack exponentially on V8 run in linear time', async () => {
    const { value, maxStallMs } = await withLoopDelay(async () => ({
      alternation: runtime.searchTools('(a|aa)+$', { regex: true }),
      nested: runtime.searchTools('^(a+)+$', { regex: true }),
      bigBound: searchError('(a|aa){1,99999}$'),
      lookbehind: searchError('(?<=get_)record'),
    }));
    expect(maxStallMs).toBeLessThan(MAX_STALL_MS);
    expect(value.alternation.hits.map((h) => h.name)).toEqual(['hostile.aaaa']);
    expect(value.alternation.truncated).toBe(false);
    expect(value.nested.hits).toEqual([]);
    expect(value.bigBound).toMatch(/^SEARCH_INVALID_QUERY: .*invalid repeat count/);
    expect(value.lookbehind).toMatch(/^SEARCH_INVALID_QUERY: .*lookbehind \(\?<= is not supported/);
  });

  it('a search hit whose schema is a 2^40-path $ref DAG renders by alias, quickly', async () => {
    const { value, maxStallMs } = await withLoopDelay(async () => runtime.searchTools('dag report'));
    expect(maxStallMs).toBeLessThan(MAX_STALL_MS);
    expect(value.hits[0]?.name).toBe('hostile.dag_report');
    expect(value.declarations).toContain('type p39 = {');
    expect(value.declarations.length).toBeLessThan(50_000);
  });

  it('unknown tool names count against maxToolCalls and get cheap suggestions; the loop stays responsive', async () => {
    const script = `
      const names = [];
      for (let i = 0; i < 300; i++) names.push('hostile.tool_' + (100 + 4 * (i % 50)) + '_lst_record');
      const settled = await Promise.allSettled(names.map((n) => callTool(n, {})));
      const messages = settled.map((s) => s.reason?.message ?? 'ok');
      console.log(messages[0]);
      console.log(messages.filter((m) => m.startsWith('Unknown tool')).length, messages.filter((m) => m.startsWith('Tool call limit')).length);
    `;
    const { value, maxStallMs } = await withLoopDelay(() =>
      runtime.execute(script, { limits: { maxToolCalls: 200 } }),
    );
    expect(maxStallMs).toBeLessThan(MAX_STALL_MS);
    expect(value.status, JSON.stringify(value.error)).toBe('ok');
    const [first, counts] = value.stdout.trim().split('\n');
    expect(first).toMatch(
      /^Unknown tool "hostile\.tool_100_lst_record"\. Did you mean: tools\.hostile\.tool_100_list_record, tools\.hostile\.\w+, tools\.hostile\.\w+\?$/,
    );
    expect(counts).toBe('200 100');
  });

  it('a run gets "did you mean" for at most DEFAULT_MAX_SUGGESTION_LOOKUPS_PER_RUN distinct unknown names', async () => {
    const script = `
      const names = [];
      for (let i = 0; i < 12; i++) names.push('hostile.tool_' + (3000 + 4 * i) + '_gte_record');
      names.push(names[0]);
      const settled = await Promise.allSettled(names.map((n) => callTool(n, {})));
      for (const s of settled) console.log(s.reason?.message);
    `;
    const result = await runtime.execute(script);
    expect(result.status, JSON.stringify(result.error)).toBe('ok');
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(13);
    const suggested = lines.filter((line) => line.includes('Did you mean: tools.hostile.'));
    const capped = lines.filter((line) =>
      line.endsWith(`this script already called ${DEFAULT_MAX_SUGGESTION_LOOKUPS_PER_RUN} unknown names.`),
    );
    // The first names get suggestions, the rest a short refusal; a name asked again is remembered.
    expect(suggested).toHaveLength(DEFAULT_MAX_SUGGESTION_LOOKUPS_PER_RUN + 1);
    expect(capped).toHaveLength(12 - DEFAULT_MAX_SUGGESTION_LOOKUPS_PER_RUN);
    expect(lines[0]).toMatch(
      /^Unknown tool "hostile\.tool_3000_gte_record"\. Did you mean: tools\.hostile\.tool_300\d_get_record/,
    );
    expect(lines[12]).toBe(lines[0]);
  });

  it('findTools runs regex searches on the search worker: the event loop is not the one that scans', async () => {
    const query = '(a|aa)+$';
    await withLoopWatchdog(async () => {
      const onWorker = await runtime.findTools(query, { regex: true });
      expect(runtime.searchOnWorker).toBe(true);
      // The same hits as in-process. Not the same `truncated`: the regex search stops at a wall-clock
      // budget, which the worker's first (cold) scan can pass on a loaded machine (CI at load 4 did).
      expect(onWorker.hits).toEqual(runtime.searchTools(query, { regex: true }).hits);
      expect(onWorker.hits.map((hit) => hit.name)).toEqual(['hostile.aaaa']);
      // 50 searches (each scans the whole catalog, the 1,990-character description included) while
      // this thread counts turns of its event loop. A scan on this thread would run inside the
      // call, before any turn; on the worker, the loop turns while it waits. A count of turns,
      // not a duration: it holds however busy the machine is.
      let turns = 0;
      let counting = true;
      const count = (): void => {
        turns++;
        if (counting) setImmediate(count);
      };
      setImmediate(count);
      const searches = Array.from({ length: 50 }, () => runtime.findTools(query, { regex: true }));
      const turnsWhenCalled = turns;
      const results = await Promise.all(searches);
      const turnsWhenAnswered = turns;
      counting = false;
      expect(turnsWhenCalled).toBe(0);
      expect(results.every((result) => result.hits[0]?.name === 'hostile.aaaa')).toBe(true);
      expect(turnsWhenAnswered).toBeGreaterThan(0);
    });
  });
});
