/**
 * The upstream Tasks extension over stdio: the suite's task fixture tools on a 2026-07-28-only SDK
 * v2 server in a child process (`test/fixtures/servers/conformance-2026-task-server.mjs`, built
 * from dist), connected with `protocol: "2026-07-28"`. A call answered with a task is awaited
 * through `tasks/get`, and a completed task's tool error fails the call.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { ToolPool } from '../../../src/tools/index.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const cleanup: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const item of cleanup.splice(0).reverse()) await item.close();
});

describe('upstream Tasks extension over stdio (2026-07-28)', { timeout: 60_000 }, () => {
  it('awaits a task answer from a stdio child through tasks/get', async () => {
    const config = parseConfig(
      {
        mcpServers: {
          up: {
            command: process.execPath,
            args: [join(ROOT, 'test', 'fixtures', 'servers', 'conformance-2026-task-server.mjs')],
            protocol: '2026-07-28',
            allowedCallers: ['code_execution'],
          },
        },
      },
      { file: join(ROOT, 'codecall.json'), env: {} },
    );
    const pool = await ToolPool.open(config, { requireAll: true });
    cleanup.push(pool);
    const value = await pool.call(
      'up.slow_compute',
      { seconds: 0.3, label: 'stdio' },
      { caller: 'code_execution' },
    );
    expect(value).toBe('slow_compute stdio: done after 0.3 s');
    await expect(pool.call('up.failing_job', {}, { caller: 'code_execution' })).rejects.toThrow(
      /failing_job: the job failed/,
    );
  });
});
