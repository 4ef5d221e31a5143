/**
 * The jobs HTTP API of a real `codecall serve --http` process: the embedded backend (no Redis)
 * and the BullMQ backend (`--redis`, with a worker), behind the same bearer token, Host/Origin
 * checks and body bound as /mcp; job events as server-sent events.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker, type JobEvent, type JobRecord, type JobWorkerHandle } from '../../src/jobs/index.js';
import {
  hasRedisServer,
  probeConfig,
  startProbeServer,
  startRedis,
  type ProbeServer,
  type RedisHandle,
} from '../integration/jobs/jobs-helpers.js';
import { spawnServe, type ServeProcess } from './serve-helpers.js';

const TOKEN = 'jobs-test-token-0123456789';

async function startServe(
  config: string,
  extra: string[] = [],
): Promise<{ serve: ServeProcess; base: string }> {
  const serve = spawnServe(['--http', '--port', '0', '--token', TOKEN, '--config', config, ...extra]);
  const [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)/)) as [string, string];
  return { serve, base: url.replace(/\/mcp$/, '') };
}

async function stop(serve: ServeProcess | undefined): Promise<void> {
  if (!serve) return;
  serve.child.kill('SIGTERM');
  await serve.exited;
}

const auth = { authorization: `Bearer ${TOKEN}` };

async function post(base: string, body: unknown): Promise<Response> {
  return fetch(`${base}/v1/jobs`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** Reads the SSE stream of a job until `done`; returns the events in order. */
async function readEvents(base: string, id: string): Promise<JobEvent[]> {
  const response = await fetch(`${base}/v1/jobs/${id}/events`, { headers: auth });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/event-stream');
  const events: JobEvent[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body!) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const type = /^event: (.+)$/m.exec(block)?.[1];
      const data = /^data: (.+)$/m.exec(block)?.[1];
      if (type === undefined || data === undefined) continue;
      const event = JSON.parse(data) as JobEvent;
      expect(event.type).toBe(type);
      events.push(event);
    }
  }
  return events;
}

describe('jobs HTTP API on codecall serve --http (embedded backend)', () => {
  let probe: ProbeServer;
  let serve: ServeProcess | undefined;
  let base: string;

  beforeAll(async () => {
    probe = await startProbeServer();
    ({ serve, base } = await startServe(
      probeConfig(probe.url, { serve: { waitForServersMs: 60_000 } }).path,
    ));
    await serve.waitFor(/jobs at \/v1\/jobs \(run in this process\)/);
  });

  afterAll(async () => {
    await stop(serve);
    await probe?.close();
  });

  it('applies the token, Host and Origin checks of /mcp', async () => {
    const anonymous = await fetch(`${base}/v1/jobs`, { method: 'POST', body: '{}' });
    expect(anonymous.status).toBe(401);
    const foreign = await fetch(`${base}/v1/jobs`, { headers: { ...auth, origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    expect(probe.counts.records.size).toBe(0);
  });

  it('submits, reads and streams a job to its end', async () => {
    const created = await post(base, {
      kind: 'exec',
      code: 'const r = await tools.probe.record({ key: "http-1" }); console.log("n", r.count)',
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const events = await readEvents(base, id);
    expect(events.at(-1)?.type).toBe('done');
    expect(events.some((e) => e.type === 'progress' && e.progress.type === 'tool-call')).toBe(true);
    const response = await fetch(`${base}/v1/jobs/${id}`, { headers: auth });
    expect(response.status).toBe(200);
    const record = (await response.json()) as JobRecord;
    expect(record.result?.status).toBe('ok');
    expect(record.result?.exec?.stdout).toBe('n 1\n');
    const logs = (await (await fetch(`${base}/v1/jobs/${id}/logs`, { headers: auth })).json()) as {
      logs: string[];
    };
    expect(logs.logs.some((line) => line.startsWith('attempt 1'))).toBe(true);
    const listed = (await (await fetch(`${base}/v1/jobs?state=completed`, { headers: auth })).json()) as {
      jobs: JobRecord[];
    };
    expect(listed.jobs.map((j) => j.id)).toContain(id);
  });

  it('answers 200 for a repeated idempotency key', async () => {
    const body = {
      kind: 'exec',
      idempotencyKey: 'http-key',
      code: 'await tools.probe.record({ key: "http-idem" })',
    };
    expect((await post(base, body)).status).toBe(201);
    const again = await post(base, body);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ id: 'http-key', deduplicated: true });
  });

  it('cancels with DELETE: 202, then 409 once finished; 404 for unknown jobs', async () => {
    const { id } = (await (
      await post(base, { kind: 'exec', code: 'await tools.probe.sleep({ ms: 30000, key: "http-cancel" })' })
    ).json()) as { id: string };
    await probe.sleepStarted('http-cancel');
    const cancelled = await fetch(`${base}/v1/jobs/${id}`, { method: 'DELETE', headers: auth });
    expect(cancelled.status).toBe(202);
    const events = await readEvents(base, id);
    const done = events.at(-1);
    expect(done?.type === 'done' && done.job.result?.status).toBe('cancelled');
    expect((await fetch(`${base}/v1/jobs/${id}`, { method: 'DELETE', headers: auth })).status).toBe(409);
    expect((await fetch(`${base}/v1/jobs/unknown-job`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${base}/v1/jobs/unknown-job/events`, { headers: auth })).status).toBe(404);
  });

  it('refuses bad input with the field named, and bodies past the bound', async () => {
    const bad = await post(base, { kind: 'exec', code: 'x', attempts: 99 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/attempts:/);
    const notJson = await fetch(`${base}/v1/jobs`, { method: 'POST', headers: auth, body: '{nope' });
    expect(notJson.status).toBe(400);
    const huge = await fetch(`${base}/v1/jobs`, {
      method: 'POST',
      headers: auth,
      body: 'x'.repeat(5 * 1_048_576),
    }).catch((error: unknown) => error);
    // The server answers 413 and closes; a client still sending may see the reset instead.
    if (huge instanceof Response) expect(huge.status).toBe(413);
    else
      expect(String((huge as Error).cause ?? huge)).toMatch(/ECONNRESET|EPIPE|other side closed|SocketError/);
    expect((await fetch(`${base}/v1/jobs`, { method: 'PUT', headers: auth })).status).toBe(405);
  });
});

describe.skipIf(!hasRedisServer())('jobs HTTP API on codecall serve --http --redis (BullMQ backend)', () => {
  let redis: RedisHandle;
  let probe: ProbeServer;
  let worker: JobWorkerHandle;
  let serve: ServeProcess | undefined;
  let base: string;

  beforeAll(async () => {
    redis = await startRedis();
    probe = await startProbeServer();
    const config = probeConfig(probe.url, { serve: { waitForServersMs: 60_000 } }).path;
    worker = await startWorker({ connection: redis.url, runtimes: { configs: { default: config } } });
    ({ serve, base } = await startServe(config, ['--redis', redis.url]));
    await serve.waitFor(/jobs at \/v1\/jobs \(on BullMQ for codecall worker\)/);
  });

  afterAll(async () => {
    await stop(serve);
    await worker?.close();
    await probe?.close();
    await redis?.stop();
  });

  it('queues the job for a worker and streams its events', async () => {
    const created = await post(base, {
      kind: 'exec',
      code: 'await tools.probe.record({ key: "http-bullmq" }); console.log("via redis")',
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const events = await readEvents(base, id);
    const done = events.at(-1);
    expect(done?.type === 'done' && done.job.result?.exec?.stdout).toBe('via redis\n');
    expect(done?.type === 'done' && done.job.result?.attempt).toBe(1);
    expect(probe.counts.records.get('http-bullmq')).toBe(1);
  });
});
