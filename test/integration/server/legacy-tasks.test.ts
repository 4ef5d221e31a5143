/**
 * The 2025-11-25 tasks of `createCodecallServer` (`legacy-tasks.ts`) in process: sessions of two
 * clients share one `LegacyTasks` over one embedded job backend (a real probe MCP server over
 * HTTP behind it), linked to the official SDK 1.x client with in-memory transports. A task is
 * bound to its client (another client's `tasks/get`, `tasks/result`, `tasks/cancel` are
 * `-32602` and its `tasks/list` does not show it, as the spec's § Security Considerations asks),
 * while a new session of the same client reaches it; the per-client bound and the `ttl` bound hold.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { createLocalJobBackend, type JobBackend } from '../../../src/jobs/index.js';
import { createCodecallServer } from '../../../src/server/index.js';
import { createLegacyTasks, type LegacyTasks } from '../../../src/server/legacy-tasks.js';
import { probeConfig, startProbeServer, type ProbeServer } from '../jobs/jobs-helpers.js';

let probe: ProbeServer;
let runtime: CodecallRuntime;
let jobs: JobBackend;
let tasks: LegacyTasks;
const clients: Client[] = [];

beforeAll(async () => {
  probe = await startProbeServer();
  const config = probeConfig(probe.url);
  runtime = await CodecallRuntime.open({ load: { path: config.path }, history: false });
  jobs = createLocalJobBackend({ runtimes: { configs: { default: config.path } }, concurrency: 2 });
  tasks = createLegacyTasks({ backend: jobs, ttlMs: 120_000, pollIntervalMs: 100, maxPerClient: 2 });
});

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  await jobs?.close();
  await runtime?.close();
  await probe?.close();
});

/** A session of `client` (a new server, as each HTTP session gets), and an SDK 1.x client on it. */
async function session(client: string): Promise<Client> {
  const server = createCodecallServer({
    runtime,
    legacyTasks: tasks,
    taskClient: { id: client, listable: true },
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const sdk = new Client({ name: `legacy-tasks-${client}`, version: '1.0.0' });
  await sdk.connect(clientSide);
  clients.push(sdk);
  return sdk;
}

async function create(client: Client, code: string, ttl?: number) {
  const answer = await client.request(
    {
      method: 'tools/call',
      params: { name: 'execute_code', arguments: { code }, task: ttl === undefined ? {} : { ttl } },
    },
    CreateTaskResultSchema.or(CallToolResultSchema),
  );
  return answer;
}

const codeOf = (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    () => 'answered',
    (error: { code?: unknown }) => String(error.code),
  );

describe('2025-11-25 tasks, in process', () => {
  it('binds a task to its client: another client cannot read, wait on, list or cancel it; a new session of the same client can', async () => {
    const alice = await session('alice');
    const mallory = await session('mallory');
    const created = await create(
      alice,
      `await tools.probe.sleep({ ms: 300, key: 'bound' }); console.log('mine');`,
    );
    expect('task' in created).toBe(true);
    const taskId = (created as { task: { taskId: string } }).task.taskId;

    expect(await codeOf(mallory.experimental.tasks.getTask(taskId))).toBe('-32602');
    expect(await codeOf(mallory.experimental.tasks.getTaskResult(taskId, CallToolResultSchema))).toBe(
      '-32602',
    );
    expect(await codeOf(mallory.experimental.tasks.cancelTask(taskId))).toBe('-32602');
    expect((await mallory.experimental.tasks.listTasks()).tasks.map((task) => task.taskId)).not.toContain(
      taskId,
    );

    const again = await session('alice');
    const result = await again.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: expect.stringMatching(/^stdout:\nmine\n/) }]);
    expect((await again.experimental.tasks.listTasks()).tasks.map((task) => task.taskId)).toContain(taskId);
    expect((await again.experimental.tasks.getTask(taskId)).status).toBe('completed');
  }, 60_000);

  it('bounds the unfinished tasks of one client and the ttl a client may ask for', async () => {
    const bob = await session('bob');
    const long = `await tools.probe.sleep({ ms: 30000, key: 'bound-bob' });`;
    const first = await create(bob, long, 5_000);
    expect((first as { task: { ttl: number | null } }).task.ttl).toBe(5_000);
    const second = await create(bob, long, 10 * 60 * 60 * 1_000);
    // A longer ttl than serve.taskTtlMs is cut to it.
    expect((second as { task: { ttl: number | null } }).task.ttl).toBe(120_000);
    const third = await create(bob, `console.log('third')`);
    expect('task' in third).toBe(false);
    expect(JSON.stringify(third)).toMatch(
      /2 execute_code tasks not finished yet.*serve\.maxTasksPerClient: 2/,
    );
    for (const answer of [first, second])
      await bob.experimental.tasks.cancelTask((answer as { task: { taskId: string } }).task.taskId);
  }, 60_000);
});
