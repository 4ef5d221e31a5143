/**
 * Durable approvals in jobs, with real parts: a real redis-server, a `codecall worker` (in this
 * process, concurrency 1), a real `codecall serve --http --redis` process for the HTTP API, the
 * `codecall jobs` CLI as a process, and a probe MCP server that counts every side effect. A job
 * whose script makes a call that needs approval waits (`waiting-approval`) without holding its
 * worker, resumes after the decision, and replays its journal: calls made before the pause are
 * not made again, and the approved call runs exactly once.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteHistoryStore } from '../../src/index.js';
import {
  createJobClient,
  startWorker,
  type JobBackend,
  type JobEvent,
  type JobRecord,
  type JobWorkerHandle,
  type PendingApproval,
} from '../../src/jobs/index.js';
import {
  hasRedisServer,
  MAIN,
  probeConfig,
  startProbeServer,
  startRedis,
  type ProbeServer,
  type RedisHandle,
} from '../integration/jobs/jobs-helpers.js';
import { spawnServe, type ServeProcess } from './serve-helpers.js';

const TOKEN = 'jobs-approvals-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };

function cli(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--no-node-snapshot', MAIN, 'jobs', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Follows a job's events until it waits for an approval; returns that event's request and every event seen. */
async function untilWaitingApproval(
  client: JobBackend,
  id: string,
): Promise<{ approval: PendingApproval; events: JobEvent[] }> {
  const events: JobEvent[] = [];
  for await (const event of client.events(id)) {
    events.push(event);
    if (event.type === 'state' && event.state === 'waiting-approval' && event.approval)
      return { approval: event.approval, events };
    if (event.type === 'done') break;
  }
  throw new Error(`job ${id} ended without waiting for an approval: ${JSON.stringify(events)}`);
}

/** A config over the probe where `probe.record` needs approval for keys starting "danger". */
function approvalConfig(probeUrl: string): string {
  return probeConfig(probeUrl, {
    mcpServers: {
      probe: {
        type: 'http',
        url: probeUrl,
        tools: {
          record: {
            requireApproval: { pointer: '/key', values: ['danger-a', 'danger-d', 'danger-t', 'danger-x'] },
          },
        },
      },
    },
    serve: { waitForServersMs: 60_000 },
    // Relative: inside the configuration's folder.
    history: { enabled: true, path: 'history.db' },
  }).path;
}

describe.skipIf(!hasRedisServer())('approvals in BullMQ jobs (real redis-server, worker, serve, CLI)', () => {
  let redis: RedisHandle;
  let probe: ProbeServer;
  let worker: JobWorkerHandle;
  let client: JobBackend;
  let serve: ServeProcess | undefined;
  let base: string;
  let config: string;

  beforeAll(async () => {
    redis = await startRedis();
    probe = await startProbeServer();
    config = approvalConfig(probe.url);
    worker = await startWorker({
      connection: redis.url,
      concurrency: 1,
      runtimes: { configs: { default: config } },
    });
    client = await createJobClient({ connection: redis.url });
    serve = spawnServe(['--http', '--port', '0', '--token', TOKEN, '--config', config, '--redis', redis.url]);
    const [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)/)) as [string, string];
    base = url.replace(/\/mcp$/, '');
    await serve.waitFor(/jobs at \/v1\/jobs \(on BullMQ for codecall worker\)/);
  });

  afterAll(async () => {
    if (serve) {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
    await client?.close();
    await worker?.close();
    await probe?.close();
    await redis?.stop();
  });

  it('pauses on the call, frees the worker, resumes after an HTTP approve without repeating earlier calls', async () => {
    const created = await fetch(`${base}/v1/jobs`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        kind: 'exec',
        code: [
          'const before = await tools.probe.record({ key: "before-a" });',
          'const danger = await tools.probe.record({ key: "danger-a" });',
          'const after = await tools.probe.record({ key: "after-a" });',
          'console.log("counts", before.count, danger.count, after.count);',
        ].join('\n'),
      }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const { approval } = await untilWaitingApproval(client, id);
    expect(approval).toMatchObject({ tool: 'probe.record', args: { key: 'danger-a' }, callIndex: 1 });
    expect(probe.counts.records.get('before-a')).toBe(1);
    expect(probe.counts.records.get('danger-a')).toBeUndefined();

    // Status over HTTP shows the pending request.
    const status = (await (await fetch(`${base}/v1/jobs/${id}`, { headers: auth })).json()) as JobRecord;
    expect(status.state).toBe('waiting-approval');
    expect(status.approval).toMatchObject({ tool: 'probe.record', args: { key: 'danger-a' }, callIndex: 1 });

    // The only worker slot is free: another job runs to the end while this one waits.
    const other = await client.submit({
      kind: 'exec',
      code: 'await tools.probe.record({ key: "other-a" }); console.log("other done")',
    });
    const otherDone = await client.wait(other.id, { timeoutMs: 30_000 });
    expect(otherDone.result?.exec?.stdout).toBe('other done\n');
    expect((await client.get(id))?.state).toBe('waiting-approval');

    // The approvals endpoint is behind the token.
    const anonymous = await fetch(`${base}/v1/jobs/${id}/approvals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ approved: true }),
    });
    expect(anonymous.status).toBe(401);
    const bad = await fetch(`${base}/v1/jobs/${id}/approvals`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ approved: 'yes' }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain('"approved"');
    const approved = await fetch(`${base}/v1/jobs/${id}/approvals`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ approved: true, reason: 'ok by ops' }),
    });
    expect(approved.status).toBe(200);
    expect(await approved.json()).toMatchObject({
      id,
      decision: { approved: true, tool: 'probe.record', callIndex: 1, reason: 'ok by ops' },
    });

    const done = await client.wait(id, { timeoutMs: 30_000 });
    expect(done.result?.status).toBe('ok');
    // The resumed attempt got "before" from the journal (count 1), made the approved call once.
    expect(done.result?.exec?.stdout).toBe('counts 1 1 1\n');
    expect(probe.counts.records.get('before-a')).toBe(1);
    expect(probe.counts.records.get('danger-a')).toBe(1);
    expect(probe.counts.records.get('after-a')).toBe(1);

    // Decided already: a second decision is refused.
    const again = await fetch(`${base}/v1/jobs/${id}/approvals`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ approved: false }),
    });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('JOB_NOT_WAITING_APPROVAL');
  }, 90_000);

  it('a deny from `codecall jobs approve --deny` reaches the script as APPROVAL_DENIED, which it catches', async () => {
    const { id } = await client.submit({
      kind: 'exec',
      code: [
        'await tools.probe.record({ key: "before-d" });',
        'try { await tools.probe.record({ key: "danger-d" }); console.log("ran"); }',
        'catch (error) { console.log("caught", error.code, error.message); }',
      ].join('\n'),
    });
    await untilWaitingApproval(client, id);
    const env = { CODECALL_REDIS_URL: redis.url };
    const status = await cli(['status', id], env);
    expect(status.stdout).toContain('waiting-approval');
    expect(status.stdout).toContain('waits for approval of probe.record (call 1) {"key":"danger-d"}');
    const denied = await cli(['approve', id, '--deny', '--reason', 'not on a Sunday'], env);
    expect(denied.stderr).toContain(`denied probe.record (call 1) of ${id}`);
    expect(denied.code).toBe(0);
    const done = await client.wait(id, { timeoutMs: 30_000 });
    expect(done.result?.status).toBe('ok');
    const stdout = done.result?.exec?.stdout ?? '';
    expect(stdout).toMatch(/^caught APPROVAL_DENIED .*not on a Sunday/);
    expect(probe.counts.records.get('danger-d')).toBeUndefined();
    expect(probe.counts.records.get('before-d')).toBe(1);
    // Nothing waits now.
    const late = await cli(['approve', id], env);
    expect(late.code).not.toBe(0);
    expect(late.stderr).toContain('waits for no approval');
  }, 90_000);

  it('ends a job nobody decides within the approval timeout, with a clear status', async () => {
    const queue = 'approvals-timeout';
    await using _timedWorker = await startWorker({
      connection: redis.url,
      queue,
      approvalTimeoutMs: 1_000,
      runtimes: { configs: { default: approvalConfig(probe.url) } },
    });
    await using timedClient = await createJobClient({ connection: redis.url, queue });
    const { id } = await timedClient.submit({
      kind: 'exec',
      code: 'await tools.probe.record({ key: "danger-t" }); console.log("ran");',
    });
    await untilWaitingApproval(timedClient, id);
    const done = await timedClient.wait(id, { timeoutMs: 30_000 });
    expect(done.result?.status).toBe('expired');
    expect(done.result?.error?.code).toBe('APPROVAL_TIMEOUT');
    expect(done.result?.error?.message).toContain('probe.record');
    expect(probe.counts.records.get('danger-t')).toBeUndefined();
  }, 60_000);

  it('records the decisions in the audit trail as made by jobs-api', async () => {
    await worker.close(); // flushes the worker runtime's history writes
    await using store = await SqliteHistoryStore.open({ path: join(dirname(config), 'history.db') });
    const decisions = (await store.listApprovals({ limit: 100 })).filter((e) => e.decidedBy === 'jobs-api');
    expect(decisions.map((e) => `${e.outcome} ${e.tool}`).sort()).toEqual([
      'approved probe.record',
      'denied probe.record',
    ]);
  });
});
