/**
 * @module
 * An exclusive lock held by one process: a lock file naming its holder (pid, host, a random
 * token), created atomically (written aside, then hard-linked into place, so it is never seen
 * half written), removed on release and on process exit. A lock whose holder died without
 * releasing it (`kill -9`, a lost machine) is detected by its pid (`kill(pid, 0)` says there is no
 * such process) and taken over. Plain files and a pid, not `flock`: Node has no `flock`, the npm
 * packages that add it are native builds, and a pid lets the refusal say which process holds it.
 *
 * Holders on another host cannot be checked (their pid means nothing here): their lock is kept.
 * A pid reused by an unrelated process after a crash makes a stale lock look held; the refusal
 * names the lock file to delete then.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, unlinkSync } from 'node:fs';
import { link, open, readFile, rename, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';

/** What {@link PidLockFile.acquire} got: the lock, or who holds it. */
export type PidLockResult =
  | { ok: true; lock: PidLockFile }
  /** `holder` is undefined when the file in the way is not one this module wrote, or is still being written. */
  | { ok: false; holder: PidLockHolder | undefined };

/** Who holds a lock, as its file says. */
export interface PidLockHolder {
  pid: number;
  host: string;
  /** Epoch milliseconds when it was taken. */
  at: number;
}

/** Lock files this process holds (path → its file's text), removed when the process exits. */
const held = new Map<string, string>();
let exitHook = false;

function removeHeldOnExit(): void {
  for (const [path, text] of held) {
    try {
      if (readFileSync(path, 'utf8') === text) unlinkSync(path);
    } catch {
      // Gone already, or its directory was removed.
    }
  }
  held.clear();
}

function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function parseHolder(text: string): PidLockHolder | undefined {
  try {
    const value = JSON.parse(text) as Partial<PidLockHolder>;
    if (typeof value.pid === 'number' && Number.isSafeInteger(value.pid) && typeof value.host === 'string')
      return { pid: value.pid, host: value.host, at: typeof value.at === 'number' ? value.at : 0 };
  } catch {
    // Not a lock file this module wrote.
  }
  return undefined;
}

/** True when the process named by a lock file is gone (so the lock is stale). */
function holderIsGone(holder: PidLockHolder): boolean {
  if (holder.host !== hostname()) return false;
  // Our pid, and no handle of this process holds it (`acquire` checked): an earlier process
  // with the same pid (a restarted container) left it.
  if (holder.pid === process.pid) return true;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (error) {
    // EPERM: the process exists, under another user.
    return errnoOf(error) === 'ESRCH';
  }
}

/** Creates `path` holding `text` unless it exists; never leaves it half written. */
async function createExclusive(path: string, text: string): Promise<boolean> {
  const aside = `${path}.${process.pid}.${randomUUID()}.tmp`;
  const handle = await open(aside, 'wx');
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(aside, path);
    return true;
  } catch (error) {
    if (errnoOf(error) === 'EEXIST') return false;
    // A file system without hard links: create it in place (a reader may see it empty meanwhile).
    if (errnoOf(error) !== 'EPERM' && errnoOf(error) !== 'ENOTSUP' && errnoOf(error) !== 'EXDEV') throw error;
    try {
      const direct = await open(path, 'wx');
      await direct.writeFile(text);
      await direct.close();
      return true;
    } catch (inner) {
      if (errnoOf(inner) === 'EEXIST') return false;
      throw inner;
    }
  } finally {
    await unlink(aside).catch(() => {});
  }
}

/**
 * Removes the stale lock file whose text was `seen`. It is first moved aside, so that of two
 * processes taking over the same stale lock only one removes it; a lock that changed meanwhile
 * (another process took over and holds it now) is put back.
 */
async function removeStale(path: string, seen: string): Promise<void> {
  const aside = `${path}.${process.pid}.${randomUUID()}.stale`;
  try {
    await rename(path, aside);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return;
    throw error;
  }
  try {
    const text = await readFile(aside, 'utf8');
    if (text !== seen) await link(aside, path).catch(() => {});
  } finally {
    await unlink(aside).catch(() => {});
  }
}

/**
 * An exclusive lock file held by this process.
 *
 * @example
 * ```ts
 * const result = await PidLockFile.acquire('run.jsonl.lock', 8);
 * if (!result.ok) throw new Error(`in use by process ${result.holder?.pid ?? '?'}`);
 * try { … } finally { await result.lock.release(); }
 * ```
 */
export class PidLockFile {
  readonly path: string;
  readonly #text: string;
  #released = false;

  private constructor(path: string, text: string) {
    this.path = path;
    this.#text = text;
  }

  /**
   * Takes the lock at `path`, taking over one whose holder is gone; otherwise says who holds it
   * (this process, when another of its handles does). `maxAttempts` bounds the tries while other
   * processes create and remove the file at the same moment.
   */
  static async acquire(path: string, maxAttempts: number): Promise<PidLockResult> {
    const mine = held.get(path);
    if (mine !== undefined) return { ok: false, holder: parseHolder(mine) };
    const text = `${JSON.stringify({ pid: process.pid, host: hostname(), at: Date.now(), token: randomUUID() })}\n`;
    // Reserved at once (no await between the check and this): a second handle of this process
    // is refused above instead of taking this file, with our pid, for a dead process's.
    held.set(path, text);
    if (!exitHook) {
      exitHook = true;
      process.on('exit', removeHeldOnExit);
    }
    let holder: PidLockHolder | undefined;
    try {
      for (let attempt = 0; attempt < maxAttempts; attempt++) {
        if (await createExclusive(path, text)) return { ok: true, lock: new PidLockFile(path, text) };
        let seen: string;
        try {
          seen = await readFile(path, 'utf8');
        } catch (error) {
          if (errnoOf(error) === 'ENOENT') continue; // released meanwhile: try again
          throw error;
        }
        holder = parseHolder(seen);
        if (holder === undefined || !holderIsGone(holder)) break;
        await removeStale(path, seen);
      }
    } catch (error) {
      held.delete(path);
      throw error;
    }
    held.delete(path);
    return { ok: false, holder };
  }

  /** Removes the lock file, if it is still this lock's. Idempotent. */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    if (held.get(this.path) === this.#text) held.delete(this.path);
    try {
      if ((await readFile(this.path, 'utf8')) === this.#text) await unlink(this.path);
    } catch (error) {
      if (errnoOf(error) !== 'ENOENT') throw error;
    }
  }
}
