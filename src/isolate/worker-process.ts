/**
 * @module
 * The host's handle on one sandbox worker process: spawns it (`node --no-node-snapshot`, an
 * empty environment, IPC with JSON serialization), runs one script at a time on it, and
 * supervises it. A worker that does not answer a heartbeat for longer than the run's CPU budget
 * plus a grace period is stuck in work V8 cannot interrupt (huge BigInt arithmetic, for one):
 * it is killed, the run reports the overrun, and the pool replaces the worker. A worker that
 * dies (a V8 heap OOM abort, a crash) ends its run with `MEMORY_LIMIT` or `SANDBOX_CRASHED`.
 *
 * Tool results of {@link SIDE_CHANNEL_MIN_CHARS} characters or more go to the worker as raw
 * UTF-8 frames on a side channel (a socket pair at stdio index {@link SIDE_CHANNEL_FD}), not
 * inside the IPC message: one encoding on the host, one read into one buffer and one decoding in
 * the worker (see `payload-channel.ts`).
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';

import { CodecallError } from '../errors.js';
import type {
  EngineAnswers,
  EngineFaultCode,
  EngineOutcome,
  EngineRunRequest,
  EngineSink,
} from './engine.js';
import { encodeFrame, KeptBuffer, SIDE_CHANNEL_MIN_CHARS, SIDE_PAYLOAD } from './payload-channel.js';
import type { RunBackend } from './run-controller.js';
import {
  KeptCatalogs,
  MAX_ANSWERS_PER_SETTLE,
  SETTLE_CHANNEL_FD,
  SIDE_CHANNEL_FD,
  type HostMessage,
  type WireRunRequest,
  type WorkerMessage,
} from './worker-protocol.js';

/** Options for {@link WorkerProcess.spawn}. */
export interface WorkerProcessOptions {
  entry: string;
  prelude: string;
  spareMemoryMb: number;
  /** See `SandboxPoolOptions.isolateRuns`. */
  isolateRuns: number;
  startTimeoutMs: number;
  heartbeatMs: number;
  killGraceMs: number;
}

/** Bytes of worker stderr kept to explain a crash. */
const MAX_STDERR_TAIL_BYTES = 8_192;

/**
 * Whether a worker that died had run out of memory, from its stderr. A V8 heap OOM kills the whole
 * process with no structured signal: its exit code and signal (SIGABRT) are those of any abort,
 * and isolated-vm's `onCatastrophicError` does not run for a process-level OOM; the message V8
 * prints is the only evidence, so it is matched here and nowhere else.
 */
function diedOutOfMemory(stderrTail: string): boolean {
  return /heap out of memory|Reached heap limit|allocation failed|invalid size error|OOM/i.test(stderrTail);
}

class WorkerRun implements RunBackend {
  readonly outcome: Promise<EngineOutcome>;
  readonly runId: number;
  readonly sink: EngineSink;
  readonly cpuTimeMs: number;
  #resolve!: (outcome: EngineOutcome) => void;
  readonly #worker: WorkerProcess;
  /** Calls the worker sent that have no answer yet. */
  readonly #open = new Set<number>();
  /** Answers not sent yet: they leave together at the end of this turn of the loop. */
  #answers: EngineAnswers = [];
  #send: NodeJS.Immediate | undefined;
  settled = false;
  /** The worker makes the messages of unknown names, with their suggestions (see unknown-names.ts). */
  readonly suggestsUnknownNames = true;

  constructor(worker: WorkerProcess, runId: number, sink: EngineSink, cpuTimeMs: number) {
    this.#worker = worker;
    this.runId = runId;
    this.sink = sink;
    this.cpuTimeMs = cpuTimeMs;
    this.outcome = new Promise((resolve) => (this.#resolve = resolve));
  }

  /** A call from the worker: counted open until it is answered, then given to the sink. */
  call(id: number, name: string, args: string, site: string | undefined): void {
    this.#open.add(id);
    this.sink.call(id, name, args, site);
  }

  /**
   * Answers a call. The answer of the last open call goes out at once (with any waiting); while
   * other calls are open, answers wait for the end of this turn of the loop and leave in one
   * message (one IPC write, one isolate entry in the worker).
   */
  settle(id: number, ok: boolean, payload: string | undefined, code?: string): void {
    if (this.settled) return;
    this.#open.delete(id);
    const answers = this.#answers;
    answers.push(id, ok, payload, code);
    if (this.#open.size === 0 || answers.length >= MAX_ANSWERS_PER_SETTLE * 4) this.#sendAnswers();
    else this.#send ??= setImmediate(() => this.#sendAnswers());
  }

  #sendAnswers(): void {
    if (this.#send !== undefined) {
      clearImmediate(this.#send);
      this.#send = undefined;
    }
    const answers = this.#answers;
    if (answers.length === 0 || this.settled) return;
    this.#answers = [];
    for (let index = 2; index < answers.length; index += 4) {
      const payload = answers[index];
      if (
        typeof payload === 'string' &&
        payload.length >= SIDE_CHANNEL_MIN_CHARS &&
        this.#worker.sendFrame(payload)
      ) {
        answers[index] = SIDE_PAYLOAD;
      }
    }
    this.#worker.sendSettle(this.runId, answers);
  }

  cancel(code: EngineFaultCode): void {
    if (this.settled) return;
    this.#worker.cancelRun(this, code);
  }

  end(outcome: EngineOutcome): void {
    if (this.settled) return;
    this.settled = true;
    if (this.#send !== undefined) clearImmediate(this.#send);
    this.#send = undefined;
    this.#answers = [];
    this.#resolve(outcome);
  }
}

/**
 * The buffer large side-channel frames are encoded into, shared by the workers of this process:
 * a 10 MB result made in a fresh buffer each time costs page faults and host collections (see
 * {@link KeptBuffer}).
 */
const keptFrames = new KeptBuffer();

/** One supervised worker process. */
export class WorkerProcess {
  readonly #child: ChildProcess;
  readonly #options: WorkerProcessOptions;
  #run: WorkerRun | undefined;
  #nextRunId = 1;
  /** Mirror of the catalog lists the worker holds (see {@link KeptCatalogs}). */
  readonly #catalogs = new KeptCatalogs<true>();
  #stderrTail = '';
  #alive = true;
  #killReason: EngineFaultCode | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  /** When the heartbeat last saw the worker's message count move. */
  #lastPong = 0;
  /** Messages received from the worker (counted, not timed: a clock read per message costs more). */
  #received = 0;
  #receivedAtLastBeat = 0;
  #pingSeq = 0;
  #onExit: (() => void) | undefined;
  /** Set when the worker can take no more runs (killed, exited, or must be replaced). */
  retired = false;
  /** Set by the pool between handing the worker to a run and the run starting. */
  reserved = false;
  #cancelledWith: EngineFaultCode | undefined;

  private constructor(child: ChildProcess, options: WorkerProcessOptions) {
    this.#child = child;
    this.#options = options;
  }

  /** Starts a worker and waits until its engine is warm. */
  static spawn(options: WorkerProcessOptions): Promise<WorkerProcess> {
    const child = fork(options.entry, [], {
      execPath: process.execPath,
      execArgv: ['--no-node-snapshot'],
      env: {},
      serialization: 'json',
      // stdin, stdout unused; stderr read for crash reports; IPC; the payload side channel;
      // the settle channel.
      stdio: ['ignore', 'ignore', 'pipe', 'ipc', 'pipe', 'pipe'],
    });
    const worker = new WorkerProcess(child, options);
    return worker.#start();
  }

  #start(): Promise<WorkerProcess> {
    const child = this.#child;
    // A worker killed mid-frame breaks the pipe (EPIPE): its exit is what ends the run.
    (child.stdio[SIDE_CHANNEL_FD] as Socket | null | undefined)?.on('error', () => undefined);
    (child.stdio as unknown as (Socket | null | undefined)[])[SETTLE_CHANNEL_FD]?.on(
      'error',
      () => undefined,
    );
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (text: string) => {
      this.#stderrTail = (this.#stderrTail + text).slice(-MAX_STDERR_TAIL_BYTES);
    });
    return new Promise<WorkerProcess>((resolve, reject) => {
      const fail = (message: string) => {
        clearTimeout(timer);
        this.kill();
        reject(
          new CodecallError('SANDBOX_UNAVAILABLE', `A sandbox worker failed to start: ${message}`, {
            details: { stderr: this.#stderrTail },
          }),
        );
      };
      const timer = setTimeout(
        () => fail(`no answer within ${this.#options.startTimeoutMs} ms`),
        this.#options.startTimeoutMs,
      );
      child.once('error', (error) => fail(error.message));
      // 'close' (not 'exit'): it comes after stderr has been read to the end, so the tail that
      // tells a V8 fatal OOM / invalid-size abort from another crash is complete.
      child.on('close', () => {
        this.#alive = false;
        this.retired = true;
        this.#stopHeartbeat();
        clearTimeout(timer);
        this.#exited();
        fail(`the process exited${this.#stderrTail ? `: ${this.#stderrTail.trim().slice(-500)}` : ''}`);
      });
      child.on('message', (message: WorkerMessage) => {
        if (message.t === 'ready') {
          clearTimeout(timer);
          resolve(this);
        } else if (message.t === 'init-failed') fail(message.message);
        else this.#receive(message);
      });
      this.post({
        t: 'init',
        prelude: this.#options.prelude,
        spareMemoryMb: this.#options.spareMemoryMb,
        isolateRuns: this.#options.isolateRuns,
      });
    });
  }

  /** The worker's process id. */
  get pid(): number {
    return this.#child.pid ?? -1;
  }

  /** True when the worker is alive and has no run. */
  get idle(): boolean {
    return this.#alive && !this.retired && !this.reserved && this.#run === undefined;
  }

  /** Called once when the process is gone. */
  onExit(listener: () => void): void {
    this.#onExit = listener;
  }

  post(message: HostMessage): void {
    if (this.#alive && this.#child.connected) this.#child.send(message);
  }

  /**
   * Writes `text` as the next frame of the side channel; false when the channel is gone (the
   * text then goes inside the IPC message). A worker that dies mid-frame only breaks the pipe,
   * whose error is ignored: its exit ends the run.
   */
  sendFrame(text: string): boolean {
    const side = this.#child.stdio[SIDE_CHANNEL_FD] as Socket | null | undefined;
    if (!this.#alive || !this.#child.connected || !side || side.destroyed || !side.writable) return false;
    const frame = encodeFrame(text, keptFrames);
    // Given back once written (or once the write failed, when the worker is gone).
    side.write(frame, () => keptFrames.giveBack(frame));
    return true;
  }

  /**
   * Sends a run's answers: one frame of the settle channel (the worker may be reading it while
   * it spins), or an IPC message when the channel is gone.
   */
  sendSettle(runId: number, answers: EngineAnswers): void {
    const channel = (this.#child.stdio as unknown as (Socket | null | undefined)[])[SETTLE_CHANNEL_FD];
    if (!this.#alive || !this.#child.connected) return;
    if (!channel || channel.destroyed || !channel.writable) {
      this.post({ t: 'settle', runId, answers });
      return;
    }
    channel.write(encodeFrame(JSON.stringify([runId, answers])));
  }

  /**
   * Starts a run on this (idle) worker. `spinUs`: how long the worker may keep its core busy
   * waiting for a fast answer (see `worker.ts`).
   */
  start(request: EngineRunRequest, sink: EngineSink, spinUs = 0): RunBackend {
    const run = new WorkerRun(this, this.#nextRunId++, sink, request.limits.cpuTimeMs);
    this.reserved = false;
    this.#cancelledWith = undefined;
    this.#run = run;
    void run.outcome.then(() => {
      if (this.#run === run) this.#run = undefined;
      this.#stopHeartbeat();
    });
    this.post({ t: 'run', runId: run.runId, request: this.#wire(request), spinUs });
    this.#startHeartbeat(run);
    return run;
  }

  /** The request as it crosses: the catalog's list only the first time this worker gets it. */
  #wire(request: EngineRunRequest): WireRunRequest {
    const { list: _list, ...catalog } = request.tools;
    const held = this.#catalogs.use(catalog.id) === true;
    if (!held) this.#catalogs.keep(catalog.id, true);
    return { ...request, tools: held ? catalog : { ...catalog, listJson: request.tools.list() } };
  }

  /** Cancels a run; a worker that does not confirm within the grace period is killed. */
  cancelRun(run: WorkerRun, code: EngineFaultCode): void {
    this.#cancelledWith = code;
    this.post({ t: 'cancel', runId: run.runId, code });
    const timer = setTimeout(() => {
      if (!run.settled) {
        this.#killReason = code;
        this.kill();
      }
    }, this.#options.killGraceMs);
    timer.unref();
  }

  /** Kills the process now. */
  kill(): void {
    this.retired = true;
    this.#stopHeartbeat();
    if (this.#alive) this.#child.kill('SIGKILL');
  }

  #startHeartbeat(run: WorkerRun): void {
    this.#lastPong = performance.now();
    this.#receivedAtLastBeat = this.#received;
    const limit = run.cpuTimeMs + this.#options.killGraceMs;
    this.#heartbeat = setInterval(() => {
      const now = performance.now();
      if (this.#received !== this.#receivedAtLastBeat) {
        this.#receivedAtLastBeat = this.#received;
        this.#lastPong = now;
      } else if (now - this.#lastPong > limit) {
        this.#killReason = 'CPU_TIMEOUT';
        this.kill();
        return;
      }
      this.post({ t: 'ping', seq: ++this.#pingSeq });
    }, this.#options.heartbeatMs);
    this.#heartbeat.unref();
  }

  #stopHeartbeat(): void {
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
  }

  #receive(message: WorkerMessage): void {
    this.#received++;
    const run = this.#run;
    switch (message.t) {
      case 'out':
        if (run?.runId === message.runId)
          for (const [stream, text, dropped] of message.chunks) run.sink.output(stream, text, dropped);
        return;
      case 'call': {
        const calls = message.calls;
        if (run?.runId !== message.runId || !Array.isArray(calls)) return;
        for (let index = 0; index + 3 < calls.length; index += 4) {
          const id = calls[index];
          const name = calls[index + 1];
          const args = calls[index + 2];
          const site = calls[index + 3];
          if (typeof id !== 'number' || typeof name !== 'string' || typeof args !== 'string') continue;
          run.call(id, name, args, typeof site === 'string' ? site : undefined);
          if (run.settled) return;
        }
        return;
      }
      case 'done':
        if (run?.runId === message.runId) run.end(message.outcome);
        return;
      default:
        return;
    }
  }

  #exited(): void {
    const run = this.#run;
    if (run) {
      const reason = this.#killReason ?? this.#cancelledWith;
      const code: EngineFaultCode =
        reason ?? (diedOutOfMemory(this.#stderrTail) ? 'MEMORY_LIMIT' : 'SANDBOX_CRASHED');
      run.end({ ok: false, fault: { code }, cpuMs: 0 });
      this.#run = undefined;
    }
    this.#onExit?.();
  }
}
