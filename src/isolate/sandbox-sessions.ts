/**
 * @module
 * The sessions of a {@link SandboxPool}: contexts kept alive between runs, by owner and name.
 * It owns their bookkeeping — the LRU of live sessions, expiry after `sessionTtlMs` unused,
 * eviction past `maxSessions`, the memory of sessions that ended unseen (so their next run
 * fails with `SESSION_EXPIRED` instead of silently starting empty), and the queue that makes
 * runs of one session go one at a time. Where a session's context lives (the in-process engine,
 * or the worker it is pinned to) is the pool's: it is told through `onEnd`.
 */
import { DEFAULT_SANDBOX_MAX_ENDED_SESSIONS } from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import type { ExecutionErrorCode, ExecutionResult } from '../types.js';
import type { WorkerProcess } from './worker-process.js';

/** A session: the key of its kept context, where it lives, and the runs waiting on it. */
export interface SessionEntry {
  key: string;
  name: string;
  owner: string;
  /** The worker holding the context (process mode), once chosen. */
  worker: WorkerProcess | undefined;
  /** Whether a run has created the context. */
  created: boolean;
  /** Runs queued or running in this session. */
  busy: number;
  /** The last queued run, so runs of one session go one at a time. */
  tail: Promise<unknown>;
  timer: NodeJS.Timeout | undefined;
  /** Why the session ended, once it has. */
  endedWith: string | undefined;
  /** Whether a run's result has told the model that the session ended. */
  reported: boolean;
}

/** Bounds of a pool's sessions, resolved. */
export interface SessionBounds {
  ttlMs: number;
  max: number;
  nameChars: number;
}

/** Result codes after which a session's context is gone. */
const DROPS_SESSION = new Set<ExecutionErrorCode>([
  'CPU_TIMEOUT',
  'WALL_TIMEOUT',
  'MEMORY_LIMIT',
  'SANDBOX_CRASHED',
  'ABORTED',
  'SESSION_EXPIRED',
]);

/** The result of a session run that never started. */
export function sessionResult(code: 'SESSION_EXPIRED' | 'SESSION_LIMIT', message: string): ExecutionResult {
  return {
    status: 'error',
    stdout: '',
    stderr: '',
    error: { code, message },
    toolCalls: [],
    stats: { wallMs: 0, cpuMs: 0, toolResultBytes: 0, stdoutBytes: 0 },
  };
}

/** The live and recently ended sessions of one pool. */
export class SandboxSessions {
  readonly #bounds: SessionBounds;
  /** Frees a created session's context (engine or worker), once it has ended. */
  readonly #onEnd: (entry: SessionEntry) => void;
  /** Live sessions by key, least recently used first. */
  readonly #sessions = new Map<string, SessionEntry>();
  /** Sessions that ended unseen (expired, evicted, lost their worker), by key → why. */
  readonly #ended = new Map<string, { owner: string; why: string }>();

  constructor(bounds: SessionBounds, onEnd: (entry: SessionEntry) => void) {
    this.#bounds = bounds;
    this.#onEnd = onEnd;
  }

  /** Live sessions. */
  get size(): number {
    return this.#sessions.size;
  }

  /**
   * The session `name` of `owner`, opened when new (evicting the least recently used idle one
   * when all are taken); a result instead when its run must not start (it ended unseen, or every
   * session is busy). Throws `INVALID_ARGUMENT` for a bad name.
   */
  open(name: unknown, owner: string): SessionEntry | ExecutionResult {
    const maxChars = this.#bounds.nameChars;
    if (typeof name !== 'string' || name.length === 0 || name.length > maxChars) {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `A session name must be a string of 1 to ${maxChars} characters; got ${typeof name === 'string' ? `${name.length} characters` : typeof name}.`,
        { details: { field: 'session' } },
      );
    }
    // Unambiguous whatever the characters of either part.
    const key = JSON.stringify([owner, name]);
    const live = this.#sessions.get(key);
    if (live !== undefined) return live;
    const ended = this.#ended.get(key);
    if (ended !== undefined) {
      this.#ended.delete(key);
      return sessionResult('SESSION_EXPIRED', ended.why);
    }
    const max = this.#bounds.max;
    if (this.#sessions.size >= max) {
      const victim = [...this.#sessions.values()].find((candidate) => candidate.busy === 0);
      if (victim === undefined) {
        return sessionResult(
          'SESSION_LIMIT',
          `All ${max} sessions are running scripts, so session "${name}" cannot start now. Run the script without a session, or reuse a session.`,
        );
      }
      this.end(
        victim,
        `The session "${victim.name}" was closed to make room for newer sessions (at most ${max} are kept), so its variables are gone. Start over: run the script again, fetching the data it needs.`,
        true,
      );
    }
    const entry: SessionEntry = {
      key,
      name,
      owner,
      worker: undefined,
      created: false,
      busy: 0,
      tail: Promise.resolve(),
      timer: undefined,
      endedWith: undefined,
      reported: false,
    };
    this.#sessions.set(key, entry);
    return entry;
  }

  /** Queues `run` behind the session's earlier runs; the session stays unexpired while any wait. */
  enqueue(entry: SessionEntry, run: () => Promise<ExecutionResult>): Promise<ExecutionResult> {
    entry.busy++;
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = undefined;
    const result = entry.tail.then(async () => {
      try {
        return await run();
      } finally {
        entry.busy--;
        if (entry.busy === 0) this.#idle(entry);
      }
    });
    entry.tail = result.catch(() => undefined);
    return result;
  }

  /** Ends the session when its run failed in a way that loses the context, and says so in the result. */
  afterRun(entry: SessionEntry, result: ExecutionResult): ExecutionResult {
    const code = result.error?.code;
    if (code === undefined || !DROPS_SESSION.has(code)) return result;
    this.end(entry, `The session "${entry.name}" ended when a run in it failed (${code}).`, false);
    entry.reported = true;
    result.error!.message +=
      code === 'SESSION_EXPIRED'
        ? ''
        : ` The session "${entry.name}" was discarded with its variables: your next run in it starts empty, so fetch the data again.`;
    return result;
  }

  /** After a session's last queued run: arm its expiry, or remember that it ended unseen. */
  #idle(entry: SessionEntry): void {
    if (entry.endedWith !== undefined) {
      if (!entry.reported) this.#remember(entry, entry.endedWith);
      return;
    }
    if (this.#sessions.get(entry.key) !== entry) return;
    // Most recently used last.
    this.#sessions.delete(entry.key);
    this.#sessions.set(entry.key, entry);
    const ttl = this.#bounds.ttlMs;
    entry.timer = setTimeout(
      () =>
        this.end(
          entry,
          `The session "${entry.name}" expired after ${ttl} ms unused, so its variables are gone. Start over: run the script again, fetching the data it needs.`,
          true,
        ),
      ttl,
    );
    entry.timer.unref();
  }

  #remember(entry: SessionEntry, why: string): void {
    this.#ended.delete(entry.key);
    this.#ended.set(entry.key, { owner: entry.owner, why });
    while (this.#ended.size > DEFAULT_SANDBOX_MAX_ENDED_SESSIONS) {
      this.#ended.delete(this.#ended.keys().next().value!);
    }
  }

  /** Ends a session: frees its context; `remember` makes its next run fail with SESSION_EXPIRED. */
  end(entry: SessionEntry, why: string, remember: boolean): void {
    if (entry.endedWith !== undefined) return;
    entry.endedWith = why;
    entry.reported = !remember;
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = undefined;
    if (this.#sessions.get(entry.key) === entry) this.#sessions.delete(entry.key);
    if (remember && entry.busy === 0) this.#remember(entry, why);
    if (entry.created) this.#onEnd(entry);
  }

  /** Ends every session of `owner`, and forgets the ones that ended unseen. */
  closeOwner(owner: string): void {
    for (const entry of [...this.#sessions.values()]) {
      if (entry.owner === owner) this.end(entry, `The session "${entry.name}" was closed.`, false);
    }
    for (const [key, ended] of [...this.#ended]) if (ended.owner === owner) this.#ended.delete(key);
  }

  /** Sessions pinned to `worker`. */
  countOn(worker: WorkerProcess): number {
    let count = 0;
    for (const entry of this.#sessions.values()) if (entry.worker === worker) count++;
    return count;
  }

  /** Ends the sessions pinned to `worker` (it stopped), remembering why. */
  endOn(worker: WorkerProcess): void {
    for (const entry of [...this.#sessions.values()]) {
      if (entry.worker !== worker) continue;
      this.end(
        entry,
        `The session "${entry.name}" was lost when its sandbox process stopped, so its variables are gone. Start over: run the script again, fetching the data it needs.`,
        true,
      );
    }
  }

  /** Forgets everything (the pool closed): stops every expiry timer. */
  clear(): void {
    for (const entry of this.#sessions.values()) if (entry.timer) clearTimeout(entry.timer);
    this.#sessions.clear();
    this.#ended.clear();
  }
}
