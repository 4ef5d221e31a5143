/**
 * @module
 * Messages between the host and a sandbox worker process, over Node's IPC channel with
 * `serialization: 'json'` (for messages this small, a round trip costs less than with
 * `'advanced'`: no serializer object and buffer per message). Large tool results do not ride in
 * them: they cross on the payload side channel as raw UTF-8 (see `payload-channel.ts`), so no
 * large string is JSON-escaped. `undefined` in an array arrives as `null`; readers check types.
 * Only plain data: the invoker, MCP clients and secrets stay in the host; the worker receives
 * code, tool names, limits and tool results.
 */
import { DEFAULT_SANDBOX_WORKER_KEPT_CATALOGS } from '../config/defaults.js';
import type { EngineAnswers, EngineFaultCode, EngineOutcome, EngineRunRequest } from './engine.js';
import { SIDE_CHANNEL_MIN_CHARS } from './payload-channel.js';
import type { EngineToolCatalog } from './tool-catalog.js';

/**
 * A run's catalog as it crosses to a worker: the tool list (`listJson`) only when the worker
 * does not hold that catalog yet (see {@link KeptCatalogs}), so a run sends no list per tool.
 */
export type WireToolCatalog = Omit<EngineToolCatalog, 'list'> & { listJson?: string };

/** An {@link EngineRunRequest} as it crosses to a worker. */
export type WireRunRequest = Omit<EngineRunRequest, 'tools'> & { tools: WireToolCatalog };

/**
 * The catalog lists a worker holds, most recently used last, at most
 * {@link DEFAULT_SANDBOX_WORKER_KEPT_CATALOGS}. The host keeps a mirror per worker and applies
 * the same uses in the same order (IPC keeps it), so it knows which lists the worker has.
 */
export class KeptCatalogs<Value> {
  readonly #kept = new Map<number, Value>();

  /** The value kept for `id` (marked as used), or undefined. */
  use(id: number): Value | undefined {
    const value = this.#kept.get(id);
    if (value === undefined) return undefined;
    this.#kept.delete(id);
    this.#kept.set(id, value);
    return value;
  }

  /** The value kept for `id`, without marking it used (the host's mirror sees no use). */
  peek(id: number): Value | undefined {
    return this.#kept.get(id);
  }

  /** Keeps `value` for `id`, forgetting the least recently used beyond the bound. */
  keep(id: number, value: Value): void {
    this.#kept.delete(id);
    this.#kept.set(id, value);
    while (this.#kept.size > DEFAULT_SANDBOX_WORKER_KEPT_CATALOGS) {
      this.#kept.delete(this.#kept.keys().next().value!);
    }
  }
}

/**
 * The worker's file descriptor of the payload side channel (see `payload-channel.ts`): the
 * host spawns it with a socket pair at this index of `stdio`.
 */
export const SIDE_CHANNEL_FD = 4;

/**
 * The worker's file descriptor of the settle channel: a socket pair at this index of `stdio`
 * carrying the host's answers to tool calls, one frame each (`payload-channel.ts` framing; the
 * text is the JSON of `[runId, answers]`). Not on Node's IPC channel, so that a worker waiting
 * for a fast answer can read it without going back to its event loop (see `worker.ts`, the
 * spin before sleeping).
 */
export const SETTLE_CHANNEL_FD = 5;

/** Answers sent to the worker in one settle at most (four entries each, see EngineAnswers). */
export const MAX_ANSWERS_PER_SETTLE = 1_024;

/**
 * Bytes a settle frame may have: {@link MAX_ANSWERS_PER_SETTLE} answers, each with a payload
 * under `SIDE_CHANNEL_MIN_CHARS` characters (longer ones travel as side-channel frames) at up to
 * six bytes per character once JSON-escaped, plus room for its id, flag and code.
 */
export const MAX_SETTLE_FRAME_BYTES = MAX_ANSWERS_PER_SETTLE * (SIDE_CHANNEL_MIN_CHARS * 6 + 1_024);

/** Host → worker. */
export type HostMessage =
  | { t: 'init'; prelude: string; spareMemoryMb: number; isolateRuns?: number }
  /**
   * `spinUs`: how long the worker may keep its core busy waiting for a fast answer before it
   * goes back to its event loop (0: never; see `worker.ts`).
   */
  | { t: 'run'; runId: number; request: WireRunRequest; spinUs?: number }
  /**
   * Answers of calls that ended in the same turn of the host's loop (see {@link EngineAnswers}).
   * A payload slot holding `SIDE_PAYLOAD` takes the next frame of the side channel. Sent as a
   * frame of the settle channel ({@link SETTLE_CHANNEL_FD}), or over IPC when that is gone.
   */
  | { t: 'settle'; runId: number; answers: EngineAnswers }
  | { t: 'cancel'; runId: number; code: EngineFaultCode }
  | { t: 'drop-session'; key: string }
  | { t: 'ping'; seq: number };

/** Worker → host. */
export type WorkerMessage =
  | { t: 'ready' }
  | { t: 'init-failed'; message: string }
  | { t: 'out'; runId: number; chunks: [number, string, number][] }
  /**
   * Tool calls, four entries each: `id, name, argsJson, site` (`site` undefined unless the tool
   * reports its line). The first call of an isolate entry is sent at once, the rest of that
   * entry's calls together when the entry ends.
   */
  | { t: 'call'; runId: number; calls: WorkerCalls }
  /**
   * `spins`: the run's spins for answers that saw their answer, that ran out, and that were
   * preempted (see `worker.ts`), for tests and diagnostics.
   */
  | { t: 'done'; runId: number; outcome: EngineOutcome; spins?: [number, number, number] }
  | { t: 'pong'; seq: number };

/** `id, name, argsJson, site` per call, one after another. */
export type WorkerCalls = (number | string | undefined)[];
