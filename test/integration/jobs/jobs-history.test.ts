/**
 * Usage history shared by a fleet in Redis: two workers' runs feed one tool graph, written one
 * transaction per run, against a real redis-server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createJobClient,
  startWorker,
  type JobBackend,
  type JobWorkerHandle,
} from '../../../src/jobs/index.js';
import { RedisHistoryStore } from '../../../src/store/redis-history-store.js';
import {
  hasRedisServer,
  probeConfig,
  startProbeServer,
  startRedis,
  type ProbeServer,
  type RedisHandle,
} from './jobs-helpers.js';
import { loadState } from '../../contract/load-state.js';

describe.skipIf(!hasRedisServer())('usage history in Redis (real redis-server)', () => {
  let redis: RedisHandle;
  let probe: ProbeServer;

  beforeAll(async () => {
    redis = await startRedis();
    probe = await startProbeServer();
  });

  afterAll(async () => {
    await probe?.close();
    await redis?.stop();
  });

  it('adds up the runs of several stores into one graph', async () => {
    const a = await RedisHistoryStore.open({ connection: redis.url, namespace: 'unit' });
    const b = await RedisHistoryStore.open({ connection: redis.url, namespace: 'unit' });
    await a.appendSequence(['s.get_team_members', 's.get_expenses', 's.get_expenses', 's.get_budget']);
    await b.appendSequence(['s.get_team_members', 's.get_expenses']);
    await b.appendSequence([]);
    await a.close();
    await b.close();
    const reader = await RedisHistoryStore.open({ connection: redis.url, namespace: 'unit' });
    const state = await loadState(reader);
    expect(state.sequences).toBe(3);
    expect(state.transitions.sort()).toEqual([
      ['s.get_expenses', 's.get_budget', 1],
      ['s.get_team_members', 's.get_expenses', 2],
    ]);
    const other = await RedisHistoryStore.open({ connection: redis.url, namespace: 'other' });
    expect((await loadState(other)).sequences).toBe(0);
    await expect(reader.appendSequence('not a list' as never)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await reader.close();
    await other.close();
    await expect(loadState(reader)).rejects.toMatchObject({ code: 'CLOSED' });
  });

  it('round-trips query feedback, newest maxUsages per namespace, oldest first', async () => {
    const a = await RedisHistoryStore.open({ connection: redis.url, namespace: 'fb', maxUsages: 2 });
    const b = await RedisHistoryStore.open({ connection: redis.url, namespace: 'fb-other' });
    try {
      expect((await loadState(a)).usages).toBeUndefined();
      await a.appendUsage({ query: 'first', tools: ['s.one'] });
      await b.appendUsage({ query: 'elsewhere', tools: [] });
      await a.appendUsage({ query: 'team expenses', tools: ['s.get_team_members', 's.get_expenses'] });
      await a.appendUsage({ query: 'budget', tools: ['s.get_budget'] });
      await expect(a.appendUsage({ query: 1 } as never)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      expect((await loadState(a)).usages).toEqual([
        ['team expenses', ['s.get_team_members', 's.get_expenses']],
        ['budget', ['s.get_budget']],
      ]);
      expect((await loadState(b)).usages).toEqual([['elsewhere', []]]);
      // Only maxUsages entries are kept in Redis, not just loaded.
      const reader = await RedisHistoryStore.open({ connection: redis.url, namespace: 'fb', maxUsages: 10 });
      expect((await loadState(reader)).usages).toHaveLength(2);
      await reader.close();
      await expect(
        RedisHistoryStore.open({ connection: redis.url, namespace: 'fb', maxUsages: 0 }),
      ).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: 'maxUsages must be a positive integer; got 0.',
      });
      await expect(
        RedisHistoryStore.open({ connection: redis.url, namespace: 'fb', maxTransitions: 1.5 }),
      ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'maxTransitions' } });
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('feeds one graph from every worker with --shared-history', async () => {
    const queue = 'history';
    const config = probeConfig(probe.url).path;
    const workers: JobWorkerHandle[] = [];
    for (const name of ['w1', 'w2'])
      workers.push(
        await startWorker({
          connection: redis.url,
          queue,
          name,
          concurrency: 1,
          sharedHistory: true,
          runtimes: { configs: { default: config } },
        }),
      );
    const client: JobBackend = await createJobClient({ connection: redis.url, queue });
    try {
      const code = 'await tools.probe.record({ key: "h" }); await tools.probe.sleep({ ms: 50 });';
      const ids = await Promise.all(Array.from({ length: 6 }, () => client.submit({ kind: 'exec', code })));
      const records = await Promise.all(ids.map(({ id }) => client.wait(id, { timeoutMs: 30_000 })));
      expect(records.every((r) => r.result?.status === 'ok')).toBe(true);
      const ran = new Set(
        (await Promise.all(ids.map(({ id }) => client.logs(id)))).map((lines) =>
          lines[0]?.replace(/^attempt 1 on /, ''),
        ),
      );
      expect(ran).toEqual(new Set(['w1', 'w2']));
    } finally {
      await client.close();
      await Promise.all(workers.map((w) => w.close()));
    }
    const reader = await RedisHistoryStore.open({ connection: redis.url, namespace: `${queue}.default` });
    const state = await loadState(reader);
    await reader.close();
    expect(state.sequences).toBe(6);
    expect(state.transitions).toEqual([['probe.record', 'probe.sleep', 6]]);
  });
});
