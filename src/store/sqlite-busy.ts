/**
 * @module
 * Opening a SQLite file that other processes open at the same moment. SQLite's busy timeout
 * waits for most locks, but not for a lock a connection needs to upgrade a read it already
 * holds: two processes that each read a new file's header and then change it (`PRAGMA
 * journal_mode = WAL`, the schema) can leave one of them with `SQLITE_BUSY` at once, without
 * waiting — SQLite refuses rather than deadlock (https://www.sqlite.org/lockingv3.html, "the
 * busy handler is not invoked" when a reader would have to wait for a writer that waits for
 * it). Two `codecall serve` nodes started together on one state folder met exactly that. The
 * open is then retried, whole, until the busy timeout has passed.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { backoffDelayMs } from '../util/backoff.js';

/** SQLite's result codes for a lock held elsewhere: `SQLITE_BUSY` (5) and `SQLITE_LOCKED` (6). */
const BUSY_CODES = new Set([5, 6]);

/** True for node:sqlite's error of a lock held by another connection. */
export function isSqliteBusy(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { errcode?: unknown }).errcode;
  // The primary code is the low byte (extended codes such as SQLITE_BUSY_SNAPSHOT carry it).
  return typeof code === 'number' && BUSY_CODES.has(code & 0xff);
}

/**
 * Runs `attempt` (which opens and prepares the file, closing what it opened when it throws) and
 * runs it again after a short, growing, jittered pause while it fails with a busy lock, for at
 * most `timeoutMs` in all; then the last busy error is thrown. Any other error is thrown at once.
 * The pauses are timers: the event loop runs between attempts.
 */
export async function retryWhileBusy<T>(attempt: () => T, timeoutMs: number): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (let tries = 1; ; tries++) {
    try {
      return attempt();
    } catch (error) {
      const left = deadline - performance.now();
      if (!isSqliteBusy(error) || left <= 0) throw error;
      await sleep(Math.min(left, backoffDelayMs(tries, { initialDelayMs: 5, maxDelayMs: 200, jitter: 0.5 })));
    }
  }
}
