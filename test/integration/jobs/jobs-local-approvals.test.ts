/**
 * Approvals in jobs on the embedded (in-process) backend, against a real probe MCP server that
 * counts side effects: a job waits for a decision without holding its slot (concurrency 1,
 * another job runs meanwhile), resumes after `approve` without repeating earlier calls, a deny
 * reaches the script as APPROVAL_DENIED, a request nobody decides ends the job, and a waiting
 * job can be cancelled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLocalJobBackend,
  type JobBackend,
  type JobEvent,
  type PendingApproval,
} from '../../../src/jobs/index.js';
import { probeConfig, startProbeServer, type ProbeServer } from './jobs-helpers.js';

async function untilWaitingApproval(jobs: JobBackend, id: string): Promise<PendingApproval> {
  const events: JobEvent[] = [];
  for await (const event of jobs.events(id)) {
    events.push(event);
    if (event.type === 'state' && event.state === 'waiting-approval' && event.approval) return event.approval;
    if (event.type === 'done') break;
  }
  throw new Error(`job ${id} ended without waiting for an approval: ${JSON.stringify(events)}`);
}

describe('approvals in jobs on the embedded backend', () => {
  let probe: ProbeServer;
  let jobs: JobBackend;
  let config: string;
  let timedConfig: string;

  beforeAll(async () => {
    probe = await startProbeServer();
    config = probeConfig(probe.url, {
      mcpServers: {
        probe: {
          type: 'http',
          url: probe.url,
          tools: {
            record: {
              requireApproval: { pointer: '/key', values: ['l-danger', 'l-deny', 'l-late', 'l-cancel'] },
            },
          },
        },
      },
    }).path;
    // Same, with the wait bounded by the configuration's jobs.approvalTimeoutMs.
    timedConfig = probeConfig(probe.url, {
      mcpServers: {
        probe: { type: 'http', url: probe.url, tools: { record: { requireApproval: true } } },
      },
      jobs: { approvalTimeoutMs: 500 },
    }).path;
    jobs = createLocalJobBackend({ runtimes: { configs: { default: config } }, concurrency: 1 });
  });

  afterAll(async () => {
    await jobs?.close();
    await probe?.close();
  });

  it('waits without holding its slot, resumes after approve, and makes each call once', async () => {
    const { id } = await jobs.submit({
      kind: 'exec',
      code: [
        'const a = await tools.probe.record({ key: "l-before" });',
        'const b = await tools.probe.record({ key: "l-danger" });',
        'console.log("counts", a.count, b.count);',
      ].join('\n'),
    });
    const approval = await untilWaitingApproval(jobs, id);
    expect(approval).toMatchObject({ tool: 'probe.record', args: { key: 'l-danger' }, callIndex: 1 });
    expect(await jobs.get(id)).toMatchObject({ state: 'waiting-approval', approval: { callIndex: 1 } });
    // concurrency 1: this job can only run because the waiting one gave its slot back.
    const other = await jobs.submit({ kind: 'exec', code: 'console.log("other")' });
    expect((await jobs.wait(other.id, { timeoutMs: 20_000 })).result?.exec?.stdout).toBe('other\n');
    expect(probe.counts.records.get('l-danger')).toBeUndefined();

    const decision = await jobs.approve(id, { approved: true });
    expect(decision).toMatchObject({ approved: true, tool: 'probe.record', callIndex: 1 });
    const done = await jobs.wait(id, { timeoutMs: 20_000 });
    expect(done.result?.exec?.stdout).toBe('counts 1 1\n');
    expect(probe.counts.records.get('l-before')).toBe(1);
    expect(probe.counts.records.get('l-danger')).toBe(1);
    await expect(jobs.approve(id, { approved: true })).rejects.toMatchObject({
      code: 'JOB_NOT_WAITING_APPROVAL',
    });
  });

  it('a deny reaches the script as APPROVAL_DENIED with the reason', async () => {
    const { id } = await jobs.submit({
      kind: 'exec',
      code: 'try { await tools.probe.record({ key: "l-deny" }); } catch (e) { console.log(e.code, e.message); }',
    });
    await untilWaitingApproval(jobs, id);
    await jobs.approve(id, { approved: false, reason: 'too risky' });
    const done = await jobs.wait(id, { timeoutMs: 20_000 });
    expect(done.result?.status).toBe('ok');
    expect(done.result?.exec?.stdout).toMatch(/^APPROVAL_DENIED .*too risky/);
    expect(probe.counts.records.get('l-deny')).toBeUndefined();
  });

  it('ends the job when nobody decides in time, and cancels a waiting job', async () => {
    await using timed = createLocalJobBackend({ runtimes: { configs: { default: timedConfig } } });
    const late = await timed.submit({ kind: 'exec', code: 'await tools.probe.record({ key: "l-late" });' });
    await untilWaitingApproval(timed, late.id);
    const expired = await timed.wait(late.id, { timeoutMs: 20_000 });
    expect(expired.result).toMatchObject({ status: 'expired', error: { code: 'APPROVAL_TIMEOUT' } });
    expect(probe.counts.records.get('l-late')).toBeUndefined();

    const cancelled = await jobs.submit({
      kind: 'exec',
      code: 'await tools.probe.record({ key: "l-cancel" });',
    });
    await untilWaitingApproval(jobs, cancelled.id);
    expect(await jobs.cancel(cancelled.id)).toBe(true);
    expect((await jobs.wait(cancelled.id)).result?.status).toBe('cancelled');
    expect(probe.counts.records.get('l-cancel')).toBeUndefined();
  });
});
