/**
 * Guards of the jobs HTTP API of a real `codecall serve --http` process on the embedded backend,
 * against a probe MCP server that counts every side effect: state-changing requests from another
 * origin (a page on another loopback port) are refused before they queue anything; an approval
 * needs an explicit `approved`; queued and parked (waiting-approval) jobs are bounded, and
 * `POST /v1/jobs` past a bound answers 503 with `Retry-After`.
 */
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEvent, JobRecord } from '../../src/jobs/index.js';
import { probeConfig, startProbeServer, type ProbeServer } from '../integration/jobs/jobs-helpers.js';
import { spawnServe, type ServeProcess } from './serve-helpers.js';

async function startServe(config: string): Promise<{ serve: ServeProcess; base: string }> {
  const serve = spawnServe(['--http', '--port', '0', '--config', config]);
  const [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)/)) as [string, string];
  await serve.waitFor(/jobs at \/v1\/jobs \(run in this process\)/);
  return { serve, base: url.replace(/\/mcp$/, '') };
}

async function stop(serve: ServeProcess | undefined): Promise<void> {
  if (!serve) return;
  serve.child.kill('SIGTERM');
  await serve.exited;
}

function submit(base: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}/v1/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

async function submitted(base: string, body: unknown): Promise<string> {
  const response = await submit(base, body);
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: string }).id;
}

async function listIds(base: string): Promise<string[]> {
  const { jobs } = (await (await fetch(`${base}/v1/jobs`)).json()) as { jobs: JobRecord[] };
  return jobs.map((job) => job.id);
}

/** Reads a job's SSE stream until `until` accepts an event (or `done`); returns that event. */
async function untilEvent(base: string, id: string, until: (event: JobEvent) => boolean): Promise<JobEvent> {
  const stop = new AbortController();
  const response = await fetch(`${base}/v1/jobs/${id}/events`, { signal: stop.signal });
  expect(response.status).toBe(200);
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const chunk of response.body!) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const data = /^data: (.+)$/m.exec(buffer.slice(0, end))?.[1];
        buffer = buffer.slice(end + 2);
        if (data === undefined) continue;
        const event = JSON.parse(data) as JobEvent;
        if (until(event) || event.type === 'done') return event;
      }
    }
  } finally {
    stop.abort();
  }
  throw new Error(`the event stream of ${id} ended without the event`);
}

const parked = (event: JobEvent): boolean => event.type === 'state' && event.state === 'waiting-approval';
const done = (event: JobEvent): boolean => event.type === 'done';

async function errorOf(response: Response): Promise<{ code: string; message: string }> {
  return ((await response.json()) as { error: { code: string; message: string } }).error;
}

/** The probe's `record` needs approval for keys starting "g-danger". */
function guardedConfig(probeUrl: string, jobs: Record<string, unknown> = {}): string {
  return probeConfig(probeUrl, {
    mcpServers: {
      probe: {
        type: 'http',
        url: probeUrl,
        tools: {
          record: {
            requireApproval: {
              pointer: '/key',
              values: ['g-danger', 'g-danger-c', 'g-danger-d', 'g-danger-p'],
            },
          },
        },
      },
    },
    serve: { waitForServersMs: 60_000 },
    jobs,
  }).path;
}

describe('jobs HTTP API: cross-origin writes and explicit approvals (embedded backend, no token)', () => {
  let probe: ProbeServer;
  let config: string;
  let serve: ServeProcess | undefined;
  let base: string;

  beforeAll(async () => {
    probe = await startProbeServer();
    config = guardedConfig(probe.url);
    ({ serve, base } = await startServe(config));
  });

  afterAll(async () => {
    await stop(serve);
    await probe?.close();
    if (config) rmSync(dirname(config), { recursive: true, force: true });
  });

  it('refuses a POST, DELETE or approval from a page on another loopback port (403, no job queued)', async () => {
    const port = Number(new URL(base).port);
    const other = `http://127.0.0.1:${port === 65_535 ? port - 1 : port + 1}`;
    const job = { kind: 'exec', code: 'await tools.probe.record({ key: "g-csrf" })' };
    // What a page's <form> or fetch sends: a simple content type, its Origin, Sec-Fetch-Site.
    const forged = await fetch(`${base}/v1/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', origin: other, 'sec-fetch-site': 'same-site' },
      body: JSON.stringify(job),
    });
    expect(forged.status).toBe(403);
    // The server's 403 (as for Host/Origin) is a JSON-RPC error that says why.
    const { error } = (await forged.json()) as { error: { message: string } };
    expect(error.message).toContain(`Origin "${other}" is not this server's origin`);
    // Either header alone is enough.
    expect((await submit(base, job, { origin: other })).status).toBe(403);
    expect((await submit(base, job, { 'sec-fetch-site': 'same-site' })).status).toBe(403);
    expect((await submit(base, job, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect(await listIds(base)).toEqual([]);
    expect(probe.counts.records.size).toBe(0);

    // The server's own origin (its pages), and clients that send neither header (curl, SDKs), pass.
    const own = await submit(base, job, { origin: base, 'sec-fetch-site': 'same-origin' });
    expect(own.status).toBe(201);
    const { id } = (await own.json()) as { id: string };
    await untilEvent(base, id, done);
    const sleeper = await submitted(base, {
      kind: 'exec',
      code: 'await tools.probe.sleep({ ms: 30000, key: "g-csrf-sleep" })',
    });
    await probe.sleepStarted('g-csrf-sleep');
    const cancel = await fetch(`${base}/v1/jobs/${sleeper}`, {
      method: 'DELETE',
      headers: { origin: other },
    });
    expect(cancel.status).toBe(403);
    expect((await (await fetch(`${base}/v1/jobs/${sleeper}`)).json()) as JobRecord).toMatchObject({
      state: 'active',
    });
    const approval = await fetch(`${base}/v1/jobs/${sleeper}/approvals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: other },
      body: JSON.stringify({ approved: true }),
    });
    expect(approval.status).toBe(403);
    expect((await fetch(`${base}/v1/jobs/${sleeper}`, { method: 'DELETE' })).status).toBe(202);
    // Reads from a loopback page are not state changes: unchanged.
    expect((await fetch(`${base}/v1/jobs`, { headers: { origin: other } })).status).toBe(200);
  });

  it('applies the same rule to POST /mcp, which MCP clients (no Origin) still reach', async () => {
    const other = 'http://localhost:6274';
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const forged = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...headers, origin: other },
      body: initialize,
    });
    expect(forged.status).toBe(403);
    expect(forged.headers.get('mcp-session-id')).toBeNull();
    const client = await fetch(`${base}/mcp`, { method: 'POST', headers, body: initialize });
    expect(client.status).toBe(200);
    const session = client.headers.get('mcp-session-id');
    expect(session).toBeTruthy();
    await client.body?.cancel();
    const end = await fetch(`${base}/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': session! } });
    expect(end.status).toBe(200);
  });

  it('needs an explicit "approved": {} or a reason alone is 400 and the call does not run', async () => {
    const id = await submitted(base, {
      kind: 'exec',
      code: 'await tools.probe.record({ key: "g-danger" }); console.log("ran")',
    });
    await untilEvent(base, id, parked);
    const approve = (body: unknown): Promise<Response> =>
      fetch(`${base}/v1/jobs/${id}/approvals`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    for (const body of [{}, { reason: 'looks fine' }, { approved: null }]) {
      const refused = await approve(body);
      expect(refused.status).toBe(400);
      const error = await errorOf(refused);
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.message).toContain('"approved"');
    }
    const record = (await (await fetch(`${base}/v1/jobs/${id}`)).json()) as JobRecord;
    expect(record.state).toBe('waiting-approval');
    expect(probe.counts.records.get('g-danger')).toBeUndefined();

    const denied = await approve({ approved: false, reason: 'no' });
    expect(denied.status).toBe(200);
    const end = await untilEvent(base, id, done);
    expect(end.type === 'done' && end.job.result?.status).toBe('error');
    expect(probe.counts.records.get('g-danger')).toBeUndefined();
  });
});

describe('jobs HTTP API: bounded queued and parked jobs (embedded backend)', () => {
  let probe: ProbeServer;
  let config: string;
  let serve: ServeProcess | undefined;
  let base: string;

  beforeAll(async () => {
    probe = await startProbeServer();
    config = guardedConfig(probe.url, { concurrency: 1, maxWaiting: 2, maxParked: 1 });
    ({ serve, base } = await startServe(config));
  });

  afterAll(async () => {
    await stop(serve);
    await probe?.close();
    if (config) rmSync(dirname(config), { recursive: true, force: true });
  });

  it('answers 503 with Retry-After past jobs.maxWaiting queued and jobs.maxParked parked jobs', async () => {
    // One slot: a sleeping job holds it; two approval jobs queue behind it (jobs.maxWaiting 2).
    const slot = await submitted(base, {
      kind: 'exec',
      code: 'await tools.probe.sleep({ ms: 60000, key: "g-slot" })',
    });
    await probe.sleepStarted('g-slot');
    const c = await submitted(base, {
      kind: 'exec',
      code: 'await tools.probe.record({ key: "g-danger-c" })',
    });
    const d = await submitted(base, {
      kind: 'exec',
      code: 'await tools.probe.record({ key: "g-danger-d" })',
    });
    const full = await submit(base, { kind: 'exec', code: 'console.log(1)' });
    expect(full.status).toBe(503);
    expect(Number(full.headers.get('retry-after'))).toBeGreaterThan(0);
    const fullError = await errorOf(full);
    expect(fullError.code).toBe('JOBS_QUEUE_FULL');
    expect(fullError.message).toContain('jobs.maxWaiting');
    expect((await listIds(base)).sort()).toEqual([slot, c, d].sort());

    // The slot frees: c parks (jobs.maxParked 1); d then asks too and ends, its call not made.
    expect((await fetch(`${base}/v1/jobs/${slot}`, { method: 'DELETE' })).status).toBe(202);
    await untilEvent(base, c, parked);
    // Stops at d's end, or at d parking (which it must not).
    const dEnd = await untilEvent(base, d, parked);
    expect(dEnd.type === 'done' && dEnd.job.state).toBe('failed');
    expect(dEnd.type === 'done' && dEnd.job.failedReason).toContain('jobs.maxParked');
    expect(probe.counts.records.get('g-danger-d')).toBeUndefined();

    // Nothing queued, one parked: a new job is refused until the parked one is decided.
    const parkedFull = await submit(base, { kind: 'exec', code: 'console.log(2)' });
    expect(parkedFull.status).toBe(503);
    expect(Number(parkedFull.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await errorOf(parkedFull)).message).toContain('jobs.maxParked');
    const before = await listIds(base);
    expect(before).toHaveLength(3);

    expect((await fetch(`${base}/v1/jobs/${c}`, { method: 'DELETE' })).status).toBe(202);
    const after = await submitted(base, { kind: 'exec', code: 'console.log(3)' });
    const end = await untilEvent(base, after, done);
    expect(end.type === 'done' && end.job.result?.exec?.stdout).toBe('3\n');
    expect(probe.counts.records.get('g-danger-c')).toBeUndefined();
  }, 60_000);
});
