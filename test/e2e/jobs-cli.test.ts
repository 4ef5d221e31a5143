/**
 * `codecall jobs` as a real process against a real redis-server and a worker: submit (with
 * --wait and an idempotency key), status, logs, list, cancel, and the exit codes.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker, type JobRecord, type JobWorkerHandle } from '../../src/jobs/index.js';
import {
  hasRedisServer,
  MAIN,
  probeConfig,
  startProbeServer,
  startRedis,
  type ProbeServer,
  type RedisHandle,
} from '../integration/jobs/jobs-helpers.js';
import { tempDir } from '../fixtures/temp-dir.js';

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
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

describe.skipIf(!hasRedisServer())('codecall jobs (real redis-server)', () => {
  let redis: RedisHandle;
  let probe: ProbeServer;
  let worker: JobWorkerHandle;
  let env: NodeJS.ProcessEnv;
  const dir = tempDir('codecall-jobs-cli-');

  beforeAll(async () => {
    redis = await startRedis();
    probe = await startProbeServer();
    worker = await startWorker({
      connection: redis.url,
      queue: 'cli',
      runtimes: { configs: { default: probeConfig(probe.url).path } },
    });
    env = { CODECALL_REDIS_URL: redis.url };
  });

  afterAll(async () => {
    await worker?.close();
    await probe?.close();
    await redis?.stop();
  });

  it(
    'submits a script with --wait: its stdout on stdout, exit 0; the key dedupes',
    { timeout: 90_000 },
    async () => {
      const script = join(dir, 'count.ts');
      writeFileSync(
        script,
        'const r: { count: number } = await tools.probe.record({ key: "cli-1" }); console.log("count", r.count);',
      );
      const first = await cli(
        ['submit', 'exec', script, '--queue', 'cli', '--key', 'cli-key', '--wait'],
        env,
      );
      expect(first.stderr).toMatch(/cli-key completed/);
      expect(first.stdout).toBe('count 1\n');
      expect(first.code).toBe(0);
      const again = await cli(['submit', 'exec', script, '--queue', 'cli', '--key', 'cli-key'], env);
      expect(again.stdout).toBe('cli-key\n');
      expect(again.stderr).toMatch(/already existed; nothing new queued/);
      expect(probe.counts.records.get('cli-1')).toBe(1);

      const status = await cli(['status', 'cli-key', '--queue', 'cli', '--json'], env);
      expect((JSON.parse(status.stdout) as JobRecord).result?.status).toBe('ok');
      const logs = await cli(['logs', 'cli-key', '--queue', 'cli'], env);
      expect(logs.stdout).toMatch(/^attempt 1 on /m);
      const list = await cli(['list', '--queue', 'cli', '--state', 'completed'], env);
      expect(list.stdout).toMatch(/^cli-key · exec · completed · ok · attempts 1\/3$/m);
    },
  );

  it('exits 1 when the job ends with an error, and cancels a running job', { timeout: 90_000 }, async () => {
    const failing = join(dir, 'fail.js');
    writeFileSync(failing, 'throw new Error("no such report")');
    const failed = await cli(['submit', 'exec', failing, '--queue', 'cli', '--wait'], env);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/RUNTIME_ERROR: .*no such report/);

    const slow = join(dir, 'slow.js');
    writeFileSync(slow, 'await tools.probe.sleep({ ms: 30000, key: "cli-cancel" })');
    const submitted = await cli(['submit', 'exec', slow, '--queue', 'cli', '--json'], env);
    const { id } = JSON.parse(submitted.stdout) as { id: string };
    await probe.sleepStarted('cli-cancel');
    const cancel = await cli(['cancel', id, '--queue', 'cli'], env);
    expect(cancel.code).toBe(0);
    const waited = await cli(['wait', id, '--queue', 'cli', '--json'], env);
    expect((JSON.parse(waited.stdout) as JobRecord).result?.status).toBe('cancelled');
    expect(waited.code).toBe(1);
  });

  it('submits a run job continuing a conversation (--messages), the task words as the next user message', async () => {
    const conversation = join(dir, 'conversation.json');
    writeFileSync(
      conversation,
      JSON.stringify([
        { role: 'user', content: 'What was Q3 travel spend?' },
        { role: 'assistant', content: [{ type: 'text', text: '5,100.' }] },
      ]),
    );
    const submitted = await cli(
      ['submit', 'run', '--messages', conversation, 'And in Q2?', '--queue', 'cli-messages', '--json'],
      env,
    );
    expect(submitted.code).toBe(0);
    const { id } = JSON.parse(submitted.stdout) as { id: string };
    const queue = new Queue('cli-messages', { connection: { url: redis.url } });
    try {
      const job = await queue.getJob(id);
      expect(job?.data).toMatchObject({
        kind: 'run',
        messages: [
          { role: 'user', content: 'What was Q3 travel spend?' },
          { role: 'assistant', content: [{ type: 'text', text: '5,100.' }] },
          { role: 'user', content: 'And in Q2?' },
        ],
      });
      expect(job?.data).not.toHaveProperty('prompt');
    } finally {
      await queue.close();
    }
    writeFileSync(join(dir, 'bad.json'), '{not json');
    const bad = await cli(['submit', 'run', '--messages', join(dir, 'bad.json'), '--queue', 'cli'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--messages .*bad\.json is not JSON/);
  });

  it('refuses usage errors with exit 2 and says how to reach Redis', async () => {
    const noRedis = await cli(['list'], { CODECALL_REDIS_URL: '' });
    expect(noRedis.code).toBe(2);
    expect(noRedis.stderr).toMatch(/--redis redis:\/\/127\.0\.0\.1:6379/);
    const badPriority = await cli(['submit', 'run', 'hello', '--priority', 'high'], env);
    expect(badPriority.code).toBe(2);
    expect(badPriority.stderr).toMatch(/--priority needs a positive integer/);
  });
});
