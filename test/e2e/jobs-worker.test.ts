/**
 * `codecall worker` as real processes on a real redis-server: SIGTERM lets a running job finish;
 * past the grace period a running job is handed back and another worker finishes it; a worker
 * killed with SIGKILL mid-job loses the job to another worker (stalled-job detection), which
 * runs it again from the start, replaying from the job's run journal the tool calls the dead
 * worker finished: the probe server counts which tool calls ran twice.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createJobClient, type JobBackend } from '../../src/jobs/index.js';
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

describe.skipIf(!hasRedisServer())('codecall worker processes (real redis-server)', () => {
  let redis: RedisHandle;
  let probe: ProbeServer;
  let client: JobBackend;
  let config: string;
  const workers: WorkerProcess[] = [];
  const queue = 'worker-e2e';

  const worker = async (extra: string[] = []): Promise<WorkerProcess> => {
    const spawned = await spawnWorker([
      '--redis',
      redis.url,
      '--queue',
      queue,
      '--config',
      config,
      '--concurrency',
      '1',
      // Short enough to recover quickly, long enough that a live worker starved of CPU on a
      // loaded machine keeps its lock (a lost lock would run the job twice).
      '--lock-duration-ms',
      '3000',
      '--stalled-interval-ms',
      '500',
      ...extra,
    ]);
    workers.push(spawned);
    return spawned;
  };

  beforeAll(async () => {
    redis = await startRedis();
    probe = await startProbeServer();
    config = probeConfig(probe.url).path;
    client = await createJobClient({ connection: redis.url, queue });
  });

  afterEach(async () => {
    for (const spawned of workers.splice(0)) {
      if (spawned.child.exitCode === null && spawned.child.signalCode === null) spawned.child.kill('SIGKILL');
      await spawned.exited;
    }
  });

  afterAll(async () => {
    await client?.close();
    await probe?.close();
    await redis?.stop();
  });

  it('SIGTERM: stops taking jobs, lets the running job finish, exits 0', async () => {
    const a = await worker(['--shutdown-grace-ms', '20000']);
    const { id } = await client.submit({
      kind: 'exec',
      code: 'await tools.probe.sleep({ ms: 1500, key: "graceful" }); await tools.probe.record({ key: "graceful-done" }); console.log("done")',
    });
    await probe.sleepStarted('graceful');
    a.child.kill('SIGTERM');
    const record = await client.wait(id, { timeoutMs: 20_000 });
    expect(record.result?.status).toBe('ok');
    expect(record.result?.exec?.stdout).toBe('done\n');
    expect(await a.exited).toEqual({ code: 0, signal: null });
    expect(a.stderr()).toMatch(/shutting down: 1 job\(s\) running/);
    expect(probe.counts.records.get('graceful-done')).toBe(1);
  });

  it('SIGTERM past the grace period: the running job is handed back and another worker finishes it', async () => {
    const a = await worker(['--shutdown-grace-ms', '300']);
    const { id } = await client.submit({
      kind: 'exec',
      code:
        'const first = await tools.probe.record({ key: "handback-attempt" });' +
        'await tools.probe.sleep({ ms: 4000, key: "handback" });' +
        'await tools.probe.record({ key: "handback-done" });' +
        'console.log("first count", first.count);',
    });
    await probe.sleepStarted('handback');
    a.child.kill('SIGTERM');
    expect(await a.exited).toEqual({ code: 0, signal: null });
    expect(a.stderr()).toMatch(/handed back to the queue/);
    const between = await client.get(id);
    expect(between?.state).toBe('waiting');
    expect(probe.counts.records.get('handback-done')).toBeUndefined();

    await worker();
    const record = await client.wait(id, { timeoutMs: 20_000 });
    expect(record.result?.status).toBe('ok');
    // The run journal: the call the first attempt finished is answered from it, not made again;
    // the sleep it cut short (in flight at the hand-back) is made again.
    expect(record.result?.exec?.stdout).toBe('first count 1\n');
    expect(probe.counts.records.get('handback-attempt')).toBe(1);
    expect(probe.counts.sleeps.get('handback')).toBe(2);
    expect(probe.counts.records.get('handback-done')).toBe(1);
    const logs = await client.logs(id);
    expect(logs.some((line) => line.includes('handed back'))).toBe(true);
    expect(logs).toContain(
      'replaying 1 tool call(s) an earlier attempt finished; calling again those in flight when it ended: probe.sleep',
    );
  });

  it('SIGKILL mid-job: another worker takes the stalled job and completes it without repeating finished calls', async () => {
    const a = await worker();
    const { id } = await client.submit({
      kind: 'exec',
      code:
        'await tools.probe.record({ key: "kill-before" });' +
        'const n = (await tools.probe.record({ key: "kill-attempt" })).count;' +
        'await tools.probe.sleep({ ms: 4000, key: "kill" });' +
        'await tools.probe.record({ key: "kill-after" });' +
        'console.log("kill-attempt count", n);',
    });
    await probe.sleepStarted('kill');
    // Killed before the second worker starts: a start slower than the sleep (a loaded machine)
    // would otherwise let the first finish the job.
    a.child.kill('SIGKILL');
    expect((await a.exited).signal).toBe('SIGKILL');
    const b = await worker();
    const record = await client.wait(id, { timeoutMs: 30_000 });
    expect(record.state).toBe('completed');
    expect(record.result?.status).toBe('ok');
    expect(record.result?.exec?.stdout).toBe('kill-attempt count 1\n');
    expect(record.attemptsMade).toBe(2);
    // What a retry repeats: calls that finished before the kill are replayed from the job's run
    // journal in Redis (once each on the probe); the call in flight at the kill runs again.
    expect(probe.counts.records.get('kill-before')).toBe(1);
    expect(probe.counts.records.get('kill-attempt')).toBe(1);
    expect(probe.counts.sleeps.get('kill')).toBe(2);
    expect(probe.counts.records.get('kill-after')).toBe(1);
    expect(b.stderr()).toMatch(new RegExp(`job ${id} \\(exec\\) attempt 2 started`));
  }, 60_000);
});
