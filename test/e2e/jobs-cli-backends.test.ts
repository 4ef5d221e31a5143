/**
 * `codecall jobs` as a real process against every backend: a running `codecall serve --http`
 * (its embedded backend) reached by `--url` and bearer token (or by `"jobs": {"backend":
 * "local"}` and the configuration's `serve` section), and PostgreSQL (pg-boss) by `--postgres`
 * with a worker; and the errors of a wrong or missing token, an address nobody listens on or
 * that never answers, and of two backends at once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPgWorker, type JobRecord, type JobWorkerHandle } from '../../src/jobs/index.js';
import { tempDir } from '../fixtures/temp-dir.js';
import {
  freePort,
  MAIN,
  probeConfig,
  startProbeServer,
  type ProbeServer,
} from '../integration/jobs/jobs-helpers.js';
import { postgresBinDir, startPostgres, type PostgresHandle } from '../integration/jobs/postgres-helpers.js';
import { spawnServe, type ServeProcess } from './serve-helpers.js';

const TOKEN = 'jobs-cli-backends-token-0123456789';
/** A CLI process that has not ended by then is killed (the test then fails on its output). */
const CLI_KILL_AFTER_MS = 150_000;
/** `status` polls while a test waits for a job to ask for an approval, and the pause between two. */
const MAX_STATUS_POLLS = 120;
const STATUS_POLL_MS = 500;

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** CLI processes still running: a test that failed or timed out leaves none behind. */
const running = new Set<ChildProcess>();
afterAll(() => {
  for (const child of running) child.kill('SIGKILL');
});

/** Runs `codecall jobs …args` in `cwd` (no configuration there unless a test writes one). */
function cli(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--no-node-snapshot', MAIN, 'jobs', ...args], {
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Neither variable leaks in from the developer's shell: each test says what it gives.
      env: { ...process.env, CODECALL_REDIS_URL: '', CODECALL_SERVE_TOKEN: '', ...options.env },
    });
    running.add(child);
    const killer = setTimeout(() => child.kill('SIGKILL'), CLI_KILL_AFTER_MS);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', (code) => {
      running.delete(child);
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('codecall jobs --url: the embedded backend of a running codecall serve --http', () => {
  let probe: ProbeServer;
  let serve: ServeProcess | undefined;
  let base: string;
  let port: number;
  const cwd = tempDir('codecall-jobs-backends-');
  const url = (): string[] => ['--url', base];

  beforeAll(async () => {
    probe = await startProbeServer();
    const config = probeConfig(probe.url, {
      mcpServers: {
        probe: {
          type: 'http',
          url: probe.url,
          tools: { record: { requireApproval: { pointer: '/key', values: ['url-yes', 'url-no'] } } },
        },
      },
      serve: { waitForServersMs: 60_000 },
    }).path;
    serve = spawnServe(['--http', '--port', '0', '--token', TOKEN, '--config', config]);
    const [, address] = (await serve.waitFor(/listening on (http:\/\/\S+)/)) as [string, string];
    await serve.waitFor(/jobs at \/v1\/jobs \(run in this process\)/);
    base = address.replace(/\/mcp$/, '');
    port = Number(new URL(base).port);
  }, 120_000);

  afterAll(async () => {
    if (serve) {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
    await probe?.close();
  });

  it(
    'submits, waits (the script output on stdout), lists, shows and reads logs through --url and the token',
    { timeout: 180_000 },
    async () => {
      const script = join(cwd, 'count.ts');
      writeFileSync(
        script,
        'const r: { count: number } = await tools.probe.record({ key: "url-1" }); console.log("count", r.count);',
      );
      const submitted = await cli(['submit', 'exec', script, ...url(), '--token', TOKEN, '--json'], { cwd });
      expect(submitted.stderr).toBe('');
      expect(submitted.code).toBe(0);
      const { id } = JSON.parse(submitted.stdout) as { id: string };

      // The token from the variable serve itself reads.
      const env = { CODECALL_SERVE_TOKEN: TOKEN };
      const waited = await cli(['wait', id, ...url()], { cwd, env });
      expect(waited.stdout).toBe('count 1\n');
      expect(waited.stderr).toMatch(new RegExp(`${id} · exec · completed · ok`));
      expect(waited.code).toBe(0);
      expect(probe.counts.records.get('url-1')).toBe(1);

      const listed = await cli(['list', ...url(), '--state', 'completed'], { cwd, env });
      expect(listed.code).toBe(0);
      expect(listed.stdout).toMatch(new RegExp(`^${id} · exec · completed · ok · attempts 1/3$`, 'm'));

      const status = await cli(['status', id, ...url(), '--json'], { cwd, env });
      expect((JSON.parse(status.stdout) as JobRecord).result?.exec?.stdout).toBe('count 1\n');

      const logs = await cli(['logs', id, ...url()], { cwd, env });
      expect(logs.code).toBe(0);
      expect(logs.stdout).toMatch(/^attempt 1 /m);

      const again = await cli(['submit', 'exec', script, ...url(), '--key', 'url-key', '--wait'], {
        cwd,
        env,
      });
      expect(again.stdout).toBe('count 2\n');
      expect(again.code).toBe(0);
      const missing = await cli(['status', 'no-such-job', ...url()], { cwd, env });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/no job "no-such-job"/);
    },
  );

  it(
    'cancels a running job through --url; a second cancel says it already finished',
    { timeout: 180_000 },
    async () => {
      const env = { CODECALL_SERVE_TOKEN: TOKEN };
      const slow = join(cwd, 'slow.js');
      writeFileSync(slow, 'await tools.probe.sleep({ ms: 60000, key: "url-cancel" })');
      const submitted = await cli(['submit', 'exec', slow, ...url()], { cwd, env });
      expect(submitted.code).toBe(0);
      const id = submitted.stdout.trim();
      await probe.sleepStarted('url-cancel');
      const cancel = await cli(['cancel', id, ...url()], { cwd, env });
      expect(cancel.stderr).toMatch(new RegExp(`cancel requested for ${id}`));
      expect(cancel.code).toBe(0);
      const waited = await cli(['wait', id, ...url(), '--json'], { cwd, env });
      expect((JSON.parse(waited.stdout) as JobRecord).result?.status).toBe('cancelled');
      expect(waited.code).toBe(1);
      const twice = await cli(['cancel', id, ...url()], { cwd, env });
      expect(twice.stderr).toMatch(/is unknown or already finished/);
      expect(twice.code).toBe(1);
    },
  );

  it('approves and denies a call a job waits on through --url', { timeout: 240_000 }, async () => {
    const env = { CODECALL_SERVE_TOKEN: TOKEN };
    /** Polls `status` until the job waits for an approval (bounded). */
    const untilWaitingApproval = async (id: string): Promise<JobRecord> => {
      for (let attempt = 0; attempt < MAX_STATUS_POLLS; attempt++) {
        const status = await cli(['status', id, ...url(), '--json'], { cwd, env });
        const record = JSON.parse(status.stdout) as JobRecord;
        if (record.state === 'waiting-approval') return record;
        await new Promise((resolve) => setTimeout(resolve, STATUS_POLL_MS));
      }
      throw new Error(`job ${id} never waited for an approval`);
    };
    const script = (key: string): string => {
      const file = join(cwd, `${key}.js`);
      writeFileSync(
        file,
        `try { const r = await tools.probe.record({ key: "${key}" }); console.log("ran", r.count) }` +
          ` catch (error) { console.log("refused:", error.message) }`,
      );
      return file;
    };

    const yes = (await cli(['submit', 'exec', script('url-yes'), ...url()], { cwd, env })).stdout.trim();
    expect((await untilWaitingApproval(yes)).approval?.tool).toBe('probe.record');
    const approved = await cli(['approve', yes, ...url(), '--reason', 'checked'], { cwd, env });
    expect(approved.stderr).toMatch(
      new RegExp(`approved probe\\.record \\(call 0\\) of ${yes}; the job resumes`),
    );
    expect(approved.code).toBe(0);
    const ranYes = await cli(['wait', yes, ...url()], { cwd, env });
    expect(ranYes.stdout).toBe('ran 1\n');
    expect(ranYes.code).toBe(0);

    const no = (await cli(['submit', 'exec', script('url-no'), ...url()], { cwd, env })).stdout.trim();
    await untilWaitingApproval(no);
    const denied = await cli(['approve', no, ...url(), '--deny', '--reason', 'not today'], { cwd, env });
    expect(denied.stderr).toMatch(/denied probe\.record/);
    const ranNo = await cli(['wait', no, ...url()], { cwd, env });
    expect(ranNo.stdout).toMatch(/^refused: .*not today/);
    expect(probe.counts.records.get('url-no')).toBeUndefined();
    // The job waits on nothing any more: the server's 409, as the error it stands for.
    const late = await cli(['approve', no, ...url()], { cwd, env });
    expect(late.code).toBe(2);
    expect(late.stderr).toMatch(/codecall jobs: Job ".*" is completed and waits for no approval/);
  });

  it(
    'a wrong or a missing token is a clear 401 error naming where the token came from',
    { timeout: 120_000 },
    async () => {
      const wrong = await cli(['list', ...url(), '--token', 'not-the-token'], { cwd });
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toMatch(/refused the bearer token \(401 Unauthorized\)/);
      expect(wrong.stderr).toMatch(/The token came from --token/);
      expect(wrong.stderr).toMatch(new RegExp(`Jobs backend: codecall serve at ${base} \\(from --url\\)`));
      const none = await cli(['submit', 'run', 'hello', ...url()], { cwd });
      expect(none.code).toBe(2);
      expect(none.stderr).toMatch(/requires a bearer token \(401 Unauthorized\)/);
      expect(none.stderr).toMatch(/No token was sent: pass --token <secret> or set \$CODECALL_SERVE_TOKEN/);
    },
  );

  it(
    'finds the serve from "jobs": {"backend": "local"} and the serve section of --config',
    { timeout: 120_000 },
    async () => {
      const config = join(cwd, 'local.json');
      writeFileSync(
        config,
        JSON.stringify({ mcpServers: {}, jobs: { backend: 'local' }, serve: { port, token: TOKEN } }),
      );
      const listed = await cli(['list', '--config', config, '--json'], { cwd });
      expect(listed.stderr).toBe('');
      expect(listed.code).toBe(0);
      expect(Array.isArray(JSON.parse(listed.stdout))).toBe(true);
      writeFileSync(
        config,
        JSON.stringify({ mcpServers: {}, jobs: { backend: 'local' }, serve: { port, token: 'stale' } }),
      );
      const refused = await cli(['list', '--config', config], { cwd });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/The token came from serve\.token in .*local\.json/);
      expect(refused.stderr).toMatch(/from jobs\.backend "local" in .*local\.json/);
    },
  );
});

describe('codecall jobs: unreachable addresses and usage errors', () => {
  const cwd = tempDir('codecall-jobs-backends-');
  const sockets = new Set<Socket>();
  let silent: Server | undefined;

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => (silent ? silent.close(() => resolve()) : resolve()));
  });

  it(
    'an address nobody listens on fails at once, naming it and how to choose another backend',
    { timeout: 120_000 },
    async () => {
      const port = await freePort();
      const result = await cli(['list', '--url', `http://127.0.0.1:${port}`, '--token', TOKEN], { cwd });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(
        new RegExp(`Cannot reach codecall serve at http://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`),
      );
      expect(result.stderr).toMatch(
        /To use another, pass --url <serve address>, --redis <url> or --postgres <url>/,
      );
    },
  );

  it(
    'an address that accepts but never answers fails after the bounded timeout',
    { timeout: 120_000 },
    async () => {
      silent = createServer((socket) => {
        sockets.add(socket);
        socket.on('error', () => {});
      });
      await new Promise<void>((resolve) => silent!.listen(0, '127.0.0.1', resolve));
      const { port } = silent.address() as { port: number };
      const result = await cli(['status', 'some-job', '--url', `http://127.0.0.1:${port}`], { cwd });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(
        new RegExp(
          `codecall serve at http://127\\.0\\.0\\.1:${port} did not answer GET /v1/jobs/some-job within 10000 ms`,
        ),
      );
    },
  );

  it(
    'two backends at once, or a flag that does not fit its backend, are usage errors naming the flags',
    { timeout: 120_000 },
    async () => {
      const both = await cli(
        ['list', '--postgres', 'postgres://u@127.0.0.1:5432/db', '--redis', 'redis://127.0.0.1:6379'],
        { cwd },
      );
      expect(both.code).toBe(2);
      expect(both.stderr).toMatch(/--redis and --postgres each choose a jobs backend; give one of them/);
      const urlAndRedis = await cli(
        ['list', '--url', 'http://127.0.0.1:3737', '--redis', 'redis://127.0.0.1:6379'],
        {
          cwd,
        },
      );
      expect(urlAndRedis.code).toBe(2);
      expect(urlAndRedis.stderr).toMatch(/--url and --redis each choose a jobs backend/);
      const swapped = await cli(['list', '--redis', 'postgres://u@127.0.0.1:5432/db'], { cwd });
      expect(swapped.code).toBe(2);
      expect(swapped.stderr).toMatch(
        /--redis is a PostgreSQL URL, but it names a Redis queue; pass it as --postgres <url>/,
      );
      const token = await cli(['list', '--redis', 'redis://127.0.0.1:6379', '--token', TOKEN], { cwd });
      expect(token.code).toBe(2);
      expect(token.stderr).toMatch(/--token is the bearer token of a codecall serve reached with --url/);
      const queue = await cli(['list', '--url', 'http://127.0.0.1:3737', '--queue', 'other'], { cwd });
      expect(queue.code).toBe(2);
      expect(queue.stderr).toMatch(/--queue applies to --redis and --postgres/);
      const nothing = await cli(['list'], { cwd });
      expect(nothing.code).toBe(2);
      expect(nothing.stderr).toMatch(
        /no jobs backend chosen.*--url http:\/\/127\.0\.0\.1:3737.*--redis redis:\/\/127\.0\.0\.1:6379.*--postgres/,
      );
    },
  );
});

const noPostgres = postgresBinDir() === undefined;

// On CI a missing PostgreSQL fails the suite (its beforeAll), never skips it.
describe.skipIf(
  noPostgres && !(process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false'),
)(
  `codecall jobs --postgres (pg-boss, real PostgreSQL 15)${noPostgres ? ' (SKIP: initdb/pg_ctl not found; apt-get install postgresql-15)' : ''}`,
  () => {
    let pg: PostgresHandle;
    let probe: ProbeServer;
    let worker: JobWorkerHandle;
    const cwd = tempDir('codecall-jobs-backends-');
    const queue = 'cli-pg';

    beforeAll(async () => {
      pg = await startPostgres();
      probe = await startProbeServer();
      worker = await startPgWorker({
        connection: pg.url,
        queue,
        shutdownGraceMs: 2_000,
        runtimes: { configs: { default: probeConfig(probe.url).path } },
      });
    }, 180_000);

    afterAll(async () => {
      await worker?.close();
      await probe?.close();
      await pg?.stop();
    });

    it(
      'submits with --wait: the script output on stdout, exit 0; status and logs',
      { timeout: 180_000 },
      async () => {
        const script = join(cwd, 'pg.js');
        writeFileSync(
          script,
          'const r = await tools.probe.record({ key: "pg-cli" }); console.log("pg", r.count)',
        );
        const result = await cli(
          ['submit', 'exec', script, '--postgres', pg.url, '--queue', queue, '--wait'],
          {
            cwd,
          },
        );
        expect(result.stdout).toBe('pg 1\n');
        expect(result.stderr).toMatch(/ · exec · completed · ok/);
        expect(result.code).toBe(0);
        const id = /codecall jobs: (\S+) · exec · completed/.exec(result.stderr)![1]!;
        const logs = await cli(['logs', id, '--postgres', pg.url, '--queue', queue], { cwd });
        expect(logs.stdout).toMatch(/completed: ok/);
      },
    );
  },
);
