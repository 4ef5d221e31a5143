/**
 * @module
 * Process-mode worker pool figures, each against a reference measured in the same run:
 *
 * - Warm start, run → first tool call answered (the script's next call seen on the host), p50:
 *   after an idle pause (the worker has refilled its spare), back to back (no pause: the worker
 *   refills between runs), and the second of two runs started together. In-process is the
 *   floor. Target ≤ 1.5 ms for the idle case.
 * - Throughput of 8 concurrent runs of 200 tool calls each, runs/s: one worker, the pool's
 *   default sizing (1 worker up to `os.availableParallelism()`), and in-process; rounds
 *   interleaved, medians. Scaling stops at the cores the machine has free: the ratio against
 *   in-process (one host thread) says how much of the machine's parallelism the pool uses.
 * - Memory per extra worker: resident memory (VmRSS) of the worker processes with one worker
 *   and after the pool has grown, divided by the extra workers; and the time to start one.
 *
 * Needs `npm run build` first (the worker entry and prelude load from dist/). Linux only for the
 * memory figure (reads /proc).
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { resolve } from 'node:path';

import { compileScript } from '../src/compile/index.js';
import { SandboxPool, type SandboxPoolOptions } from '../src/isolate/index.js';
import type { SandboxToolBinding, ToolInvoker } from '../src/types.js';
import { figure, finish, hasBuild, nowUs, percentile, skip } from './harness.js';

const ROOT = resolve(import.meta.dirname ?? '.', '..');
const WARM_SAMPLES = 120;
const IDLE_PAUSE_MS = 30;
const CONCURRENT_RUNS = 8;
const CALLS_PER_RUN = 200;
const THROUGHPUT_ROUNDS = 5;
/** `getconf CLK_TCK` on Linux: the unit of CPU times in /proc/<pid>/stat. */
const CLOCK_TICKS_PER_S = 100;

if (!hasBuild(ROOT, ['sandbox/prelude.js', 'isolate/worker.js'])) {
  finish();
  process.exit();
}

function compile(source: string): string {
  const result = compileScript(source);
  if (!result.ok) throw new Error(result.error.message);
  return result.code;
}

const tools: SandboxToolBinding[] = [
  { name: 't.first', namespace: 't', member: 'first' },
  { name: 't.mark', namespace: 't', member: 'mark' },
  { name: 't.echo', namespace: 't', member: 'echo' },
];
const warmCode = compile('await tools.t.first({}); await tools.t.mark({});');
const loadCode = compile(`for (let i = 0; i < ${CALLS_PER_RUN}; i++) await tools.t.echo({ i });`);

const load = () => `load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores`;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One run: µs from `run()` to the script's call after its first answered one. */
async function warmRunUs(pool: SandboxPool): Promise<number> {
  let answered = 0;
  const start = nowUs();
  const invoke: ToolInvoker = async ({ name }) => {
    if (name === 't.mark') answered = nowUs();
    return null;
  };
  const result = await pool.run({ code: warmCode, tools, invoke });
  if (result.status !== 'ok') throw new Error(`warm run failed: ${result.error?.message}`);
  return answered - start;
}

async function warmStarts(pool: SandboxPool): Promise<{ idle: number; backToBack: number; second: number }> {
  const idle: number[] = [];
  const backToBack: number[] = [];
  const second: number[] = [];
  for (let i = 0; i < 10; i++) await warmRunUs(pool);
  // Interleaved: one idle sample, one back-to-back sample, one overlapping pair per round.
  for (let i = 0; i < WARM_SAMPLES; i++) {
    await pause(IDLE_PAUSE_MS);
    idle.push(await warmRunUs(pool));
    backToBack.push(await warmRunUs(pool));
    await pause(IDLE_PAUSE_MS);
    const [, late] = await Promise.all([warmRunUs(pool), warmRunUs(pool)]);
    second.push(late);
  }
  return {
    idle: percentile(idle, 50) / 1_000,
    backToBack: percentile(backToBack, 50) / 1_000,
    second: percentile(second, 50) / 1_000,
  };
}

/** Runs/s of CONCURRENT_RUNS runs of CALLS_PER_RUN calls started together. */
async function throughput(pool: SandboxPool): Promise<number> {
  const invoke: ToolInvoker = async ({ args }) => args;
  const start = performance.now();
  const results = await Promise.all(
    Array.from({ length: CONCURRENT_RUNS }, () => pool.run({ code: loadCode, tools, invoke })),
  );
  const elapsedS = (performance.now() - start) / 1_000;
  const failed = results.find((result) => result.status !== 'ok');
  if (failed) throw new Error(`load run failed: ${failed.error?.message}`);
  return CONCURRENT_RUNS / elapsedS;
}

/** CPU time (user + system) a process has used, in ms; 0 once it is gone. */
function cpuMsOf(pid: number): number {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and
    // 13th of them, in clock ticks (100 per second on Linux).
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1_000) / CLOCK_TICKS_PER_S;
  } catch {
    return 0;
  }
}

function rssKb(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) : NaN;
}

console.log(`  ${load()} at start`);

// Warm start: the default pool (after its warm-up it holds up to two workers within the idle
// timeout, so the overlapping pair runs on two), against in-process in the same run.
{
  const inProcess = await SandboxPool.open({ mode: 'in-process' });
  const processPool = await SandboxPool.open({ mode: 'process' });
  const floor = await warmStarts(inProcess);
  const measured = await warmStarts(processPool);
  await inProcess.close();
  await processPool.close();
  figure('[in-process] warm start → first call answered, idle p50', floor.idle, 'ms');
  figure('[in-process]   back to back p50', floor.backToBack, 'ms');
  figure('[in-process]   second of two runs started together p50', floor.second, 'ms');
  figure('[process] warm start → first call answered, idle p50', measured.idle, 'ms', { max: 1.5 });
  figure('[process]   back to back (no pause between runs) p50', measured.backToBack, 'ms');
  figure('[process]   second of two runs started together p50', measured.second, 'ms');
  figure('[process]   idle ÷ in-process idle', measured.idle / floor.idle, '×');
  console.log(`  (${load()})`);
}

// Throughput: one worker, the default sizing, in-process; rounds interleaved, medians. CPU time
// per run (host plus workers, from /proc) says whether a slower figure is the code or the
// machine: it barely depends on how busy the machine is.
{
  const configs: [string, SandboxPoolOptions][] = [
    ['in-process', { mode: 'in-process' }],
    ['process, 1 worker', { mode: 'process', workers: 1 }],
    ['process, default sizing', { mode: 'process' }],
  ];
  const workerPids = configs.map(() => new Set<number>());
  const pools = await Promise.all(
    configs.map(([, options], index) =>
      SandboxPool.open({
        ...options,
        onWorkerEvent: (event) => {
          if (event.type === 'started') workerPids[index]!.add(event.pid);
          else workerPids[index]!.delete(event.pid);
        },
      }),
    ),
  );
  const samples = configs.map(() => [] as number[]);
  const cpuPerRunMs = configs.map(() => [] as number[]);
  const workersCpuMs = (index: number) =>
    process.platform === 'linux' ? [...workerPids[index]!].reduce((sum, pid) => sum + cpuMsOf(pid), 0) : 0;
  for (const pool of pools) await throughput(pool); // warm-up: the default pool grows here
  for (let round = 0; round < THROUGHPUT_ROUNDS; round++) {
    for (const [index, pool] of pools.entries()) {
      const host = process.cpuUsage();
      const workers = workersCpuMs(index);
      samples[index]!.push(await throughput(pool));
      const hostUsage = process.cpuUsage(host);
      const cpuMs = (hostUsage.user + hostUsage.system) / 1_000 + workersCpuMs(index) - workers;
      cpuPerRunMs[index]!.push(cpuMs / CONCURRENT_RUNS);
    }
  }
  const grownTo = workerPids[2]!.size;
  await Promise.all(pools.map((pool) => pool.close()));
  const [inProcess, one, sized] = samples.map((values) => percentile(values, 50)) as [number, number, number];
  const label = `${CONCURRENT_RUNS} runs × ${CALLS_PER_RUN} calls`;
  figure(`[in-process] ${label}, runs/s`, inProcess, 'runs/s');
  figure(`[process, 1 worker] ${label}, runs/s`, one, 'runs/s');
  figure(`[process, default: ${grownTo} workers] ${label}, runs/s`, sized, 'runs/s');
  figure('[process] default sizing ÷ 1 worker', sized / one, '×');
  figure('[process] default sizing ÷ in-process', sized / inProcess, '×');
  if (process.platform === 'linux') {
    for (const [index, [name]] of configs.entries()) {
      figure(`[${name}] CPU per run (host + workers) p50`, percentile(cpuPerRunMs[index]!, 50), 'ms');
    }
  }
  console.log(
    `  (${load()}; scaling stops at the cores the machine has free, and the host thread relays every call)`,
  );
}

// Memory per extra worker and start time.
if (process.platform !== 'linux') skip('memory per worker reads /proc (Linux only)');
else {
  const pids = new Set<number>();
  const startMs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    const pool = await SandboxPool.open({ mode: 'process', workers: 1 });
    startMs.push(performance.now() - start);
    await pool.close();
  }
  const grown = Math.max(2, availableParallelism());
  const pool = await SandboxPool.open({
    mode: 'process',
    minWorkers: 1,
    maxWorkers: grown,
    onWorkerEvent: (event) => {
      if (event.type === 'started') pids.add(event.pid);
      else pids.delete(event.pid);
    },
  });
  // One run on the one worker, then concurrent load that grows the pool: every worker measured
  // has run scripts.
  await warmRunUs(pool);
  await pause(200);
  const single = [...pids].reduce((sum, pid) => sum + rssKb(pid), 0);
  const singleCount = pids.size;
  await Promise.all(Array.from({ length: grown }, () => throughput(pool)));
  await pause(200);
  const all = [...pids].reduce((sum, pid) => sum + rssKb(pid), 0);
  const count = pids.size;
  await pool.close();
  figure('[process] worker start (open a 1-worker pool) p50', percentile(startMs, 50), 'ms');
  figure('[process] RSS of 1 worker', single / 1_024 / singleCount, 'MB');
  if (count > singleCount) {
    figure(
      `[process] RSS per extra worker (${singleCount} → ${count})`,
      (all - single) / 1_024 / (count - singleCount),
      'MB',
    );
  } else skip(`the pool did not grow past ${singleCount} worker(s) under load`);
  console.log(`  (${load()})`);
}

finish();
