/**
 * The BullMQ backend against a real redis-server and a real probe MCP server over HTTP: submit
 * and wait, agent jobs with the demo model, model faults that complete without a retry,
 * infrastructure faults that retry, idempotency keys, cancel, deadlines, events and logs.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createJobClient,
  startWorker,
  type JobBackend,
  type JobEvent,
  type JobWorkerHandle,
} from '../../../src/jobs/index.js';
import {
  expenseConfig,
  hasRedisServer,
  probeConfig,
  startProbeServer,
  startRedis,
  type ProbeServer,
  type RedisHandle,
} from './jobs-helpers.js';

describe.skipIf(!hasRedisServer())('jobs on BullMQ (real redis-server)', () => {
  let redis: RedisHandle;
  let probe: ProbeServer;
  let client: JobBackend;
  let worker: JobWorkerHandle;
  const queue = 'bullmq-test';

  beforeAll(async () => {
    redis = await startRedis();
    probe = await startProbeServer();
    const probeFile = probeConfig(probe.url);
    worker = await startWorker({
      connection: redis.url,
      queue,
      concurrency: 4,
      runtimes: {
        configs: {
          default: probeFile.path,
          expenses: expenseConfig().path,
          broken: {
            path: probeConfig('http://127.0.0.1:1/mcp', {
              mcpServers: { down: { command: '/nonexistent/server' } },
            }).path,
          },
        },
      },
    });
    client = await createJobClient({ connection: redis.url, queue, backoffMs: 50 });
  });

  afterAll(async () => {
    await client?.close();
    await worker?.close();
    await probe?.close();
    await redis?.stop();
  });

  it('runs an exec job: submit, wait, result, progress events and logs', async () => {
    const { id, deduplicated } = await client.submit({
      kind: 'exec',
      code: 'const r = await tools.probe.record({ key: "exec-1" }); console.log("count", r.count); return r.count;',
    });
    expect(deduplicated).toBe(false);
    const events: JobEvent[] = [];
    for await (const event of client.events(id)) events.push(event);
    const done = events.at(-1);
    expect(done?.type).toBe('done');
    const record = done?.type === 'done' ? done.job : undefined;
    expect(record?.state).toBe('completed');
    expect(record?.result?.status).toBe('ok');
    expect(record?.result?.exec?.stdout).toBe('count 1\n');
    expect(record?.result?.exec?.returnValue).toBe(1);
    expect(record?.result?.exec?.toolCalls).toEqual(['probe.record']);
    expect(
      events.some(
        (e) => e.type === 'progress' && e.progress.type === 'tool-call' && e.progress.tool === 'probe.record',
      ),
    ).toBe(true);
    expect(probe.counts.records.get('exec-1')).toBe(1);
    expect((await client.get(id))?.result?.status).toBe('ok');
    expect((await client.logs(id)).some((line) => line.startsWith('attempt 1 on '))).toBe(true);
    expect((await client.list({ states: ['completed'] })).map((r) => r.id)).toContain(id);
  });

  it("keeps a job's run journal until the queue has recorded the job's completion, then deletes it", async () => {
    // Redis MONITOR lists the commands Redis ran, in the order it ran them (all clients).
    const monitor = await new Redis(redis.url).monitor();
    const ran: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[]) => ran.push(args));
    try {
      const { id } = await client.submit({
        kind: 'exec',
        code: 'await tools.probe.record({ key: "journal-1" }); console.log("ok");',
      });
      expect((await client.wait(id, { timeoutMs: 20_000 })).state).toBe('completed');
      const journalPrefix = `bull:${queue}:codecall:journal:${id}:`;
      const deleted = () =>
        ran.findIndex(
          (args) => args[0]?.toLowerCase() === 'del' && args.some((a) => a.startsWith(journalPrefix)),
        );
      for (let i = 0; i < 100 && deleted() < 0; i++) await new Promise((r) => setTimeout(r, 20));
      // BullMQ's script that moves the job to the completed set names that set and the job's key.
      const completed = ran.findIndex(
        (args) =>
          /^eval/i.test(args[0] ?? '') &&
          args.includes(`bull:${queue}:completed`) &&
          args.includes(`bull:${queue}:${id}`),
      );
      // The journal was written (the call's entries), and deleted only after the completion was
      // recorded: a worker killed in between leaves the retry a journal to replay.
      expect(
        ran.some((args) => args[0]?.toLowerCase() === 'rpush' && args[1]?.startsWith(journalPrefix)),
      ).toBe(true);
      expect(completed).toBeGreaterThanOrEqual(0);
      expect(deleted()).toBeGreaterThan(completed);
      expect(probe.counts.records.get('journal-1')).toBe(1);
    } finally {
      monitor.disconnect();
    }
  });

  it('runs an agent job with the demo model', async () => {
    const { id } = await client.submit({
      kind: 'run',
      config: 'expenses',
      model: 'demo',
      prompt: 'Which team members exceeded their Q3 travel budget?',
    });
    const record = await client.wait(id, { timeoutMs: 60_000 });
    expect(record.result?.status).toBe('ok');
    expect(record.result?.run?.answer).toMatch(/exceeded their Q3 travel budget/);
    expect(record.result?.run?.steps).toBeGreaterThanOrEqual(2);
  }, 90_000);

  it('completes a job whose script fails with status "error" and does not retry it', async () => {
    const { id } = await client.submit({
      kind: 'exec',
      attempts: 3,
      code: 'await tools.probe.record({ key: "fault-1" }); throw new Error("the model got it wrong");',
    });
    const record = await client.wait(id, { timeoutMs: 20_000 });
    expect(record.state).toBe('completed');
    expect(record.result?.status).toBe('error');
    expect(record.result?.error?.message).toMatch(/the model got it wrong/);
    expect(record.attemptsMade).toBe(1);
    expect(probe.counts.records.get('fault-1')).toBe(1);
  });

  it('retries infrastructure faults with backoff, then fails; an unknown configuration fails at once', async () => {
    const broken = await client.submit({
      kind: 'exec',
      config: 'broken',
      attempts: 2,
      code: 'console.log(1)',
    });
    const failed = await client.wait(broken.id, { timeoutMs: 30_000 });
    expect(failed.state).toBe('failed');
    expect(failed.attemptsMade).toBe(2);
    expect((await client.logs(broken.id)).filter((l) => l.includes('failed:')).length).toBe(2);

    const unknown = await client.submit({
      kind: 'exec',
      config: 'nope',
      attempts: 3,
      code: 'console.log(1)',
    });
    const refused = await client.wait(unknown.id, { timeoutMs: 20_000 });
    expect(refused.state).toBe('failed');
    expect(refused.attemptsMade).toBe(1);
    expect(refused.failedReason).toMatch(/No configuration named "nope"/);
  }, 60_000);

  it('dedupes by idempotency key: the second submit queues nothing and the side effect happens once', async () => {
    const spec = {
      kind: 'exec' as const,
      idempotencyKey: 'report-2026-01',
      code: 'await tools.probe.record({ key: "idem" })',
    };
    const first = await client.submit(spec);
    const second = await client.submit({ ...spec, code: 'await tools.probe.record({ key: "idem-other" })' });
    expect(second).toEqual({ id: 'report-2026-01', deduplicated: true });
    expect(first.id).toBe('report-2026-01');
    await client.wait(first.id, { timeoutMs: 20_000 });
    const third = await client.submit(spec);
    expect(third.deduplicated).toBe(true);
    expect(probe.counts.records.get('idem')).toBe(1);
    expect(probe.counts.records.get('idem-other')).toBeUndefined();
  });

  it('cancels a running job: the tool call in flight is aborted and the job completes "cancelled"', async () => {
    const { id } = await client.submit({
      kind: 'exec',
      code: 'await tools.probe.sleep({ ms: 30000, key: "cancel-1" }); await tools.probe.record({ key: "after-cancel" });',
    });
    await probe.sleepStarted('cancel-1');
    const before = probe.counts.cancelledSleeps;
    const started = Date.now();
    expect(await client.cancel(id)).toBe(true);
    const record = await client.wait(id, { timeoutMs: 10_000 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(record.state).toBe('completed');
    expect(record.result?.status).toBe('cancelled');
    expect(record.cancelRequested).toBe(true);
    expect(probe.counts.records.get('after-cancel')).toBeUndefined();
    await expect.poll(() => probe.counts.cancelledSleeps).toBeGreaterThan(before);
    expect(await client.cancel(id)).toBe(false);
  });

  it('does not start a job whose deadline passed', async () => {
    const { id } = await client.submit({
      kind: 'exec',
      deadline: new Date(Date.now() - 1_000).toISOString(),
      code: 'await tools.probe.record({ key: "late" })',
    });
    const record = await client.wait(id, { timeoutMs: 10_000 });
    expect(record.result?.status).toBe('expired');
    expect(probe.counts.records.get('late')).toBeUndefined();
  });

  it('refuses a bad spec naming the field, and reports unknown jobs', async () => {
    await expect(client.submit({ kind: 'exec', code: '' } as never)).rejects.toThrow(/code:/);
    await expect(client.submit({ kind: 'exec', code: 'x', priority: 0 } as never)).rejects.toThrow(
      /priority:/,
    );
    await expect(client.submit({ kind: 'exec', code: 'x', idempotencyKey: '42' })).rejects.toThrow(
      /idempotencyKey: .*digits/,
    );
    const labels = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`l${i}`, 'x']));
    await expect(client.submit({ kind: 'exec', code: 'x', labels })).rejects.toThrow(
      /labels: has more than 32 labels/,
    );
    await expect(
      client.submit({ kind: 'run', prompt: 'x', baseURL: 'https://evil.example' } as never),
    ).rejects.toThrow(/baseURL/);
    expect(await client.get('no-such-job')).toBeUndefined();
    await expect(client.wait('no-such-job')).rejects.toMatchObject({ code: 'JOB_NOT_FOUND' });
  });
});
