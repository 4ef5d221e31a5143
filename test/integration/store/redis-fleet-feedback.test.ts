/**
 * @module
 * A fleet on Redis shares what queries taught: one process (a separate `node`, loading the built
 * package) records uses of search in its Redis store; another process's store, on the same
 * redis-server and namespace, loads them, and its search ranks differently for it.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToolSearch } from '../../../src/search/index.js';
import { RedisHistoryStore } from '../../../src/store/index.js';
import { loadState } from '../../contract/load-state.js';
import { CATALOG } from '../../unit/search/catalog.js';
import { hasRedisServer, ROOT, startRedis, type RedisHandle } from '../jobs/jobs-helpers.js';

const run = promisify(execFile);
const ON_CI = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
const ASK = 'report on spending per person';
const LEARNED = 'finance.get_budget_by_level';

/** Records `uses` query-feedback uses in another process, through the built store. */
async function recordInAnotherProcess(url: string, namespace: string, uses: number): Promise<void> {
  const entry = join(ROOT, 'dist', 'store', 'index.js');
  const script = `
    const { RedisHistoryStore } = await import(${JSON.stringify(entry)});
    const store = await RedisHistoryStore.open({ connection: process.env.URL, namespace: process.env.NS });
    for (let i = 0; i < Number(process.env.USES); i++)
      await store.appendUsage({ query: 'spending per person ' + i, tools: [${JSON.stringify(LEARNED)}] });
    await store.close();
    console.log('recorded ' + process.pid);
  `;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, URL: url, NS: namespace, USES: String(uses) },
    timeout: 60_000,
  });
  expect(stdout).toMatch(/^recorded \d+/);
  expect(Number(stdout.split(' ')[1])).not.toBe(process.pid);
}

describe.skipIf(!hasRedisServer() && !ON_CI)(
  'query feedback shared by a fleet on Redis (real redis-server)',
  () => {
    let redis: RedisHandle | undefined;
    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(async () => {
      await redis?.stop();
    });

    it("one process's queries change another process's ranking", async () => {
      const names = (state?: Awaited<ReturnType<typeof loadState>>): string[] =>
        createToolSearch({ tools: CATALOG, ...(state ? { state } : {}) })
          .search(ASK, { limit: 3 })
          .map((hit) => hit.name);
      expect(names()[0]).not.toBe(LEARNED);

      await recordInAnotherProcess(redis!.url, 'fleet', 3);

      const here = await RedisHistoryStore.open({ connection: redis!.url, namespace: 'fleet' });
      const elsewhere = await RedisHistoryStore.open({ connection: redis!.url, namespace: 'other-fleet' });
      try {
        const state = await loadState(here);
        expect(state.usages).toEqual([0, 1, 2].map((i) => [`spending per person ${i}`, [LEARNED]]));
        expect(names(state)[0]).toBe(LEARNED);
        // Another namespace (another configuration) learned nothing.
        expect(await elsewhere.listUsages()).toEqual([]);
      } finally {
        await here.close();
        await elsewhere.close();
      }
    });
  },
);
