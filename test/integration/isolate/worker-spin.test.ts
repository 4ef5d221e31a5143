/**
 * @module
 * A process-mode worker that has sent a tool call reads the settle channel in a loop for up to
 * its run's `spinUs` instead of sleeping until the answer comes (see worker.ts): answers that
 * come within the window are taken by the spin; once an answer came later than the window, the
 * worker waits asleep and spins again only every 16 calls, to notice when answers speed up. The
 * real worker entry (dist/), driven over its IPC channel and its settle channel, which the test
 * answers on as the host does; and a pool whose worker spins, cancelled while it does.
 *
 * A worker does not spin while it runs on its host's core, so these tests place the worker and
 * this process (its host) on two CPUs, or on one, with `taskset` (util-linux).
 */
import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { afterEach, expect, it } from 'vitest';

import { compileScript } from '../../../src/compile/index.js';
import { findDistFile, loadPreludeSource } from '../../../src/isolate/assets.js';
import { SandboxPool, type SandboxWorkerEvent } from '../../../src/isolate/index.js';
import { resolveSandboxLimits } from '../../../src/isolate/limits.js';
import { encodeFrame } from '../../../src/isolate/payload-channel.js';
import {
  SETTLE_CHANNEL_FD,
  type HostMessage,
  type WorkerMessage,
} from '../../../src/isolate/worker-protocol.js';

/** The CPUs this process may run on, as `taskset` lists them; undefined without taskset. */
function affinity(pid: number): string | undefined {
  const result = spawnSync('taskset', ['-pc', String(pid)], { encoding: 'utf8' });
  return result.status === 0 ? /list:\s*(\S+)/.exec(result.stdout)?.[1] : undefined;
}
function pin(pid: number, cpus: string): void {
  const result = spawnSync('taskset', ['-pc', cpus, String(pid)], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`taskset -pc ${cpus} ${pid}: ${result.stderr}`);
}
const ownCpus = affinity(process.pid);
/** Two CPUs this process may use, when taskset can place it. */
const cpus = ownCpus?.split(',').flatMap((part) => {
  const [from, to] = part.split('-').map(Number);
  return Array.from({ length: (to ?? from!) - from! + 1 }, (_, index) => from! + index);
});
const canPlace = cpus !== undefined && cpus.length >= 2;

let child: ChildProcess | undefined;
let pool: SandboxPool | undefined;
const hogs: ChildProcess[] = [];
afterEach(async () => {
  for (const hog of hogs.splice(0)) hog.kill('SIGKILL');
  if (ownCpus !== undefined) pin(process.pid, ownCpus);
  child?.kill('SIGKILL');
  child = undefined;
  await pool?.close();
  pool = undefined;
});

function code(source: string): string {
  const compiled = compileScript(source);
  if (!compiled.ok) expect.fail(compiled.error.message);
  return compiled.code;
}

type Done = Extract<WorkerMessage, { t: 'done' }>;

/** How long a worker may take to go to sleep once its spin's window is over. */
const ASLEEP_TIMEOUT_MS = 20_000;

/** The state of `pid`'s main thread (`R` running or runnable, `S` asleep, …), from `/proc`. */
function threadState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

/**
 * Resolves once the worker's main thread is seen asleep. A spin never sleeps (its reads of the
 * settle channel do not block), and nothing between sending a call and spinning does, so once
 * the host holds a call and then sees the worker asleep, that call's spin is over: an answer
 * written after this reaches the worker through its event loop, however late the machine ran
 * the spin. Rejects if the worker keeps running (a spin that never ends).
 */
async function asleep(pid: number): Promise<void> {
  const deadline = performance.now() + ASLEEP_TIMEOUT_MS;
  while (threadState(pid) !== 'S') {
    if (performance.now() > deadline)
      throw new Error(`the worker (pid ${pid}) did not go to sleep within ${ASLEEP_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/**
 * Starts the real worker and runs `calls` sequential calls of one tool in it with `spinUs`,
 * answering each call `answerAfterMs` after it arrives (0: at once) on the settle channel, as the
 * host does; with `afterSpin`, not before the worker is asleep again (see {@link asleep}), so
 * every answer comes after its call's spin however loaded the machine is. Resolves with the
 * run's `done` message.
 */
async function runSequentialCalls(
  spinUs: number,
  calls: number,
  answerAfterMs: number,
  placement: 'apart' | 'together' = 'apart',
  afterSpin = false,
): Promise<Done> {
  const worker = fork(findDistFile('isolate/worker.js'), [], {
    execArgv: ['--no-node-snapshot'],
    env: {},
    serialization: 'json',
    stdio: ['ignore', 'ignore', 'pipe', 'ipc', 'pipe', 'pipe'],
  });
  child = worker;
  pin(process.pid, String(cpus![0]));
  pin(worker.pid!, String(placement === 'apart' ? cpus![1] : cpus![0]));
  let stderr = '';
  worker.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const settles = (worker.stdio as unknown as Socket[])[SETTLE_CHANNEL_FD]!;
  settles.on('error', () => undefined);
  const post = (message: HostMessage): void => void worker.send(message);
  const write = (runId: number, id: number): void =>
    void settles.write(encodeFrame(JSON.stringify([runId, [id, true, '{"ok":1}', null]])));
  const answer = (runId: number, id: number): void => {
    if (!afterSpin) return write(runId, id);
    asleep(worker.pid!).then(
      () => write(runId, id),
      (error: unknown) => worker.emit('error', error),
    );
  };
  return new Promise<Done>((resolve, reject) => {
    worker.once('exit', () => reject(new Error(`the worker exited: ${stderr}`)));
    worker.once('error', reject);
    worker.on('message', (message: WorkerMessage) => {
      if (message.t === 'ready') {
        post({
          t: 'run',
          runId: 1,
          spinUs,
          request: {
            code: code(`for (let i = 0; i < ${calls}; i++) await tools.t.get({ i });`),
            tools: { id: 1, maxNameChars: 6, lineNames: [], store: false, listJson: '[["t","get"]]' },
            limits: resolveSandboxLimits({ maxToolCalls: calls + 1 }),
            wallTimeLeftMs: 60_000,
          },
        });
      } else if (message.t === 'call') {
        for (let index = 0; index < message.calls.length; index += 4) {
          const id = message.calls[index] as number;
          if (answerAfterMs === 0) answer(message.runId, id);
          else setTimeout(() => answer(message.runId, id), answerAfterMs);
        }
      } else if (message.t === 'done') resolve(message);
      else if (message.t === 'init-failed') reject(new Error(message.message));
    });
    post({ t: 'init', prelude: loadPreludeSource(), spareMemoryMb: 64 });
  });
}

it.skipIf(!canPlace)(
  'answers that come within the window are read by the spin; with no window the worker never spins',
  async () => {
    // A window of 1 s: an answer written at once arrives within it however busy the machine is
    // (a spin ends at its answer, so the window costs nothing here).
    const spinning = await runSequentialCalls(1_000_000, 200, 0);
    expect(spinning.outcome.ok).toBe(true);
    const [hits, misses] = spinning.spins!;
    expect(hits).toBeGreaterThan(0);
    expect(misses).toBe(0);
    child?.kill('SIGKILL');

    const asleep = await runSequentialCalls(0, 50, 0);
    expect(asleep.outcome.ok).toBe(true);
    expect(asleep.spins).toEqual([0, 0, 0]);
  },
);

it.skipIf(!canPlace)(
  'answers slower than the window: after a miss the worker waits asleep, probing ever more rarely (16, 32, 64, … calls)',
  async () => {
    // Each answer comes 4 ms after its call and only once the worker is asleep again, so every
    // spin (a window of 1 ms) runs out, whatever the load: no spin ever sees its answer.
    const calls = 160;
    const done = await runSequentialCalls(1_000, calls, 4, 'apart', true);
    expect(done.outcome.ok).toBe(true);
    const [hits, misses] = done.spins!;
    expect(hits).toBe(0);
    // The first call spins (no answer was slow yet), then the probes after 16, 32 and 64 more
    // calls (calls 17, 49 and 113): 4. Probing every 16 calls would make 1 + 160 / 16 = 11.
    // Three spins in a row preempted on a busy machine pause spinning for 250 ms, which the
    // 47 calls after the third (at least 4 ms each) outlast: still at least 3.
    expect(misses).toBeGreaterThanOrEqual(3);
    expect(misses).toBeLessThanOrEqual(5);
  },
);

it.skipIf(!canPlace)(
  'a spin that loses its core to another process stops the spinning for a while (three in a row)',
  async () => {
    // A process that never sleeps, on the worker's core: a spin that waits 20 ms for its answer
    // runs past the kernel's time slice (a few ms), so the other process takes the core in the
    // middle of it. The window (200 ms) is far longer than the wait, so a busy host answering
    // late still answers within it (a miss would stop the spinning on its own).
    const hog = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
    hogs.push(hog);
    pin(hog.pid!, String(cpus![1]));
    const calls = 30;
    const done = await runSequentialCalls(200_000, calls, 20);
    expect(done.outcome.ok).toBe(true);
    const [hits, misses, preempted] = done.spins!;
    expect(preempted).toBeGreaterThanOrEqual(3);
    // After three preempted spins in a row the worker waits asleep for 250 ms, then for twice as
    // long each time it recurs within a second: spinning every call would make 30 spins.
    expect(hits + misses).toBeLessThan(calls / 2);
  },
);

it.skipIf(!canPlace)(
  'a worker on the core of its host does not spin: it would keep the host off the core',
  async () => {
    const done = await runSequentialCalls(20_000, 100, 0, 'together');
    expect(done.outcome.ok).toBe(true);
    expect(done.spins).toEqual([0, 0, 0]);
  },
);

it('a run whose worker spins for its answers is cancelled at its wall budget, and the worker confirms and stays', async () => {
  const events: SandboxWorkerEvent[] = [];
  pool = await SandboxPool.open({
    mode: 'process',
    workers: 1,
    workerSpinUs: 50_000,
    onWorkerEvent: (event) => events.push(event),
  });
  const result = await pool.run({
    code: code('for (;;) await tools.t.echo({});'),
    tools: [{ name: 't.echo', namespace: 't', member: 'echo' }],
    invoke: async () => ({ ok: true }),
    limits: { wallTimeMs: 300, maxToolCalls: 10_000_000 },
  });
  expect(result.error?.code).toBe('WALL_TIMEOUT');
  expect(result.toolCalls.length).toBeGreaterThan(1);
  // The worker took the cancel (a spin ends when the answers stop): it confirmed, and was not
  // killed for failing to (that would show as a 'stopped' event, after the kill grace).
  expect(events.filter((event) => event.type === 'stopped')).toEqual([]);
  const next = await pool.run({
    code: code('console.log((await tools.t.echo({})).ok);'),
    tools: [{ name: 't.echo', namespace: 't', member: 'echo' }],
    invoke: async () => ({ ok: true }),
  });
  expect(next.stdout.trim()).toBe('true');
});

it('refuses a negative or fractional spin window, naming the option', async () => {
  for (const workerSpinUs of [-1, 1.5]) {
    await expect(SandboxPool.open({ mode: 'process', workerSpinUs })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { field: 'workerSpinUs' },
    });
  }
});
