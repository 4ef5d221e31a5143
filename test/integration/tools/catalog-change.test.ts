/**
 * A catalog change is diffed once, in the pool, and the diff is shared by its consumers: a
 * server that re-lists its tools keeps the objects of tools whose listing did not change, other
 * servers keep theirs, and every listener gets the same change. The search index follows the
 * change. Real MCP servers over the SDK's in-memory transport.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { parseConfig } from '../../../src/config/index.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { createCodecallServer } from '../../../src/server/index.js';
import { createExpenseServer } from '../../../src/testing/servers/index.js';
import { createHostileServer, type HostileTool } from '../../../src/testing/servers/hostile-server.js';
import { inMemoryTransport } from '../../../src/testing/servers/in-memory.js';
import type { CatalogChange, CatalogTool } from '../../../src/tools/index.js';

function listing(count: number): HostileTool[] {
  const tools: HostileTool[] = [];
  for (let i = 0; i < count; i++) {
    tools.push({
      name: `record_${i}`,
      description: `Reads record ${i}.`,
      inputSchema: { type: 'object', properties: { id: { type: 'number' } } },
    });
  }
  return tools;
}

describe('catalog changes', () => {
  let dir: string;
  let runtime: CodecallRuntime;
  const hostile = createHostileServer({ name: 'records', tools: listing(50) });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'codecall-catalog-change-'));
    const config = parseConfig(
      {
        // Passed through by the gateway (deferLoading false); reached over the in-memory transport.
        mcpServers: { records: { url: 'http://127.0.0.1:9/mcp', deferLoading: false } },
        sandbox: { mode: 'in-process' },
      },
      { file: join(dir, 'codecall.json'), env: {} },
    );
    runtime = await CodecallRuntime.open({
      config,
      history: false,
      searchWorker: false,
      tools: {
        transports: {
          records: inMemoryTransport(hostile.create),
          expenses: inMemoryTransport(() => createExpenseServer()),
        },
        requireAll: true,
      },
    });
  });

  afterAll(async () => {
    await runtime?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  let current = listing(50);

  /** Replaces the records server's list and waits for the pool's next change. */
  async function relist(
    tools: HostileTool[],
  ): Promise<{ catalog: readonly CatalogTool[]; changes: CatalogChange[] }> {
    const changes: CatalogChange[] = [];
    let resolve!: (catalog: readonly CatalogTool[]) => void;
    const changed = new Promise<readonly CatalogTool[]>((r) => (resolve = r));
    const stopFirst = runtime.tools.onCatalogChange((_catalog, change) => changes.push(change));
    const stopSecond = runtime.tools.onCatalogChange((catalog, change) => {
      changes.push(change);
      resolve(catalog);
    });
    try {
      current = tools;
      await hostile.control.setTools(tools);
      return { catalog: await changed, changes };
    } finally {
      stopFirst();
      stopSecond();
    }
  }

  it('re-listing an unchanged list keeps every tool object and reports no change', async () => {
    const before = runtime.tools.catalog();
    const { catalog, changes } = await relist(listing(50));
    expect(catalog).toHaveLength(before.length);
    expect(catalog.every((tool, index) => tool === before[index])).toBe(true);
    expect(changes[0]).toEqual({ added: [], removed: [], changed: [] });
  });

  it('hands every listener the same diff: only the added, removed and edited tools', async () => {
    const before = new Map(runtime.tools.catalog().map((tool) => [tool.name, tool]));
    const next = listing(50).filter((tool) => tool.name !== 'record_7');
    next[3] = { ...next[3]!, description: 'Reads record 3 and its history.' };
    next.push({ name: 'archive_records', description: 'Moves old records to the archive.' });
    const { catalog, changes } = await relist(next);
    expect(changes).toHaveLength(2);
    expect(changes[1]).toBe(changes[0]);
    const change = changes[0]!;
    expect(change.added.map((tool) => tool.name)).toEqual(['records.archive_records']);
    expect(change.removed.map((tool) => tool.name)).toEqual(['records.record_7']);
    expect(change.changed.map(({ before: old, after }) => [old.description, after.description])).toEqual([
      ['Reads record 3.', 'Reads record 3 and its history.'],
    ]);
    // Everything else is the object it was: the other server's tools and the unchanged records.
    const kept = catalog.filter((tool) => before.get(tool.name) === tool).map((tool) => tool.name);
    expect(kept).toHaveLength(catalog.length - 2);
    expect(kept).toContain('expenses.get_team_members');
    expect(kept).toContain('records.record_4');
  });

  it('search follows the change: the new tool is found, the removed one is gone', () => {
    expect(runtime.searchTools('archive old records').hits[0]?.name).toBe('records.archive_records');
    expect(runtime.searchTools('record_7', { regex: true }).hits.map((hit) => hit.name)).not.toContain(
      'records.record_7',
    );
    expect(runtime.searchTools('record 3 history').hits[0]?.name).toBe('records.record_3');
    expect(runtime.catalog().map((tool) => tool.name)).not.toContain('records.record_7');
  });

  it('the gateway tells its clients of a change only when a passed-through tool changed', async () => {
    const server = createCodecallServer({ runtime });
    const client = new Client({ name: 'catalog-change-test', version: '1.0.0' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    await client.connect(clientSide);
    try {
      let notified = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        notified++;
      });
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('records__record_4');
      await relist([...current]);
      const edited = current.map((tool) =>
        tool.name === 'record_4' ? { ...tool, description: 'Reads record 4, fast.' } : tool,
      );
      await relist(edited);
      // Both changes' notifications (if any) were sent before this answer, on the same transport.
      const { tools } = await client.listTools();
      expect(tools.find((tool) => tool.name === 'records__record_4')?.description).toBe(
        'Reads record 4, fast.',
      );
      expect(notified).toBe(1);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
