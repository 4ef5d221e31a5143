/**
 * The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on `codecall serve --http
 * --mcp-2026`: `execute_code` from a client that declares the extension becomes a task on the job
 * backend, followed with `tasks/get`, answered with `tasks/update` (an approval), stopped with
 * `tasks/cancel`. The official SDK v2 client (pinned to 2026-07-28) drives `server/discover` and
 * the `tasks/*` methods; the `tools/call` that creates a task is sent as the same 2026 request by
 * hand, because SDK 2.4's client refuses a `resultType: "task"` answer (it does not implement the
 * extension). Then two serve nodes on one Redis (BullMQ) with a `codecall worker`: the node that
 * accepted the task is killed (SIGKILL) mid-task, and `tasks/get` through the other completes it;
 * the same on PostgreSQL (pg-boss).
 */
import { randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ServeProcess } from './serve-helpers.js';
import {
  TASKS,
  callAsTask,
  connect2026,
  getTask,
  pollUntil,
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
let probe: ProbeServer | undefined;
let redis: RedisHandle | undefined;
let pg: PostgresHandle | undefined;
afterAll(async () => {
  for (const serve of serves) if (serve.child.exitCode === null) serve.child.kill('SIGTERM');
  for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill('SIGTERM');
  await Promise.all([...serves.map((s) => s.exited), ...workers.map((w) => w.exited)]);
  await probe?.close();
  await redis?.stop();
  await pg?.stop();
});

function startServe(configPath: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
  return startServe2026(serves, configPath, args, env);
}

/** A 2026-pinned SDK v2 client; `tasks` declares the extension in every request's capabilities. */
function connect(url: string, tasks = true): Promise<Client> {
  return connect2026(url, { name: 'e2e-2026-tasks', tasks });
}

const Ack = z.looseObject({});

const errorOf = (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    () => 'answered',
    (error: { code?: unknown }) => String(error.code),
  );

describe('the Tasks extension for 2026-07-28 clients', () => {
  it('runs execute_code as a task on the embedded jobs: tasks/get, an approval through tasks/update, tasks/cancel', async () => {
    probe = await startProbeServer();
    const config = probeConfig(probe.url, {
      mcpServers: { probe: { type: 'http', url: probe.url, tools: { record: { requireApproval: true } } } },
    });
    const { url } = await startServe(config.path);
    const client = await connect(url);
    expect(client.getServerCapabilities()?.extensions).toEqual({ [TASKS]: {} });

    // A task whose second call needs approval.
    const created = await callAsTask(
      url,
      `await tools.probe.sleep({ ms: 0, key: 'before-gated' });
       console.log(JSON.stringify(await tools.probe.record({ key: 'gated' })));`,
    );
    expect(created).toMatchObject({
      resultType: 'task',
      status: 'working',
      ttlMs: 3_600_000,
      pollIntervalMs: 1_000,
    });
    const taskId = created.taskId as string;
    expect(taskId).toMatch(/^[0-9a-f-]{36}$/);
    const asking = await pollUntil(
      client,
      taskId,
      (task) => task.status === 'input_required' || terminal(task),
    );
    expect(asking.task.status).toBe('input_required');
    const keys = Object.keys(asking.task.inputRequests ?? {});
    expect(keys).toEqual(['approval-1']);
    expect(JSON.stringify(asking.task.inputRequests)).toMatch(/elicitation\/create.*probe\.record/);
    expect(probe.counts.records.get('gated')).toBeUndefined();
    // An answer under a key not outstanding is ignored; the task still waits.
    await client.request(
      {
        method: 'tasks/update',
        params: {
          taskId,
          inputResponses: { 'approval-7': { action: 'accept', content: { approve: true } } },
        },
      },
      Ack,
    );
    expect((await getTask(client, taskId)).status).toBe('input_required');
    await client.request(
      {
        method: 'tasks/update',
        params: {
          taskId,
          inputResponses: { 'approval-1': { action: 'accept', content: { approve: true } } },
        },
      },
      Ack,
    );
    const { task: done } = await pollUntil(client, taskId, terminal);
    expect(done.status).toBe('completed');
    expect(done.result?.content[0]?.text).toMatch(/^stdout:\n\{"key":"gated","count":1\}\n/);
    // The call before the approval ran once: the resumed attempt answered it from the journal.
    expect(probe.counts.sleeps.get('before-gated')).toBe(1);
    expect(probe.counts.records.get('gated')).toBe(1);

    // A denied approval: the script sees APPROVAL_DENIED, the call never runs.
    const denied = await callAsTask(
      url,
      `try { await tools.probe.record({ key: 'denied' }); } catch (error) { console.log(error.code); }`,
    );
    await pollUntil(client, denied.taskId as string, (task) => task.status === 'input_required');
    await client.request(
      {
        method: 'tasks/update',
        params: {
          taskId: denied.taskId,
          inputResponses: { 'approval-0': { action: 'accept', content: { approve: false } } },
        },
      },
      Ack,
    );
    const { task: deniedDone } = await pollUntil(client, denied.taskId as string, terminal);
    expect(deniedDone.result?.content[0]?.text).toMatch(/^stdout:\nAPPROVAL_DENIED\n/);
    expect(probe.counts.records.get('denied')).toBeUndefined();

    // tasks/cancel stops a running task: the upstream call in flight is cancelled too.
    const long = await callAsTask(
      url,
      `await tools.probe.sleep({ ms: 60000, key: 'long' }); console.log('not cancelled');`,
    );
    await probe.sleepStarted('long');
    const cancelledBefore = probe.counts.cancelledSleeps;
    await client.request({ method: 'tasks/cancel', params: { taskId: long.taskId } }, Ack);
    const { task: stopped } = await pollUntil(client, long.taskId as string, terminal, 30_000);
    expect(stopped.status).toBe('cancelled');
    expect(probe.counts.cancelledSleeps).toBe(cancelledBefore + 1);

    // Protocol errors (SEP-2663 § Error Handling).
    expect(await errorOf(getTask(client, '00000000-0000-4000-8000-000000000000'))).toBe('-32602');
    const plain = await connect(url, false);
    expect(await errorOf(getTask(plain, taskId))).toBe('-32021');
    // A client without the extension gets its answer in the request, never a task.
    const direct = await plain.callTool({
      name: 'execute_code',
      arguments: { code: `console.log('inline')` },
    });
    expect(JSON.stringify(direct)).toMatch(/stdout:\\ninline/);
    await plain.close();
    await client.close();
  }, 240_000);

  it('bounds the unfinished tasks of one client (serve.maxTasksPerClient), and the ttlMs is the configured one', async () => {
    probe ??= await startProbeServer();
    const config = probeConfig(probe.url, {
      serve: { maxTasksPerClient: 1, taskTtlMs: 120_000, taskPollIntervalMs: 250 },
    });
    const { url } = await startServe(config.path);
    const client = await connect(url);
    const first = await callAsTask(url, `await tools.probe.sleep({ ms: 60000, key: 'bound' });`);
    expect(first).toMatchObject({ resultType: 'task', ttlMs: 120_000, pollIntervalMs: 250 });
    const second = await callAsTask(url, `console.log('second')`);
    expect(second.resultType).toBe('complete');
    expect(second.isError).toBe(true);
    expect(JSON.stringify(second.content)).toMatch(
      /1 execute_code tasks not finished yet.*serve\.maxTasksPerClient: 1/,
    );
    await client.request({ method: 'tasks/cancel', params: { taskId: first.taskId } }, Ack);
    await pollUntil(client, first.taskId as string, terminal, 30_000);
    const third = await callAsTask(url, `console.log('third')`);
    expect(third.resultType).toBe('task');
    const { task } = await pollUntil(client, third.taskId as string, terminal);
    expect(task.result?.content[0]?.text).toMatch(/^stdout:\nthird\n/);
    await client.close();
  }, 180_000);

  it.skipIf(!hasRedisServer() && process.env.CI !== 'true')(
    'a task survives the node that accepted it: kill -9 it mid-task, tasks/get through the other node completes it (BullMQ)',
    async () => {
      probe ??= await startProbeServer();
      redis = await startRedis();
      const config = probeConfig(probe.url);
      const queue = `tasks-${randomBytes(4).toString('hex')}`;
      const worker = await spawnWorker([
        '--redis',
        redis.url,
        '--queue',
        queue,
        '--config',
        config.path,
        '--concurrency',
        '1',
      ]);
      workers.push(worker);
      const jobs = { jobs: { backend: 'bullmq', connection: redis.url, queue } };
      const nodeConfig = probeConfig(probe.url, jobs);
      const [a, b] = await Promise.all([startServe(nodeConfig.path), startServe(nodeConfig.path)]);
      const created = await callAsTask(
        a.url,
        `await tools.probe.sleep({ ms: 3000, key: 'fleet' }); console.log(JSON.stringify(await tools.probe.record({ key: 'fleet' })));`,
      );
      expect(created).toMatchObject({ resultType: 'task', status: 'working' });
      await probe.sleepStarted('fleet');
      a.serve.child.kill('SIGKILL');
      expect((await a.serve.exited).signal).toBe('SIGKILL');
      const client = await connect(b.url);
      const { task, seen } = await pollUntil(client, created.taskId as string, terminal);
      expect(task.status).toBe('completed');
      expect(task.result?.content[0]?.text).toMatch(/^stdout:\n\{"key":"fleet","count":1\}\n/);
      expect(seen[0]).toBe('working');
      expect(probe.counts.records.get('fleet')).toBe(1);
      await client.close();
    },
    240_000,
  );

  it.skipIf(postgresBinDir() === undefined && process.env.CI !== 'true')(
    'a task survives the node that accepted it on PostgreSQL (pg-boss) too: kill -9 it mid-task, the other node completes it',
    async () => {
      probe ??= await startProbeServer();
      pg = await startPostgres();
      const config = probeConfig(probe.url);
      const queue = `tasks_${randomBytes(4).toString('hex')}`;
      const worker = await spawnWorker([
        '--postgres',
        pg.url,
        '--queue',
        queue,
        '--config',
        config.path,
        '--concurrency',
        '1',
      ]);
      workers.push(worker);
      const nodeConfig = probeConfig(probe.url, { jobs: { backend: 'postgres', connection: pg.url, queue } });
      const [a, b] = await Promise.all([startServe(nodeConfig.path), startServe(nodeConfig.path)]);
      const created = await callAsTask(
        a.url,
        `await tools.probe.sleep({ ms: 3000, key: 'pg-fleet' }); console.log(JSON.stringify(await tools.probe.record({ key: 'pg-fleet' })));`,
      );
      expect(created).toMatchObject({ resultType: 'task', status: 'working' });
      await probe.sleepStarted('pg-fleet');
      a.serve.child.kill('SIGKILL');
      expect((await a.serve.exited).signal).toBe('SIGKILL');
      const client = await connect(b.url);
      const { task } = await pollUntil(client, created.taskId as string, terminal);
      expect(task.status).toBe('completed');
      expect(task.result?.content[0]?.text).toMatch(/^stdout:\n\{"key":"pg-fleet","count":1\}\n/);
      expect(probe.counts.records.get('pg-fleet')).toBe(1);
      await client.close();
    },
    240_000,
  );
});
