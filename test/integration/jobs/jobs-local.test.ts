/**
 * The embedded (in-process) backend: the same API as BullMQ with no Redis, against a real probe
 * MCP server over HTTP: exec and run jobs, model faults, idempotency, cancel (waiting and
 * running), priority order, events, and the retention bound.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalJobBackend, type JobBackend, type JobEvent } from '../../../src/jobs/index.js';
import { expenseConfig, probeConfig, startProbeServer, type ProbeServer } from './jobs-helpers.js';

describe('embedded job backend', () => {
  let probe: ProbeServer;
  let jobs: JobBackend;

  beforeAll(async () => {
    probe = await startProbeServer();
    jobs = createLocalJobBackend({
      runtimes: { configs: { default: probeConfig(probe.url).path, expenses: expenseConfig().path } },
      concurrency: 1,
      maxJobs: 8,
    });
  });

  afterAll(async () => {
    await jobs?.close();
    await probe?.close();
  });

  it('runs an exec job with events ending in done', async () => {
    const { id } = await jobs.submit({
      kind: 'exec',
      code: 'const r = await tools.probe.record({ key: "local-1" }); console.log(r.count)',
    });
    const events: JobEvent[] = [];
    for await (const event of jobs.events(id)) events.push(event);
    expect(events[0]).toEqual({ type: 'state', id, state: expect.stringMatching(/waiting|active/) });
    expect(events.some((e) => e.type === 'progress' && e.progress.type === 'tool-call')).toBe(true);
    const last = events.at(-1);
    expect(last?.type === 'done' && last.job.result?.exec?.stdout).toBe('1\n');
    expect((await jobs.get(id))?.state).toBe('completed');
    expect(await jobs.logs(id)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^attempt 1 on local:/)]),
    );
  });

  it('runs an agent job with the demo model', async () => {
    const { id } = await jobs.submit({
      kind: 'run',
      config: 'expenses',
      model: 'demo',
      prompt: 'Which team members exceeded their Q3 travel budget?',
    });
    const record = await jobs.wait(id, { timeoutMs: 60_000 });
    expect(record.result?.status).toBe('ok');
    expect(record.result?.run?.answer).toMatch(/exceeded their Q3 travel budget/);
  }, 90_000);

  it('completes a failing script with status error after one attempt', async () => {
    const { id } = await jobs.submit({
      kind: 'exec',
      code: 'await tools.probe.record({ key: "local-fault" }); throw new Error("nope")',
    });
    const record = await jobs.wait(id);
    expect(record.result?.status).toBe('error');
    expect(record.attemptsMade).toBe(1);
    expect(probe.counts.records.get('local-fault')).toBe(1);
  });

  it('dedupes by idempotency key', async () => {
    const spec = {
      kind: 'exec' as const,
      idempotencyKey: 'local-key',
      code: 'await tools.probe.record({ key: "local-idem" })',
    };
    const first = await jobs.submit(spec);
    expect(await jobs.submit(spec)).toEqual({ id: first.id, deduplicated: true });
    await jobs.wait(first.id);
    expect(probe.counts.records.get('local-idem')).toBe(1);
  });

  it('cancels running and waiting jobs; runs waiting jobs by priority', async () => {
    const running = await jobs.submit({
      kind: 'exec',
      code: 'await tools.probe.sleep({ ms: 30000, key: "local-cancel" })',
    });
    await probe.sleepStarted('local-cancel');
    // concurrency 1: these wait behind the running job.
    const waiting = await jobs.submit({ kind: 'exec', code: 'await tools.probe.record({ key: "never" })' });
    const low = await jobs.submit({
      kind: 'exec',
      priority: 5,
      code: 'await tools.probe.record({ key: "order-low" })',
    });
    const high = await jobs.submit({
      kind: 'exec',
      priority: 1,
      code: 'await tools.probe.record({ key: "order-high" })',
    });
    expect(await jobs.cancel(waiting.id)).toBe(true);
    expect((await jobs.get(waiting.id))?.result?.status).toBe('cancelled');
    expect(await jobs.cancel(running.id)).toBe(true);
    expect((await jobs.wait(running.id, { timeoutMs: 10_000 })).result?.status).toBe('cancelled');
    const [highDone, lowDone] = await Promise.all([jobs.wait(high.id), jobs.wait(low.id)]);
    expect(highDone.finishedAt!).toBeLessThanOrEqual(lowDone.startedAt!);
    expect(probe.counts.records.get('never')).toBeUndefined();
    expect(await jobs.cancel(running.id)).toBe(false);
  });

  it('keeps at most maxJobs jobs, dropping the oldest finished', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 10; i++)
      ids.push((await jobs.submit({ kind: 'exec', code: `console.log(${i})` })).id);
    await jobs.wait(ids.at(-1)!);
    const listed = await jobs.list({ limit: 100 });
    expect(listed.length).toBeLessThanOrEqual(8);
    expect(listed[0]?.id).toBe(ids.at(-1));
    expect(await jobs.get(ids[0]!)).toBeUndefined();
  });

  it('times out a wait without stopping the job', async () => {
    const { id } = await jobs.submit({
      kind: 'exec',
      code: 'await tools.probe.sleep({ ms: 800, key: "local-wait" })',
    });
    await expect(jobs.wait(id, { timeoutMs: 50 })).rejects.toMatchObject({ code: 'JOB_WAIT_TIMEOUT' });
    expect((await jobs.wait(id, { timeoutMs: 10_000 })).result?.status).toBe('ok');
  });
});
