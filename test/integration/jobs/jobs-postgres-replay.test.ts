/**
 * The PostgreSQL backend (pg-boss) replays and takes approvals, with real parts: a real
 * PostgreSQL 15 (started for the file, stopped after), a probe MCP server that counts every side
 * effect, workers in this process, and the `codecall jobs` CLI as a process.
 *
 * - A worker that shuts down mid-job (after call 1, while call 2 runs) hands the job back; the
 *   next worker replays call 1 from the run journal in PostgreSQL: the server saw it once.
 * - A call that needs approval parks the job (`waiting-approval`) without a worker; the worker
 *   restarts; `codecall jobs approve` / `JobBackend.approve` decides; the job resumes on the new
 *   worker and the approved call runs once, the calls before it are not made again.
 */
import { spawn } from 'node:child_process';
import PgModule from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPgJobClient,
  startPgWorker,
  type JobBackend,
  type JobEvent,
  type JobWorkerHandle,
  type PendingApproval,
} from '../../../src/jobs/index.js';
import { MAIN, probeConfig, startProbeServer, type ProbeServer } from './jobs-helpers.js';
import { postgresBinDir, startPostgres, type PostgresHandle } from './postgres-helpers.js';

/** CI installs PostgreSQL: there, a missing one fails the suite instead of skipping it. */
const ON_CI = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
const missing = postgresBinDir() === undefined && !ON_CI;

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--no-node-snapshot', MAIN, 'jobs', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function untilWaitingApproval(client: JobBackend, id: string): Promise<PendingApproval> {
  const events: JobEvent[] = [];
  for await (const event of client.events(id)) {
    events.push(event);
    if (event.type === 'state' && event.state === 'waiting-approval' && event.approval) return event.approval;
    if (event.type === 'done') break;
  }
  throw new Error(`job ${id} ended without waiting for an approval: ${JSON.stringify(events)}`);
}

describe.skipIf(missing)(
  `Postgres jobs replay their journal and take approvals (real PostgreSQL 15)${missing ? ' (SKIP: initdb/pg_ctl not found)' : ''}`,
  () => {
    let pg: PostgresHandle;
    let probe: ProbeServer;
    let client: JobBackend;
    let config: string;
    const workers: JobWorkerHandle[] = [];
    const startWorker = async (queue: string): Promise<JobWorkerHandle> => {
      const worker = await startPgWorker({
        connection: pg.url,
        queue,
        concurrency: 1,
        shutdownGraceMs: 0,
        runtimes: { configs: { default: config } },
      });
      workers.push(worker);
      return worker;
    };

    beforeAll(async () => {
      pg = await startPostgres();
      probe = await startProbeServer();
      config = probeConfig(probe.url, {
        mcpServers: {
          probe: {
            type: 'http',
            url: probe.url,
            tools: { record: { requireApproval: { pointer: '/key', values: ['danger-a', 'danger-d'] } } },
          },
        },
      }).path;
    }, 120_000);

    afterAll(async () => {
      await client?.close();
      for (const worker of workers) await worker.close();
      await probe?.close();
      await pg?.stop();
    });

    it('a job handed back after call 1 resumes on another worker without making call 1 again', async () => {
      const queue = 'pg-replay';
      const first = await startWorker(queue);
      client = await createPgJobClient({ connection: pg.url, queue });
      const { id } = await client.submit({
        kind: 'exec',
        code: [
          'const one = await tools.probe.record({ key: "replay-1" });',
          'await tools.probe.sleep({ ms: 8000, key: "replay-sleep" });',
          'const two = await tools.probe.record({ key: "replay-2" });',
          'console.log("counts", one.count, two.count);',
        ].join('\n'),
      });
      await probe.sleepStarted('replay-sleep');
      expect(probe.counts.records.get('replay-1')).toBe(1);
      await first.close(); // grace 0: the attempt is aborted and the job handed back
      const handedBack = await client.get(id);
      expect(handedBack?.state).not.toBe('completed');
      await startWorker(queue);
      const done = await client.wait(id, { timeoutMs: 60_000 });
      expect(done.state).toBe('completed');
      // The resumed attempt got call 1 from the journal (count 1), and the server saw it once.
      expect(done.result?.exec?.stdout).toBe('counts 1 1\n');
      expect(probe.counts.records.get('replay-1')).toBe(1);
      expect(probe.counts.records.get('replay-2')).toBe(1);
      // The call in flight at the hand-back was made again (at-least-once).
      expect(probe.counts.sleeps.get('replay-sleep')).toBe(2);
      // A hand-back uses no attempt: one attempt made, of the three a job has.
      expect(done.attempts).toBe(3);
      expect(done.attemptsMade).toBe(1);
      expect(done.result?.attempt).toBe(1);
      await client.close();
    }, 120_000);

    it('parks on a call that needs approval, survives a worker restart, resumes after `jobs approve`', async () => {
      const queue = 'pg-approvals';
      const first = await startWorker(queue);
      client = await createPgJobClient({ connection: pg.url, queue });
      const { id } = await client.submit({
        kind: 'exec',
        code: [
          'const before = await tools.probe.record({ key: "before-a" });',
          'const danger = await tools.probe.record({ key: "danger-a" });',
          'const after = await tools.probe.record({ key: "after-a" });',
          'console.log("counts", before.count, danger.count, after.count);',
        ].join('\n'),
      });
      const approval = await untilWaitingApproval(client, id);
      expect(approval).toMatchObject({ tool: 'probe.record', args: { key: 'danger-a' }, callIndex: 1 });
      // Parked without a worker: the slot is free once the attempt has stopped.
      const freed = Date.now() + 30_000;
      while (first.running() > 0 && Date.now() < freed) await new Promise((r) => setTimeout(r, 50));
      expect(first.running()).toBe(0);
      expect(probe.counts.records.get('danger-a')).toBeUndefined();

      // The worker restarts while the job waits; the request is in PostgreSQL, not in a worker.
      await first.close();
      await startWorker(queue);
      const status = await cli(['status', id, '--postgres', pg.url, '--queue', queue]);
      expect(status.stdout).toContain('waiting-approval');
      expect(status.stdout).toContain('waits for approval of probe.record (call 1) {"key":"danger-a"}');
      const approved = await cli(['approve', id, '--postgres', pg.url, '--queue', queue, '--reason', 'ok']);
      expect(approved.stderr).toContain(`approved probe.record (call 1) of ${id}`);
      expect(approved.code).toBe(0);

      const done = await client.wait(id, { timeoutMs: 60_000 });
      expect(done.result?.status).toBe('ok');
      expect(done.result?.exec?.stdout).toBe('counts 1 1 1\n');
      expect(probe.counts.records.get('before-a')).toBe(1);
      expect(probe.counts.records.get('danger-a')).toBe(1);
      expect(probe.counts.records.get('after-a')).toBe(1);
      const late = await cli(['approve', id, '--postgres', pg.url, '--queue', queue]);
      expect(late.code).not.toBe(0);
      expect(late.stderr).toContain('waits for no approval');
      await client.close();
    }, 120_000);

    it('a deny reaches the script as APPROVAL_DENIED; the denied call never runs', async () => {
      const queue = 'pg-deny';
      await startWorker(queue);
      client = await createPgJobClient({ connection: pg.url, queue });
      const { id } = await client.submit({
        kind: 'exec',
        code: [
          'await tools.probe.record({ key: "before-d" });',
          'try { await tools.probe.record({ key: "danger-d" }); console.log("ran"); }',
          'catch (error) { console.log("caught", error.code); }',
        ].join('\n'),
      });
      await untilWaitingApproval(client, id);
      const decision = await client.approve(id, { approved: false, reason: 'no' });
      expect(decision).toMatchObject({ approved: false, callIndex: 1, tool: 'probe.record' });
      const done = await client.wait(id, { timeoutMs: 60_000 });
      expect(done.result?.exec?.stdout).toBe('caught APPROVAL_DENIED\n');
      expect(probe.counts.records.get('danger-d')).toBeUndefined();
      expect(probe.counts.records.get('before-d')).toBe(1);
      await expect(client.approve(id, { approved: true })).rejects.toMatchObject({
        code: 'JOB_NOT_WAITING_APPROVAL',
      });
    }, 120_000);

    it('a worker whose claim was taken over settles nothing: it neither completes nor forgets the newer attempt', async () => {
      const queue = 'pg-fence';
      const worker = await startWorker(queue);
      client = await createPgJobClient({ connection: pg.url, queue });
      const { id } = await client.submit({
        kind: 'exec',
        code: 'await tools.probe.sleep({ ms: 1000, key: "fence-sleep" }); console.log("done");',
      });
      await probe.sleepStarted('fence-sleep');
      // Another worker claims the job meanwhile (as after a missed heartbeat): its attempt counter moves on.
      const db = new PgModule.Pool({ connectionString: pg.url, max: 1 });
      try {
        await db.query(
          'UPDATE pgboss.job SET retry_count = retry_count + 1, retry_limit = retry_limit + 1 WHERE id = $1',
          [id],
        );
        // The first worker's attempt ends; its settle is fenced to the attempt it claimed.
        const freed = Date.now() + 30_000;
        while (worker.running() > 0 && Date.now() < freed) await new Promise((r) => setTimeout(r, 50));
        expect(worker.running()).toBe(0);
        const { rows } = await db.query<{ state: string; output: unknown }>(
          'SELECT state, output FROM pgboss.job WHERE id = $1',
          [id],
        );
        expect(rows[0]?.state).toBe('active');
        expect(rows[0]?.output).toBeNull();
      } finally {
        await db.end();
      }
    }, 120_000);
  },
);
