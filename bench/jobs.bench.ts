/**
 * Jobs on BullMQ with real processes: a real `redis-server` on a free loopback port, a probe MCP
 * server over Streamable HTTP (in this process) that counts side effects, and `codecall worker`
 * processes from dist/ (`npm run build` first; built here when missing).
 *
 * Figures:
 * - 1,000 `exec` jobs (one MCP call each) through 1, 2 and 4 worker processes (concurrency 1
 *   each): jobs/s, and p50/p99 queue-to-start latency (all 1,000 are submitted at once, so this
 *   is mostly backlog) plus the idle queue-to-start of jobs submitted one at a time;
 *   target: 2 workers ≥ 1.6× the throughput of one.
 * - Per-job overhead: wall time per job through the queue with one worker against running the
 *   same script directly in-process with the same configuration, one at a time (ratio; the
 *   floor is measured in this run).
 * - Chaos: 200 jobs through three workers while one of them is SIGKILLed every 2.5 s (and a
 *   replacement started): every job completes exactly once in the queue, none is lost, none is
 *   stuck. Side effects the probe saw twice are reported, split by the retry's log: a call that
 *   had finished before the kill is answered from the job's run journal and must never repeat
 *   (target 0); a call in flight at the kill may (at-least-once).
 *   `CODECALL_BENCH_JOBS_CHAOS_ONLY=1` runs only the chaos round.
 *
 * - Chaos on PostgreSQL (pg-boss): the same round through `codecall worker --postgres` processes,
 *   one SIGKILLed every 2.5 s; the queue is created by the bench with pg-boss's shortest heartbeat
 *   (10 s) and the bench supervises it every 2 s, so a dead worker's job returns within seconds.
 * - Per-job cost (`CODECALL_BENCH_JOBS_COST_ONLY=1` runs only this): 300 `exec` jobs with one MCP
 *   call each through one worker at concurrency 1 on every backend, against a floor measured in
 *   the same run: a plain BullMQ worker that runs the same script in a fresh isolated-vm context
 *   with the same MCP call. CPU per job (the worker process's user + system time over the jobs,
 *   after a warm-up) and jobs/s, as ratios to the floor; targets CPU ≤ 1.5×, jobs/s ≥ 0.67×.
 *
 * Without `redis-server` the bench prints SKIP and exits 1: a skipped bench never counts as met;
 * without PostgreSQL (`initdb`/`pg_ctl`) its Postgres rounds print SKIP.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { Queue, Worker as BullWorker, type Job } from 'bullmq';
import { PgBoss } from 'pg-boss';
import pg from 'pg';
import { CodecallRuntime } from '../src/execute/index.js';
import {
  createJobClient,
  createLocalJobBackend,
  createPgJobClient,
  type JobBackend,
} from '../src/jobs/index.js';
import {
  hasRedisServer,
  probeConfig,
  startProbeServer,
  startRedis,
  type ProbeServer,
  type RedisHandle,
} from '../test/integration/jobs/jobs-helpers.js';
import {
  postgresBinDir,
  startPostgres,
  type PostgresHandle,
} from '../test/integration/jobs/postgres-helpers.js';
import { figure, finish, percentile, skip } from './harness.js';

const ROOT = resolve(import.meta.dirname ?? '.', '..');
const MAIN = join(ROOT, 'dist', 'cli', 'main.js');
const JOBS = 1_000;
const IDLE_JOBS = 50;
const DIRECT_RUNS = 300;
const CHAOS_JOBS = 200;
const CHAOS_WORKERS = 3;
const CHAOS_KILL_EVERY_MS = 2_500;
const CHAOS_LOCK_MS = 5_000;
/** A round that has not finished after this long is reported stuck. */
const ROUND_TIMEOUT_MS = 240_000;
const POLL_MS = 100;

const SCRIPT = 'const r = await tools.probe.record({ key: "bench" }); console.log(r.count);';

interface Worker {
  child: ChildProcess;
  exited: Promise<void>;
}

function spawnWorker(redis: string, queue: string, config: string, extra: string[] = []): Promise<Worker> {
  const backend = redis.startsWith('postgres') ? '--postgres' : '--redis';
  const child = spawn(
    process.execPath,
    ['--no-node-snapshot', MAIN, 'worker', backend, redis, '--queue', queue, '--config', config, ...extra],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  return new Promise((ready, reject) => {
    let text = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('consuming queue')) ready({ child, exited });
    });
    void exited.then(() => reject(new Error(`worker exited early: ${text}`)));
  });
}

/** CPU time (user + system) a process has used, in ms (Linux /proc; clock ticks of 10 ms). */
function cpuMs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

async function stopWorkers(workers: Worker[]): Promise<void> {
  for (const worker of workers) worker.child.kill('SIGTERM');
  await Promise.all(workers.map((w) => w.exited));
}

async function untilDone(
  queue: Queue,
  total: number,
): Promise<{ completed: number; failed: number; timedOut: boolean }> {
  const deadline = Date.now() + ROUND_TIMEOUT_MS;
  for (;;) {
    const counts = await queue.getJobCounts('completed', 'failed');
    const completed = counts.completed ?? 0;
    const failed = counts.failed ?? 0;
    if (completed + failed >= total) return { completed, failed, timedOut: false };
    if (Date.now() > deadline) return { completed, failed, timedOut: true };
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

async function finishedJobs(queue: Queue): Promise<Job[]> {
  return (await queue.getJobs(['completed'], 0, -1)).filter((j): j is Job => j !== undefined);
}

async function throughputRound(redis: RedisHandle, config: string, workers: number): Promise<number> {
  const name = `bench-${workers}w-${Date.now()}`;
  const spawned = await Promise.all(
    Array.from({ length: workers }, () => spawnWorker(redis.url, name, config, ['--concurrency', '1'])),
  );
  const client = await createJobClient({ connection: redis.url, queue: name });
  const queue = new Queue(name, { connection: { url: redis.url } });
  try {
    const started = performance.now();
    for (let i = 0; i < JOBS; i += 50)
      await Promise.all(
        Array.from({ length: Math.min(50, JOBS - i) }, () => client.submit({ kind: 'exec', code: SCRIPT })),
      );
    const outcome = await untilDone(queue, JOBS);
    const seconds = (performance.now() - started) / 1_000;
    const jobs = await finishedJobs(queue);
    const waits = jobs.map((j) => (j.processedOn ?? 0) - j.timestamp);
    const ok = jobs.filter((j) => (j.returnvalue as { status?: string } | undefined)?.status === 'ok').length;
    const workerCpu = spawned.reduce((sum, w) => sum + cpuMs(w.child.pid), 0);
    const rate = outcome.completed / seconds;
    console.log(
      `  ${workers} worker(s): ${outcome.completed} completed (${ok} ok), ${outcome.failed} failed${outcome.timedOut ? ', TIMED OUT' : ''}`,
    );
    figure(`${workers} worker(s): jobs/s`, rate, 'jobs/s');
    figure(`${workers} worker(s): queue-to-start p50 (1,000 at once: backlog)`, percentile(waits, 50), 'ms');
    figure(`${workers} worker(s): queue-to-start p99 (1,000 at once: backlog)`, percentile(waits, 99), 'ms');
    figure(`${workers} worker(s): every job completed ok`, ok, 'jobs', { min: JOBS });
    figure(`${workers} worker(s): worker CPU per job (all worker processes)`, workerCpu / JOBS, 'ms');
    console.log(`  load average during the round: ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores`);
    if (workers === 1) {
      // Idle latency: one job at a time, each waited for.
      const idle: number[] = [];
      for (let i = 0; i < IDLE_JOBS; i++) {
        const { id } = await client.submit({ kind: 'exec', code: SCRIPT });
        const record = await client.wait(id, { timeoutMs: 30_000 });
        idle.push((record.startedAt ?? 0) - record.createdAt);
      }
      figure('1 worker: queue-to-start p50, idle queue', percentile(idle, 50), 'ms');
      figure('1 worker: queue-to-start p99, idle queue', percentile(idle, 99), 'ms');
    }
    return outcome.timedOut ? 0 : rate;
  } finally {
    await stopWorkers(spawned);
    await client.close();
    await queue.obliterate({ force: true }).catch(() => {});
    await queue.close();
  }
}

async function directFloor(config: string): Promise<number> {
  await using runtime = await CodecallRuntime.open({ load: { path: config } });
  for (let i = 0; i < 20; i++) await runtime.execute(SCRIPT);
  const started = performance.now();
  for (let i = 0; i < DIRECT_RUNS; i++) {
    const result = await runtime.execute(SCRIPT);
    if (result.status !== 'ok') throw new Error(`direct run failed: ${result.error?.message}`);
  }
  return (performance.now() - started) / DIRECT_RUNS;
}

async function chaos(redis: RedisHandle, probe: ProbeServer, config: string): Promise<void> {
  const name = `bench-chaos-${Date.now()}`;
  // A lock short enough to recover within seconds, long enough that a live worker starved of CPU
  // on a loaded machine still renews it (a lost lock means a second, concurrent run).
  const extra = [
    '--concurrency',
    '2',
    '--lock-duration-ms',
    String(CHAOS_LOCK_MS),
    '--stalled-interval-ms',
    '1000',
  ];
  const client = await createJobClient({ connection: redis.url, queue: name });
  try {
    await chaosRound({
      label: 'chaos',
      key: 'chaos',
      jobs: CHAOS_JOBS,
      note: `lock ${CHAOS_LOCK_MS} ms`,
      client,
      probe,
      spawn: () => spawnWorker(redis.url, name, config, extra),
    });
  } finally {
    await client.close();
  }
}

/** One chaos round on any backend. */
interface ChaosRound {
  /** Prefix of the figures. */
  label: string;
  /** Prefix of the probe's record keys (unique per round: the probe counts across rounds). */
  key: string;
  jobs: number;
  /** What the round's backend was set to, for the summary line. */
  note: string;
  client: JobBackend;
  probe: ProbeServer;
  spawn: () => Promise<Worker>;
}

/**
 * Submits `jobs` exec jobs (record a start, sleep, record a finish) while one of
 * {@link CHAOS_WORKERS} workers is killed with SIGKILL every {@link CHAOS_KILL_EVERY_MS} and
 * replaced, waits for every job to finish (or the round to time out), then reports the figures.
 */
async function chaosRound(round: ChaosRound): Promise<void> {
  const { client, key } = round;
  // Started one by one into the list the `finally` stops, so a failed start leaks none.
  const workers: Worker[] = [];
  let kills = 0;
  let stopping = false;
  let killer: Promise<void> = Promise.resolve();
  try {
    for (let i = 0; i < CHAOS_WORKERS; i++) workers.push(await round.spawn());
    killer = (async () => {
      for (let next = 0; !stopping; next++) {
        await new Promise((r) => setTimeout(r, CHAOS_KILL_EVERY_MS));
        if (stopping) break;
        const slot = next % workers.length;
        workers[slot]!.child.kill('SIGKILL');
        await workers[slot]!.exited;
        kills++;
        workers[slot] = await round.spawn();
      }
    })();
    const ids: string[] = [];
    for (let i = 0; i < round.jobs; i++) {
      const code =
        `await tools.probe.record({ key: "${key}-start-${i}" });` +
        `await tools.probe.sleep({ ms: 300 });` +
        `await tools.probe.record({ key: "${key}-done-${i}" });` +
        `console.log(${i});`;
      ids.push((await client.submit({ kind: 'exec', idempotencyKey: `${key}-${i}`, code })).id);
    }
    const deadline = Date.now() + ROUND_TIMEOUT_MS;
    const finished = (r: Awaited<ReturnType<JobBackend['get']>> | undefined): boolean =>
      r !== undefined && (r.state === 'completed' || r.state === 'failed');
    let records = await Promise.all(ids.map((id) => client.get(id)));
    while (!records.every(finished) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1_000));
      records = await Promise.all(ids.map((id) => client.get(id)));
    }
    stopping = true;
    await killer;
    await chaosFigures(round, ids, records, kills, deadline);
  } finally {
    stopping = true;
    await killer.catch(() => {});
    await stopWorkers(workers);
  }
}

async function main(): Promise<void> {
  if (!hasRedisServer()) {
    console.log(
      '  SKIP: redis-server not found (apt-get install redis-server); this bench did not run and is not met.',
    );
    process.exitCode = 1;
    return;
  }
  if (!existsSync(MAIN))
    spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, stdio: 'inherit' });
  console.log(`  load average at start: ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores`);
  const redis = await startRedis();
  const probe = await startProbeServer();
  const config = probeConfig(probe.url).path;
  const postgres = postgresBinDir() === undefined ? undefined : await startPostgres();
  try {
    if (process.env.CODECALL_BENCH_JOBS_COST_ONLY === '1') {
      console.log('  CODECALL_BENCH_JOBS_COST_ONLY=1: only the per-job cost rounds');
      await costRounds(redis, postgres, probe, config);
    } else if (process.env.CODECALL_BENCH_JOBS_CHAOS_ONLY === '1') {
      console.log(
        '  CODECALL_BENCH_JOBS_CHAOS_ONLY=1: throughput rounds not run (their targets are not met here)',
      );
      await chaos(redis, probe, config);
      await pgChaosOrSkip(postgres, probe, config);
    } else {
      await allRounds(redis, probe, config);
      await pgChaosOrSkip(postgres, probe, config);
      await costRounds(redis, postgres, probe, config);
    }
  } finally {
    await probe.close();
    await redis.stop();
    await postgres?.stop();
  }
  finish();
}

async function pgChaosOrSkip(
  postgres: PostgresHandle | undefined,
  probe: ProbeServer,
  config: string,
): Promise<void> {
  if (postgres) await pgChaos(postgres, probe, config);
  else skip('PostgreSQL not found (initdb/pg_ctl): the pg-boss chaos round did not run');
}

/** Jobs of the Postgres chaos round (fewer: a dead worker's job waits for pg-boss's heartbeat). */
const PG_CHAOS_JOBS = 100;
/** pg-boss's shortest heartbeat, set on the bench's queue so a dead worker's job returns in seconds. */
const PG_CHAOS_HEARTBEAT_S = 10;

/** A pg-boss instance that creates the queue with a short heartbeat and supervises it every 2 s. */
async function pgSupervisor(url: string, queue: string): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: url,
    schedule: false,
    superviseIntervalSeconds: 2,
    monitorIntervalSeconds: 2,
  });
  boss.on('error', () => {});
  await boss.start();
  await boss.createQueue(queue, {
    retryLimit: 2,
    retryBackoff: true,
    retryDelay: 1,
    heartbeatSeconds: PG_CHAOS_HEARTBEAT_S,
  });
  return boss;
}

async function pgChaos(postgres: PostgresHandle, probe: ProbeServer, config: string): Promise<void> {
  const name = `pg-chaos-${Date.now()}`;
  const supervisor = await pgSupervisor(postgres.url, name);
  const client = await createPgJobClient({ connection: postgres.url, queue: name });
  try {
    await chaosRound({
      label: 'pg chaos',
      key: 'pgchaos',
      jobs: PG_CHAOS_JOBS,
      note: `heartbeat ${PG_CHAOS_HEARTBEAT_S} s`,
      client,
      probe,
      spawn: () => spawnWorker(postgres.url, name, config, ['--concurrency', '2']),
    });
  } finally {
    await client.close();
    await supervisor.stop({ graceful: false, timeout: 5_000 }).catch(() => {});
  }
}

/** The chaos figures of a round on any backend, from the job records and the probe's counts. */
async function chaosFigures(
  round: ChaosRound,
  ids: string[],
  records: (Awaited<ReturnType<JobBackend['get']>> | undefined)[],
  kills: number,
  deadline: number,
): Promise<void> {
  const { label, key, probe, client } = round;
  const total = ids.length;
  const okOnce = records.filter(
    (r, i) => r?.state === 'completed' && r.result?.exec?.stdout === `${i}\n`,
  ).length;
  const failed = records.filter((r) => r?.state === 'failed').length;
  const stuck = records.filter(
    (r) => r === undefined || (r.state !== 'completed' && r.state !== 'failed'),
  ).length;
  let doneTwice = 0;
  let startedTwice = 0;
  let doneNever = 0;
  let repeatedFinished = 0;
  let repeatedInFlight = 0;
  for (const [i, id] of ids.entries()) {
    const done = probe.counts.records.get(`${key}-done-${i}`) ?? 0;
    const started = probe.counts.records.get(`${key}-start-${i}`) ?? 0;
    if (done === 0) doneNever++;
    if (done > 1) doneTwice++;
    if (started > 1) startedTwice++;
    if (done <= 1 && started <= 1) continue;
    const logs = await client.logs(id);
    if (logs.some((line) => /in flight when it ended: .*probe\.record/.test(line))) repeatedInFlight++;
    else repeatedFinished++;
  }
  const retried = records.filter((r) => (r?.attemptsMade ?? 1) > 1).length;
  console.log(
    `  ${label}: ${kills} SIGKILLs (one of ${CHAOS_WORKERS} workers every ${CHAOS_KILL_EVERY_MS} ms, ${round.note}), ` +
      `${retried} jobs ran more than once; load average ${loadavg()[0]!.toFixed(1)}` +
      (Date.now() > deadline ? '; ROUND TIMED OUT' : ''),
  );
  figure(`${label}: jobs completed exactly once, with their own output`, okOnce, 'jobs', { min: total });
  figure(`${label}: jobs lost or stuck (not finished)`, stuck, 'jobs', { max: 0 });
  figure(`${label}: jobs failed (killed too often)`, failed, 'jobs', { max: 0 });
  figure(`${label}: final side effect never ran`, doneNever, 'jobs', { max: 0 });
  figure(`${label}: workers killed`, kills, 'kills', { min: 1 });
  figure(`${label}: first side effect repeated`, startedTwice, 'jobs');
  figure(`${label}: final side effect repeated`, doneTwice, 'jobs');
  figure(
    `${label}: side effect repeated after its call had finished (run journal)`,
    repeatedFinished,
    'jobs',
    {
      max: 0,
    },
  );
  figure(
    `${label}: side effect repeated, its call in flight at the kill (at-least-once)`,
    repeatedInFlight,
    'jobs',
  );
}

const COST_JOBS = 300;
const COST_WARMUP_JOBS = 20;
const COST_SCRIPT = 'const r = await tools.probe.record({ key: "cost" }); console.log(r.count);';

interface CostFigures {
  cpuMsPerJob: number;
  jobsPerS: number;
}

/** A child process of this bench in another role (the floor worker, the embedded backend). */
function spawnRole(
  role: string,
  env: Record<string, string>,
): { child: ChildProcess; ready: Promise<string> } {
  const child = spawn(process.execPath, ['--no-node-snapshot', process.argv[1]!], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, CODECALL_BENCH_JOBS_ROLE: role, ...env },
  });
  let text = '';
  const ready = new Promise<string>((resolveReady, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('\n')) resolveReady(text.trim());
    });
    child.once('exit', (code) => reject(new Error(`${role} exited (${code}) before it was ready: ${text}`)));
  });
  return { child, ready };
}

/**
 * Submits `count` jobs through `submit`, waits until `done()` reports them all (or the round
 * timeout), returns the seconds taken and the jobs done in them.
 */
async function timedJobs(
  count: number,
  submit: () => Promise<unknown>,
  done: () => Promise<number>,
  base: number,
): Promise<{ seconds: number; jobs: number }> {
  const started = performance.now();
  for (let i = 0; i < count; i += 50)
    await Promise.all(Array.from({ length: Math.min(50, count - i) }, () => submit()));
  const deadline = Date.now() + ROUND_TIMEOUT_MS;
  let finished = await done();
  while (finished < base + count && Date.now() <= deadline) {
    await new Promise((r) => setTimeout(r, 20));
    finished = await done();
  }
  if (finished < base + count) console.log(`  TIMED OUT: ${finished - base} of ${count} jobs done`);
  return { seconds: (performance.now() - started) / 1_000, jobs: Math.max(1, finished - base) };
}

/** The floor: a plain BullMQ worker running the script in a fresh isolated-vm context per job. */
async function floorCost(redis: RedisHandle, probe: ProbeServer): Promise<CostFigures> {
  const name = `cost-floor-${Date.now()}`;
  const { child, ready } = spawnRole('floor', {
    BENCH_REDIS: redis.url,
    BENCH_QUEUE: name,
    BENCH_PROBE: probe.url,
  });
  const queue = new Queue(name, { connection: { url: redis.url } });
  try {
    await ready;
    const completed = async () => (await queue.getJobCounts('completed')).completed ?? 0;
    const submit = () => queue.add('exec', { code: COST_SCRIPT }, { removeOnComplete: false });
    await timedJobs(COST_WARMUP_JOBS, submit, completed, 0);
    const before = cpuMs(child.pid);
    const { seconds, jobs } = await timedJobs(COST_JOBS, submit, completed, COST_WARMUP_JOBS);
    return { cpuMsPerJob: (cpuMs(child.pid) - before) / jobs, jobsPerS: jobs / seconds };
  } finally {
    child.kill('SIGTERM');
    await queue.obliterate({ force: true }).catch(() => {});
    await queue.close();
  }
}

/** codecall's worker process on a queue (`connection` redis:// or postgres://). */
async function workerCost(
  connection: string,
  config: string,
  client: (queue: string) => Promise<JobBackend>,
  completed: (queue: string) => Promise<number>,
): Promise<CostFigures> {
  const name = `cost-${Date.now()}`;
  const worker = await spawnWorker(connection, name, config, ['--concurrency', '1']);
  let jobs: JobBackend | undefined;
  try {
    jobs = await client(name);
    const open = jobs;
    const submit = () => open.submit({ kind: 'exec', code: COST_SCRIPT });
    await timedJobs(COST_WARMUP_JOBS, submit, () => completed(name), 0);
    const before = cpuMs(worker.child.pid);
    const { seconds, jobs: done } = await timedJobs(
      COST_JOBS,
      submit,
      () => completed(name),
      COST_WARMUP_JOBS,
    );
    return { cpuMsPerJob: (cpuMs(worker.child.pid) - before) / done, jobsPerS: done / seconds };
  } finally {
    await stopWorkers([worker]);
    await jobs?.close();
  }
}

/** The embedded backend, in a child process of its own (its CPU is the backend's). */
async function localCost(config: string): Promise<CostFigures> {
  const { child, ready } = spawnRole('local', { BENCH_CONFIG: config });
  try {
    return JSON.parse(await ready) as CostFigures;
  } finally {
    child.kill('SIGTERM');
  }
}

async function costRounds(
  redis: RedisHandle,
  postgres: PostgresHandle | undefined,
  probe: ProbeServer,
  config: string,
): Promise<void> {
  console.log(`  per-job cost: ${COST_JOBS} exec jobs (one MCP call each), one worker at concurrency 1`);
  const floor = await floorCost(redis, probe);
  figure('cost floor (plain BullMQ + fresh isolated-vm context): CPU per job', floor.cpuMsPerJob, 'ms');
  figure('cost floor: jobs/s', floor.jobsPerS, 'jobs/s');
  const report = (backend: string, cost: CostFigures): void => {
    console.log(
      `  ${backend}: ${cost.cpuMsPerJob.toFixed(2)} ms CPU per job, ${cost.jobsPerS.toFixed(1)} jobs/s`,
    );
    figure(`${backend}: CPU per job / floor`, cost.cpuMsPerJob / floor.cpuMsPerJob, '×', { max: 1.5 });
    figure(`${backend}: jobs/s / floor`, cost.jobsPerS / floor.jobsPerS, '×', { min: 0.67 });
  };
  report('embedded', await localCost(config));
  const counters = new Map<string, Queue>();
  try {
    report(
      'bullmq',
      await workerCost(
        redis.url,
        config,
        (queue) => createJobClient({ connection: redis.url, queue }),
        async (queue) => {
          let q = counters.get(queue);
          if (!q) counters.set(queue, (q = new Queue(queue, { connection: { url: redis.url } })));
          return (await q.getJobCounts('completed')).completed ?? 0;
        },
      ),
    );
  } finally {
    for (const q of counters.values()) await q.close();
  }
  if (!postgres) {
    skip('PostgreSQL not found (initdb/pg_ctl): the pg-boss cost round did not run');
    return;
  }
  const pool = new pg.Pool({ connectionString: postgres.url, max: 1 });
  try {
    report(
      'postgres',
      await workerCost(
        postgres.url,
        config,
        (queue) => createPgJobClient({ connection: postgres.url, queue }),
        async (queue) => {
          const { rows } = await pool.query<{ n: string }>(
            "SELECT count(*) AS n FROM pgboss.job WHERE name = $1 AND state = 'completed'",
            [queue],
          );
          return Number(rows[0]?.n ?? 0);
        },
      ),
    );
  } finally {
    await pool.end();
  }
}

/** Role `floor`: the plain BullMQ worker of the cost floor. */
async function floorWorkerRole(): Promise<void> {
  const { default: ivm } = await import('isolated-vm');
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } =
    await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const mcp = new Client({ name: 'bench-floor', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(process.env.BENCH_PROBE!)));
  const isolate = new ivm.Isolate({ memoryLimit: 64 });
  const call = new ivm.Reference(async (name: string, args: string) =>
    JSON.stringify(await mcp.callTool({ name, arguments: JSON.parse(args) as Record<string, unknown> })),
  );
  // The same script, with the tool call bridged to the host as codecall's sandbox does.
  const source =
    '(async () => { const tools = { probe: { record: async (args) => { const r = JSON.parse(' +
    "await __call.apply(undefined, ['record', JSON.stringify(args)], { result: { promise: true } }));" +
    ' return JSON.parse(r.content[0].text); } } }; const out = [];' +
    ' const console = { log: (...a) => out.push(a.join(" ")) };' +
    ` ${COST_SCRIPT} return out.join("\\n") + "\\n"; })()`;
  const worker = new BullWorker(
    process.env.BENCH_QUEUE!,
    async () => {
      const context = await isolate.createContext();
      try {
        await context.global.set('__call', call);
        const script = await isolate.compileScript(source);
        const stdout = (await script.run(context, { promise: true, copy: true })) as string;
        return { status: 'ok', exec: { stdout } };
      } finally {
        context.release();
      }
    },
    { connection: { url: process.env.BENCH_REDIS!, maxRetriesPerRequest: null }, concurrency: 1 },
  );
  await worker.waitUntilReady();
  process.stdout.write('ready\n');
  process.once('SIGTERM', () => {
    void worker.close().finally(() => process.exit(0));
  });
}

/** Role `local`: the embedded backend runs the cost round in this process and prints its figures. */
async function localRole(): Promise<void> {
  await using jobs = createLocalJobBackend({
    runtimes: { configs: { default: process.env.BENCH_CONFIG! } },
    concurrency: 1,
  });
  let done = 0;
  const submit = async (): Promise<void> => {
    const { id } = await jobs.submit({ kind: 'exec', code: COST_SCRIPT });
    void jobs.wait(id, { timeoutMs: ROUND_TIMEOUT_MS }).then(() => done++);
  };
  await timedJobs(COST_WARMUP_JOBS, submit, () => Promise.resolve(done), 0);
  const before = process.cpuUsage();
  const round = await timedJobs(COST_JOBS, submit, () => Promise.resolve(done), COST_WARMUP_JOBS);
  const used = process.cpuUsage(before);
  const figures: CostFigures = {
    cpuMsPerJob: (used.user + used.system) / 1_000 / round.jobs,
    jobsPerS: round.jobs / round.seconds,
  };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

async function allRounds(redis: RedisHandle, probe: ProbeServer, config: string): Promise<void> {
  const perRunMs = await directFloor(config);
  figure('floor: same script run directly in-process, per run', perRunMs, 'ms');
  const rates = new Map<number, number>();
  for (const workers of [1, 2, 4]) rates.set(workers, await throughputRound(redis, config, workers));
  const one = rates.get(1) ?? 0;
  figure(
    'per-job time through the queue (1 worker) / direct run',
    one > 0 ? 1_000 / one / perRunMs : Infinity,
    '×',
  );
  figure('throughput 2 workers / 1 worker', one > 0 ? (rates.get(2) ?? 0) / one : 0, '×', {
    min: 1.6,
    note: '(2 cores)',
  });
  figure('throughput 4 workers / 1 worker', one > 0 ? (rates.get(4) ?? 0) / one : 0, '×');
  await chaos(redis, probe, config);
}

const role = process.env.CODECALL_BENCH_JOBS_ROLE;
if (role === 'floor') await floorWorkerRole();
else if (role === 'local') await localRole();
else await main();
