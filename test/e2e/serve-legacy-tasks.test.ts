/**
 * The 2025-11-25 experimental tasks for legacy clients (`src/server/legacy-tasks.ts`): the
 * official SDK 1.x client's task API (`client.experimental.tasks`) runs `execute_code` as a task
 * over `codecall serve --http` and over stdio — creation, polling with `tasks/get`, the result
 * with `tasks/result`, an approval carried by `tasks/result` as an `elicitation/create` tied to
 * the task, `tasks/list`, `tasks/cancel` and the spec's `-32602`/`-32601` errors. Then two serve
 * nodes on one Redis (BullMQ) with a `codecall worker`: the node that accepted the task is killed
 * (SIGKILL) mid-task, and a new session on the other node follows it to its result.
 */
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  type CallToolResult,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, spawnServe, type ServeProcess } from './serve-helpers.js';
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

const TOKEN = 'legacy-tasks-test-token-0123456789';
const serves: ServeProcess[] = [];
const workers: WorkerProcess[] = [];
const clients: Client[] = [];
let probe: ProbeServer | undefined;
let redis: RedisHandle | undefined;
afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  for (const serve of serves) if (serve.child.exitCode === null) serve.child.kill('SIGTERM');
  for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill('SIGTERM');
  await Promise.all([...serves.map((s) => s.exited), ...workers.map((w) => w.exited)]);
  await probe?.close();
  await redis?.stop();
});

async function startServe(configPath: string, args: string[] = []) {
  const serve = spawnServe(['--http', '--port', '0', '--config', configPath, ...args]);
  serves.push(serve);
  const [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)/)) as [string, string];
  return { serve, url };
}

/** An SDK 1.x client (2025-11-25) whose elicitation handler answers `approve` and logs each request. */
async function connectHttp(
  url: string,
  options: { approve?: boolean; asked?: unknown[]; token?: string } = {},
): Promise<Client> {
  const client = legacyClient(options);
  const headers: Record<string, string> =
    options.token !== undefined ? { authorization: `Bearer ${options.token}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

function legacyClient(options: { approve?: boolean; asked?: unknown[] }): Client {
  const client = new Client(
    { name: 'e2e-legacy-tasks', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } } },
  );
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    options.asked?.push(request.params);
    return { action: 'accept', content: { approve: options.approve ?? true } };
  });
  clients.push(client);
  return client;
}

/** Runs `code` as a task with the SDK's own stream; every message it yielded, in order. */
async function runAsTask(
  client: Client,
  code: string,
): Promise<{ taskId: string; statuses: string[]; result?: CallToolResult; error?: string }> {
  let taskId = '';
  const statuses: string[] = [];
  const stream = client.experimental.tasks.callToolStream(
    { name: 'execute_code', arguments: { code } },
    CallToolResultSchema,
    { task: { ttl: 600_000 }, timeout: 120_000 },
  );
  for await (const message of stream) {
    if (message.type === 'taskCreated') taskId = message.task.taskId;
    if (message.type === 'taskStatus') statuses.push(message.task.status);
    if (message.type === 'result') return { taskId, statuses, result: message.result };
    if (message.type === 'error') return { taskId, statuses, error: message.error.message };
  }
  throw new Error('the stream ended without a result or an error');
}

const text = (result: CallToolResult | undefined): string =>
  (result?.content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');

const codeOf = (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    () => 'answered',
    (error: { code?: unknown }) => String(error.code),
  );

async function pollUntil(client: Client, taskId: string, done: (task: Task) => boolean): Promise<Task> {
  const until = Date.now() + 90_000;
  for (;;) {
    const task = await client.experimental.tasks.getTask(taskId);
    if (done(task)) return task;
    if (Date.now() > until) throw new Error(`task ${taskId} still ${task.status}`);
    await new Promise((resolve) => setTimeout(resolve, task.pollInterval ?? 1_000));
  }
}
const terminal = (task: Task): boolean => ['completed', 'failed', 'cancelled'].includes(task.status);

describe('2025-11-25 tasks for legacy clients', () => {
  it('runs execute_code as a task over HTTP: tasks/get, tasks/result, an approval through tasks/result, tasks/list, tasks/cancel', async () => {
    probe = await startProbeServer();
    const config = probeConfig(probe.url, {
      mcpServers: { probe: { type: 'http', url: probe.url, tools: { record: { requireApproval: true } } } },
      serve: { taskPollIntervalMs: 200 },
    });
    const { url } = await startServe(config.path, ['--token', TOKEN]);
    const asked: unknown[] = [];
    const client = await connectHttp(url, { asked, token: TOKEN });
    expect(client.getServerCapabilities()?.tasks).toEqual({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const listed = await client.listTools();
    const execute = listed.tools.find((tool) => tool.name === 'execute_code');
    expect(execute?.execution).toEqual({ taskSupport: 'optional' });
    expect(listed.tools.find((tool) => tool.name === 'search_tools')?.execution).toBeUndefined();

    // A plain task: created working, followed to completed, its result is execute_code's.
    const plain = await runAsTask(
      client,
      `await tools.probe.sleep({ ms: 500, key: 'plain' }); console.log('done');`,
    );
    expect(plain.error).toBeUndefined();
    expect(plain.taskId).toMatch(/^[0-9a-f-]{36}$/);
    expect(plain.statuses.at(-1)).toBe('completed');
    expect(text(plain.result)).toMatch(/^stdout:\ndone\n/);
    const got = await client.experimental.tasks.getTask(plain.taskId);
    expect(got).toMatchObject({ taskId: plain.taskId, status: 'completed', ttl: 600_000 });
    const again = await client.experimental.tasks.getTaskResult(plain.taskId, CallToolResultSchema);
    expect(text(again)).toMatch(/^stdout:\ndone\n/);
    expect(again._meta?.['io.modelcontextprotocol/related-task']).toEqual({ taskId: plain.taskId });

    // An approval: the task is input_required, the client's tasks/result carries the elicitation
    // (tied to the task), the approved call runs once and the call before it is not made again.
    const gated = await runAsTask(
      client,
      `await tools.probe.sleep({ ms: 0, key: 'before-gated' });
       console.log(JSON.stringify(await tools.probe.record({ key: 'gated' })));`,
    );
    expect(gated.error).toBeUndefined();
    expect(gated.statuses).toContain('input_required');
    expect(text(gated.result)).toMatch(/^stdout:\n\{"key":"gated","count":1\}\n/);
    expect(asked).toHaveLength(1);
    expect(JSON.stringify(asked[0])).toMatch(/probe\.record/);
    expect((asked[0] as { _meta?: Record<string, unknown> })._meta).toEqual({
      'io.modelcontextprotocol/related-task': { taskId: gated.taskId },
    });
    expect(probe.counts.sleeps.get('before-gated')).toBe(1);
    expect(probe.counts.records.get('gated')).toBe(1);

    // A denial: the script sees APPROVAL_DENIED, the call never runs.
    const denier = await connectHttp(url, { approve: false, token: TOKEN });
    const denied = await runAsTask(
      denier,
      `try { await tools.probe.record({ key: 'denied' }); } catch (error) { console.log(error.code); }`,
    );
    expect(text(denied.result)).toMatch(/^stdout:\nAPPROVAL_DENIED\n/);
    expect(probe.counts.records.get('denied')).toBeUndefined();

    // A script error is a failed task whose tasks/result is the tool error execute_code answers.
    const failing = await runAsTask(client, `throw new Error('boom')`);
    expect(failing.statuses.at(-1)).toBe('failed');
    const failed = await client.experimental.tasks.getTaskResult(failing.taskId, CallToolResultSchema);
    expect(failed.isError).toBe(true);
    expect(text(failed)).toMatch(/boom/);

    // tasks/list: this client's tasks (bound to the sha256 of its bearer token).
    const list = await client.experimental.tasks.listTasks();
    expect(list.tasks.map((task) => task.taskId)).toEqual(
      expect.arrayContaining([plain.taskId, gated.taskId, failing.taskId]),
    );

    // tasks/cancel of a running task: cancelled at once, and its upstream call is cancelled too.
    const created = await client.request(
      {
        method: 'tools/call',
        params: {
          name: 'execute_code',
          arguments: {
            code: `await tools.probe.sleep({ ms: 60000, key: 'long' }); console.log('not cancelled');`,
          },
          task: {},
        },
      },
      CreateTaskResultSchema,
    );
    const longId = created.task.taskId;
    await probe.sleepStarted('long');
    const cancelledBefore = probe.counts.cancelledSleeps;
    const cancelled = await client.experimental.tasks.cancelTask(longId);
    expect(cancelled.status).toBe('cancelled');
    expect((await client.experimental.tasks.getTask(longId)).status).toBe('cancelled');
    await expect.poll(() => probe?.counts.cancelledSleeps, { timeout: 30_000 }).toBe(cancelledBefore + 1);
    // Spec: a task in a terminal status cannot be cancelled; an unknown one is -32602 too.
    expect(await codeOf(client.experimental.tasks.cancelTask(longId))).toBe('-32602');
    expect(await codeOf(client.experimental.tasks.getTask('00000000-0000-4000-8000-000000000000'))).toBe(
      '-32602',
    );
    // A tool whose taskSupport is forbidden (absent) cannot run as a task: -32601.
    expect(
      await codeOf(
        client.request(
          { method: 'tools/call', params: { name: 'search_tools', arguments: { query: 'sleep' }, task: {} } },
          CallToolResultSchema,
        ),
      ),
    ).toBe('-32601');
    // Without params.task the answer comes in the request, as before.
    const inline = await client.callTool({
      name: 'execute_code',
      arguments: { code: `console.log('inline')` },
    });
    expect(text(inline as CallToolResult)).toMatch(/^stdout:\ninline\n/);
  }, 240_000);

  it('a server without a token offers no tasks/list (its clients cannot be told apart)', async () => {
    probe ??= await startProbeServer();
    const { url } = await startServe(probeConfig(probe.url).path);
    const client = await connectHttp(url);
    expect(client.getServerCapabilities()?.tasks).toEqual({ cancel: {}, requests: { tools: { call: {} } } });
  }, 120_000);

  it('runs execute_code as a task over stdio (the jobs backend opens at the first task)', async () => {
    probe ??= await startProbeServer();
    const config = probeConfig(probe.url, { serve: { taskPollIntervalMs: 200 } });
    const client = legacyClient({});
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'serve', '--config', config.path],
        stderr: 'pipe',
      }),
    );
    expect(client.getServerCapabilities()?.tasks?.requests).toEqual({ tools: { call: {} } });
    const run = await runAsTask(
      client,
      `await tools.probe.sleep({ ms: 200, key: 'stdio' }); console.log('over stdio');`,
    );
    expect(run.error).toBeUndefined();
    expect(run.statuses.at(-1)).toBe('completed');
    expect(text(run.result)).toMatch(/^stdout:\nover stdio\n/);
    expect(probe.counts.sleeps.get('stdio')).toBe(1);
  }, 120_000);

  it.skipIf(!hasRedisServer() && process.env.CI !== 'true')(
    'a legacy task survives the node that accepted it: kill -9 it mid-task, a session on the other node gets the result (BullMQ)',
    async () => {
      probe ??= await startProbeServer();
      redis = await startRedis();
      const config = probeConfig(probe.url);
      const queue = `legacy-tasks-${randomBytes(4).toString('hex')}`;
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
      const nodeConfig = probeConfig(probe.url, {
        jobs: { backend: 'bullmq', connection: redis.url, queue },
        serve: { taskPollIntervalMs: 200 },
      });
      const [a, b] = await Promise.all([
        startServe(nodeConfig.path, ['--token', TOKEN]),
        startServe(nodeConfig.path, ['--token', TOKEN]),
      ]);
      const first = await connectHttp(a.url, { token: TOKEN });
      const stream = first.experimental.tasks.callToolStream(
        {
          name: 'execute_code',
          arguments: {
            code: `await tools.probe.sleep({ ms: 3000, key: 'fleet' }); console.log(JSON.stringify(await tools.probe.record({ key: 'fleet' })));`,
          },
        },
        CallToolResultSchema,
        { task: {} },
      );
      const createdMessage = await stream.next();
      expect(createdMessage.value).toMatchObject({ type: 'taskCreated', task: { status: 'working' } });
      const taskId = (createdMessage.value as { task: Task }).task.taskId;
      await probe.sleepStarted('fleet');
      a.serve.child.kill('SIGKILL');
      expect((await a.serve.exited).signal).toBe('SIGKILL');
      await stream.return(undefined);
      const second = await connectHttp(b.url, { token: TOKEN });
      const task = await pollUntil(second, taskId, terminal);
      expect(task.status).toBe('completed');
      const result = await second.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      expect(text(result)).toMatch(/^stdout:\n\{"key":"fleet","count":1\}\n/);
      expect(probe.counts.records.get('fleet')).toBe(1);
    },
    240_000,
  );
});
