/**
 * @module
 * A frame on the payload side channel may be read after the next run has started: frames and
 * IPC messages travel on two pipes, so a large result the host wrote just as a run ended (its
 * `settle` crossing the worker's `done`) can arrive behind the next run's `run` message. The
 * worker's bound on a frame is the largest `maxToolResultBytes` of its runs, never the current
 * run's alone, or such a frame would end the next run (with a smaller limit) as a crash. The
 * real worker entry (dist/), driven over its own IPC channel and side channel.
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { afterEach, expect, it } from 'vitest';

import { compileScript } from '../../../src/compile/index.js';
import { findDistFile, loadPreludeSource } from '../../../src/isolate/assets.js';
import { resolveSandboxLimits } from '../../../src/isolate/limits.js';
import { encodeFrame, SIDE_PAYLOAD } from '../../../src/isolate/payload-channel.js';
import {
  SIDE_CHANNEL_FD,
  type HostMessage,
  type WorkerMessage,
} from '../../../src/isolate/worker-protocol.js';

let child: ChildProcess | undefined;
afterEach(() => {
  child?.kill('SIGKILL');
  child = undefined;
});

function code(source: string): string {
  const compiled = compileScript(source);
  if (!compiled.ok) expect.fail(compiled.error.message);
  return compiled.code;
}

it('a large result of an ended run, read after the next run started, does not end that run', async () => {
  const worker = fork(findDistFile('isolate/worker.js'), [], {
    execArgv: ['--no-node-snapshot'],
    env: {},
    serialization: 'json',
    stdio: ['ignore', 'ignore', 'pipe', 'ipc', 'pipe', 'pipe'],
  });
  child = worker;
  let stderr = '';
  worker.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const messages: WorkerMessage[] = [];
  const waiters: Array<() => void> = [];
  worker.on('message', (message) => {
    messages.push(message as WorkerMessage);
    for (const wake of waiters.splice(0)) wake();
  });
  const exited = new Promise<number | null>((resolve) => worker.once('exit', resolve));
  const next = async (t: WorkerMessage['t']): Promise<WorkerMessage> => {
    for (;;) {
      const found = messages.findIndex((m) => m.t === t);
      if (found >= 0) return messages.splice(found, 1)[0]!;
      const woke = new Promise<void>((resolve) => waiters.push(resolve));
      if ((await Promise.race([woke.then(() => 'message'), exited.then(() => 'exit')])) === 'exit') {
        expect.fail(`the worker exited waiting for "${t}": ${stderr}`);
      }
    }
  };
  const post = (message: HostMessage): void => void worker.send(message);
  const tools = { id: 1, maxNameChars: 6, lineNames: [], store: false, listJson: '[["t","get"]]' };
  const run = (runId: number, maxToolResultBytes: number, source: string): void =>
    post({
      t: 'run',
      runId,
      request: {
        code: code(source),
        tools,
        limits: resolveSandboxLimits({ maxToolResultBytes }),
        wallTimeLeftMs: 30_000,
      },
    });

  post({ t: 'init', prelude: loadPreludeSource(), spareMemoryMb: 64 });
  await next('ready');
  // Run 1 may take results of up to 1 MB; it ends without waiting for its call.
  run(1, 1_048_576, 'void tools.t.get({}); console.log("one");');
  await next('call');
  expect((await next('done')) as { outcome: { ok: boolean } }).toMatchObject({ outcome: { ok: true } });
  // Run 2 takes at most 100 kB, and is under way (its call reached the host)…
  run(2, 100_000, 'const r = await tools.t.get({}); console.log(r.n);');
  await next('call');
  // …when run 1's 200 kB result arrives: its frame, then its settle.
  const side = worker.stdio[SIDE_CHANNEL_FD] as Socket;
  // The worker dies at the end of this test: its end of the pipe resets (as the host ignores it).
  side.on('error', () => undefined);
  side.write(encodeFrame(JSON.stringify({ pad: 'x'.repeat(200_000) })));
  post({ t: 'settle', runId: 1, answers: [1, true, SIDE_PAYLOAD, undefined] });
  post({ t: 'settle', runId: 2, answers: [1, true, '{"n":2}', undefined] });
  const done = (await next('done')) as { runId: number; outcome: { ok: boolean } };
  expect(done).toMatchObject({ runId: 2, outcome: { ok: true } });
  expect(stderr).toBe('');
  // A frame over every run's bound still ends the worker: the channel is out of step.
  side.write(encodeFrame('y'.repeat(2_000_000)));
  expect(await exited).not.toBe(0);
  expect(stderr).toContain('over the bound of 1048576 bytes');
});
