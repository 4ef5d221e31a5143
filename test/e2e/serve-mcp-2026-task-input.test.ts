/**
 * A task-based `execute_code` whose script meets an upstream input request (issue 28): the
 * official SDK v2 client (pinned to 2026-07-28, declaring the Tasks extension and `elicitation`)
 * runs `execute_code` as a task through `codecall serve --http --mcp-2026`; the script calls a real
 * SDK v2 upstream that answers `input_required` (and one whose question changes on replay) and a
 * real SDK 1.x upstream that elicits during its call. Each request parks the job without a worker;
 * the task is `input_required` with the upstream's request in `inputRequests`; `tasks/update`
 * answers it; the next attempt replays the journal and the re-asked request gets the answer only
 * when it is the same one. The upstreams count what really ran (each effect once). On the embedded
 * backend, on BullMQ (a real redis-server, a `codecall worker` that is killed while the job waits,
 * so another worker resumes it, and the answer sent through another serve node) and on pg-boss.
 */
import { randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import {
  hasRedisServer,
  spawnWorker,
  startRedis,
  type RedisHandle,
  type WorkerProcess,
} from '../integration/jobs/jobs-helpers.js';
import { postgresBinDir, startPostgres, type PostgresHandle } from '../integration/jobs/postgres-helpers.js';
import {
  callAsTask,
  connect2026,
  pollUntil,
  startServe2026,
  terminal,
  type Task2026,
} from './mcp-2026-helpers.js';
import type { ServeProcess } from './serve-helpers.js';
import { startInputUpstreams, writeInputConfig, type InputUpstreams } from './upstream-input-fixtures.js';

const serves: ServeProcess[] = [];
const workers: WorkerProcess[] = [];
const closers: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const serve of serves) if (serve.child.exitCode === null) serve.child.kill('SIGTERM');
  for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill('SIGTERM');
  await Promise.all([...serves.map((s) => s.exited), ...workers.map((w) => w.exited)]);
  for (const close of closers.reverse()) await close();
});

function writeConfig(upstreams: InputUpstreams, extra: Record<string, unknown> = {}): string {
  return writeInputConfig(upstreams, closers, { serve: { taskPollIntervalMs: 200 }, ...extra });
}

const ELICITS = { elicitation: { form: {} } };

const Ack = z.looseObject({});

/** The one input request a task waits on: its key, method and message. */
function onlyRequest(task: Task2026): { key: string; method: string; message: string } {
  const entries = Object.entries(task.inputRequests ?? {});
  expect(entries).toHaveLength(1);
  const [key, request] = entries[0]! as [string, { method: string; params: { message: string } }];
  return { key, method: request.method, message: request.params.message };
}

async function answer(client: Client, taskId: string, key: string, response: unknown): Promise<void> {
  await client.request(
    { method: 'tasks/update', params: { taskId, inputResponses: { [key]: response } } },
    Ack,
  );
}

const waitsForInput = (task: Task2026): boolean => task.status === 'input_required' || terminal(task);

/** Deploys (an approval, then a 2026 input round), then wipes a table (a 2025 elicitation during the call). */
const script = `
  const deployed = await tools.modern.deploy({ env: 'staging' });
  const wiped = await tools.legacy.wipe({ table: 't1' });
  console.log(JSON.stringify([deployed, wiped]));`;

/**
 * Runs {@link script} as a task created through `createUrl`, each round followed and answered
 * through `client` (another node, when they differ); `between` runs while the job waits on the
 * first request.
 */
async function runDeployAndWipe(
  createUrl: string,
  client: Client,
  upstreams: InputUpstreams,
  between?: (taskId: string) => Promise<void>,
): Promise<void> {
  const created = await callAsTask(createUrl, script, ELICITS);
  expect(created).toMatchObject({ resultType: 'task', status: 'working' });
  const taskId = created.taskId as string;

  const approval = await pollUntil(client, taskId, waitsForInput);
  expect(approval.task.status).toBe('input_required');
  expect(Object.keys(approval.task.inputRequests ?? {})).toEqual(['approval-0']);
  await answer(client, taskId, 'approval-0', { action: 'accept', content: { approve: true } });

  const first = await pollUntil(
    client,
    taskId,
    (task) => terminal(task) || 'upstream-0' in (task.inputRequests ?? {}),
  );
  expect(onlyRequest(first.task)).toEqual({
    key: 'upstream-0',
    method: 'elicitation/create',
    message: 'Deploy to staging?',
  });
  expect(first.task.statusMessage).toMatch(/modern\.deploy's elicitation\/create request/);
  expect(upstreams.done).toEqual([]);
  await between?.(taskId);
  // An answer under a key not outstanding is ignored: the task still waits on the same request.
  await answer(client, taskId, 'upstream-7', { action: 'accept', content: { confirm: true } });
  const still = await pollUntil(client, taskId, waitsForInput);
  expect(onlyRequest(still.task).key).toBe('upstream-0');
  await answer(client, taskId, 'upstream-0', { action: 'accept', content: { confirm: true } });

  const second = await pollUntil(
    client,
    taskId,
    (task) =>
      terminal(task) || (task.status === 'input_required' && 'upstream-1' in (task.inputRequests ?? {})),
  );
  expect(onlyRequest(second.task)).toEqual({
    key: 'upstream-1',
    method: 'elicitation/create',
    message: 'Wipe t1?',
  });
  // The deploy happened once, before the job parked again.
  expect(upstreams.done).toEqual(['deploy:staging']);
  await answer(client, taskId, 'upstream-1', { action: 'accept', content: { confirm: true } });

  const { task: done } = await pollUntil(client, taskId, terminal);
  expect(done.status).toBe('completed');
  expect(done.result?.content[0]?.text).toMatch(/^stdout:\n\["deployed staging","wiped t1"\]\n/);
  // Each effect once, though the script was replayed after every round.
  expect(upstreams.done).toEqual(['deploy:staging', 'wipe:t1']);
  // deploy's tools/call: asked (1); on the replay after round 1, asked again (2) and sent again
  // with the answer (3); the replay after round 2 answered it from the journal (no fourth).
  expect(upstreams.calls.get('deploy')).toBe(3);
}

describe('a task-based execute_code whose script meets an upstream input request', () => {
  it('parks the job on the embedded backend, shows the request in tasks/get and the jobs API, and tasks/update answers it', async () => {
    const upstreams = await startInputUpstreams(closers);
    const { url } = await startServe2026(serves, writeConfig(upstreams));
    const client = await connect2026(url, { name: 'e2e-task-input', tasks: true });
    closers.push(() => client.close());
    await runDeployAndWipe(url, client, upstreams, async (taskId) => {
      // The jobs API says what the job waits for.
      const record = (await (await fetch(new URL(`/v1/jobs/${taskId}`, url))).json()) as Record<
        string,
        unknown
      >;
      expect(record).toMatchObject({
        state: 'waiting-approval',
        approval: {
          tool: 'modern.deploy',
          callIndex: 0,
          input: {
            method: 'elicitation/create',
            ask: 0,
            round: 0,
            params: { message: 'Deploy to staging?' },
          },
        },
      });
      // An approval is not an answer: the jobs API refuses it, naming who answers.
      const refused = await fetch(new URL(`/v1/jobs/${taskId}/approvals`, url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ approved: true }),
      });
      expect(refused.status).toBe(400);
      expect(await refused.text()).toMatch(/tasks\/update/);
    });

    // Two rounds in one call: the first answer is kept in the answer log, so the replay that
    // reaches the second request answers the first again without asking.
    const twoStep = await callAsTask(url, `console.log(await tools.modern.two_step({}));`, ELICITS);
    const twoStepId = twoStep.taskId as string;
    const n1 = await pollUntil(client, twoStepId, waitsForInput);
    expect(onlyRequest(n1.task)).toMatchObject({ key: 'upstream-0', message: 'Which name?' });
    await answer(client, twoStepId, 'upstream-0', { action: 'accept', content: { name: 'orion' } });
    const n2 = await pollUntil(
      client,
      twoStepId,
      (task) => terminal(task) || 'upstream-1' in (task.inputRequests ?? {}),
    );
    expect(onlyRequest(n2.task)).toMatchObject({ key: 'upstream-1', message: 'Really name it orion?' });
    await answer(client, twoStepId, 'upstream-1', { action: 'accept', content: { confirm: true } });
    const { task: twoStepDone } = await pollUntil(client, twoStepId, terminal);
    expect(twoStepDone.result?.content[0]?.text).toMatch(/^stdout:\nnamed orion\n/);
    expect(upstreams.done.filter((effect) => effect.startsWith('name:'))).toEqual(['name:orion']);

    // A question that changes on replay is a new round under a new key: the answer given is never
    // applied to the other question.
    const fickle = await callAsTask(url, `console.log(await tools.modern.fickle({}));`, ELICITS);
    const fickleId = fickle.taskId as string;
    const q1 = await pollUntil(client, fickleId, waitsForInput);
    expect(onlyRequest(q1.task)).toMatchObject({ key: 'upstream-0', message: 'First question?' });
    await answer(client, fickleId, 'upstream-0', { action: 'accept', content: { answer: 'one' } });
    const q2 = await pollUntil(
      client,
      fickleId,
      (task) => terminal(task) || 'upstream-1' in (task.inputRequests ?? {}),
    );
    expect(onlyRequest(q2.task)).toMatchObject({ key: 'upstream-1', message: 'Second question?' });
    await answer(client, fickleId, 'upstream-1', { action: 'accept', content: { answer: 'two' } });
    const { task: fickleDone } = await pollUntil(client, fickleId, terminal);
    expect(fickleDone.result?.content[0]?.text).toMatch(/^stdout:\nSecond question\? two\n/);
    expect(upstreams.done).toContain('fickle:Second question?=two');
    expect(upstreams.done.filter((effect) => effect.startsWith('fickle:'))).toHaveLength(1);

    // A task of a client that did not declare elicitation is not parked: the call fails at once,
    // naming the capability, and the script can catch it.
    const unable = await callAsTask(
      url,
      `try { await tools.modern.two_step({}); } catch (error) { console.log('two_step:', error.message); }`,
    );
    const { task: unableDone } = await pollUntil(client, unable.taskId as string, terminal);
    expect(unableDone.result?.content[0]?.text).toMatch(
      /two_step: .*did not declare the "elicitation" capability/,
    );
  }, 240_000);

  it('ends the task when nobody answers within jobs.approvalTimeoutMs (INPUT_TIMEOUT), without finishing the call', async () => {
    const upstreams = await startInputUpstreams(closers);
    const { url } = await startServe2026(
      serves,
      writeConfig(upstreams, { jobs: { approvalTimeoutMs: 2_000 } }),
    );
    const client = await connect2026(url, { name: 'e2e-task-input-timeout', tasks: true });
    closers.push(() => client.close());
    const created = await callAsTask(
      url,
      `console.log(await tools.legacy.wipe({ table: 'late' }));`,
      ELICITS,
    );
    const taskId = created.taskId as string;
    const asking = await pollUntil(client, taskId, waitsForInput);
    expect(onlyRequest(asking.task)).toMatchObject({ key: 'upstream-0', message: 'Wipe late?' });
    const { task } = await pollUntil(client, taskId, terminal);
    expect(task.status).toBe('failed');
    expect(task.error?.message).toMatch(
      /^Nobody answered the elicitation\/create request of legacy\.wipe \(call 0\) within 2000 ms/,
    );
    expect(upstreams.done).toEqual([]);
  }, 240_000);

  it('gives a 2025-11-25 task client the requests through tasks/result, tied to the task (SDK 1.x client)', async () => {
    const upstreams = await startInputUpstreams(closers);
    const { url } = await startServe2026(serves, writeConfig(upstreams));
    const client = new LegacyClient(
      { name: 'e2e-legacy-task-input', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} } } },
    );
    const asked: { message: string; taskId: unknown }[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      const { message, _meta } = request.params as { message: string; _meta?: Record<string, unknown> };
      asked.push({
        message: message.replace(/^(Approve \S+).*$/s, '$1'),
        taskId: (_meta?.['io.modelcontextprotocol/related-task'] as { taskId?: unknown } | undefined)?.taskId,
      });
      if (message.startsWith('Approve ')) return { action: 'accept', content: { approve: true } };
      return { action: 'accept', content: { confirm: true } };
    });
    await client.connect(new LegacyTransport(new URL(url)));
    closers.push(() => client.close());
    let taskId = '';
    let output = '';
    for await (const message of client.experimental.tasks.callToolStream(
      { name: 'execute_code', arguments: { code: script } },
      CallToolResultSchema,
      { task: { ttl: 600_000 }, timeout: 120_000 },
    )) {
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      if (message.type === 'result')
        output = message.result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
      if (message.type === 'error') throw new Error(message.error.message);
    }
    expect(output).toMatch(/^stdout:\n\["deployed staging","wiped t1"\]\n/);
    expect(asked).toEqual([
      { message: 'Approve modern.deploy({"env":"staging"})', taskId },
      { message: 'Deploy to staging?', taskId },
      { message: 'Wipe t1?', taskId },
    ]);
    expect(upstreams.done).toEqual(['deploy:staging', 'wipe:t1']);
  }, 240_000);

  it.skipIf(!hasRedisServer() && process.env.CI !== 'true')(
    'on BullMQ: the worker that parked the job is killed, another resumes it, the answers go through another serve node',
    async () => {
      const upstreams = await startInputUpstreams(closers);
      const redis: RedisHandle = await startRedis();
      closers.push(() => redis.stop());
      const queue = `task-input-${randomBytes(4).toString('hex')}`;
      const config = writeConfig(upstreams, { jobs: { backend: 'bullmq', connection: redis.url, queue } });
      const workerArgs = ['--redis', redis.url, '--queue', queue, '--config', config, '--concurrency', '1'];
      const first = await spawnWorker(workerArgs);
      workers.push(first);
      const [a, b] = await Promise.all([startServe2026(serves, config), startServe2026(serves, config)]);
      const client = await connect2026(b.url, { name: 'e2e-task-input-bullmq', tasks: true });
      closers.push(() => client.close());
      await runDeployAndWipe(a.url, client, upstreams, async () => {
        // The job waits without a worker: kill the one that ran it; a new one takes the resume.
        first.child.kill('SIGKILL');
        await first.exited;
        workers.push(await spawnWorker(workerArgs));
      });
    },
    300_000,
  );

  it.skipIf(postgresBinDir() === undefined && process.env.CI !== 'true')(
    'on pg-boss (PostgreSQL 15): the same rounds, answered through another serve node',
    async () => {
      const upstreams = await startInputUpstreams(closers);
      const pg: PostgresHandle = await startPostgres();
      closers.push(() => pg.stop());
      const queue = `task_input_${randomBytes(4).toString('hex')}`;
      const config = writeConfig(upstreams, { jobs: { backend: 'postgres', connection: pg.url, queue } });
      workers.push(
        await spawnWorker(['--postgres', pg.url, '--queue', queue, '--config', config, '--concurrency', '1']),
      );
      const [a, b] = await Promise.all([startServe2026(serves, config), startServe2026(serves, config)]);
      const client = await connect2026(b.url, { name: 'e2e-task-input-pg', tasks: true });
      closers.push(() => client.close());
      await runDeployAndWipe(a.url, client, upstreams);
    },
    300_000,
  );
});
