/**
 * @module
 * Sandbox figures, each against a floor measured in the same run: tool-call overhead (p50)
 * against a plain `await` of the same function with a JSON copy of arguments and result;
 * sandbox ready time (warm spare and cold); memory per idle sandbox (marginal resident memory of
 * many idle sandboxes, against bare isolated-vm isolates and contexts made without codecall);
 * 1,000 parallel calls; a 10 MB tool result against a host `JSON.parse` of it, three ways: the
 * JSON text a server sent (passed to the sandbox as text and parsed there once), a real MCP text
 * result through ToolPool against a plain MCP SDK client + `JSON.parse` over the same transport,
 * and a JS value (which the host must serialise; info). Needs `npm run build` first (the
 * prelude and the worker entry are loaded from dist/).
 *
 * Per-call cost is also given against the two floors that isolation itself costs, measured in
 * the same run with the same method (p50 gap between consecutive tool calls seen on the host):
 * in-process ÷ a bare isolated-vm bridge written for the purpose (one Reference applied with a
 * promise result, JSON both ways), twice with a target each: cold, the first rounds of fresh
 * processes (what a one-off CLI run or a job sees), target ≤ 1.6×, and steady, the median of
 * rounds after warm-up rounds (a server that has served runs), target ≤ 1.3×; process mode − a
 * bare round trip between two processes in the same placement (`taskset`; left to the kernel, a
 * pair settles on one core or two at random, which moves the difference by ±50 µs: see
 * `Placement`), target ≤ 15 µs, the median of rounds that measure floor and pool back to back.
 * On one core the worker does not spin and the floor is a bare Node IPC echo (a child started
 * like codecall's worker, `json` serialization, echoing settle-sized messages); on two cores the
 * worker spins for its answers (`workerSpinUs`) and the floor is an echo that gets, answers and
 * spins as the worker does (socket in, IPC out, the same window): a spinning side against a
 * sleeping one measures the spin, not codecall. Beside each time, the CPU per call of both
 * processes; the kernel's own placement, what users get, is shown for information against both
 * floors. For information, the same bare bridge entering with a timeout (as codecall does for a
 * run's first entries; later ones go under the run's watchdog) shows what that timer alone costs
 * per call, and a watch's CPU is printed at the end.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { availableParallelism, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import ivm from 'isolated-vm';

import { compileScript } from '../src/compile/index.js';
import { DEFAULT_SANDBOX_LIMITS, DEFAULT_SANDBOX_WORKER_SPIN_US } from '../src/config/defaults.js';
import { loadPreludeSource } from '../src/isolate/assets.js';
import { IsolateEngine } from '../src/isolate/engine.js';
import { SandboxPool, type SandboxMode } from '../src/isolate/index.js';
import { encodeFrame } from '../src/isolate/payload-channel.js';
import { WATCH_AFTER_ENTRIES, Watchdogs } from '../src/isolate/watchdog.js';
import { inMemoryTransport } from '../src/testing/servers/in-memory.js';
import { ToolPool } from '../src/tools/index.js';
import type { SandboxToolBinding, ToolInvoker } from '../src/types.js';
import { JsonText } from '../src/util/json-text.js';
import { figure, finish, hasBuild, nowUs, percentile, skip } from './harness.js';

const ROOT = resolve(import.meta.dirname ?? '.', '..');
const IDLE_SANDBOXES = 40;
const IDLE_MEMORY_FLAG = '--idle-memory';
/** Memory limit of every idle isolate measured (the engine's spare gets the pool's, here this). */
const IDLE_MEMORY_LIMIT_MB = 256;

/** One idle isolate held by {@link idleSandboxCost}: its V8 heap, and how to let it go. */
interface HeldIsolate {
  heapBytes(): number;
  close(): void;
}

/** A codecall sandbox: an engine's warm spare (isolate, context, prelude run and warmed up). */
function codecallSandbox(): HeldIsolate {
  const engine = new IsolateEngine({ prelude: loadPreludeSource(), spareMemoryMb: IDLE_MEMORY_LIMIT_MB });
  engine.warm();
  return { heapBytes: () => engine.spareHeapBytes() ?? NaN, close: () => engine.close() };
}

/** The floor: a bare isolated-vm isolate and context, nothing of codecall's run in it. */
function bareIsolate(): HeldIsolate {
  const isolate = new ivm.Isolate({ memoryLimit: IDLE_MEMORY_LIMIT_MB });
  const context = isolate.createContextSync();
  return {
    heapBytes: () => {
      const heap = isolate.getHeapStatisticsSync();
      return heap.total_heap_size + heap.externally_allocated_size;
    },
    close: () => {
      context.release();
      isolate.dispose();
    },
  };
}

/** Child mode: marginal resident bytes (and median V8 reserved heap) of idle isolates made by `make`. */
async function idleSandboxCost(make: () => HeldIsolate): Promise<{ rssBytes: number; heapBytes: number }> {
  const held: HeldIsolate[] = [];
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      (globalThis as { gc?: () => void }).gc?.();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const add = () => {
    const one = make();
    held.push(one);
    return one;
  };
  for (let i = 0; i < 5; i++) add();
  await settle();
  const before = process.memoryUsage().rss;
  const heap: number[] = [];
  for (let i = 0; i < IDLE_SANDBOXES; i++) heap.push(add().heapBytes());
  await settle();
  const rssBytes = (process.memoryUsage().rss - before) / IDLE_SANDBOXES;
  for (const one of held) one.close();
  return { rssBytes, heapBytes: percentile(heap, 50) };
}

// The prelude and the worker entry load from dist/: without a build this bench cannot run.
if (!hasBuild(ROOT, ['sandbox/prelude.js', 'isolate/worker.js'])) {
  finish();
  process.exit();
}

if (process.argv[2] === IDLE_MEMORY_FLAG) {
  process.stdout.write(
    JSON.stringify(await idleSandboxCost(process.argv[3] === 'bare' ? bareIsolate : codecallSandbox)),
  );
  process.exit(0);
}

const CALLS = 2_000;
/** Runs per 10 MB result figure (each against a floor measured just before it). */
const BIG_SAMPLES = 11;
const READY_SAMPLES = 200;

function compile(source: string): string {
  const result = compileScript(source);
  if (!result.ok) throw new Error(result.error.message);
  return result.code;
}

const tools: SandboxToolBinding[] = [
  { name: 't.echo', namespace: 't', member: 'echo' },
  { name: 't.mark', namespace: 't', member: 'mark' },
  { name: 't.big', namespace: 't', member: 'big' },
];

const echo = async (args: unknown) => ({ ok: true, args });

async function floorUs(): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < CALLS + 200; i++) {
    const start = nowUs();
    const args = JSON.parse(JSON.stringify({ i, name: 'item' })) as unknown;
    JSON.parse(JSON.stringify(await echo(args)));
    if (i >= 200) samples.push(nowUs() - start);
  }
  return percentile(samples, 50);
}

/** p50 gaps between consecutive calls: the first 100 (the prelude captures their call sites) and the rest. */
/**
 * p50 gaps between consecutive calls: the first 100 (the prelude captures their call sites) and
 * the rest; with `workerPid`, also the CPU per call of the measured run, host and worker together.
 */
async function callOverheadUs(
  pool: SandboxPool,
  workerPid?: number,
): Promise<{ first: number; steady: number; cpuUs: number }> {
  const stamps: number[] = [];
  const invoke: ToolInvoker = async ({ args }) => {
    stamps.push(nowUs());
    return echo(args);
  };
  const code = compile(`for (let i = 0; i < ${CALLS}; i++) await tools.t.echo({ i, name: 'item' });`);
  // Room for every call (the default maxToolCalls is lower than CALLS).
  const limits = { maxToolCalls: CALLS + 1 };
  await pool.run({ code, tools, invoke, limits }); // warm-up
  stamps.length = 0;
  const cpuBefore = pairCpuUs(workerPid);
  await pool.run({ code, tools, invoke, limits });
  const cpuUs = (pairCpuUs(workerPid) - cpuBefore) / CALLS;
  const gaps = stamps.slice(1).map((stamp, index) => stamp - stamps[index]!);
  return { first: percentile(gaps.slice(0, 99), 50), steady: percentile(gaps.slice(100), 50), cpuUs };
}

/** CPU µs so far of this process (every thread), plus `otherPid`'s when given. */
function pairCpuUs(otherPid?: number): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system + (otherPid === undefined ? 0 : cpuNsOf(otherPid) / 1_000);
}

async function readyUs(pool: SandboxPool, memoryMb?: number, idleMs = 0): Promise<number> {
  const code = compile('await tools.t.mark({});');
  const samples: number[] = [];
  for (let i = 0; i < READY_SAMPLES; i++) {
    // Let the pool refill its warm spare: engines refill only while idle (a process-mode worker
    // once its run has ended, after the answer reaches the host), so "warm" means a spare ready.
    await new Promise((resolve) => setImmediate(resolve));
    if (idleMs > 0) await new Promise((resolve) => setTimeout(resolve, idleMs));
    let marked = 0;
    const start = nowUs();
    await pool.run({
      code,
      tools,
      invoke: async () => {
        marked = nowUs();
        return null;
      },
      ...(memoryMb === undefined ? {} : { limits: { memoryMb } }),
    });
    if (i >= 10) samples.push(marked - start);
  }
  return percentile(samples, 50);
}

/** How the 10 MB result reaches the invoker: as the MCP server's JSON text, or as a JS value. */
type BigAnswer = (signal: AbortSignal) => Promise<unknown>;

/**
 * Median over {@link BIG_SAMPLES} pairs of (time from the script's call of `t.big` reaching the
 * host to the script's next call, i.e. the result parsed in the script and read) ÷ (`floor`,
 * measured just before that run): each pair sees the same machine load.
 */
async function bigResultRatio(
  pool: SandboxPool,
  answer: BigAnswer,
  floor: () => Promise<void>,
): Promise<number> {
  const ratios: number[] = [];
  // A full collection before each side, so neither pays for the other's 10 MB of garbage.
  const collect = (globalThis as { gc?: () => void }).gc ?? (() => {});
  for (let i = 0; i < BIG_SAMPLES; i++) {
    collect();
    const before = nowUs();
    await floor();
    const floorUs = nowUs() - before;
    collect();
    let sent = 0;
    let arrived = 0;
    const result = await pool.run({
      code: compile('const rows = await tools.t.big({}); await tools.t.mark({ n: rows.length });'),
      tools,
      invoke: async ({ name, signal }) => {
        if (name === 't.big') {
          sent = nowUs();
          return answer(signal);
        }
        arrived = nowUs();
        return null;
      },
    });
    if (result.status !== 'ok') throw new Error(JSON.stringify(result.error));
    ratios.push((arrived - sent) / floorUs);
  }
  return percentile(ratios, 50);
}

/** An MCP server whose one tool returns `text` as its text content (what a real server sends). */
function bigTextServer(text: string): McpServer {
  const server = new McpServer({ name: 'big', version: '1.0.0' });
  server.registerTool('rows', { description: 'Returns 10 MB of rows as JSON text.' }, () => ({
    content: [{ type: 'text', text }],
  }));
  return server;
}

async function parallel(pool: SandboxPool): Promise<{ done: number; ms: number }> {
  const start = nowUs();
  const result = await pool.run({
    code: compile(
      'const r = await Promise.all(Array.from({ length: 1000 }, (_, i) => tools.t.echo({ i }))); console.log(r.length);',
    ),
    tools,
    invoke: async ({ args }) => {
      await new Promise((resolve) => setImmediate(resolve));
      return args;
    },
  });
  return { done: Number(result.stdout.trim()), ms: (nowUs() - start) / 1_000 };
}

/**
 * A bare isolated-vm bridge (no codecall), built the fastest way we know: the script calls a
 * synchronous `ivm.Callback` with the call's id and JSON arguments, the host runs the tool and
 * enters the isolate once with `Reference.applySync` to resolve the call's promise (V8 then runs
 * the script on to its next await). `script` is the body of an async function with `call(args)`.
 * `batched`: the answers that arrive in one turn of the host's loop enter together, once.
 */
async function bareBridge(
  script: string,
  invoke: (args: unknown) => Promise<unknown>,
  entryTimeoutMs?: number,
  batched = false,
): Promise<void> {
  const isolate = new ivm.Isolate({ memoryLimit: 64 });
  try {
    const context = isolate.createContextSync();
    context.evalSync(
      `const pending = new Map(); let next = 0;
       globalThis.settle = (id, json) => { const resolve = pending.get(id); pending.delete(id); resolve(JSON.parse(json)); };
       globalThis.settleMany = (...answers) => { for (let i = 0; i < answers.length; i += 2) settle(answers[i], answers[i + 1]); };
       const call = (args) => new Promise((resolve) => { const id = next++; pending.set(id, resolve); hostCall(id, JSON.stringify(args)); });
       globalThis.main = async () => { ${script} hostDone(); };`,
    );
    const settle = context.global.getSync('settle', { reference: true }) as ivm.Reference<
      (id: number, json: string) => void
    >;
    const settleMany = context.global.getSync('settleMany', { reference: true }) as ivm.Reference<
      (...answers: (number | string)[]) => void
    >;
    // Batched: answers that arrive in one turn of the loop enter the isolate together.
    let answers: (number | string)[] = [];
    const enterWithAnswers = () => {
      const ready = answers;
      answers = [];
      settleMany.applySync(undefined, ready);
    };
    context.global.setSync(
      'hostCall',
      new ivm.Callback((id: number, json: string) => {
        void invoke(JSON.parse(json)).then((result) => {
          if (batched) {
            if (answers.push(id, JSON.stringify(result)) === 2) setImmediate(enterWithAnswers);
            return;
          }
          settle.applySync(
            undefined,
            [id, JSON.stringify(result)],
            entryTimeoutMs === undefined ? undefined : { timeout: entryTimeoutMs },
          );
        });
      }),
    );
    const done = new Promise<void>((resolveDone) =>
      context.global.setSync('hostDone', new ivm.Callback(() => resolveDone())),
    );
    const main = context.global.getSync('main', { reference: true }) as ivm.Reference<() => void>;
    main.applySync(undefined, []);
    await done;
  } finally {
    isolate.dispose();
  }
}

/** p50 gap between consecutive host calls of {@link bareBridge}, sequential calls. */
async function bareBridgeUs(entryTimeoutMs?: number): Promise<number> {
  const stamps: number[] = [];
  const invoke = (args: unknown): Promise<unknown> => {
    stamps.push(nowUs());
    return echo(args);
  };
  const loop = (n: number): string => `for (let i = 0; i < ${n}; i++) await call({ i, name: 'item' });`;
  await bareBridge(loop(200), invoke, entryTimeoutMs); // warm-up
  stamps.length = 0;
  await bareBridge(loop(CALLS), invoke, entryTimeoutMs);
  return percentile(
    stamps.slice(1).map((stamp, index) => stamp - stamps[index]!),
    50,
  );
}

/** Rounds of the in-process per-call ratio (bridge, bridge with a timeout, pool, back to back). */
const PER_CALL_ROUNDS = 21;
/**
 * Rounds run first and not counted in the steady figure: the pool's per-call cost falls over a
 * process's first rounds (about 1.3× the bridge in the first, 1.1–1.2× from the fifth or sixth
 * on, in a scratch copy of this measurement), the bridge's does not; the steady figure is that of
 * a host that has served runs before, as a server has.
 */
const PER_CALL_WARMUP_ROUNDS = 3;
/**
 * The cold figure: what a one-off CLI run or a job sees, which never gets past a process's first
 * rounds. Measured in fresh processes ({@link COLD_PER_CALL_FLAG}), each running the first
 * {@link PER_CALL_WARMUP_ROUNDS} rounds of the steady figure's measurement and nothing before.
 */
const COLD_PER_CALL_PROCESSES = 5;
const COLD_PER_CALL_FLAG = '--cold-per-call';

/**
 * Median over {@link PER_CALL_ROUNDS} rounds, after {@link PER_CALL_WARMUP_ROUNDS} whose ratios
 * are returned apart, of the pool's steady p50 gap ÷ the bare bridge's (and ÷ the bridge
 * entering with a timeout), each round measuring all three back to back.
 */
async function interleavedPerCall(
  pool: SandboxPool,
): Promise<{ bridge: number; timed: number; warmUp: number[] }> {
  const bridgeRatios: number[] = [];
  const timedRatios: number[] = [];
  const warmUp: number[] = [];
  for (let round = -PER_CALL_WARMUP_ROUNDS; round < PER_CALL_ROUNDS; round++) {
    const bare = await bareBridgeUs();
    const timed = await bareBridgeUs(DEFAULT_SANDBOX_LIMITS.cpuTimeMs);
    const steady = (await callOverheadUs(pool)).steady;
    if (round < 0) {
      warmUp.push(steady / bare);
      continue;
    }
    bridgeRatios.push(steady / bare);
    timedRatios.push(steady / timed);
  }
  return { bridge: percentile(bridgeRatios, 50), timed: percentile(timedRatios, 50), warmUp };
}

/** Tool calls of the parallel-throughput figure, each taking {@link SLOW_CALL_MS}. */
const PARALLEL_CALLS = 1_000;
const SLOW_CALL_MS = 1;
const sleepingTool = async (args: unknown): Promise<unknown> => {
  await new Promise((resolveSleep) => setTimeout(resolveSleep, SLOW_CALL_MS));
  return args;
};
const PARALLEL_SCRIPT = `await Promise.all(Array.from({ length: ${PARALLEL_CALLS} }, (_, i) => call({ i })));`;

/** Wall ms of one run of {@link PARALLEL_CALLS} parallel 1 ms calls through {@link bareBridge}. */
async function bareBridgeParallelMs(batched: boolean): Promise<number> {
  const start = nowUs();
  await bareBridge(PARALLEL_SCRIPT, sleepingTool, undefined, batched);
  return (nowUs() - start) / 1_000;
}

/** Rounds of the parallel-calls ratio (bridge twice, pool, back to back). */
const PARALLEL_ROUNDS = 9;

/**
 * The parallel calls through codecall's pool, with its default limits, against the bare bridge
 * measured in the same round: per round, the bridge entering once per answer and once per turn
 * of the loop (the faster is the floor), then the pool. Each pool run follows another run without
 * a turn of the loop between them, so it finds no warm spare and creates its isolate, as the
 * bridge does; the rounds start after a pause in which the spare is refilled, so that refill
 * never runs inside a bridge's run. Medians of the rounds: the ratio, and each side's ms.
 */
async function interleavedParallel(
  pool: SandboxPool,
): Promise<{ ratio: number; poolMs: number; bridgeMs: number; eachMs: number; batchedMs: number }> {
  const code = compile(PARALLEL_SCRIPT.replace('call({ i })', 'tools.t.echo({ i })'));
  const runPool = async (): Promise<number> => {
    const start = nowUs();
    const result = await pool.run({ code, tools, invoke: ({ args }) => sleepingTool(args) });
    if (result.status !== 'ok') throw new Error(JSON.stringify(result.error));
    return (nowUs() - start) / 1_000;
  };
  const ratios: number[] = [];
  const poolMs: number[] = [];
  const bridgeMs: number[] = [];
  const eachMs: number[] = [];
  const batchedMs: number[] = [];
  for (let round = -1; round < PARALLEL_ROUNDS; round++) {
    await new Promise((resolvePause) => setTimeout(resolvePause, 20));
    const each = await bareBridgeParallelMs(false);
    const batched = await bareBridgeParallelMs(true);
    await runPool(); // takes the spare refilled in the pause
    const ms = await runPool();
    if (round < 0) continue; // warm-up
    const bridge = Math.min(each, batched);
    ratios.push(ms / bridge);
    poolMs.push(ms);
    bridgeMs.push(bridge);
    eachMs.push(each);
    batchedMs.push(batched);
  }
  return {
    ratio: percentile(ratios, 50),
    poolMs: percentile(poolMs, 50),
    bridgeMs: percentile(bridgeMs, 50),
    eachMs: percentile(eachMs, 50),
    batchedMs: percentile(batchedMs, 50),
  };
}

/**
 * A child Node process that echoes every IPC message back, started the way codecall starts a
 * sandbox worker (`--no-node-snapshot`, an empty environment, the same serialization), doing
 * nothing else: the floor of a process-mode tool call.
 */
function spawnIpcEcho(serialization: 'json' | 'advanced'): ChildProcess {
  return spawn(
    process.execPath,
    ['--no-node-snapshot', '-e', 'process.on("message", (m) => process.send(m));'],
    {
      env: {},
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization,
    },
  );
}

/**
 * The floor of a process-mode call on two cores, like for like: a child that gets each message
 * as a codecall worker gets an answer (a length-prefixed frame on a socket of its own, fd 4),
 * replies as a worker sends a call (an IPC message, `json` serialization), and then reads its
 * socket in a loop for up to `spinUs` before it goes back to sleep in its event loop, as the
 * worker's spin does (the same non-blocking `readSync`, EAGAIN while nothing came). With
 * `spinUs` 0 it only sleeps, as a worker with `workerSpinUs: 0`. Started as codecall starts a
 * worker (`--no-node-snapshot`, an empty environment).
 */
function spawnWorkerLikeEcho(spinUs: number): Echo {
  const source = `
    const { readSync } = require('node:fs');
    const { Socket } = require('node:net');
    const SPIN_MS = ${spinUs / 1_000};
    const bytes = Buffer.alloc(64 * 1024);
    let pending = Buffer.alloc(0);
    let framesRead = 0;
    let sentAt = 0;
    let spinScheduled = false;
    function feed(count) {
      pending = Buffer.concat([pending, bytes.subarray(0, count)]);
      while (pending.length >= 4 && pending.length >= 4 + pending.readUInt32LE(0)) {
        const size = pending.readUInt32LE(0);
        const [runId, [id, , resultJson]] = JSON.parse(pending.toString('utf8', 4, 4 + size));
        pending = pending.subarray(4 + size);
        framesRead++;
        process.send({ t: 'call', runId, calls: [id, 't.echo', resultJson, 0] });
        sentAt = performance.now();
        if (SPIN_MS > 0 && !spinScheduled) {
          spinScheduled = true;
          setImmediate(spin);
        }
      }
    }
    function spin() {
      spinScheduled = false;
      const deadline = sentAt + SPIN_MS;
      const read = framesRead;
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 0;
      try {
        while (performance.now() < deadline) {
          let count;
          try {
            count = readSync(4, bytes);
          } catch (error) {
            if (error.code === 'EAGAIN') continue;
            return;
          }
          if (count === 0) return;
          feed(count);
          if (framesRead !== read) return;
        }
      } finally {
        Error.stackTraceLimit = limit;
      }
    }
    const socket = new Socket({ fd: 4, readable: true, writable: false, onread: { buffer: bytes, callback: (count) => { feed(count); return true; } } });
    socket.on('error', () => {});
    process.on('disconnect', () => process.exit(0));
  `;
  const child = spawn(process.execPath, ['--no-node-snapshot', '-e', source], {
    env: {},
    stdio: ['ignore', 'ignore', 'inherit', 'ipc', 'pipe'],
    serialization: 'json',
  });
  const socket = (child.stdio as unknown as Socket[])[4]!;
  return {
    child,
    name: spinUs > 0 ? `spinning echo (${spinUs} µs, as the worker)` : 'sleeping echo (socket in, IPC out)',
    send: (i) => void socket.write(encodeFrame(JSON.stringify([1, settleAnswer(i)]))),
  };
}

/** The other side of a bare round trip, and how the host sends it a message. */
interface Echo {
  child: ChildProcess;
  name: string;
  send(i: number): void;
}

/** A settle's answer list for call `i`: `[id, ok, resultJson, code]`. */
function settleAnswer(i: number): unknown[] {
  return [i, true, JSON.stringify({ ok: true, args: { i, name: 'item' } }), null];
}

/** {@link spawnIpcEcho}'s child, sent settle-shaped IPC messages. */
function ipcEcho(child: ChildProcess, name: string): Echo {
  return { child, name, send: (i) => void child.send({ t: 'settle', runId: 1, answers: settleAnswer(i) }) };
}

/**
 * p50 gap between consecutive replies of an echo child, the host sending the next message as
 * each reply arrives (one listener, nothing else per message): the same measure as the pool's
 * gaps between consecutive tool calls. The messages have the size and shape of a process-mode
 * settle. `cpuUs`: CPU per round trip, this process and the echo together.
 */
async function bareIpcUs(echoChild: Echo, calls = CALLS): Promise<{ p50: number; cpuUs: number }> {
  const { child } = echoChild;
  const stamps: number[] = [];
  let cpuBefore = 0;
  await new Promise<void>((resolveDone, rejectDone) => {
    let i = 0;
    const onMessage = () => {
      stamps.push(nowUs());
      // The first 100 replies warm both sides up, as the pool's measured run follows a warm-up run.
      if (i === 100) cpuBefore = pairCpuUs(child.pid);
      if (++i > calls + 100) {
        child.off('message', onMessage);
        child.off('exit', onExit);
        return resolveDone();
      }
      echoChild.send(i);
    };
    const onExit = () => rejectDone(new Error(`the ${echoChild.name} child exited`));
    child.on('message', onMessage);
    child.once('exit', onExit);
    echoChild.send(0);
  });
  const cpuUs = (pairCpuUs(child.pid) - cpuBefore) / calls;
  const gaps = stamps.slice(101).map((stamp, index) => stamp - stamps[100 + index]!);
  return { p50: percentile(gaps, 50), cpuUs };
}

/**
 * Rounds of the process-mode per-call difference (bare IPC, pool, back to back). As many as the
 * in-process ratio's: on the bench VM one round in about 30 reads a pool call at twice its usual
 * cost with the worker's spin hitting (a slow wake of the host's core, not a stopped spin), and
 * such stretches sometimes last several rounds.
 */
const IPC_ROUNDS = 11;

/**
 * Median over {@link IPC_ROUNDS} rounds of (the pool's steady p50 gap − the bare IPC round
 * trip's p50 gap), each round measuring both back to back: load that comes and goes on a shared
 * machine hits floor and pool alike (measured minutes apart, the difference swung by ±50 µs).
 */
async function interleavedIpc(pool: SandboxPool, echoChild: Echo, workerPid?: number): Promise<IpcFigures> {
  const differences: number[] = [];
  const floors: number[] = [];
  const pools: number[] = [];
  const floorCpu: number[] = [];
  const poolCpu: number[] = [];
  for (let round = 0; round < IPC_ROUNDS; round++) {
    const bare = await bareIpcUs(echoChild);
    const measured = await callOverheadUs(pool, workerPid);
    differences.push(measured.steady - bare.p50);
    floors.push(bare.p50);
    pools.push(measured.steady);
    floorCpu.push(bare.cpuUs);
    poolCpu.push(measured.cpuUs);
  }
  return {
    difference: percentile(differences, 50),
    floor: percentile(floors, 50),
    pool: percentile(pools, 50),
    floorCpuUs: percentile(floorCpu, 50),
    poolCpuUs: percentile(poolCpu, 50),
  };
}

/** Medians over {@link IPC_ROUNDS} rounds: p50 gaps (µs) and CPU per call, host and other process together. */
interface IpcFigures {
  /** Pool − floor. */
  difference: number;
  floor: number;
  pool: number;
  /** CPU µs per round trip of the floor (this process + the echo child). */
  floorCpuUs: number;
  /** CPU µs per call of the pool (this process + the worker; 0 without the worker's pid). */
  poolCpuUs: number;
}

/**
 * Where the two processes of a round trip run. Left to the kernel, a pair of processes that
 * wake each other settles either on one core (each runs while the other sleeps: 25–40 µs round
 * trips on the 2-core bench VM) or on two (each wake-up then rouses an idle core: 90–130 µs), and
 * stays there; the echo pair and the pool pair settle independently, so an unpinned difference
 * can read −50 or +100 µs for the same code. Pinned, the floor and the pool run the same way.
 */
interface Placement {
  name: string;
  /** CPU of the host's main thread and of the other process's (echo child or worker). */
  host: number;
  other: number;
}

/** The CPUs `pid`'s main thread may run on, read with `taskset` (util-linux); undefined without it. */
function affinityOf(pid: number): string | undefined {
  const result = spawnSync('taskset', ['-pc', String(pid)], { encoding: 'utf8' });
  if (result.status !== 0) return undefined;
  return /list:\s*(\S+)/.exec(result.stdout)?.[1];
}

/** The CPU numbers of a `taskset` list such as `0-3,6`. */
function cpusOf(list: string): number[] {
  const cpus: number[] = [];
  for (const part of list.split(',')) {
    const [from, to] = part.split('-').map(Number);
    for (let cpu = from!; cpu <= (to ?? from!); cpu++) cpus.push(cpu);
  }
  return cpus;
}

function pin(pid: number, cpus: string): void {
  const result = spawnSync('taskset', ['-pc', cpus, String(pid)], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`taskset -pc ${cpus} ${pid} failed: ${result.stderr}`);
}

/** CPU time of every thread of `pid` so far, in ns (`/proc/<pid>/task/<tid>/schedstat`). */
function cpuNsOf(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return ns;
}

/**
 * {@link interleavedIpc} with the host's, the echo child's and the worker's main threads pinned
 * to `placement`'s CPUs; every affinity is put back afterwards.
 */
async function pinnedIpc(
  placement: Placement,
  pool: SandboxPool,
  workerPid: number,
  echoChild: Echo,
): Promise<IpcFigures> {
  const pids = [process.pid, echoChild.child.pid!, workerPid];
  const before = pids.map((pid) => affinityOf(pid)!);
  try {
    pin(process.pid, String(placement.host));
    pin(echoChild.child.pid!, String(placement.other));
    pin(workerPid, String(placement.other));
    return await interleavedIpc(pool, echoChild, workerPid);
  } finally {
    pids.forEach((pid, index) => pin(pid, before[index]!));
  }
}

/** One line of a process-mode figure's parts: each side's p50 and CPU per call. */
function ipcInfo(mode: SandboxMode, figures: IpcFigures, floorName: string): void {
  console.log(
    `  [${mode}]   info: ${floorName} ${figures.floor.toFixed(1)} µs (CPU ${figures.floorCpuUs.toFixed(1)} µs per round trip, host + echo), pool per call ${figures.pool.toFixed(1)} µs (CPU ${figures.poolCpuUs.toFixed(1)} µs per call, host + worker)`,
  );
}

if (process.argv[2] === COLD_PER_CALL_FLAG) {
  // Child mode: the first rounds of a fresh process, bridge and pool back to back (as
  // interleavedPerCall's), as a JSON array of ratios.
  const pool = await SandboxPool.open({ mode: 'in-process', workers: 1 });
  const ratios: number[] = [];
  for (let round = 0; round < PER_CALL_WARMUP_ROUNDS; round++) {
    const bare = await bareBridgeUs();
    ratios.push((await callOverheadUs(pool)).steady / bare);
  }
  await pool.close();
  process.stdout.write(JSON.stringify(ratios));
  process.exit(0);
}

/** The ratios of {@link COLD_PER_CALL_PROCESSES} fresh processes' first rounds (see {@link COLD_PER_CALL_FLAG}). */
function coldPerCallRatios(): number[][] {
  return Array.from({ length: COLD_PER_CALL_PROCESSES }, () => {
    const child = spawnSync(process.execPath, [...process.execArgv, process.argv[1]!, COLD_PER_CALL_FLAG], {
      encoding: 'utf8',
    });
    if (child.status !== 0) throw new Error(`cold per-call measurement failed: ${child.stderr}`);
    return JSON.parse(child.stdout) as number[];
  });
}

const floor = await floorUs();
console.log(`  floor: plain await + JSON copy of args and result, p50 ${floor.toFixed(2)} µs`);

const rows = Array.from({ length: 140_000 }, (_, i) => ({
  id: i,
  name: `item ${i}`,
  tags: ['a', 'b'],
  price: i * 1.25,
  ok: i % 2 === 0,
}));
const json = JSON.stringify(rows);
const parseSamples: number[] = [];
for (let i = 0; i < 5; i++) {
  const start = nowUs();
  JSON.parse(json);
  parseSamples.push(nowUs() - start);
}
const parseUs = percentile(parseSamples, 50);
console.log(
  `  floor: host JSON.parse of a ${(json.length / 1_048_576).toFixed(1)} MB result, p50 ${(parseUs / 1_000).toFixed(1)} ms`,
);

const mcpPool = await ToolPool.open(
  {},
  { transports: { big: inMemoryTransport(() => bigTextServer(json)) } },
);
const plainClient = new Client({ name: 'plain', version: '1.0.0' });
{
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await bigTextServer(json).connect(serverSide);
  await plainClient.connect(clientSide);
}

const bridge = await bareBridgeUs();
console.log(`  floor: bare isolated-vm bridge, p50 ${bridge.toFixed(2)} µs per call`);
const bridgeTimed = await bareBridgeUs(DEFAULT_SANDBOX_LIMITS.cpuTimeMs);
console.log(
  `  info: the same bridge entering with a timeout (codecall's stop for a run's first entries), p50 ${bridgeTimed.toFixed(2)} µs per call (${(bridgeTimed / bridge).toFixed(2)}× the bare bridge)`,
);
// The bare IPC floor uses codecall's serialization ('json'); 'advanced' is shown beside it.
const sleepingIpcEcho = ipcEcho(spawnIpcEcho('json'), 'bare IPC round trip');
const advancedIpcEcho = ipcEcho(spawnIpcEcho('advanced'), 'bare IPC round trip (advanced)');
await bareIpcUs(sleepingIpcEcho, 200); // warm-up
const ipcJson = await bareIpcUs(sleepingIpcEcho);
const ipcAdvanced = await bareIpcUs(advancedIpcEcho);
advancedIpcEcho.child.kill();
console.log(
  `  floor: bare Node IPC round trip (json, as codecall's worker), p50 ${ipcJson.p50.toFixed(2)} µs (info: advanced ${ipcAdvanced.p50.toFixed(2)})`,
);
// The floors of the two-core figures, like for like: a spinning worker against an echo that
// spins the same way, a sleeping one (`workerSpinUs: 0`) against one that sleeps.
const spinningEcho = spawnWorkerLikeEcho(DEFAULT_SANDBOX_WORKER_SPIN_US);
const sleepingEcho = spawnWorkerLikeEcho(0);
await bareIpcUs(spinningEcho, 200); // warm-up
await bareIpcUs(sleepingEcho, 200);

// The placements of the process-mode per-call figure: the host's CPUs as taskset lists them.
const hostCpus = affinityOf(process.pid);
const placements: Placement[] =
  hostCpus !== undefined && cpusOf(hostCpus).length >= 2
    ? [
        { name: 'both on one core', host: cpusOf(hostCpus)[0]!, other: cpusOf(hostCpus)[0]! },
        { name: 'on two cores', host: cpusOf(hostCpus)[0]!, other: cpusOf(hostCpus)[1]! },
      ]
    : [];

for (const mode of ['in-process', 'process'] as SandboxMode[]) {
  let workerPid: number | undefined;
  const pool = await SandboxPool.open({
    mode,
    workers: 1,
    onWorkerEvent: (event) => {
      if (event.type === 'started') workerPid = event.pid;
    },
  });
  const roundTrip = await callOverheadUs(pool);
  // Information: an absolute figure moves with the machine (on an idle VM a process-mode round
  // trip pays two wake-ups of halted cores); the targets are the ratios to the floors below.
  figure(`[${mode}] tool-call overhead p50 (round trip − floor, info)`, roundTrip.steady - floor, 'µs');
  figure(`[${mode}]   first 100 calls of a run (call site captured)`, roundTrip.first - floor, 'µs');
  if (mode === 'in-process') {
    // Interleaved: each round measures the bridge, the bridge with a timeout and the pool back to
    // back, so load that comes and goes on a shared machine hits floor and pool alike.
    const perCall = await interleavedPerCall(pool);
    // Cold: fresh processes, as a one-off CLI run or a job is; steady: a host that has served
    // runs before, as a server has. Each has its own target.
    const cold = coldPerCallRatios();
    figure(
      `[${mode}] per call ÷ bare isolated-vm bridge, cold (p50 gaps)`,
      percentile(cold.flat(), 50),
      '×',
      {
        max: 1.6,
        note: `(median of the first ${PER_CALL_WARMUP_ROUNDS} rounds of ${COLD_PER_CALL_PROCESSES} fresh processes)`,
      },
    );
    console.log(
      `  [${mode}]   info: cold rounds by process: ${cold.map((ratios) => ratios.map((ratio) => ratio.toFixed(2)).join(' ')).join(' | ')}`,
    );
    figure(`[${mode}] per call ÷ bare isolated-vm bridge, steady (p50 gaps)`, perCall.bridge, '×', {
      max: 1.3,
      note: `(median of ${PER_CALL_ROUNDS} interleaved rounds after ${PER_CALL_WARMUP_ROUNDS})`,
    });
    figure(`[${mode}]   ÷ the bridge entering with a timeout (info)`, perCall.timed, '×');
    console.log(
      `  [${mode}]   info: this process's ${PER_CALL_WARMUP_ROUNDS} warm-up rounds, not counted: ${perCall.warmUp.map((ratio) => `${ratio.toFixed(3)}×`).join(' / ')}`,
    );
  } else {
    // Interleaved: each round measures a bare round trip and the pool back to back, in each
    // placement of the processes (see Placement), and left to the kernel. Beside each time, the
    // CPU per call of both processes: a spinning side buys time with CPU.
    const note = `(median of ${IPC_ROUNDS} interleaved rounds)`;
    // The pool lets its worker spin only while the load average is below the core count.
    const load = loadavg()[0]!;
    const cores = availableParallelism();
    for (const placement of workerPid === undefined ? [] : placements) {
      if (placement.host === placement.other) {
        // One core: the worker does not spin on its host's core, so the floor is the sleeping
        // IPC echo. The two processes run by turns, so a call costs the sum of both sides' work:
        // a sandboxed call in another process makes an IPC round trip and an isolate entry, the
        // bare bridge's gap (measured above, unpinned).
        const perCall = await pinnedIpc(placement, pool, workerPid!, sleepingIpcEcho);
        figure(
          `[${mode}] per call − bare Node IPC round trip, ${placement.name} (p50 gaps)`,
          perCall.difference,
          'µs',
          { max: 15, note },
        );
        ipcInfo(mode, perCall, 'bare IPC round trip');
        figure(
          `[${mode}]   ${placement.name}, per call − (bare IPC round trip + bare bridge) (info)`,
          perCall.pool - perCall.floor - bridge,
          'µs',
        );
        continue;
      }
      // Two cores: the worker spins for its answers (up to workerSpinUs); so does the floor.
      const perCall = await pinnedIpc(placement, pool, workerPid!, spinningEcho);
      figure(
        `[${mode}] per call − spinning echo round trip, ${placement.name} (p50 gaps)`,
        perCall.difference,
        'µs',
        { max: 15, note },
      );
      ipcInfo(mode, perCall, spinningEcho.name);
      if (load >= cores) {
        console.log(
          `  [${mode}]   note: load average ${load.toFixed(1)} on ${cores} cores: the pool may not let its worker spin, so this compares a sleeping worker with a spinning echo`,
        );
      }
      // The same pool against the sleeping IPC echo: what this figure read before (spinning
      // against sleeping: negative when the spin beats the wake-up).
      const unlike = await pinnedIpc(placement, pool, workerPid!, sleepingIpcEcho);
      figure(
        `[${mode}]   ${placement.name}, − the sleeping bare IPC round trip (info)`,
        unlike.difference,
        'µs',
      );
      ipcInfo(mode, unlike, 'bare IPC round trip');
    }
    // What the worker's spin for answers buys, and costs: the same on two cores without it,
    // against the echo that sleeps as it does.
    const twoCores = placements.at(-1);
    if (twoCores !== undefined) {
      let sleeperPid: number | undefined;
      const sleeper = await SandboxPool.open({
        mode,
        workers: 1,
        workerSpinUs: 0,
        onWorkerEvent: (event) => {
          if (event.type === 'started') sleeperPid = event.pid;
        },
      });
      await callOverheadUs(sleeper); // warm-up
      const asleep = await pinnedIpc(twoCores, sleeper, sleeperPid!, sleepingEcho);
      await sleeper.close();
      figure(
        `[${mode}]   ${twoCores.name}, the worker not spinning (workerSpinUs 0) − sleeping echo (info)`,
        asleep.difference,
        'µs',
      );
      ipcInfo(mode, asleep, sleepingEcho.name);
    }
    if (workerPid === undefined || placements.length === 0) {
      skip(
        'the pinned per-call figures of process mode: `taskset` (util-linux) is missing, or only one CPU is usable',
      );
    }
    // What users get: the kernel's placement, against both floors.
    for (const floorEcho of [spinningEcho, sleepingIpcEcho]) {
      const perCall = await interleavedIpc(pool, floorEcho, workerPid);
      figure(`[${mode}] per call − ${floorEcho.name}, placed by the kernel (info)`, perCall.difference, 'µs');
      ipcInfo(mode, perCall, floorEcho.name);
    }
  }
  // Process mode: the worker refills its spare after a run ends (~3 ms); wait for it.
  const warm = await readyUs(pool, undefined, mode === 'process' ? 15 : 0);
  figure(`[${mode}] sandbox ready from warm pool p50 (run → first tool call)`, warm / 1_000, 'ms', {
    max: mode === 'in-process' ? 0.5 : 1.5,
  });
  if (mode === 'in-process') {
    const cold = await readyUs(pool, 96);
    figure(`[${mode}] sandbox ready cold p50 (new isolate, context, prelude)`, cold / 1_000, 'ms', {
      max: 5,
    });
  }
  const { done, ms } = await parallel(pool);
  figure(`[${mode}] 1,000 parallel tool calls completed`, done, 'calls', { min: 1_000 });
  figure(`[${mode}] 1,000 parallel tool calls wall time`, ms, 'ms');
  const slow = await interleavedParallel(pool);
  console.log(
    `  [${mode}] floor: bare isolated-vm bridge, ${PARALLEL_CALLS} parallel ${SLOW_CALL_MS} ms calls, median ${slow.bridgeMs.toFixed(1)} ms per round (the faster of one entry per answer, median ${slow.eachMs.toFixed(1)}, and answers of one turn in one entry, ${slow.batchedMs.toFixed(1)}), ${PARALLEL_ROUNDS} rounds`,
  );
  figure(
    `[${mode}] ${PARALLEL_CALLS} parallel ${SLOW_CALL_MS} ms calls, default limits, median`,
    slow.poolMs,
    'ms',
  );
  figure(
    `[${mode}]   ÷ bare isolated-vm bridge of the same round, median of rounds`,
    slow.ratio,
    '×',
    mode === 'in-process' ? { max: 2 } : undefined,
  );
  // 10 MB results. The target is the issue's: the script has the value within 1.5× of what the
  // host would pay to parse the same JSON text (floor measured between the runs).
  const parseFloor = async (): Promise<void> => void JSON.parse(json);
  const text = await bigResultRatio(pool, async () => new JsonText(json), parseFloor);
  figure(`[${mode}] 10 MB JSON text result reaching the script ÷ host JSON.parse`, text, '×', { max: 1.5 });
  // The same text with a byte that makes it invalid JSON: the sandbox's parse stops at once and
  // the script gets the string, so this is the way there alone (byte count, copies into the
  // isolate; in process mode also the encode, the side channel and the worker's decode). The
  // two modes' figures differ by what process mode adds to the figure above.
  const notJson = `x${json}`;
  const transport = await bigResultRatio(pool, async () => new JsonText(notJson), parseFloor);
  figure(`[${mode}]   of which the text's way into the script, unparsed (info)`, transport, '×');
  // A real MCP text result through ToolPool (policy, input validation, normalisation) against a
  // plain MCP SDK client calling the same server over the same in-memory transport + JSON.parse.
  const viaPool = await bigResultRatio(
    pool,
    (signal) => mcpPool.call('big.rows', {}, { caller: 'code_execution', signal, jsonText: true }),
    async () => {
      const result = await plainClient.callTool({ name: 'rows', arguments: {} });
      JSON.parse((result.content as Array<{ text: string }>)[0]!.text);
    },
  );
  figure(`[${mode}] 10 MB MCP text result via ToolPool ÷ plain MCP client + JSON.parse`, viaPool, '×', {
    max: 1.5,
  });
  // A JS value (a local invoker's): the host must serialise it, so the sandbox can parse it.
  const value = await bigResultRatio(pool, async () => rows, parseFloor);
  figure(`[${mode}] 10 MB JS value result reaching the script ÷ host JSON.parse (info)`, value, '×');
  await pool.close();
}

for (const echoChild of [sleepingIpcEcho, spinningEcho, sleepingEcho]) echoChild.child.kill();
await plainClient.close();
await mcpPool.close();

// Memory per idle sandbox: the marginal resident memory of N idle warm sandboxes held at once
// (after a full GC of the host), so the figure is what each extra sandbox really costs the
// process: V8 heap pages it touched, its context, the prelude's code and data, and the
// isolate's own allocations. Each measurement runs in a fresh child process, so memory freed by
// the rest of this bench cannot be reused and hide the cost. V8's reserved heap
// (`total_heap_size`) is printed beside it for reference: it counts whole 256 KB pages, mostly
// untouched, so it is not a cost by itself. Floor: a bare isolated-vm isolate and context, made
// without codecall's engine (an isolate set up by the engine with an empty prelude would count
// the engine's own per-isolate setup as floor).
const MB = 1_048_576;
const idleMemory = (which: 'bare' | 'codecall'): { rssBytes: number; heapBytes: number } => {
  const child = spawnSync(
    process.execPath,
    [...process.execArgv, process.argv[1]!, IDLE_MEMORY_FLAG, which],
    {
      encoding: 'utf8',
    },
  );
  if (child.status !== 0) throw new Error(`idle memory measurement failed: ${child.stderr}`);
  return JSON.parse(child.stdout) as { rssBytes: number; heapBytes: number };
};
const bare = idleMemory('bare');
const idle = idleMemory('codecall');
console.log(
  `  floor: bare isolated-vm isolate + context, ${(bare.rssBytes / MB).toFixed(3)} MB resident each (V8 reserved heap ${(bare.heapBytes / MB).toFixed(3)} MB)`,
);
figure(`memory per idle sandbox (resident, marginal over ${IDLE_SANDBOXES})`, idle.rssBytes / MB, 'MB', {
  max: 2,
});
figure(
  '  of which codecall: prelude, console, tools, warm-up (idle − floor)',
  (idle.rssBytes - bare.rssBytes) / MB,
  'MB',
);
figure('  ÷ the bare isolate + context (info)', idle.rssBytes / bare.rssBytes, '×');
figure('V8 reserved heap of one idle sandbox (whole pages, info)', idle.heapBytes / MB, 'MB');

// What a long run pays once for entering without per-entry timeouts: a watchdog's watch (the
// hand-off to isolated-vm's thread pool, the wake at the end, the release), in CPU time of all
// threads, over a run of one turn; the same loop without a watch is the floor.
{
  const WATCHES = 2_000;
  const watchdogs = new Watchdogs();
  const target = new ivm.Isolate({ memoryLimit: 16 });
  const turn = () => new Promise((resolveTurn) => setImmediate(resolveTurn));
  const cpuUs = () => {
    const usage = process.cpuUsage();
    return usage.user + usage.system;
  };
  const loop = async (watched: boolean): Promise<number> => {
    const start = cpuUs();
    for (let i = 0; i < WATCHES; i++) {
      const watch = watched ? watchdogs.watch(target, 1e15, 600_000) : undefined;
      await turn();
      watch?.end();
      await watch?.finished;
    }
    return (cpuUs() - start) / WATCHES;
  };
  await loop(true); // warm-up
  const floorCpu = await loop(false);
  const watchCpu = await loop(true);
  figure(
    `a long run's watchdog (after ${WATCH_AFTER_ENTRIES} entries): CPU per watch, all threads (info)`,
    watchCpu - floorCpu,
    'µs',
  );
  watchdogs.close();
  target.dispose();
}
finish();
