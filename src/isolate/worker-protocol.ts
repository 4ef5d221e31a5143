/**
 * @module
 * Messages between the host and a sandbox worker process, over Node's IPC channel with
 * `serialization: 'advanced'` (strings cross without JSON escaping, so a 10 MB tool result is a
 * copy, not a re-encoding). Only plain data: the invoker, MCP clients and secrets stay in the
 * host; the worker receives code, tool names, limits and tool results.
 */
import { DEFAULT_SANDBOX_WORKER_KEPT_CATALOGS } from '../config/defaults.js';
import type { EngineFaultCode, EngineOutcome, EngineRunRequest } from './engine.js';
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

  /** Keeps `value` for `id`, forgetting the least recently used beyond the bound. */
  keep(id: number, value: Value): void {
    this.#kept.delete(id);
    this.#kept.set(id, value);
    while (this.#kept.size > DEFAULT_SANDBOX_WORKER_KEPT_CATALOGS) {
      this.#kept.delete(this.#kept.keys().next().value!);
    }
  }
}

/** Host → worker. */
export type HostMessage =
  | { t: 'init'; prelude: string; spareMemoryMb: number }
  | { t: 'run'; runId: number; request: WireRunRequest }
  | {
      t: 'settle';
      runId: number;
      id: number;
      ok: boolean;
      payload: string | undefined;
      code: string | undefined;
    }
  | { t: 'cancel'; runId: number; code: EngineFaultCode }
  | { t: 'drop-session'; key: string }
  | { t: 'ping'; seq: number };

/** Worker → host. */
export type WorkerMessage =
  | { t: 'ready' }
  | { t: 'init-failed'; message: string }
  | { t: 'out'; runId: number; chunks: [number, string, number][] }
  | { t: 'call'; runId: number; id: number; name: string; args: string; site?: string }
  | { t: 'done'; runId: number; outcome: EngineOutcome }
  | { t: 'pong'; seq: number };
