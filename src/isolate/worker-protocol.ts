/**
 * @module
 * Messages between the host and a sandbox worker process, over Node's IPC channel with
 * `serialization: 'advanced'` (strings cross without JSON escaping, so a 10 MB tool result is a
 * copy, not a re-encoding). Only plain data: the invoker, MCP clients and secrets stay in the
 * host; the worker receives code, tool names, limits and tool results.
 */
import type { EngineAnswers, EngineFaultCode, EngineOutcome, EngineRunRequest } from './engine.js';

/** Host → worker. */
export type HostMessage =
  | { t: 'init'; prelude: string; spareMemoryMb: number }
  | { t: 'run'; runId: number; request: EngineRunRequest }
  /** Answers of calls that ended in the same turn of the host's loop (see {@link EngineAnswers}). */
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
  | { t: 'done'; runId: number; outcome: EngineOutcome }
  | { t: 'pong'; seq: number };

/** `id, name, argsJson, site` per call, one after another. */
export type WorkerCalls = (number | string | undefined)[];
