/**
 * @module
 * The run journal: every tool call of a run, appended durably as it happens, so an interrupted
 * run can be resumed by deterministic replay (see `ExecuteOptions.replay`). A call is journaled
 * twice: `started` before it is dispatched to its MCP server, `finished` (with its result or
 * error) before its answer goes back to the script. A `started` entry with no `finished` one is
 * a call *in doubt*: the process died while it was in flight, and it may or may not have
 * happened on the server.
 *
 * {@link RunJournal} is deliberately tiny (`append`, `entries`) so stores other than the two here
 * (a Redis list for jobs) are a few lines each. A journal holds one run: its first entry is the
 * header naming the script; {@link FileRunJournal} is driven by one process at a time (a lock file).
 */
import { createHash } from 'node:crypto';
import { open, readFile, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, resolve } from 'node:path';
import { DEFAULT_MAX_RUN_JOURNAL_BYTES, DEFAULT_RUN_JOURNAL_LOCK_ATTEMPTS } from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import { PidLockFile, type PidLockHolder } from '../util/pid-lock-file.js';

/** The first entry of a journal: which script it belongs to. */
export interface RunJournalHeader {
  type: 'run';
  /** sha256 (hex) of the script's source, as given to `execute`. */
  codeHash: string;
  /** Epoch milliseconds. */
  at: number;
}

/** A call dispatched to its server (written before the server is asked). */
export interface RunJournalStarted {
  type: 'started';
  /** Position of the call among the run's calls (0-based, in journal order). */
  index: number;
  /** Qualified name, `server.tool`. */
  name: string;
  /** sha256 (hex) of the arguments' JSON. */
  argsHash: string;
  /** The arguments, as the script passed them. */
  args: unknown;
  at: number;
}

/** A call that finished (written before its answer reaches the script). */
export interface RunJournalFinished {
  type: 'finished';
  index: number;
  name: string;
  argsHash: string;
  ok: boolean;
  /** The result, when `ok` (absent for a tool that returned nothing). */
  result?: unknown;
  /** The message the script saw, when not `ok`. */
  error?: string;
  at: number;
}

/** One line of a run journal. */
export type RunJournalEntry = RunJournalHeader | RunJournalStarted | RunJournalFinished;

/**
 * Where a run's calls are recorded. `append` resolves only once the entry is durable (as durable
 * as the store is: fsync for a file); `entries` returns every entry appended so far, in order.
 */
export interface RunJournal {
  append(entry: RunJournalEntry): Promise<void>;
  entries(): Promise<readonly RunJournalEntry[]>;
}

/** sha256 (hex) of a script source, the `codeHash` of a journal's header. */
export function hashCode(source: string): string {
  return createHash('sha256').update(source, 'utf8').digest('hex');
}

/**
 * sha256 (hex) of a call's arguments: their JSON as the script built it (the sandbox hands the
 * host a JSON copy, so key order is the script's own and replays hash alike).
 */
export function hashArgs(args: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(args) ?? 'undefined', 'utf8')
    .digest('hex');
}

/**
 * A journal that also knows the run's calls in flight (a `started` entry and no `finished` one
 * yet), by tool and arguments' hash: what an approver, asked about a call between the two, reads
 * to name the call's journal index.
 */
export class CallsInFlight implements RunJournal {
  readonly #journal: RunJournal;
  /** Journal indexes of calls started and not finished, by `name\0argsHash`, oldest first. */
  readonly #calls = new Map<string, number[]>();
  readonly #claimed = new Set<number>();

  constructor(journal: RunJournal) {
    this.#journal = journal;
  }

  async append(entry: RunJournalEntry): Promise<void> {
    await this.#journal.append(entry);
    if (entry.type === 'run') return;
    const key = `${entry.name}\0${entry.argsHash}`;
    if (entry.type === 'started') {
      this.#calls.set(key, [...(this.#calls.get(key) ?? []), entry.index]);
      return;
    }
    const left = (this.#calls.get(key) ?? []).filter((index) => index !== entry.index);
    if (left.length > 0) this.#calls.set(key, left);
    else this.#calls.delete(key);
  }

  entries(): Promise<readonly RunJournalEntry[]> {
    return this.#journal.entries();
  }

  /**
   * The oldest call in flight of `tool` with these arguments that no earlier `claim` returned,
   * now claimed; `undefined` when there is none.
   */
  claim(tool: string, argsHash: string): number | undefined {
    const index = this.#calls.get(`${tool}\0${argsHash}`)?.find((call) => !this.#claimed.has(call));
    if (index !== undefined) this.#claimed.add(index);
    return index;
  }

  /** The newest call in flight of `tool` with these arguments. */
  latest(tool: string, argsHash: string): number | undefined {
    return this.#calls.get(`${tool}\0${argsHash}`)?.at(-1);
  }
}

/**
 * The answers a run gave to its calls' upstream input requests, as its answer log keeps them:
 * `finished` entries named `input:<position>` (the request's position among its call's requests),
 * `index` the call's journal index, `argsHash` the request's sha256, `result` the answer. A job's
 * and a 2026 `execute_code` run's answer logs hold them alike; other entries are theirs to read.
 */
export class InputAnswers {
  readonly #log: RunJournal;
  readonly #answers = new Map<string, { request: string; response: Record<string, unknown> }>();

  constructor(log: RunJournal) {
    this.#log = log;
  }

  /** Takes in an entry read from the log; false when it is not an answer. */
  read(entry: RunJournalEntry): boolean {
    if (entry.type !== 'finished' || !entry.name.startsWith('input:')) return false;
    if (typeof entry.result !== 'object' || entry.result === null) return true;
    // Later entries win: a request answered again at the same position replaces the earlier one.
    this.#answers.set(`${entry.index}\0${entry.name}`, {
      request: entry.argsHash,
      response: entry.result as Record<string, unknown>,
    });
    return true;
  }

  /** The answer kept for request `request` at position `ask` of call `call`, if any. */
  answer(call: number, ask: number, request: string): Record<string, unknown> | undefined {
    const kept = this.#answers.get(`${call}\0input:${ask}`);
    return kept?.request === request ? kept.response : undefined;
  }

  /** Keeps an answer (durable before the upstream gets it). */
  async record(call: number, ask: number, request: string, response: Record<string, unknown>): Promise<void> {
    await this.#log.append({
      type: 'finished',
      index: call,
      name: `input:${ask}`,
      argsHash: request,
      ok: true,
      result: response,
      at: Date.now(),
    });
    this.#answers.set(`${call}\0input:${ask}`, { request, response });
  }
}

/** A journal in memory: for tests, and for retries inside one process. */
export class MemoryRunJournal implements RunJournal {
  readonly #entries: RunJournalEntry[] = [];

  append(entry: RunJournalEntry): Promise<void> {
    // Stored as JSON, like the durable stores, so a replay sees exactly what they would.
    this.#entries.push(JSON.parse(JSON.stringify(entry)) as RunJournalEntry);
    return Promise.resolve();
  }

  entries(): Promise<readonly RunJournalEntry[]> {
    return Promise.resolve([...this.#entries]);
  }
}

/** Options of {@link FileRunJournal}. */
export interface FileRunJournalOptions {
  /**
   * Bytes of journal read back by `entries()`; a larger file is refused.
   * @defaultValue {@link DEFAULT_MAX_RUN_JOURNAL_BYTES}
   */
  maxBytes?: number;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks one parsed line; returns what is wrong with it, or undefined. */
function problemOf(value: unknown): string | undefined {
  if (!isObject(value)) return 'not a JSON object';
  if (value.type === 'run')
    return typeof value.codeHash === 'string' ? undefined : '"codeHash" is not a string';
  if (value.type !== 'started' && value.type !== 'finished') return '"type" is not run, started or finished';
  if (typeof value.index !== 'number' || !Number.isSafeInteger(value.index) || value.index < 0)
    return '"index" is not a non-negative integer';
  if (typeof value.name !== 'string') return '"name" is not a string';
  if (typeof value.argsHash !== 'string') return '"argsHash" is not a string';
  if (value.type === 'finished') {
    if (typeof value.ok !== 'boolean') return '"ok" is not a boolean';
    if (!value.ok && typeof value.error !== 'string') return '"error" is not a string';
  }
  return undefined;
}

function lockedError(path: string, lockPath: string, holder: PidLockHolder | undefined): CodecallError {
  if (holder === undefined) {
    return new CodecallError(
      'JOURNAL_LOCKED',
      `The run journal ${path} is locked by ${lockPath}, which codecall did not write (or is still writing). If no run uses this journal, delete ${lockPath}.`,
      { details: { path, lockPath } },
    );
  }
  const { pid, host } = holder;
  const where =
    pid === process.pid
      ? ' (this process, through another FileRunJournal: close that one first)'
      : host === hostname()
        ? ''
        : ` on ${host}`;
  const since = holder.at > 0 ? `, since ${new Date(holder.at).toISOString()}` : '';
  return new CodecallError(
    'JOURNAL_LOCKED',
    `The run journal ${path} is in use by process ${pid}${where}${since}: two processes driving one journal would make its calls twice. Wait for that run to end, or stop it, then resume; if process ${pid} is not a codecall run (its pid was reused), delete ${lockPath}.`,
    { details: { path, lockPath, pid, host } },
  );
}

/**
 * A journal in a file of JSON lines, one entry per line, each appended with `fsync` before
 * `append` resolves. A torn last line (the process died while writing it) is ignored when read.
 *
 * One process drives a journal at a time: the journal takes the lock file `<path>.lock` (naming
 * this process) on `open`, or on its first use, and removes it on `close` or when the process
 * exits. Another process's journal of the same file is refused with `JOURNAL_LOCKED` naming
 * it; a lock left by a process that is gone (`kill -9`) is taken over.
 *
 * @example
 * ```ts
 * await using journal = await FileRunJournal.open('run.jsonl');
 * await executor.execute(source, { journal });                // records
 * await executor.execute(source, { journal, replay: true });  // resumes after a crash
 * ```
 */
export class FileRunJournal implements RunJournal, AsyncDisposable {
  readonly path: string;
  /** The lock file: `path` + `.lock`. */
  readonly lockPath: string;
  readonly #maxBytes: number;
  /** Appends are written one after another, in the order `append` was called. */
  #tail: Promise<void> = Promise.resolve();
  #dirSynced = false;
  #locking: Promise<PidLockFile> | undefined;
  #closed = false;

  constructor(path: string, options: FileRunJournalOptions = {}) {
    this.path = path;
    this.lockPath = `${resolve(path)}.lock`;
    this.#maxBytes = options.maxBytes ?? DEFAULT_MAX_RUN_JOURNAL_BYTES;
  }

  /**
   * Opens the journal at `path` and takes its lock now.
   * @throws CodecallError `JOURNAL_LOCKED` when another process (or another journal of this
   * process) drives it.
   */
  static async open(path: string, options: FileRunJournalOptions = {}): Promise<FileRunJournal> {
    const journal = new FileRunJournal(path, options);
    await journal.#owned();
    return journal;
  }

  #closedError(): CodecallError {
    return new CodecallError('CLOSED', `The run journal ${this.path} is closed.`);
  }

  /** Takes the lock once; a refusal is thrown, and the next use tries again. */
  #owned(): Promise<PidLockFile> {
    this.#locking ??= PidLockFile.acquire(this.lockPath, DEFAULT_RUN_JOURNAL_LOCK_ATTEMPTS).then(
      (result) => {
        if (result.ok) return result.lock;
        this.#locking = undefined;
        throw lockedError(this.path, this.lockPath, result.holder);
      },
      (error: unknown) => {
        this.#locking = undefined;
        throw new CodecallError(
          'INVALID_ARGUMENT',
          `Cannot create the lock file ${this.lockPath} of the run journal ${this.path} (${(error as Error)?.message ?? String(error)}): check that its directory exists and is writable.`,
          { details: { field: 'journal', value: this.path }, cause: error },
        );
      },
    );
    return this.#locking;
  }

  append(entry: RunJournalEntry): Promise<void> {
    if (this.#closed) return Promise.reject(this.#closedError());
    const line = `${JSON.stringify(entry)}\n`;
    const write = this.#tail.then(async () => {
      await this.#owned();
      await this.#write(line);
    });
    this.#tail = write.catch(() => {});
    return write;
  }

  /** Waits for pending appends and removes the lock file. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#tail;
    const lock = await this.#locking?.catch(() => undefined);
    this.#locking = undefined;
    await lock?.release();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #write(line: string): Promise<void> {
    const handle = await open(this.path, 'a');
    try {
      await handle.write(line);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    if (!this.#dirSynced) {
      // The file's directory entry must be durable too, once, after the file is created.
      this.#dirSynced = true;
      const dir = await open(dirname(this.path), 'r').catch(() => undefined);
      if (dir) {
        try {
          await dir.sync();
        } catch {
          // Some file systems cannot sync a directory; the entry itself is synced.
        } finally {
          await dir.close();
        }
      }
    }
  }

  async entries(): Promise<readonly RunJournalEntry[]> {
    if (this.#closed) throw this.#closedError();
    await this.#tail;
    await this.#owned();
    let size: number;
    try {
      size = (await stat(this.path)).size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    if (size > this.#maxBytes) {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `The run journal ${this.path} is ${size} bytes; at most ${this.#maxBytes} are read (maxBytes). It is not a journal of one run, or the run made very large calls.`,
        { details: { field: 'journal', value: this.path } },
      );
    }
    const text = await readFile(this.path, 'utf8');
    const lines = text.split('\n');
    // A last line without its newline was being written when the process died.
    if (!text.endsWith('\n')) lines.pop();
    const entries: RunJournalEntry[] = [];
    for (const [i, line] of lines.entries()) {
      if (line === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        value = undefined;
      }
      const problem = value === undefined ? 'not JSON' : problemOf(value);
      if (problem !== undefined) {
        throw new CodecallError(
          'INVALID_ARGUMENT',
          `Line ${i + 1} of the run journal ${this.path} is not a journal entry (${problem}). Give the file codecall wrote with --journal.`,
          { details: { field: 'journal', value: this.path } },
        );
      }
      entries.push(value as RunJournalEntry);
    }
    return entries;
  }
}
