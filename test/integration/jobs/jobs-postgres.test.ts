/**
 * The PostgreSQL backend (pg-boss) against a real PostgreSQL 15 server started for the test and a
 * real probe MCP server over HTTP: submit and wait, model faults that complete without a retry,
 * infrastructure faults that retry then fail, an unknown configuration that fails at once,
 * idempotency keys, cancel of a running job, list, and `jobs.backend: "postgres"`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPgJobClient,
  openJobBackend,
  RuntimeRegistry,
  startPgWorker,
  type JobBackend,
  type JobEvent,
  type JobWorkerHandle,
} from '../../../src/jobs/index.js';
import { parseConfig } from '../../../src/config/index.js';
import { probeConfig, spawnWorker, startProbeServer, type ProbeServer } from './jobs-helpers.js';
import { postgresBinDir, startPostgres, type PostgresHandle } from './postgres-helpers.js';

const missing = postgresBinDir() === undefined;

describe.skipIf(missing)(
  `jobs on PostgreSQL (pg-boss, real PostgreSQL 15)${missing ? ' (SKIP: initdb/pg_ctl not found; apt-get install postgresql-15)' : ''}`,
  () => {
    let pg: PostgresHandle;
    let probe: ProbeServer;
    let client: JobBackend;
    let worker: JobWorkerHandle;
    const queue = 'pg-test';

    beforeAll(async () => {
      pg = await startPostgres();
      probe = await startProbeServer();
      worker = await startPgWorker({
        connection: pg.url,
        queue,
        concurrency: 4,
        shutdownGraceMs: 2_000,
        runtimes: {
          configs: {
            default: probeConfig(probe.url).path,
            broken: {
              path: probeConfig('http://127.0.0.1:1/mcp', {
                mcpServers: { down: { command: '/nonexistent/server' } },
              }).path,
            },
          },
        },
      });
      client = await createPgJobClient({ connection: pg.url, queue });
    }, 120_000);

    afterAll(async () => {
      await client?.close();
      await worker?.close();
      await probe?.close();
      await pg?.stop();
    });

    it('runs an exec job: submit, events, result, logs', async () => {
      const { id, deduplicated } = await client.submit({
        kind: 'exec',
        code: 'const r = await tools.probe.record({ key: "pg-1" }); console.log("count", r.count)',
        labels: { team: 'finance' },
      });
      expect(deduplicated).toBe(false);
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const events: JobEvent[] = [];
      for await (const event of client.events(id)) events.push(event);
      const done = events.at(-1);
      expect(done?.type).toBe('done');
      const record = done?.type === 'done' ? done.job : undefined;
      expect(record?.state).toBe('completed');
      expect(record?.result?.status).toBe('ok');
      expect(record?.result?.exec?.stdout).toBe('count 1\n');
      expect(record?.labels).toEqual({ team: 'finance' });
      expect(record?.attemptsMade).toBe(1);
      expect(await client.logs(id)).toContain('completed: ok');
      expect((await client.list({ states: ['completed'] })).map((j) => j.id)).toContain(id);
    });

    it('completes a job whose script fails with status "error" and does not retry it', async () => {
      const { id } = await client.submit({
        kind: 'exec',
        attempts: 3,
        code: 'await tools.probe.record({ key: "pg-fault" }); throw new Error("the model got it wrong");',
      });
      const record = await client.wait(id, { timeoutMs: 30_000 });
      expect(record.state).toBe('completed');
      expect(record.result?.status).toBe('error');
      expect(record.result?.error?.message).toMatch(/the model got it wrong/);
      expect(record.attemptsMade).toBe(1);
      expect(probe.counts.records.get('pg-fault')).toBe(1);
    });

    it('retries infrastructure faults, then fails; an unknown configuration fails at once', async () => {
      const broken = await client.submit({
        kind: 'exec',
        config: 'broken',
        attempts: 2,
        code: 'console.log(1)',
      });
      const unknown = await client.submit({
        kind: 'exec',
        config: 'nope',
        attempts: 3,
        code: 'console.log(1)',
      });
      const failed = await client.wait(broken.id, { timeoutMs: 60_000 });
      expect(failed.state).toBe('failed');
      expect(failed.attemptsMade).toBe(2);
      const refused = await client.wait(unknown.id, { timeoutMs: 30_000 });
      expect(refused.state).toBe('failed');
      expect(refused.attemptsMade).toBe(1);
      expect(refused.failedReason).toMatch(/No configuration named "nope"/);
    }, 90_000);

    it('dedupes by idempotency key: the second submit queues nothing and the side effect happens once', async () => {
      const spec = {
        kind: 'exec' as const,
        idempotencyKey: 'report-2026-01',
        code: 'await tools.probe.record({ key: "pg-idem" })',
      };
      const first = await client.submit(spec);
      const second = await client.submit({
        ...spec,
        code: 'await tools.probe.record({ key: "pg-idem-other" })',
      });
      expect(second).toEqual({ id: first.id, deduplicated: true });
      await client.wait(first.id, { timeoutMs: 30_000 });
      expect((await client.submit(spec)).deduplicated).toBe(true);
      expect(probe.counts.records.get('pg-idem')).toBe(1);
      expect(probe.counts.records.get('pg-idem-other')).toBeUndefined();
    });

    it('cancels a running job: its tool call in flight is aborted and it completes "cancelled"', async () => {
      const { id } = await client.submit({
        kind: 'exec',
        code: 'await tools.probe.sleep({ ms: 30000, key: "pg-cancel" }); await tools.probe.record({ key: "pg-after-cancel" });',
      });
      await probe.sleepStarted('pg-cancel');
      const before = probe.counts.cancelledSleeps;
      expect(await client.cancel(id)).toBe(true);
      const record = await client.wait(id, { timeoutMs: 10_000 });
      expect(record.state).toBe('completed');
      expect(record.result?.status).toBe('cancelled');
      await expect.poll(() => probe.counts.cancelledSleeps, { timeout: 10_000 }).toBeGreaterThan(before);
      expect(probe.counts.records.get('pg-after-cancel')).toBeUndefined();
      expect(await client.cancel(id)).toBe(false);
    });

    it('is what jobs.backend "postgres" opens, and reports unknown jobs', async () => {
      const backend = await openJobBackend({
        jobs: parseConfig({ jobs: { backend: 'postgres', connection: pg.url, queue } }, { file: 'memory' })
          .jobs,
        runtimes: new RuntimeRegistry({ configs: {} }),
      });
      try {
        expect(backend.kind).toBe('postgres');
        const { id } = await backend.submit({ kind: 'exec', code: 'console.log("via config")' });
        expect((await backend.wait(id, { timeoutMs: 30_000 })).result?.exec?.stdout).toBe('via config\n');
        await expect(backend.wait('no-such-job')).rejects.toMatchObject({ code: 'JOB_NOT_FOUND' });
        expect(await backend.get('00000000-0000-4000-8000-000000000000')).toBeUndefined();
      } finally {
        await backend.close();
      }
    });

    it('codecall worker --postgres consumes the queue and stops on SIGTERM', async () => {
      const cliQueue = 'pg-cli';
      const cli = await createPgJobClient({ connection: pg.url, queue: cliQueue });
      const spawned = await spawnWorker([
        '--postgres',
        pg.url,
        '--queue',
        cliQueue,
        '--config',
        probeConfig(probe.url).path,
      ]);
      try {
        expect(spawned.stderr()).toMatch(/consuming queue "pg-cli" on PostgreSQL 127\.0\.0\.1:\d+/);
        const { id } = await cli.submit({
          kind: 'exec',
          code: 'await tools.probe.record({ key: "pg-cli" }); console.log("cli")',
        });
        const record = await cli.wait(id, { timeoutMs: 60_000 });
        expect(record.result?.exec?.stdout).toBe('cli\n');
        expect(probe.counts.records.get('pg-cli')).toBe(1);
      } finally {
        spawned.child.kill('SIGTERM');
        expect((await spawned.exited).code).toBe(0);
        await cli.close();
      }
    }, 90_000);
  },
);
