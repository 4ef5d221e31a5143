/**
 * `ToolPool.serverStatus()` is asked on every `search_tools` and `execute_code` answer of
 * `codecall serve` (the note on servers not connected): its cost must not grow with the catalog.
 * The warnings about configured tools that match no tool are worked out once per tool list.
 * Real MCP servers (the hostile test server) over the SDK's in-memory transport.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { createHostileServer, type HostileTool } from '../../../src/testing/servers/hostile-server.js';
import { inMemoryTransport } from '../../../src/testing/servers/in-memory.js';
import { ToolPool } from '../../../src/tools/index.js';
import { processCpuMs } from '../../fixtures/thread-cpu.js';

function listing(count: number): HostileTool[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `record_${i}`,
    description: `Reads record ${i}.`,
    inputSchema: { type: 'object', properties: { id: { type: 'number' } } },
  }));
}

async function openPool(count: number): Promise<ToolPool> {
  const config = parseConfig(
    {
      mcpServers: {
        // record_1x matches no tool: a warning with a suggestion.
        records: { url: 'http://127.0.0.1:9/mcp', tools: { record_1x: { allowedCallers: ['direct'] } } },
      },
    },
    { file: join(tmpdir(), 'codecall-server-status', 'codecall.json'), env: {} },
  );
  const server = createHostileServer({ name: 'records', tools: listing(count) });
  return ToolPool.open(config, {
    transports: { records: inMemoryTransport(server.create) },
    requireAll: true,
  });
}

/** CPU ms of this process for `rounds` `serverStatus()` calls. */
function statusCpuMs(pool: ToolPool, rounds: number): number {
  const started = processCpuMs();
  for (let i = 0; i < rounds; i++) pool.serverStatus();
  return processCpuMs() - started;
}

/**
 * The least CPU ms each pool took for `rounds` calls over {@link BATCHES} batches, the two pools
 * taking turns: CPU time, which other processes on the cores do not inflate, and the least of
 * many, so a collection by V8's helper threads landing in some batches does not count.
 */
function leastStatusCpuMs(pools: ToolPool[], rounds: number): number[] {
  const least = pools.map(() => Number.POSITIVE_INFINITY);
  for (let batch = 0; batch < BATCHES; batch++) {
    pools.forEach((pool, index) => (least[index] = Math.min(least[index]!, statusCpuMs(pool, rounds))));
  }
  return least;
}
const BATCHES = 15;

describe('ToolPool.serverStatus', () => {
  let small: ToolPool;
  let large: ToolPool;
  beforeAll(async () => {
    [small, large] = await Promise.all([openPool(5), openPool(5_000)]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([small?.close(), large?.close()]);
  });

  it('warns about a configured tool that matches none, the same on every call', () => {
    const first = large.serverStatus()[0]!;
    expect(first.state).toBe('connected');
    expect(first.toolCount).toBe(5_000);
    expect(first.warnings).toEqual([
      'mcpServers.records.tools.record_1x matches no tool of this server (did you mean "record_1"?)',
    ]);
    expect(large.serverStatus()[0]!.warnings).toEqual(first.warnings);
    // Each call gets its own list: a caller changing it changes nothing for the next.
    first.warnings.push('changed by a caller');
    expect(large.serverStatus()[0]!.warnings).toHaveLength(1);
  });

  it('costs the same against 5,000 tools as against 5', () => {
    statusCpuMs(small, 50);
    statusCpuMs(large, 50);
    const [largeMs, smallMs] = leastStatusCpuMs([large, small], 2_000);
    const ratio = largeMs! / smallMs!;
    // Worked out per call, the 5,000-tool status costs hundreds of times the 5-tool one.
    expect(ratio).toBeLessThan(5);
  });
});
