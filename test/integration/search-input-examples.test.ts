/**
 * @module
 * A configuration's `tools.<name>.inputExamples` reach search through the runtime: the values of
 * the examples find the tool (the BM25F field `examples`), over an in-memory MCP server, in
 * process and on the search worker, and a tool whose schema carries JSON Schema `examples` (what
 * an upstream MCP server can send) is found by them too.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { CodecallRuntime } from '../../src/execute/index.js';
import { createHostileServer } from '../../src/testing/servers/hostile-server.js';
import { inMemoryTransport } from '../../src/testing/servers/in-memory.js';
import { tempDir } from '../fixtures/temp-dir.js';

async function openRuntime(searchWorker: boolean): Promise<CodecallRuntime> {
  const server = createHostileServer({
    tools: [
      { name: 'lookup', description: 'Find a place.' },
      { name: 'route', description: 'Route between two places.' },
      {
        name: 'convert',
        description: 'Convert an amount.',
        inputSchema: {
          type: 'object',
          properties: { from: { type: 'string', examples: ['EUR', 'USD'] } },
        },
      },
    ],
  });
  return CodecallRuntime.open({
    config: parseConfig(
      {
        mcpServers: {
          geo: {
            command: 'unused',
            tools: { lookup: { inputExamples: [{ q: 'Reykjavik harbour' }] } },
          },
        },
      },
      { file: join(tempDir('codecall-examples-'), 'codecall.json'), env: {} },
    ),
    history: false,
    tools: { transports: { geo: inMemoryTransport(server.create) }, requireAll: true },
    searchWorker,
  });
}

describe('inputExamples in the runtime search', () => {
  it.each([false, true])(
    'finds a tool by its configured and schema examples (search worker: %s)',
    async (worker) => {
      const runtime = await openRuntime(worker);
      try {
        expect(runtime.searchTools('reykjavik').hits.map((hit) => hit.name)).toEqual(['geo.lookup']);
        const found = await runtime.findTools('reykjavik');
        expect(runtime.searchOnWorker).toBe(worker);
        expect(found.hits.map((hit) => hit.name)).toEqual(['geo.lookup']);
        expect(found.hits[0]!.reasons[0]).toBe("matches 'reykjavik' in input examples");
        expect((await runtime.findTools('usd')).hits.map((hit) => hit.name)).toEqual(['geo.convert']);
      } finally {
        await runtime.close();
      }
    },
  );
});
