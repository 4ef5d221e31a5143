/**
 * The BullMQ dashboard (`@bull-board`) of a real `codecall serve --http --redis --dashboard`
 * process, behind the server's token: the HTTP checks with fetch, then a real headless Chromium
 * (Debian's `chromium`, driven by puppeteer-core, no browser download) that opens
 * `/admin/queues?token=…` like a person would and must show the queue and a finished job, checked
 * in the DOM text and in a screenshot.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJobClient, startWorker, type JobBackend, type JobWorkerHandle } from '../../src/jobs/index.js';
import {
  hasRedisServer,
  probeConfig,
  startProbeServer,
  startRedis,
  type ProbeServer,
  type RedisHandle,
} from '../integration/jobs/jobs-helpers.js';
import { spawnServe, type ServeProcess } from './serve-helpers.js';

const TOKEN = 'dashboard-test-token-0123456789';
const JOB_KEY = 'dashboard-report-1';

/** Debian's chromium (CI installs it: .ci/run), or $CODECALL_CHROMIUM. */
function findChromium(): string | undefined {
  const candidates = [process.env.CODECALL_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  for (const path of candidates) if (path && existsSync(path)) return path;
  const which = spawnSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], {
    encoding: 'utf8',
  });
  return which.status === 0 && which.stdout.trim() !== '' ? which.stdout.trim() : undefined;
}

const chromium = findChromium();
const redisMissing = !hasRedisServer();
const skipReason = redisMissing
  ? 'SKIP: redis-server not found (apt-get install redis-server)'
  : chromium === undefined
    ? 'SKIP: chromium not found (apt-get install chromium, or set $CODECALL_CHROMIUM)'
    : '';

/** What the page functions read (they run in the browser; the tests are typed without the DOM lib). */
type BrowserGlobals = { document: { body: { innerText: string } } };
const bodyText = (): string => (globalThis as unknown as BrowserGlobals).document.body.innerText;
const bodyIncludes = (text: string): boolean =>
  (globalThis as unknown as BrowserGlobals).document.body.innerText.includes(text);

async function stop(serve: ServeProcess | undefined): Promise<void> {
  if (!serve) return;
  serve.child.kill('SIGTERM');
  await serve.exited;
}

describe('jobs dashboard flag', () => {
  it('refuses --dashboard without a BullMQ queue, naming the fix', async () => {
    const config = probeConfig('http://127.0.0.1:9/mcp').path;
    const serve = spawnServe(['--http', '--port', '0', '--config', config, '--dashboard']);
    const { code } = await serve.exited;
    expect(code).not.toBe(0);
    expect(serve.stderr()).toMatch(
      /dashboard .*shows a BullMQ queue: add --redis <url> or set jobs.connection/,
    );
  });
});

describe.skipIf(skipReason !== '')(
  `jobs dashboard at /admin/queues in headless Chromium${skipReason ? ` (${skipReason})` : ''}`,
  () => {
    let redis: RedisHandle;
    let probe: ProbeServer;
    let worker: JobWorkerHandle;
    let client: JobBackend;
    let serve: ServeProcess | undefined;
    let base: string;
    let shots: string;

    beforeAll(async () => {
      shots = mkdtempSync(join(tmpdir(), 'codecall-dashboard-'));
      redis = await startRedis();
      probe = await startProbeServer();
      const config = probeConfig(probe.url, { serve: { waitForServersMs: 60_000 } }).path;
      worker = await startWorker({ connection: redis.url, runtimes: { configs: { default: config } } });
      serve = spawnServe([
        '--http',
        '--port',
        '0',
        '--token',
        TOKEN,
        '--config',
        config,
        '--redis',
        redis.url,
        '--dashboard',
      ]);
      const [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)/)) as [string, string];
      base = url.replace(/\/mcp$/, '');
      expect(serve.stderr()).toMatch(/dashboard at \/admin\/queues/);
      client = await createJobClient({ connection: redis.url });
      const { id } = await client.submit({
        kind: 'exec',
        code: 'await tools.probe.record({ key: "dashboard" }); console.log("report ready")',
        idempotencyKey: JOB_KEY,
      });
      const done = await client.wait(id, { timeoutMs: 60_000 });
      expect(done.result?.exec?.stdout).toBe('report ready\n');
    });

    afterAll(async () => {
      await stop(serve);
      await client?.close();
      await worker?.close();
      await probe?.close();
      await redis?.stop();
      if (shots) rmSync(shots, { recursive: true, force: true });
    });

    it('needs the token: bearer, or ?token= once, which sets an HttpOnly cookie', async () => {
      const anonymous = await fetch(`${base}/admin/queues`, { redirect: 'manual' });
      expect(anonymous.status).toBe(401);
      expect(await anonymous.text()).toContain('/admin/queues?token=<token>');
      const api = await fetch(`${base}/admin/queues/api/queues`);
      expect(api.status).toBe(401);
      const wrong = await fetch(`${base}/admin/queues?token=not-the-token`, { redirect: 'manual' });
      expect(wrong.status).toBe(401);
      expect(wrong.headers.get('set-cookie')).toBeNull();
      const foreign = await fetch(`${base}/admin/queues`, {
        headers: { authorization: `Bearer ${TOKEN}`, origin: 'https://evil.example' },
      });
      expect(foreign.status).toBe(403);

      const bearer = await fetch(`${base}/admin/queues`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(bearer.status).toBe(200);
      expect(bearer.headers.get('content-type')).toMatch(/text\/html/);

      const login = await fetch(`${base}/admin/queues?token=${TOKEN}`, { redirect: 'manual' });
      expect(login.status).toBe(303);
      expect(login.headers.get('location')).toBe('/admin/queues');
      const cookie = login.headers.get('set-cookie') ?? '';
      expect(cookie).toMatch(
        /^codecall_dashboard=[0-9a-f]{64}; Path=\/admin\/queues; HttpOnly; SameSite=Strict/,
      );
      expect(cookie).not.toContain(TOKEN);
      const withCookie = await fetch(`${base}/admin/queues/api/queues`, {
        headers: { cookie: cookie.split(';')[0]! },
      });
      expect(withCookie.status).toBe(200);
      const body = (await withCookie.json()) as { queues: { name: string; counts: { completed: number } }[] };
      expect(body.queues.map((q) => [q.name, q.counts.completed])).toEqual([['codecall', 1]]);
      // The cookie opens the dashboard only, not the jobs API or /mcp.
      const jobsApi = await fetch(`${base}/v1/jobs`, { headers: { cookie: cookie.split(';')[0]! } });
      expect(jobsApi.status).toBe(401);
    });

    it('shows the queue and the finished job in a real browser', async () => {
      const { default: puppeteer } = await import('puppeteer-core');
      const browser = await puppeteer.launch({
        executablePath: chromium!,
        args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
      });
      try {
        const page = await browser.newPage();
        await page.setViewport({ width: 1280, height: 900 });
        await page.goto(`${base}/admin/queues?token=${encodeURIComponent(TOKEN)}`, {
          waitUntil: 'networkidle0',
        });
        expect(page.url()).toBe(`${base}/admin/queues`);
        await page.waitForFunction(bodyIncludes, { timeout: 30_000 }, '1 Job');
        const overview = await page.evaluate(bodyText);
        expect(overview).toContain('codecall jobs');
        expect(overview).toMatch(/^codecall$/m);

        await page.goto(`${base}/admin/queues/queue/codecall?status=completed`, {
          waitUntil: 'networkidle0',
        });
        await page.waitForFunction(bodyIncludes, { timeout: 30_000 }, JOB_KEY);
        const detail = await page.evaluate(bodyText);
        expect(detail).toMatch(/COMPLETED\s+1/);
        expect(detail).toContain('status:"ok"');
        expect(detail).toContain('report ready');

        const file = join(shots, 'dashboard.png');
        await page.screenshot({ path: file });
        const png = readFileSync(file);
        expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
        // IHDR: width and height of the viewport.
        expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1280, 900]);
        // A blank or error page of this size compresses to a few KB; the board with a job is far larger.
        expect(png.length).toBeGreaterThan(30_000);
      } finally {
        await browser.close();
      }
    });
  },
);
