/**
 * The BullMQ dashboard (`@bull-board`) of a real `codecall serve --http --redis --dashboard`
 * process, behind the server's token: the HTTP checks with fetch, then a real headless Chromium
 * (Debian's `chromium`, driven by puppeteer-core, no browser download) that opens
 * `/admin/queues?token=…` like a person would and must show the queue and a finished job, checked
 * in the DOM text and in a screenshot; and, at 1280, 1024 and 390 px, the job's script as code
 * (its lines kept, monospace, every character, inert) and every state tab in view.
 */
import { mkdtempSync, rmSync } from 'node:fs';
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
import {
  bodyIncludes,
  bodyText,
  expectScreenshot,
  findChromium,
  launchChromium,
  pageWidths,
  screenshotFolder,
  VIEWPORTS,
  type Dom,
} from './browser-helpers.js';
import { spawnServe, type ServeProcess } from './serve-helpers.js';

const TOKEN = 'dashboard-test-token-0123456789';
const JOB_KEY = 'dashboard-report-1';
/** A script of several lines, with indentation, a tab, a long line and markup that must stay text. */
const JOB_CODE = [
  '// Weekly report: one record per day, then a summary.',
  'const markup = "</script><img src=x onerror=\\"globalThis.__pwned = 1\\">";',
  'for (let day = 0; day < 2; day++) {',
  '  await tools.probe.record({ key: "dashboard-" + day });',
  '\tif (day > 5) console.log(markup);',
  '}',
  `const wide = "${'w'.repeat(300)}";`,
  'console.log("report ready")',
].join('\n');

const chromium = findChromium();
const redisMissing = !hasRedisServer();
const skipReason = redisMissing
  ? 'SKIP: redis-server not found (apt-get install redis-server)'
  : chromium === undefined
    ? 'SKIP: chromium not found (apt-get install chromium, or set $CODECALL_CHROMIUM)'
    : '';

/** Where each state tab of the queue's page sits, and the strip that holds them (in the browser). */
const statusTabs = (): {
  strip: { left: number; right: number };
  tabs: { text: string; left: number; right: number }[];
} => {
  const { document } = globalThis as unknown as Dom;
  const strip = document.querySelector('[class*="statusTabs-"]')!.getBoundingClientRect();
  const tabs = Array.from(document.querySelectorAll('[class*="statusTabs-"] > li'), (li) => {
    const box = li.getBoundingClientRect();
    return { text: (li.textContent ?? '').replace(/\d+$/, '').trim(), left: box.left, right: box.right };
  });
  return { strip: { left: strip.left, right: strip.right }, tabs };
};

/** The string value of the job's data that shows `code`, as the page renders it (in the browser). */
const scriptElement = (
  code: string,
): {
  count: number;
  text: string;
  whiteSpace: string;
  fontFamily: string;
  /** Width of the content of the box the script scrolls in, and of the box. */
  boxScrollWidth: number;
  boxClientWidth: number;
  jobTabs: { text: string; left: number; right: number; boxLeft: number; boxRight: number }[];
  injected: number;
  pwned: unknown;
  link: { href: string | null; right: number; bottom: number } | undefined;
} => {
  const window = globalThis as unknown as Dom & { __pwned?: unknown; innerHeight: number };
  const { document } = window;
  const quoted = `"${code}"`;
  const matches = Array.from(document.querySelectorAll('[class*="stringValue-"]')).filter(
    (element) => element.textContent === quoted,
  );
  const element = matches[0]!;
  const style = window.getComputedStyle(element);
  let box = element.parentElement!;
  while (box.parentElement && !['auto', 'scroll', 'hidden'].includes(window.getComputedStyle(box).overflowX))
    box = box.parentElement;
  const strip = document.querySelector('[class*="tabActions-"]');
  const stripBox = strip!.getBoundingClientRect();
  const jobTabs = Array.from(strip!.querySelectorAll('button'), (button) => {
    const rect = button.getBoundingClientRect();
    return {
      text: (button.textContent ?? '').trim(),
      left: rect.left,
      right: rect.right,
      boxLeft: stripBox.left,
      boxRight: stripBox.right,
    };
  });
  const link = document.querySelector('#codecall-approvals-link');
  const linkBox = link?.getBoundingClientRect();
  return {
    count: matches.length,
    text: element.textContent ?? '',
    whiteSpace: style.whiteSpace,
    fontFamily: style.fontFamily,
    boxScrollWidth: box.scrollWidth,
    boxClientWidth: box.clientWidth,
    jobTabs,
    injected: document.querySelectorAll('img[src="x"]').length,
    pwned: window.__pwned,
    link: link
      ? { href: link.getAttribute('href'), right: linkBox!.right, bottom: linkBox!.bottom }
      : undefined,
  };
};

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
        code: JOB_CODE,
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
      // Path /admin: the same cookie opens the approvals page beside the dashboard.
      expect(cookie).toMatch(/^codecall_dashboard=[0-9a-f]{64}; Path=\/admin; HttpOnly; SameSite=Strict/);
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
      const browser = await launchChromium(chromium!);
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

        const file = join(screenshotFolder(shots), 'dashboard.png');
        await page.screenshot({ path: file });
        // A blank or error page of this size compresses to a few KB; the board with a job is far larger.
        expectScreenshot(file, 1280, 30_000);
      } finally {
        await browser.close();
      }
    });

    it('shows the script as code and every tab in view at 1280, 1024 and 390 px', async () => {
      const browser = await launchChromium(chromium!);
      try {
        const page = await browser.newPage();
        await page.goto(`${base}/admin/queues?token=${encodeURIComponent(TOKEN)}`, {
          waitUntil: 'networkidle0',
        });
        for (const viewport of VIEWPORTS) {
          await page.setViewport({ width: viewport.width, height: viewport.height });
          await page.goto(`${base}/admin/queues/queue/codecall?status=completed`, {
            waitUntil: 'networkidle0',
          });
          await page.waitForFunction(bodyIncludes, { timeout: 30_000 }, JOB_KEY);
          const where = `at ${viewport.width} px`;

          // Every state tab, whole, inside the viewport and inside its strip (which clips what overflows it).
          const { strip, tabs } = await page.evaluate(statusTabs);
          expect(
            tabs.map((tab) => tab.text),
            where,
          ).toEqual([
            'LATEST',
            'ACTIVE',
            'WAITING',
            'WAITING CHILDREN',
            'PRIORITIZED',
            'COMPLETED',
            'FAILED',
            'DELAYED',
          ]);
          for (const tab of tabs) {
            expect(tab.left, `${tab.text} ${where}`).toBeGreaterThanOrEqual(Math.max(0, strip.left) - 0.5);
            expect(tab.right, `${tab.text} ${where}`).toBeLessThanOrEqual(
              Math.min(viewport.width, strip.right) + 0.5,
            );
          }

          // The script: its exact text (between the JSON tree's quotes), its lines kept, monospace, inside its box.
          const script = await page.evaluate(scriptElement, JOB_CODE);
          expect(script.count, where).toBe(1);
          expect(script.text, where).toBe(`"${JOB_CODE}"`);
          expect(script.whiteSpace, where).toBe('pre-wrap');
          expect(script.fontFamily, where).toMatch(/monospace/);
          // Long lines wrap: the box it shows in needs no sideways scroll.
          expect(script.boxScrollWidth, where).toBeLessThanOrEqual(script.boxClientWidth);
          // The markup in it stayed text.
          expect(script.injected, where).toBe(0);
          expect(script.pwned, where).toBeUndefined();
          // The job card's tabs, whole and in view.
          expect(
            script.jobTabs.map((tab) => tab.text),
            where,
          ).toEqual(expect.arrayContaining(['Data', 'Progress', 'Options', 'Logs', 'Error']));
          for (const tab of script.jobTabs) {
            expect(tab.left, `${tab.text} ${where}`).toBeGreaterThanOrEqual(Math.max(0, tab.boxLeft) - 0.5);
            expect(tab.right, `${tab.text} ${where}`).toBeLessThanOrEqual(
              Math.min(viewport.width, tab.boxRight) + 0.5,
            );
          }
          // The link to the approvals page, in view.
          expect(script.link?.href, where).toBe('/admin/approvals');
          expect(script.link!.right, where).toBeLessThanOrEqual(viewport.width);
          expect(script.link!.bottom, where).toBeLessThanOrEqual(viewport.height);
          const widths = await page.evaluate(pageWidths);
          expect(widths.scrollWidth, where).toBeLessThanOrEqual(widths.viewport);

          const file = join(screenshotFolder(shots), `dashboard-${viewport.name}.png`);
          await page.screenshot({ path: file });
          expectScreenshot(file, viewport.width, 20_000);
        }
      } finally {
        await browser.close();
      }
    }, 180_000);
  },
);
