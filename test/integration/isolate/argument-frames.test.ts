/**
 * @module
 * Large call arguments in process mode travel from the worker to the host as frames on the
 * payload side channel (not JSON-escaped inside the IPC message): with real worker processes they
 * reach the invoker whole, multi-byte text included, each with its own call, in order beside
 * small ones. The host bounds what a worker may write there: a frame over three bytes per
 * character of `maxToolArgsBytes`, or frames no call takes beyond twice `maxPendingToolArgsBytes`,
 * end that worker (a run on it reports a crash) and never the host. Those two cases use a fake
 * worker entry that breaks the rules on purpose.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';

import { compileScript } from '../../../src/compile/index.js';
import { findDistFile, loadPreludeSource } from '../../../src/isolate/assets.js';
import type { EngineOutcome, EngineRunRequest } from '../../../src/isolate/engine.js';
import { SandboxPool } from '../../../src/isolate/index.js';
import { resolveSandboxLimits } from '../../../src/isolate/limits.js';
import { FrameReader, SIDE_CHANNEL_MIN_CHARS, SIDE_PAYLOAD } from '../../../src/isolate/payload-channel.js';
import {
  SIDE_CHANNEL_FD,
  type HostMessage,
  type WorkerMessage,
} from '../../../src/isolate/worker-protocol.js';
import { WorkerProcess } from '../../../src/isolate/worker-process.js';
import { runScript } from '../../unit/isolate/sandbox-helpers.js';

const folder = mkdtempSync(join(tmpdir(), 'codecall-argument-frames-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/**
 * A fake worker: ready at once; on a run, writes to the side channel what the run's code names
 * (`oversize`: a header announcing a frame of 4 MB; `flood`: 40 frames of 1,000 characters and no
 * call), or sends (`starve`: 70,000 calls whose arguments are frames it never writes), then keeps
 * quiet.
 */
const FAKE_WORKER = `
const { Socket } = require('node:net');
const side = new Socket({ fd: 4, readable: false, writable: true });
side.on('error', () => undefined);
const frame = (text) => {
  const body = Buffer.from(text);
  const header = Buffer.alloc(4);
  header.writeUInt32LE(body.length, 0);
  return Buffer.concat([header, body]);
};
process.on('message', (message) => {
  if (message.t === 'init') process.send({ t: 'ready' });
  if (message.t === 'ping') process.send({ t: 'pong', seq: message.seq });
  if (message.t !== 'run') return;
  if (message.request.code === 'oversize') {
    const header = Buffer.alloc(4);
    header.writeUInt32LE(4_000_000, 0);
    side.write(header);
  } else if (message.request.code === 'flood') {
    for (let i = 0; i < 40; i++) side.write(frame('x'.repeat(1_000)));
  } else if (message.request.code === 'starve') {
    // Calls whose arguments are said to be frames that never come.
    for (let i = 1; i <= 70_000; i++) process.send({ t: 'call', runId: message.runId, calls: [i, 't.put', -1, null] });
  }
});
`;

async function fakeRun(code: string): Promise<EngineOutcome> {
  const entry = join(folder, 'fake-worker.cjs');
  writeFileSync(entry, FAKE_WORKER);
  const worker = await WorkerProcess.spawn({
    entry,
    prelude: loadPreludeSource(),
    spareMemoryMb: 64,
    startTimeoutMs: 10_000,
    heartbeatMs: 250,
    killGraceMs: 2_000,
  });
  const exited = new Promise<void>((resolve) => worker.onExit(resolve));
  // Arguments up to 1,000 units (3,000 bytes a frame), 10,000 units pending (20,000 characters of frames).
  const request: EngineRunRequest = {
    code,
    tools: { id: 1, maxNameChars: 6, lineNames: [], store: false, list: () => '[]' },
    limits: resolveSandboxLimits({ maxToolArgsBytes: 1_000, maxPendingToolArgsBytes: 10_000 }),
    wallTimeLeftMs: 30_000,
  };
  const calls: string[] = [];
  const run = worker.start(request, {
    output: () => undefined,
    call: (_id, _name, args) => calls.push(args),
  });
  const outcome = await run.outcome;
  await exited;
  expect(calls).toEqual([]);
  return outcome;
}

describe('process mode: large call arguments on the side channel', () => {
  let pool: SandboxPool | undefined;
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  it('delivers large arguments whole, each with its call, in order beside small ones', async () => {
    pool = await SandboxPool.open({ mode: 'process', workers: 1 });
    const seen: string[] = [];
    const show = ({ tag, text }: Record<string, unknown>) =>
      typeof text === 'string'
        ? `${String(tag)}:${text.length}:${text.slice(-3)}:${text.startsWith('éé')}`
        : String(tag);
    const result = await runScript(
      pool,
      `const big = (tag) => ({ tag, text: 'é'.repeat(${SIDE_CHANNEL_MIN_CHARS}) + '|' + tag + '|' });
       await Promise.all([tools.t.put(big(1)), tools.t.put({ tag: 'a' }), tools.t.put(big(2)), tools.t.put(big(3))]);
       await tools.t.put(big(4));
       await tools.t.put({ tag: 'b' });
       console.log(await tools.t.put(big(5)));`,
      {
        tools: {
          't.put': (args) => {
            seen.push(show(args));
            return args.tag as string;
          },
        },
      },
    );
    expect(result.error).toBeUndefined();
    expect(result.stdout).toBe('5\n');
    const length = SIDE_CHANNEL_MIN_CHARS + 3;
    expect(seen).toEqual([
      `1:${length}:|1|:true`,
      'a',
      `2:${length}:|2|:true`,
      `3:${length}:|3|:true`,
      `4:${length}:|4|:true`,
      'b',
      `5:${length}:|5|:true`,
    ]);
    expect(result.toolCalls.map((call) => call.argsBytes > 2 * SIDE_CHANNEL_MIN_CHARS)).toEqual([
      true,
      false,
      true,
      true,
      true,
      false,
      true,
    ]);
  });

  it('a real worker writes a large argument as a frame and marks its slot (small ones stay inline)', async () => {
    const worker = fork(findDistFile('isolate/worker.js'), [], {
      execArgv: ['--no-node-snapshot'],
      env: {},
      serialization: 'json',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc', 'pipe'],
    });
    try {
      let reader!: FrameReader;
      const firstFrame = new Promise<string>((resolve) => (reader = new FrameReader(1_000_000, resolve)));
      (worker.stdio[SIDE_CHANNEL_FD] as Socket).on('data', (chunk: Buffer) => {
        for (let offset = 0; offset < chunk.length;) {
          const bytes = chunk.copy(reader.buffer(), 0, offset);
          offset += bytes;
          reader.advance(bytes);
        }
      });
      const calls: unknown[] = [];
      const gotCalls = new Promise<void>((resolve) =>
        worker.on('message', (message: WorkerMessage) => {
          if (message.t === 'ready') post({ t: 'run', runId: 1, request });
          if (message.t === 'call') calls.push(...message.calls);
          if (calls.length === 8) resolve();
        }),
      );
      const post = (message: HostMessage): void => void worker.send(message);
      const compiled = compileScript(
        `void tools.t.put({ text: 'é'.repeat(${SIDE_CHANNEL_MIN_CHARS}) }); void tools.t.put({ n: 1 });`,
      );
      if (!compiled.ok) expect.fail(compiled.error.message);
      const request = {
        code: compiled.code,
        tools: { id: 1, maxNameChars: 6, lineNames: [], store: false, listJson: '[["t","put"]]' },
        limits: resolveSandboxLimits({}),
        wallTimeLeftMs: 30_000,
      };
      post({ t: 'init', prelude: loadPreludeSource(), spareMemoryMb: 64 });
      await gotCalls;
      // id, name, arguments slot, site: the first call's arguments are the frame.
      expect(calls).toEqual([1, 't.put', SIDE_PAYLOAD, null, 2, 't.put', '{"n":1}', null]);
      expect(await firstFrame).toBe(JSON.stringify({ text: 'é'.repeat(SIDE_CHANNEL_MIN_CHARS) }));
    } finally {
      worker.kill('SIGKILL');
    }
  });

  it('ends a worker that announces a frame over the bound; the host is unharmed', async () => {
    const outcome = await fakeRun('oversize');
    expect(outcome).toMatchObject({ ok: false, fault: { code: 'SANDBOX_CRASHED' } });
  });

  it('ends a worker that writes frames no call takes, past the bound', async () => {
    const outcome = await fakeRun('flood');
    expect(outcome).toMatchObject({ ok: false, fault: { code: 'SANDBOX_CRASHED' } });
  });

  it('ends a worker whose messages pile up waiting for frames it never writes', async () => {
    const outcome = await fakeRun('starve');
    expect(outcome).toMatchObject({ ok: false, fault: { code: 'SANDBOX_CRASHED' } });
  });
});
