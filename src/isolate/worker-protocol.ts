/**
 * @module
 * Messages between the host and a sandbox worker process, over Node's IPC channel with
 * `serialization: 'advanced'` (strings cross without JSON escaping, so a 10 MB tool result is a
 * copy, not a re-encoding). Only plain data: the invoker, MCP clients and secrets stay in the
 * host; the worker receives code, tool names, limits and tool results.
 */
import type { EngineFaultCode, EngineOutcome, EngineRunRequest } from './engine.js';

/** Host → worker. */
export type HostMessage =
  | { t: 'init'; prelude: string; spareMemoryMb: number }
  | { t: 'run'; runId: number; request: EngineRunRequest }
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
