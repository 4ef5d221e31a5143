/**
 * Issue 28's "Done when", as one scenario: a 2026-07-28 client (the official SDK v2 client, pinned,
 * then a second one in auto mode) runs `search_tools`, `execute_code` with an approval through
 * `input_required`, and a task-based `execute_code` through two `codecall serve --http --mcp-2026`
 * nodes behind a plain round-robin proxy, and the node that accepted the task is killed (SIGKILL)
 * mid-task. The nodes share a signing key (`CODECALL_REQUEST_STATE_KEY`) and a store: a real
 * redis-server (BullMQ jobs, Redis journals) or a real PostgreSQL (pg-boss jobs, Postgres
 * journals), with a `codecall worker` running the tasks. A probe MCP server counts every call
 * really made.
 */
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import type { ServeProcess } from './serve-helpers.js';
import {
  callAsTask,
  connect2026,
  pollUntil,
  resultText,
  roundRobin,
  startServe2026,
  terminal,
} from './mcp-2026-helpers.js';
import {
  hasRedisServer,
  probeConfig,
  spawnWorker,
  startProbeServer,
  startRedis,
  type ProbeServer,
  type RedisHandle,
  type WorkerProcess,
} from '../integration/jobs/jobs-helpers.js';
import { postgresBinDir, startPostgres, type PostgresHandle } from '../integration/jobs/postgres-helpers.js';

const serves: ServeProcess[] = [];
const workers: WorkerProcess[] = [];
const proxies: Server[] = [];
let probe: ProbeServer | undefined;
let redis: RedisHandle | undefined;
let pg: PostgresHandle | undefined;
afterAll(async () => {
  for (const proxy of proxies) proxy.close();
  for (const serve of serves) if (serve.child.exitCode === null) serve.child.kill('SIGTERM');
  for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill('SIGTERM');
  await Promise.all([...serves.map((s) => s.exited), ...workers.map((w) => w.exited)]);
  await probe?.close();
  await redis?.stop();
  await pg?.stop();
});

/** Where the nodes keep what they share: the jobs configuration and the worker's flag. */
interface Store {
  jobs: Record<string, unknown>;
  workerArgs: string[];
}

const backends: { name: string; available: boolean; open(queue: string): Promise<Store> }[] = [
  {
    name: 'Redis (BullMQ)',
    available: hasRedisServer() || process.env.CI === 'true',
    async open(queue) {
      redis = await startRedis();
      return {
        jobs: { backend: 'bullmq', connection: redis.url, queue },
        workerArgs: ['--redis', redis.url, '--queue', queue],
      };
    },
  },
  {
    name: 'PostgreSQL (pg-boss)',
    available: postgresBinDir() !== undefined || process.env.CI === 'true',
    async open(queue) {
      pg = await startPostgres();
      return {
        jobs: { backend: 'postgres', connection: pg.url, queue },
        workerArgs: ['--postgres', pg.url, '--queue', queue],
      };
    },
  },
];

describe('issue 28, done when: a 2026 client through two nodes behind a round-robin proxy', () => {
  for (const backend of backends)
    it.skipIf(!backend.available)(
      `search_tools, execute_code approved through input_required, and a task that outlives its node — ${backend.name}`,
      async () => {
        probe ??= await startProbeServer();
        const queue = `done_when_${randomBytes(4).toString('hex')}`;
        const store = await backend.open(queue);
        const config = probeConfig(probe.url, {
          mcpServers: {
            probe: { type: 'http', url: probe.url, tools: { record: { requireApproval: true } } },
          },
          jobs: store.jobs,
          serve: { taskPollIntervalMs: 250 },
        });
        const worker = await spawnWorker([
          ...store.workerArgs,
          '--config',
          config.path,
          '--concurrency',
          '1',
        ]);
        workers.push(worker);
        const env = { CODECALL_REQUEST_STATE_KEY: randomBytes(32).toString('hex') };
        const nodes = await Promise.all([
          startServe2026(serves, config.path, [], env),
          startServe2026(serves, config.path, [], env),
        ]);
        const proxy = await roundRobin(
          nodes.map((node) => node.url),
          { failover: true },
        );
        proxies.push(proxy.server);
        const tag = backend.name.startsWith('Redis') ? 'redis' : 'pg';

        // 1. search_tools, through the proxy, from the client pinned to 2026-07-28.
        const asked: string[] = [];
        const client = await connect2026(proxy.url, { name: 'done-when', approve: true, asked });
        expect(client.getProtocolEra()).toBe('modern');
        const found = await client.callTool({
          name: 'search_tools',
          arguments: { query: 'record side effect' },
        });
        expect(resultText(found)).toMatch(/probe\.record/);

        // 2. execute_code whose call needs approval: input_required, answered, resumed on the other node.
        const before = [...proxy.hits];
        const approved = await client.callTool({
          name: 'execute_code',
          arguments: {
            code: `await tools.probe.sleep({ ms: 0, key: 'before-${tag}' });
                   console.log(JSON.stringify(await tools.probe.record({ key: 'approved-${tag}' })));`,
          },
        });
        expect(resultText(approved)).toMatch(
          new RegExp(`^stdout:\\n\\{"key":"approved-${tag}","count":1\\}\\n`),
        );
        expect(asked).toHaveLength(1);
        expect(asked[0]).toMatch(/probe\.record/);
        // The round that paused and the retry that resumed reached different nodes.
        expect(proxy.hits.map((n, i) => n - before[i]!)).toEqual([1, 1]);
        expect(probe.counts.sleeps.get(`before-${tag}`)).toBe(1);
        expect(probe.counts.records.get(`approved-${tag}`)).toBe(1);

        // 3. A task-based execute_code; the node that accepted it is killed while it runs.
        const beforeTask = [...proxy.hits];
        const created = await callAsTask(
          proxy.url,
          `await tools.probe.sleep({ ms: 3000, key: 'task-${tag}' });
           console.log(JSON.stringify(await tools.probe.sleep({ ms: 0, key: 'after-${tag}' })));`,
        );
        expect(created).toMatchObject({ resultType: 'task', status: 'working', pollIntervalMs: 250 });
        const accepted = proxy.hits.findIndex((n, i) => n > beforeTask[i]!);
        expect(accepted).toBeGreaterThanOrEqual(0);
        await probe.sleepStarted(`task-${tag}`);
        const victim = nodes[accepted]!.serve;
        victim.child.kill('SIGKILL');
        expect((await victim.exited).signal).toBe('SIGKILL');

        // tasks/get through the proxy (the dead node refuses, the live one answers) until completed.
        const follower = await connect2026(proxy.url, { name: 'done-when-tasks', tasks: true });
        const { task, seen } = await pollUntil(follower, created.taskId as string, terminal);
        expect(task.status).toBe('completed');
        expect(task.result?.content[0]?.text).toMatch(/^stdout:\n\{"slept":0\}\n/);
        expect(seen[0]).toBe('working');
        expect(probe.counts.sleeps.get(`task-${tag}`)).toBe(1);
        expect(probe.counts.sleeps.get(`after-${tag}`)).toBe(1);

        // 4. A client in auto mode, after the kill: it discovers the 2026 era and searches.
        const auto = await connect2026(proxy.url, { name: 'done-when-auto', mode: 'auto' });
        expect(auto.getProtocolEra()).toBe('modern');
        expect(
          resultText(await auto.callTool({ name: 'search_tools', arguments: { query: 'sleep' } })),
        ).toMatch(/probe\.sleep/);
        for (const c of [client, follower, auto]) await c.close();
      },
      300_000,
    );
});
