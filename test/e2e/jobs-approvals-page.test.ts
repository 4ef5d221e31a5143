/**
 * The approvals page (`/admin/approvals`) of a real `codecall serve --http --redis --dashboard`
 * process, with a real redis-server, a BullMQ worker (in this process) and a bank MCP server whose
 * `transfer` needs approval and counts every transfer it makes. A job parks on the call; a person
 * opens the page in a real headless Chromium (Debian's `chromium`, puppeteer-core) with the
 * server's token, reads the call, and approves it (the job resumes and the transfer runs once) or
 * denies it with a reason (the script sees `APPROVAL_DENIED` with that reason, no transfer).
 * Hostile arguments (markup, U+202E, a zero-width space, a long value) are shown whole, inert and
 * visible; forged and malformed decisions are refused and decide nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createJobClient,
  startWorker,
  type JobBackend,
  type JobWorkerHandle,
  type PendingApproval,
} from '../../src/jobs/index.js';
import { serveHttp, type HttpMcpEndpoint } from '../../src/testing/servers/index.js';
import {
  hasRedisServer,
  probeConfig,
  startRedis,
  type RedisHandle,
} from '../integration/jobs/jobs-helpers.js';
import {
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

const TOKEN = 'approvals-page-token-0123456789';
const PAGE = '/admin/approvals';

const chromium = findChromium();
const skipReason = !hasRedisServer()
  ? 'SKIP: redis-server not found (apt-get install redis-server)'
  : chromium === undefined
    ? 'SKIP: chromium not found (apt-get install chromium, or set $CODECALL_CHROMIUM)'
    : '';

/** Arguments a hostile script sends: markup, a right-to-left override, a zero-width space, a long value. */
const HOSTILE = {
  to: 'acct-hostile\u202Egpj.exe',
  amount: 9_999,
  memo: `</script><img src=x onerror="globalThis.__pwned = 1">\u200B${'x'.repeat(3_000)} END`,
};
/** What the page must show of them: their indented JSON, every character, invisible ones as escapes. */
const HOSTILE_SHOWN = JSON.stringify(HOSTILE, null, 2)
  .replace('\u202E', '\\u202e')
  .replace('\u200B', '\\u200b');

/** A script literal of `value`, with invisible characters as escapes (the script's source stays plain). */
const literal = (value: unknown): string =>
  JSON.stringify(value).replace(/[\u200B\u202E]/g, (char) => `\\u${char.charCodeAt(0).toString(16)}`);

/** The bank: `transfer({to, amount, memo})` counts a transfer to `to` and returns the count so far. */
async function startBank(): Promise<HttpMcpEndpoint & { transfers: Map<string, number> }> {
  const transfers = new Map<string, number>();
  const endpoint = await serveHttp(() => {
    const server = new McpServer({ name: 'bank', version: '1.0.0' });
    server.registerTool(
      'transfer',
      {
        description: 'Sends money to an account.',
        inputSchema: { to: z.string(), amount: z.number(), memo: z.string() },
      },
      ({ to }) => {
        const count = (transfers.get(to) ?? 0) + 1;
        transfers.set(to, count);
        return { content: [{ type: 'text', text: JSON.stringify({ to, count }) }] };
      },
    );
    return server;
  });
  return Object.assign(endpoint, { transfers });
}

/** Follows a job's events until it waits for an approval. */
async function untilWaitingApproval(client: JobBackend, id: string): Promise<PendingApproval> {
  for await (const event of client.events(id)) {
    if (event.type === 'state' && event.state === 'waiting-approval' && event.approval) return event.approval;
    if (event.type === 'done') break;
  }
  throw new Error(`job ${id} ended without waiting for an approval`);
}

/** What the page shows of one job's card, and layout facts about it (in the browser). */
const card = (
  id: string,
): {
  args: string;
  whiteSpace: string;
  fontFamily: string;
  argsScrollWidth: number;
  argsClientWidth: number;
  buttonsRight: number;
  standIns: string[];
  images: number;
  pwned: unknown;
  bodyHasInvisible: boolean;
} => {
  const window = globalThis as unknown as Dom & { __pwned?: unknown };
  const { document } = window;
  const section = document.querySelector(`section[data-job="${id}"]`)!;
  const pre = section.querySelector('pre.args')!;
  const style = window.getComputedStyle(pre);
  const buttons = Array.from(
    section.querySelectorAll('button'),
    (button) => button.getBoundingClientRect().right,
  );
  return {
    args: pre.textContent ?? '',
    whiteSpace: style.whiteSpace,
    fontFamily: style.fontFamily,
    argsScrollWidth: pre.scrollWidth,
    argsClientWidth: pre.clientWidth,
    buttonsRight: Math.max(...buttons),
    standIns: Array.from(pre.querySelectorAll('mark.stand-in'), (mark) => mark.textContent ?? ''),
    images: document.querySelectorAll('img').length,
    pwned: window.__pwned,
    bodyHasInvisible: /[\u200B\u202E]/.test(document.body.innerText),
  };
};

// On CI a missing redis-server or Chromium fails the suite, never skips it.
describe.skipIf(
  skipReason !== '' && !(process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false'),
)(`approvals page at /admin/approvals in headless Chromium${skipReason ? ` (${skipReason})` : ''}`, () => {
  let redis: RedisHandle;
  let bank: Awaited<ReturnType<typeof startBank>>;
  let worker: JobWorkerHandle;
  let client: JobBackend;
  let serve: ServeProcess | undefined;
  let base: string;
  let scratch: string;

  /** Submits a job whose script makes `transfer(args)` (inside `body`), and waits for it to park on the call. */
  const parkedJob = async (body: (call: string) => string, args: object): Promise<string> => {
    const { id } = await client.submit({
      kind: 'exec',
      code: body(`await tools.bank.transfer(${literal(args)})`),
    });
    await untilWaitingApproval(client, id);
    return id;
  };

  /** The cookie a `?token=` visit sets. */
  const login = async (): Promise<string> => {
    const response = await fetch(`${base}${PAGE}?token=${TOKEN}`, { redirect: 'manual' });
    expect(response.status).toBe(303);
    return (response.headers.get('set-cookie') ?? '').split(';')[0]!;
  };

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'codecall-approvals-page-'));
    redis = await startRedis();
    bank = await startBank();
    const config = probeConfig(bank.url, {
      mcpServers: { bank: { type: 'http', url: bank.url, tools: { transfer: { requireApproval: true } } } },
      serve: { waitForServersMs: 60_000 },
    }).path;
    worker = await startWorker({ connection: redis.url, runtimes: { configs: { default: config } } });
    client = await createJobClient({ connection: redis.url });
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
    expect(serve.stderr()).toMatch(/approvals at \/admin\/approvals/);
  });

  afterAll(async () => {
    if (serve) {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
    await client?.close();
    await worker?.close();
    await bank?.close();
    await redis?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('needs the token: bearer, or ?token= once, whose cookie opens the /admin pages only', async () => {
    const anonymous = await fetch(`${base}${PAGE}`, { redirect: 'manual' });
    expect(anonymous.status).toBe(401);
    expect(await anonymous.text()).toContain(`${PAGE}?token=<token>`);
    expect((await fetch(`${base}${PAGE}/style.css`)).status).toBe(401);
    const wrong = await fetch(`${base}${PAGE}?token=not-the-token`, { redirect: 'manual' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    const foreign = await fetch(`${base}${PAGE}`, {
      headers: { authorization: `Bearer ${TOKEN}`, origin: 'https://evil.example' },
    });
    expect(foreign.status).toBe(403);

    const bearer = await fetch(`${base}${PAGE}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(bearer.status).toBe(200);
    expect(bearer.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(bearer.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(bearer.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");

    const response = await fetch(`${base}${PAGE}?token=${TOKEN}`, { redirect: 'manual' });
    expect(response.headers.get('location')).toBe(PAGE);
    const setCookie = response.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^codecall_dashboard=[0-9a-f]{64}; Path=\/admin; HttpOnly; SameSite=Strict/);
    expect(setCookie).not.toContain(TOKEN);
    const cookie = setCookie.split(';')[0]!;
    for (const path of [PAGE, `${PAGE}/style.css`, '/admin/queues'])
      expect((await fetch(`${base}${path}`, { headers: { cookie } })).status, path).toBe(200);
    for (const path of ['/v1/jobs', '/mcp'])
      expect((await fetch(`${base}${path}`, { headers: { cookie } })).status, path).toBe(401);
  });

  it('approves in the browser: the job resumes and the transfer runs once', async () => {
    const args = { to: 'acct-approve', amount: 125.5, memo: 'March invoice' };
    const id = await parkedJob((call) => `const sent = ${call};\nconsole.log("sent", sent.count);`, args);
    expect(bank.transfers.get('acct-approve')).toBeUndefined();
    const browser = await launchChromium(chromium!);
    try {
      const page = await browser.newPage();
      await page.setViewport({ width: 1280, height: 900 });
      await page.goto(`${base}${PAGE}?token=${encodeURIComponent(TOKEN)}`, { waitUntil: 'networkidle0' });
      expect(page.url()).toBe(`${base}${PAGE}`);
      const shown = await page.evaluate(card, id);
      expect(shown.args).toBe(JSON.stringify(args, null, 2));
      const section = `section[data-job="${id}"]`;
      expect(await page.evaluate(bodyText)).toContain(`bank.transfer call 0 of job ${id}`);
      await page.type(`${section} textarea[name="reason"]`, 'ok by ops');
      await Promise.all([
        page.waitForNavigation({ waitUntil: 'networkidle0', timeout: 60_000 }),
        page.click(`${section} button[value="approve"]`),
      ]);
      expect(page.url()).toBe(`${base}${PAGE}?approved=${id}&call=0`);
      const after = await page.evaluate(bodyText);
      expect(after).toContain(`Approved call 0 of job ${id}: the job resumes and makes the call.`);
      expect(await page.$(section)).toBeNull();
      const file = join(screenshotFolder(scratch), 'approvals-approved.png');
      await page.screenshot({ path: file });
      expectScreenshot(file, 1280, 10_000);
    } finally {
      await browser.close();
    }
    const done = await client.wait(id, { timeoutMs: 60_000 });
    expect(done.result?.status).toBe('ok');
    expect(done.result?.exec?.stdout).toBe('sent 1\n');
    expect(bank.transfers.get('acct-approve')).toBe(1);
  }, 180_000);

  it('denies with a reason in the browser: the script sees APPROVAL_DENIED with it, nothing is sent', async () => {
    const id = await parkedJob(
      (call) =>
        `try { ${call}; console.log("ran"); }\n` +
        'catch (error) { console.log("caught", error.code, error.message); }',
      { to: 'acct-deny', amount: 50, memo: 'gift card' },
    );
    const browser = await launchChromium(chromium!);
    try {
      const page = await browser.newPage();
      await page.setViewport({ width: 390, height: 844 });
      await page.goto(`${base}${PAGE}?token=${encodeURIComponent(TOKEN)}`, { waitUntil: 'networkidle0' });
      const section = `section[data-job="${id}"]`;
      await page.type(`${section} textarea[name="reason"]`, 'not before the audit');
      await Promise.all([
        page.waitForNavigation({ waitUntil: 'networkidle0', timeout: 60_000 }),
        page.click(`${section} button[value="deny"]`),
      ]);
      expect(page.url()).toBe(`${base}${PAGE}?denied=${id}&call=0`);
      expect(await page.evaluate(bodyText)).toContain(`Denied call 0 of job ${id}`);
    } finally {
      await browser.close();
    }
    const done = await client.wait(id, { timeoutMs: 60_000 });
    expect(done.result?.status).toBe('ok');
    expect(done.result?.exec?.stdout).toMatch(/^caught APPROVAL_DENIED .*not before the audit/);
    expect(bank.transfers.get('acct-deny')).toBeUndefined();
  }, 180_000);

  it('shows hostile arguments whole, inert and visible, at 1280, 1024 and 390 px', async () => {
    const id = await parkedJob((call) => `${call};`, HOSTILE);
    const browser = await launchChromium(chromium!);
    try {
      const page = await browser.newPage();
      await page.goto(`${base}${PAGE}?token=${encodeURIComponent(TOKEN)}`, { waitUntil: 'networkidle0' });
      for (const viewport of VIEWPORTS) {
        const where = `at ${viewport.width} px`;
        await page.setViewport({ width: viewport.width, height: viewport.height });
        await page.reload({ waitUntil: 'networkidle0' });
        const shown = await page.evaluate(card, id);
        // Whole: every field and every character, the 3,000-character memo included.
        expect(shown.args, where).toBe(HOSTILE_SHOWN);
        expect(shown.args, where).toContain(`${'x'.repeat(3_000)} END`);
        // Inert: the markup is text, no element came of it, nothing ran.
        expect(shown.args, where).toContain('"</script><img src=x onerror=\\"globalThis.__pwned = 1\\">');
        expect(shown.images, where).toBe(0);
        expect(shown.pwned, where).toBeUndefined();
        // Visible: the override and the zero-width space are marked escapes, not characters that act.
        expect(shown.standIns, where).toEqual(['\\u202e', '\\u200b']);
        expect(shown.bodyHasInvisible, where).toBe(false);
        // Readable: code as code, wrapped, nothing wider than the screen.
        expect(shown.whiteSpace, where).toBe('pre-wrap');
        expect(shown.fontFamily, where).toMatch(/monospace/);
        expect(shown.argsScrollWidth, where).toBeLessThanOrEqual(shown.argsClientWidth);
        expect(shown.buttonsRight, where).toBeLessThanOrEqual(viewport.width);
        const widths = await page.evaluate(pageWidths);
        expect(widths.scrollWidth, where).toBeLessThanOrEqual(widths.viewport);
        const file = join(screenshotFolder(scratch), `approvals-hostile-${viewport.name}.png`);
        await page.screenshot({ path: file, fullPage: viewport.name === 'phone' });
        expectScreenshot(file, viewport.width, 10_000);
      }
    } finally {
      await browser.close();
    }
    // Decided, so it does not wait on after this test.
    const denied = await fetch(`${base}/v1/jobs/${id}/approvals`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ approved: false, reason: 'hostile' }),
    });
    expect(denied.status).toBe(200);
    // The script does not catch the denial: it ends with it.
    const ended = await client.wait(id, { timeoutMs: 60_000 });
    expect(ended.result?.status).toBe('error');
    expect(ended.result?.error?.message).toMatch(/was not approved \(hostile\)/);
    expect(bank.transfers.get(HOSTILE.to)).toBeUndefined();
  }, 240_000);

  it('refuses forged and malformed decisions, and decides nothing', async () => {
    const args = { to: 'acct-forged', amount: 1_000_000, memo: 'everything' };
    const id = await parkedJob((call) => `${call};`, args);
    const pending = (await client.get(id))!.approval!;
    const cookie = await login();
    const form = (fields: Record<string, string>): string => new URLSearchParams(fields).toString();
    const approve = {
      job: id,
      call: String(pending.callIndex),
      args: pending.argsHash,
      decision: 'approve',
    };
    const post = (body: string, headers: Record<string, string>) =>
      fetch(`${base}${PAGE}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body,
      });
    const own = { origin: base, 'sec-fetch-site': 'same-origin' };

    // Forged: from a page elsewhere (the server's cross-site write rule), or without saying where from.
    expect((await post(form(approve), { cookie, origin: 'https://evil.example' })).status).toBe(403);
    expect((await post(form(approve), { cookie, 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await post(form(approve), { cookie, 'sec-fetch-site': 'same-site' })).status).toBe(403);
    const bare = await post(form(approve), { cookie });
    expect(bare.status).toBe(403);
    expect(await bare.text()).toContain('must come from the page itself');
    expect((await post(form(approve), { origin: base })).status).toBe(401);
    // Malformed: approving needs decision=approve spelled out; the API's body is not the form.
    const missing = await post(form({ ...approve, decision: '' }), { cookie, ...own });
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain('Nothing was decided: press');
    expect((await post(form({ ...approve, decision: 'yes' }), { cookie, ...own })).status).toBe(400);
    const json = { cookie, ...own, 'content-type': 'application/json' };
    expect((await post(JSON.stringify({ job: id, approved: true }), json)).status).toBe(415);
    expect((await post(form({ job: id, approved: 'true' }), { cookie, ...own })).status).toBe(400);
    const long = await post(form({ ...approve, reason: 'r'.repeat(1_001) }), { cookie, ...own });
    expect(long.status).toBe(400);
    expect(await long.text()).toContain('at most 1000 characters');
    // Stale: a decision about another call than the one the job waits on.
    const stale = await post(form({ ...approve, call: String(pending.callIndex + 1) }), { cookie, ...own });
    expect(stale.status).toBe(409);
    expect(await stale.text()).toContain('no longer waits on the call shown');
    expect((await post(form({ ...approve, args: '0'.repeat(64) }), { cookie, ...own })).status).toBe(409);
    expect((await post(form({ ...approve, job: 'no-such-job' }), { cookie, ...own })).status).toBe(404);
    expect((await client.get(id))?.state).toBe('waiting-approval');
    expect(bank.transfers.get('acct-forged')).toBeUndefined();

    // The page's own form, as a browser posts it, decides.
    const decided = await post(form({ ...approve, decision: 'deny', reason: 'forged' }), {
      cookie,
      ...own,
    });
    expect(decided.status).toBe(303);
    expect(decided.headers.get('location')).toBe(`${PAGE}?denied=${id}&call=${pending.callIndex}`);
    const ended = await client.wait(id, { timeoutMs: 60_000 });
    expect(ended.result?.error?.message).toMatch(/was not approved \(forged\)/);
    // Decided already: the same form again decides nothing.
    expect((await post(form(approve), { cookie, ...own })).status).toBe(409);
    expect(bank.transfers.get('acct-forged')).toBeUndefined();
  }, 180_000);
});
