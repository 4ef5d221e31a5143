/**
 * Guards of a real `codecall serve --http --redis --dashboard` process (BullMQ backend, a real
 * redis-server, no worker: submitted jobs stay waiting): the cap on job event streams holds under
 * 150 concurrent requests and gives every slot back when clients leave, even before the first
 * event (Redis is paused with SIGSTOP so that first events wait); the dashboard refuses
 * cookie-authenticated writes from a page on another loopback port; and `POST /v1/jobs` answers
 * 503 with `Retry-After` while Redis is paused or down instead of hanging.
 */
import { rmSync } from 'node:fs';
import { request as httpRequest, type ClientRequest } from 'node:http';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_JOBS_ENQUEUE_TIMEOUT_MS,
  DEFAULT_JOBS_MAX_EVENT_STREAMS,
} from '../../src/config/defaults.js';
import { createJobClient, type JobBackend } from '../../src/jobs/index.js';
import {
  hasRedisServer,
  probeConfig,
  startProbeServer,
  startRedis,
  type ProbeServer,
  type RedisHandle,
} from '../integration/jobs/jobs-helpers.js';
import { spawnServe, type ServeProcess } from './serve-helpers.js';

const TOKEN = 'jobs-guards-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };

async function startServe(config: string, redisUrl: string): Promise<{ serve: ServeProcess; base: string }> {
  const serve = spawnServe([
    '--http',
    '--port',
    '0',
    '--token',
    TOKEN,
    '--config',
    config,
    '--redis',
    redisUrl,
    '--dashboard',
  ]);
  const [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)/)) as [string, string];
  await serve.waitFor(/jobs at \/v1\/jobs \(on BullMQ for codecall worker\)/);
  return { serve, base: url.replace(/\/mcp$/, '') };
}

async function stop(serve: ServeProcess | undefined): Promise<void> {
  if (!serve) return;
  serve.child.kill('SIGTERM');
  await serve.exited;
}

async function submit(base: string): Promise<string> {
  const response = await fetch(`${base}/v1/jobs`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ kind: 'exec', code: 'console.log("never runs: no worker")' }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: string }).id;
}

/** An event-stream request on its own connection; `status` resolves with the status, or 0 once destroyed. */
interface Stream {
  request: ClientRequest;
  /** The request is written to the socket. */
  sent: Promise<void>;
  status: Promise<number>;
  retryAfter: Promise<string | undefined>;
}

function openStream(base: string, id: string): Stream {
  const request = httpRequest(`${base}/v1/jobs/${id}/events`, { headers: auth, agent: false });
  const sent = new Promise<void>((resolve) => {
    request.once('finish', resolve);
    request.once('error', () => resolve());
  });
  const response = new Promise<{ status: number; retryAfter?: string }>((resolve) => {
    request.once('response', (message) => {
      const retryAfter = message.headers['retry-after'];
      resolve({ status: message.statusCode ?? 0, ...(retryAfter !== undefined ? { retryAfter } : {}) });
      message.resume();
      message.on('error', () => {});
    });
    request.once('error', () => resolve({ status: 0 }));
  });
  request.end();
  return {
    request,
    sent,
    status: response.then((r) => r.status),
    retryAfter: response.then((r) => r.retryAfter),
  };
}

/** A request that needs no Redis: once it is answered, the server has read what was sent before. */
async function barrier(base: string): Promise<void> {
  expect((await fetch(`${base}/not-a-route`)).status).toBe(404);
}

/** Runs `body` with redis-server paused (SIGSTOP), and always resumes it. */
async function whilePaused(redis: RedisHandle, body: () => Promise<void>): Promise<void> {
  process.kill(redis.pid, 'SIGSTOP');
  try {
    await body();
  } finally {
    process.kill(redis.pid, 'SIGCONT');
  }
}

const count = (values: number[], value: number): number => values.filter((v) => v === value).length;

describe.skipIf(!hasRedisServer())('jobs event streams and dashboard writes (BullMQ backend)', () => {
  const cap = DEFAULT_JOBS_MAX_EVENT_STREAMS;
  let redis: RedisHandle;
  let probe: ProbeServer;
  let config: string;
  let client: JobBackend;
  let serve: ServeProcess | undefined;
  let base: string;
  let id: string;

  beforeAll(async () => {
    redis = await startRedis();
    probe = await startProbeServer();
    config = probeConfig(probe.url, { serve: { waitForServersMs: 60_000 } }).path;
    ({ serve, base } = await startServe(config, redis.url));
    client = await createJobClient({ connection: redis.url });
    id = await submit(base);
    // One stream to its first event, so the backend's event listener is connected before the tests.
    const warm = openStream(base, id);
    expect(await warm.status).toBe(200);
    warm.request.destroy();
  });

  afterAll(async () => {
    await stop(serve);
    await client?.close();
    await probe?.close();
    await redis?.stop();
    if (config) rmSync(dirname(config), { recursive: true, force: true });
  });

  it('opens exactly the cap of 150 concurrent streams; the rest get 503 with Retry-After', async () => {
    let streams: Stream[] = [];
    // Redis paused: no first event arrives until every request has been read and counted.
    await whilePaused(redis, async () => {
      streams = Array.from({ length: 150 }, () => openStream(base, id));
      await Promise.all(streams.map((s) => s.sent));
      await barrier(base);
    });
    try {
      const statuses = await Promise.all(streams.map((s) => s.status));
      expect(count(statuses, 200)).toBe(cap);
      expect(count(statuses, 503)).toBe(150 - cap);
      for (const [index, status] of statuses.entries())
        if (status === 503) expect(Number(await streams[index]!.retryAfter)).toBeGreaterThan(0);
    } finally {
      for (const stream of streams) stream.request.destroy();
    }
  }, 60_000);

  it('gives the slot back when a client leaves before the first event', async () => {
    await whilePaused(redis, async () => {
      const early = Array.from({ length: cap + 6 }, () => openStream(base, id));
      await Promise.all(early.map((s) => s.sent));
      await barrier(base);
      for (const stream of early) stream.request.destroy();
      await barrier(base);
    });
    // Goes through Redis after the first events of the streams above: they have arrived when it answers.
    expect((await fetch(`${base}/v1/jobs/${id}`, { headers: auth })).status).toBe(200);
    const later = Array.from({ length: cap }, () => openStream(base, id));
    try {
      const statuses = await Promise.all(later.map((s) => s.status));
      expect(count(statuses, 200)).toBe(cap);
    } finally {
      for (const stream of later) stream.request.destroy();
    }
  }, 60_000);

  it('refuses cookie-authenticated dashboard writes from another loopback port (403, nothing queued)', async () => {
    const login = await fetch(`${base}/admin/queues?token=${TOKEN}`, { redirect: 'manual' });
    expect(login.status).toBe(303);
    const setCookie = login.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/; SameSite=Strict/);
    const cookie = setCookie.split(';')[0]!;
    const port = Number(new URL(base).port);
    const other = `http://127.0.0.1:${port === 65_535 ? port - 1 : port + 1}`;
    const add = (headers: Record<string, string>): Promise<Response> =>
      fetch(`${base}/admin/queues/api/queues/codecall/add`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ name: 'exec', data: { kind: 'exec', code: 'console.log("forged")' } }),
      });
    const before = (await client.list()).length;

    const forged = await add({ origin: other, 'sec-fetch-site': 'same-site' });
    expect(forged.status).toBe(403);
    // The server's 403 (as for Host/Origin) is a JSON-RPC error that says why.
    const { error } = (await forged.json()) as { error: { message: string } };
    expect(error.message).toContain(`Origin "${other}" is not this server's origin`);
    expect((await add({ origin: other })).status).toBe(403);
    expect((await add({ 'sec-fetch-site': 'same-site' })).status).toBe(403);
    // A cookie write that says nothing of where it comes from was not made by the board's page.
    const bare = await add({});
    expect(bare.status).toBe(403);
    expect(await bare.text()).toContain('must come from the page itself');
    const pause = await fetch(`${base}/admin/queues/api/queues/codecall/pause`, {
      method: 'PUT',
      headers: { cookie, origin: other },
    });
    expect(pause.status).toBe(403);
    expect((await client.list()).length).toBe(before);
    const queues = (await (
      await fetch(`${base}/admin/queues/api/queues`, { headers: { cookie, origin: other } })
    ).json()) as { queues: { name: string; isPaused: boolean }[] };
    expect(queues.queues.map((q) => [q.name, q.isPaused])).toEqual([['codecall', false]]);

    // The board's own page (same origin) still can: the refusal above was the origin, not the cookie.
    const own = await add({ origin: base, 'sec-fetch-site': 'same-origin' });
    expect(own.status).toBe(200);
    expect((await client.list()).length).toBe(before + 1);
  });

  it(
    'answers 503 with Retry-After while Redis does not answer (paused), within the enqueue timeout',
    async () => {
      const bound = DEFAULT_JOBS_ENQUEUE_TIMEOUT_MS + 20_000;
      const job = { kind: 'exec', code: 'console.log(1)', idempotencyKey: 'guards-paused-1' };
      let answer: unknown;
      await whilePaused(redis, async () => {
        answer = await fetch(`${base}/v1/jobs`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify(job),
          signal: AbortSignal.timeout(bound),
        }).catch((error: unknown) => error);
      });
      expect(answer, `no answer within ${bound} ms`).toBeInstanceOf(Response);
      const response = answer as Response;
      expect(response.status).toBe(503);
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
      const { error } = (await response.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('JOBS_BACKEND_UNAVAILABLE');
      expect(error.message).toContain('same idempotencyKey');
      // Redis may have taken it after all once resumed: the same key queues it at most once.
      const again = await fetch(`${base}/v1/jobs`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(job),
      });
      expect([200, 201]).toContain(again.status);
      expect((await client.list()).filter((record) => record.id === job.idempotencyKey)).toHaveLength(1);
    },
    DEFAULT_JOBS_ENQUEUE_TIMEOUT_MS + 40_000,
  );
});

describe.skipIf(!hasRedisServer())('POST /v1/jobs while Redis is down (BullMQ backend)', () => {
  let redis: RedisHandle;
  let probe: ProbeServer;
  let config: string;
  let serve: ServeProcess | undefined;
  let base: string;

  beforeAll(async () => {
    redis = await startRedis();
    probe = await startProbeServer();
    config = probeConfig(probe.url, { serve: { waitForServersMs: 60_000 } }).path;
    ({ serve, base } = await startServe(config, redis.url));
  });

  afterAll(async () => {
    await stop(serve);
    await probe?.close();
    await redis?.stop();
    if (config) rmSync(dirname(config), { recursive: true, force: true });
  });

  it(
    'answers 503 with Retry-After within the enqueue timeout, not never',
    async () => {
      await submit(base);
      await redis.stop();
      const bound = DEFAULT_JOBS_ENQUEUE_TIMEOUT_MS + 20_000;
      const response = await fetch(`${base}/v1/jobs`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ kind: 'exec', code: 'console.log(1)' }),
        signal: AbortSignal.timeout(bound),
      }).catch((error: unknown) => error);
      expect(response, `no answer within ${bound} ms`).toBeInstanceOf(Response);
      const answer = response as Response;
      expect(answer.status).toBe(503);
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
      const { error } = (await answer.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('JOBS_BACKEND_UNAVAILABLE');
      // Refused at once, not buffered by the Redis client to be sent once Redis is back.
      expect(error.message).toContain('Nothing was queued');
    },
    DEFAULT_JOBS_ENQUEUE_TIMEOUT_MS + 40_000,
  );
});
