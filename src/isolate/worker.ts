/**
 * @module
 * Entry of a sandbox worker process (`dist/isolate/worker.js`), started by the process-mode
 * {@link SandboxPool} with `node --no-node-snapshot` and an empty environment. It hosts an
 * {@link IsolateEngine} and relays tool calls to the host over IPC; it never holds the tool
 * invoker, MCP clients or secrets. The host supervises it: a worker that overruns its budget,
 * stops answering or dies is killed and replaced.
 *
 * Console text is sent to the host as the script prints it, so output printed before the worker
 * dies (a V8 abort, a kill) reaches the result: the first 100 console calls of a run are sent
 * one message each; after that a printing loop is batched, sent at most once per millisecond
 * (checked at each console call) and whenever the isolate entry returns, before every tool call
 * and before the final result. The bound on loss in a crash is therefore: after the first 100
 * console calls, text printed less than 1 ms before the script's last console call preceding
 * the crash. Byte counts of output past the stream budget are always batched.
 *
 * Tool calls: the first call an isolate entry makes is sent at once (the host starts it while
 * the script runs on); the others made in the same entry (a `Promise.all` of many) follow in one
 * message when the entry has returned.
 *
 * Large tool results arrive on the payload side channel (fd {@link SIDE_CHANNEL_FD}, raw UTF-8
 * frames read straight into one buffer each); the `settle` message that needs them waits until
 * they have arrived, and later settles wait behind it, so answers keep their order.
 */
import { openSync, readSync } from 'node:fs';
import { Socket, type SocketConstructorOpts } from 'node:net';

import { IsolateEngine, type EngineAnswers, type EngineRun } from './engine.js';
import { FrameReader, SIDE_PAYLOAD } from './payload-channel.js';
import { SUGGEST_IN_WORKER, ToolNameIndex, UnknownNameAnswerer } from './unknown-names.js';
import {
  KeptCatalogs,
  MAX_SETTLE_FRAME_BYTES,
  SETTLE_CHANNEL_FD,
  SIDE_CHANNEL_FD,
  type HostMessage,
  type WorkerCalls,
  type WorkerMessage,
} from './worker-protocol.js';

let engine: IsolateEngine | undefined;
const runs = new Map<number, EngineRun>();
/** Tool lists by catalog id, as the host sent them (the host mirrors which are kept). */
const catalogs = new KeptCatalogs<string>();
/** Name indexes of the kept catalogs, built on a run's first unknown name (see unknown-names.ts). */
const nameIndexes = new KeptCatalogs<ToolNameIndex>();
/** Each run's answerer of unknown names: the host refuses them, this worker suggests. */
const unknownNames = new Map<number, UnknownNameAnswerer>();
/**
 * Output of a run not sent yet: text in order, merged while the stream stays the same, and the
 * bytes printed past each stream's budget as two counts, so that a loop printing past both
 * budgets costs no memory per call whichever streams it alternates between.
 */
interface PendingOutput {
  chunks: [number, string, number][];
  dropped: [stdout: number, stderr: number];
}
const pendingOutput = new Map<number, PendingOutput>();
let flushScheduled = false;
/** Console calls per run whose text is sent to the host at once. */
const IMMEDIATE_OUTPUT_MESSAGES = 100;
/** After those, the most often console text is sent while the script keeps printing. */
const OUTPUT_FLUSH_INTERVAL_MS = 1;

type SettleMessage = Extract<HostMessage, { t: 'settle' }>;
/** Side-channel frames that arrived and no settle has taken yet, oldest first. */
const frames: string[] = [];
/** Settles waiting for their frames, oldest first. */
const waitingSettles: SettleMessage[] = [];
/** Refuses frames over the largest maxToolResultBytes of this worker's runs (the host checks each result before sending). */
const reader = new FrameReader(0, (text) => {
  frames.push(text);
  settleWaiting();
});
/** The side channel, or why it could not be opened (the worker then refuses to start). */
const side = openChannel(SIDE_CHANNEL_FD, {
  buffer: () => reader.buffer(),
  callback: (bytes: number) => {
    // A frame over the bound throws out of here: uncaught, it ends the worker with the message
    // on stderr (the host reports the crash); nothing later on this channel could be trusted.
    reader.advance(bytes);
    return true;
  },
});

/** Opens a channel the host writes to, read with `onread` (no stream chunks); or why it failed. */
function openChannel(fd: number, onread: SocketConstructorOpts['onread']): Socket | Error {
  try {
    const socket = new Socket({ fd, readable: true, writable: false, onread });
    socket.on('error', () => undefined);
    socket.unref();
    return socket;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/** Reads the settle channel's frames (answers, as the host sent them). */
const settleReader = new FrameReader(MAX_SETTLE_FRAME_BYTES, (text) => {
  settlesRead++;
  const settle = JSON.parse(text) as unknown;
  if (!Array.isArray(settle) || typeof settle[0] !== 'number' || !Array.isArray(settle[1])) return;
  onSettle({ t: 'settle', runId: settle[0], answers: settle[1] as EngineAnswers });
});
/** A settled promise: a reaction to it runs in the next microtask. */
const SETTLED = Promise.resolve();

/** Frames read from the settle channel so far (the spin stops at each). */
let settlesRead = 0;
/**
 * Where reads of the settle channel land, the event loop's and the spin's alike, before they are
 * copied into {@link settleReader}. One fixed buffer: a socket's `onread` holds the buffer for
 * its next read from the end of the last one, so the reader's own (which moves on when the spin
 * reads) cannot be handed to it.
 */
const settleBytes = Buffer.alloc(64 * 1024);
/** The settle channel, or why it could not be opened (the worker then refuses to start). */
const settleChannel = openChannel(SETTLE_CHANNEL_FD, {
  buffer: settleBytes,
  callback: (bytes: number) => {
    // A frame over the bound throws out of here, as on the side channel.
    feed(settleBytes, bytes);
    return true;
  },
});

/** Hands `bytes` read into `from` to the settle channel's frame reader. */
function feed(from: Buffer, bytes: number): void {
  let offset = 0;
  while (offset < bytes) {
    const taken = from.copy(settleReader.buffer(), 0, offset, bytes);
    offset += taken;
    settleReader.advance(taken);
  }
}

/**
 * Waiting for a fast answer. A process that sleeps until its answer arrives pays for being
 * woken: the kernel's wake-up, and, on an idle machine, a core leaving its idle state with cold
 * caches (measured on a 2-core VM: a round trip between two sleeping processes 90-150 µs, between
 * two busy ones under 25 µs). So once an isolate entry has sent a call and returned, the worker
 * reads the settle channel in a loop for up to the run's `spinUs` from the call, when the run's
 * last answer came within that window (a slow tool is not waited for this way; its answers
 * come through the event loop as before). Each spin runs in its own turn of the event loop
 * (`setImmediate`), so IPC messages (cancel, ping), timers and microtasks are served between
 * answers; a spin that sees an answer delivers it and stops.
 */
let spinUs = 0;
/** Calls sent whose answers have not come yet, all runs. */
let awaiting = 0;
/** Calls sent and not answered yet, by run (a run's end takes its count out of {@link awaiting}). */
const openCalls = new Map<number, number>();
/** When the latest call was sent (`performance.now()` ms). */
let lastCallAt = 0;
/** Whether the latest answer came within the spin window of its call. */
let answersFast = true;
let spinScheduled = false;
/**
 * Spinning is off until then (`performance.now()` ms). Spins preempted {@link SPIN_PREEMPTED_IN_A_ROW}
 * times in a row (the kernel took the core for another thread each time) say the cores are busy,
 * or that the host runs on the worker's own core: a spinning worker would only take time from
 * it, so it then waits asleep, for {@link SPIN_BACKOFF_MS} at first and twice as long each time
 * this recurs within a second of the last pause's end (at most {@link SPIN_BACKOFF_MAX_MS}).
 */
let spinOffUntil = 0;
let preemptedInARow = 0;
let backoffMs = 0;
const SPIN_PREEMPTED_IN_A_ROW = 3;
const SPIN_BACKOFF_MS = 250;
const SPIN_BACKOFF_MAX_MS = 8_000;
/** A pause this long (ms) between two reads of a spin means the spinning thread lost its core. */
const SPIN_PREEMPTED_GAP_MS = 0.05;
/**
 * While answers come slower than the window, one call in this many still spins, to notice when
 * they speed up; each such probe that misses doubles the gap (up to
 * {@link SPIN_PROBE_MAX_EVERY_CALLS}), so a slow tool costs next to no spinning, and a fast
 * answer brings it back to the first gap.
 */
const SPIN_PROBE_EVERY_CALLS = 16;
const SPIN_PROBE_MAX_EVERY_CALLS = 1_024;
let probeEvery = SPIN_PROBE_EVERY_CALLS;
let callsSinceProbe = 0;
/** Spins that saw their answer, that ran out, that were preempted (each run's share goes out with its `done`). */
const spins = { hit: 0, miss: 0, preempted: 0 };

/** Spinning is not paused, and the worker is not on the host's core. */
function spinAllowed(now: number): boolean {
  return now >= spinOffUntil && !onTheHostsCore(now);
}

function shouldSpin(): boolean {
  return (
    spinUs > 0 &&
    awaiting > 0 &&
    (answersFast || callsSinceProbe >= probeEvery) &&
    waitingSettles.length === 0 &&
    !(settleChannel instanceof Error) &&
    spinAllowed(performance.now())
  );
}

/**
 * Milliseconds between two looks at where the worker and the host run ({@link onTheHostsCore});
 * the kernel keeps a pair of processes where it put them, so a look now and then is enough. Once
 * every 32 calls, as it was, cost 0.7 µs per call on one core (two `readFileSync`s, 24 µs).
 */
const CORE_CHECK_INTERVAL_MS = 10;
let coreCheckedAt = Number.NEGATIVE_INFINITY;
let sameCore = false;
/** `/proc` stat files of this thread and of the host's main thread, kept open; null where they cannot be. */
let statFiles: { mine: number; host: number } | null | undefined;
const statBytes = Buffer.alloc(1_024);

/** Field 39 (the CPU last run on) of the stat file open at `fd`, read again from its start. */
function lastCpu(fd: number): string | undefined {
  try {
    const stat = statBytes.toString('latin1', 0, readSync(fd, statBytes, 0, statBytes.length, 0));
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[36];
  } catch {
    return undefined;
  }
}

/**
 * True when the worker's thread and the host's main thread were last on the same CPU (Linux
 * `/proc/<pid>/stat`, field 39). There a spin only keeps the host, which has the answer to
 * write, off the core until the kernel preempts the spinner; the worker then sleeps as before.
 * Looked at once every {@link CORE_CHECK_INTERVAL_MS} at most (two reads of files kept open);
 * false where `/proc` cannot tell.
 */
function onTheHostsCore(now: number): boolean {
  if (now - coreCheckedAt < CORE_CHECK_INTERVAL_MS) return sameCore;
  coreCheckedAt = now;
  if (statFiles === undefined) {
    try {
      // Opened by this thread: `thread-self` is the thread that opens it.
      statFiles = {
        mine: openSync('/proc/thread-self/stat', 'r'),
        host: openSync(`/proc/${process.ppid}/stat`, 'r'),
      };
    } catch {
      statFiles = null;
    }
  }
  if (statFiles === null) return (sameCore = false);
  const mine = lastCpu(statFiles.mine);
  sameCore = mine !== undefined && mine === lastCpu(statFiles.host);
  return sameCore;
}

function scheduleSpin(): void {
  if (spinScheduled || !shouldSpin()) return;
  spinScheduled = true;
  setImmediate(spin);
}

function spin(): void {
  spinScheduled = false;
  if (!shouldSpin()) return;
  callsSinceProbe = 0;
  const deadline = lastCallAt + spinUs / 1_000;
  const read = settlesRead;
  let preempted = false;
  // A read with nothing to read throws EAGAIN; without a stack trace it costs a few µs less.
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  let before = performance.now();
  try {
    for (;;) {
      const now = performance.now();
      // A gap between two turns of this loop (each a read of a few µs) is time this thread was
      // off its core: the kernel gave the core to another thread, or the hypervisor to another
      // machine. The process's own count of involuntary switches would count its other threads
      // too (V8's helpers, preempted on the other core), and stopped the spin on an idle machine.
      if (now - before > SPIN_PREEMPTED_GAP_MS) preempted = true;
      before = now;
      if (now >= deadline) break;
      let bytes: number;
      try {
        bytes = readSync(SETTLE_CHANNEL_FD, settleBytes);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') continue;
        return; // the channel failed: its socket reports it
      }
      if (bytes === 0) return; // the host closed it
      // A frame over the bound throws out of here, as it would from the socket's read.
      feed(settleBytes, bytes);
      if (settlesRead !== read) {
        spins.hit++;
        return;
      }
    }
    spins.miss++;
    // A probe (a spin after a slow answer) that missed: probe half as often.
    if (!answersFast) probeEvery = Math.min(probeEvery * 2, SPIN_PROBE_MAX_EVERY_CALLS);
    answersFast = false;
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
    if (!preempted) preemptedInARow = 0;
    else {
      spins.preempted++;
      if (++preemptedInARow >= SPIN_PREEMPTED_IN_A_ROW) {
        preemptedInARow = 0;
        const now = performance.now();
        // The first pause is SPIN_BACKOFF_MS (doubling 0 kept it at 0: within a worker's first
        // second, `now - spinOffUntil` is below 1 s with `spinOffUntil` still 0).
        backoffMs =
          backoffMs > 0 && now - spinOffUntil < 1_000
            ? Math.min(backoffMs * 2, SPIN_BACKOFF_MAX_MS)
            : SPIN_BACKOFF_MS;
        spinOffUntil = now + backoffMs;
      }
    }
  }
}

/** Side-channel payloads an answer list needs. */
function framesNeeded(answers: unknown[]): number {
  let needed = 0;
  for (let index = 2; index < answers.length; index += 4) if (answers[index] === SIDE_PAYLOAD) needed++;
  return needed;
}

/** A settle from the host (settle channel or IPC): delivered now, or after its frames. */
function onSettle(message: SettleMessage): void {
  answersFast = performance.now() - lastCallAt <= spinUs / 1_000;
  if (answersFast) probeEvery = SPIN_PROBE_EVERY_CALLS;
  if (waitingSettles.length === 0 && framesNeeded(message.answers) === 0) {
    deliver(message.runId, message.answers);
    return;
  }
  waitingSettles.push(message);
  settleWaiting();
}

/** Settles the waiting answers whose frames have all arrived, in order. */
function settleWaiting(): void {
  while (waitingSettles.length > 0) {
    const { runId, answers } = waitingSettles[0]!;
    const needed = framesNeeded(answers);
    if (needed > frames.length) return;
    waitingSettles.shift();
    if (needed > 0) {
      for (let index = 2; index < answers.length; index += 4) {
        if (answers[index] === SIDE_PAYLOAD) answers[index] = frames.shift();
      }
    }
    deliver(runId, answers);
  }
}

/** Settles answers in the run; unknown names the host refused get their message made here. */
function deliver(runId: number, answers: EngineAnswers): void {
  const open = openCalls.get(runId);
  if (open !== undefined) {
    const answered = Math.min(open, answers.length >>> 2);
    openCalls.set(runId, open - answered);
    awaiting -= answered;
  }
  const answerer = unknownNames.get(runId);
  for (let index = 3; answerer !== undefined && index < answers.length; index += 4) {
    if (answers[index] !== SUGGEST_IN_WORKER) continue;
    const name = answers[index - 1];
    answers[index - 1] = answerer.answer(typeof name === 'string' ? name : '').message;
    answers[index] = 'UNKNOWN_TOOL';
  }
  runs.get(runId)?.settleMany(answers);
}

function send(message: WorkerMessage): void {
  if (process.connected) process.send?.(message);
}

function flush(runId?: number): void {
  for (const [id, { chunks, dropped }] of pendingOutput) {
    if (runId !== undefined && id !== runId) continue;
    pendingOutput.delete(id);
    // Dropped bytes only add to their stream's total: where they stand among the text is moot.
    if (dropped[0] > 0) chunks.push([0, '', dropped[0]]);
    if (dropped[1] > 0) chunks.push([1, '', dropped[1]]);
    send({ t: 'out', runId: id, chunks });
  }
}

function scheduleFlush(): void {
  if (flushScheduled) return;
  flushScheduled = true;
  setImmediate(() => {
    flushScheduled = false;
    flush();
  });
}

function handle(message: HostMessage): void {
  switch (message.t) {
    case 'init': {
      // The host writes answers and large results there, and runs would wait for them
      // forever: refuse to start.
      for (const [channel, fd, what] of [
        [side, SIDE_CHANNEL_FD, 'payload side channel'],
        [settleChannel, SETTLE_CHANNEL_FD, 'settle channel'],
      ] as const) {
        if (channel instanceof Error) {
          send({ t: 'init-failed', message: `the ${what} (fd ${fd}) did not open: ${channel.message}` });
          return;
        }
      }
      try {
        engine = new IsolateEngine({
          prelude: message.prelude,
          spareMemoryMb: message.spareMemoryMb,
          ...(message.isolateRuns !== undefined ? { isolateRuns: message.isolateRuns } : {}),
        });
        engine.warm();
        send({ t: 'ready' });
      } catch (error) {
        send({ t: 'init-failed', message: error instanceof Error ? error.message : String(error) });
      }
      return;
    }
    case 'run': {
      const { runId, request: wire } = message;
      spinUs = typeof message.spinUs === 'number' && message.spinUs > 0 ? message.spinUs : 0;
      const spinsBefore = { ...spins };
      // Kept before anything else, so the host's mirror stays exact.
      const { listJson, ...catalog } = wire.tools;
      if (listJson !== undefined) catalogs.keep(catalog.id, listJson);
      const kept = catalogs.use(catalog.id) ?? '[]';
      if (!engine) return;
      // The largest bound of any run, not this run's: a frame of the run before may still be
      // on its way (frames and IPC messages travel on two pipes).
      reader.maxFrameBytes = Math.max(reader.maxFrameBytes, wire.limits.maxToolResultBytes);
      const request = { ...wire, tools: { ...catalog, list: () => kept } };
      let immediateLeft = IMMEDIATE_OUTPUT_MESSAGES;
      let lastSentAt = 0;
      /** Calls of the current entry after its first, sent when the entry has returned. */
      let heldCalls: WorkerCalls | undefined;
      const sendHeldCalls = () => {
        const calls = heldCalls;
        heldCalls = undefined;
        if (calls === undefined || calls.length === 0) return;
        flush(runId);
        send({ t: 'call', runId, calls });
        countCalls(runId, calls.length >>> 2);
      };
      const run = engine.start(request, {
        output(stream, text, droppedBytes) {
          let pending = pendingOutput.get(runId);
          if (!pending) pendingOutput.set(runId, (pending = { chunks: [], dropped: [0, 0] }));
          if (text === '') {
            pending.dropped[stream === 0 ? 0 : 1] += droppedBytes;
            return scheduleFlush();
          }
          const chunks = pending.chunks;
          const last = chunks[chunks.length - 1];
          if (last && last[0] === stream) {
            last[1] += text;
            last[2] += droppedBytes;
          } else chunks.push([stream, text, droppedBytes]);
          // Text goes out at once (the first IMMEDIATE_OUTPUT_MESSAGES times, then at most once
          // per OUTPUT_FLUSH_INTERVAL_MS), so what the script printed survives a crash later in
          // the same entry; byte counts of output past the budget are only batched.
          const now = performance.now();
          if (immediateLeft > 0 || now - lastSentAt >= OUTPUT_FLUSH_INTERVAL_MS) {
            immediateLeft--;
            lastSentAt = now;
            flush(runId);
          } else scheduleFlush();
        },
        call(id, name, args, site) {
          if (heldCalls !== undefined) {
            heldCalls.push(id, name, args, site);
            return;
          }
          if (pendingOutput.size > 0) flush(runId);
          send({ t: 'call', runId, calls: [id, name, args, site] });
          // After the send: its spin check may read /proc, which the call need not wait for.
          countCalls(runId, 1);
          // The host's microtasks run once the isolate entry in progress has returned. A reaction
          // to a settled promise, not `queueMicrotask`: that makes an AsyncResource at every call.
          heldCalls = [];
          void SETTLED.then(sendHeldCalls);
        },
      });
      runs.set(runId, run);
      unknownNames.set(runId, new UnknownNameAnswerer(() => nameIndexOf(catalog.id)));
      void run.outcome.then((outcome) => {
        sendHeldCalls();
        awaiting -= openCalls.get(runId) ?? 0;
        openCalls.delete(runId);
        runs.delete(runId);
        unknownNames.delete(runId);
        flush(runId);
        send({
          t: 'done',
          runId,
          outcome,
          spins: [
            spins.hit - spinsBefore.hit,
            spins.miss - spinsBefore.miss,
            spins.preempted - spinsBefore.preempted,
          ],
        });
      });
      return;
    }
    case 'settle':
      if (!Array.isArray(message.answers)) return;
      onSettle(message);
      return;
    case 'cancel':
      runs.get(message.runId)?.cancel(message.code);
      return;
    case 'drop-session':
      engine?.dropSession(message.key);
      return;
    case 'ping':
      send({ t: 'pong', seq: message.seq });
      return;
  }
}

/** `count` calls of the run were sent: the spin may wait for their answers. */
function countCalls(runId: number, count: number): void {
  openCalls.set(runId, (openCalls.get(runId) ?? 0) + count);
  awaiting += count;
  callsSinceProbe += count;
  lastCallAt = performance.now();
  // Runs once the isolate entry that sent them has returned and its microtasks have run.
  scheduleSpin();
}

/** The name index of a kept catalog, made from its list on first use. */
function nameIndexOf(catalogId: number): ToolNameIndex | undefined {
  const known = nameIndexes.use(catalogId);
  if (known) return known;
  const listJson = catalogs.peek(catalogId);
  if (listJson === undefined) return undefined;
  const list = JSON.parse(listJson) as [string, string, string?][];
  const index = new ToolNameIndex(list.map(([namespace, member, name]) => ({ namespace, member, name })));
  nameIndexes.keep(catalogId, index);
  return index;
}

process.on('message', (message) => handle(message as HostMessage));
process.on('disconnect', () => {
  if (!(side instanceof Error)) side.destroy();
  if (!(settleChannel instanceof Error)) settleChannel.destroy();
  for (const run of runs.values()) run.cancel('ABORTED');
  engine?.close();
  process.removeAllListeners('message');
});
