/**
 * @module
 * The contract of a store of paused runs: the journals of scripts that wait for a client (the
 * vendor endpoints' scripts paused on client tool calls), by run id, each expiring, the store
 * bounded in count. One process drives a run at a time (`open` holds it until `release`).
 * Memory and file implementations live with the vendor endpoints; Redis and PostgreSQL here.
 */
import type { RunJournal } from './run-journal.js';

/** A run's journal, held for one request. */
export interface OpenedRunJournal {
  journal: RunJournal;
  /** Lets it go (a lock, a lease), keeping what it holds. */
  release(): Promise<void>;
}

/** What {@link PausedRunStore.open} is told. */
export interface OpenPausedRunOptions {
  /** Create the run when it is not there (a new script); otherwise a missing run is `undefined`. */
  create: boolean;
  /** Epoch milliseconds until which the run is kept (a later one extends it, never an earlier one). */
  expiresAt: number;
}

/** The journals of paused runs, by run id (32 hex digits). */
export interface PausedRunStore {
  /**
   * Opens the journal of `runId` and holds it; `undefined` when it is gone (expired, dropped, or
   * pushed out by the count bound). Throws `JOURNAL_LOCKED` while another process holds it.
   */
  open(runId: string, options: OpenPausedRunOptions): Promise<OpenedRunJournal | undefined>;
  /** Forgets a finished run. */
  drop(runId: string): Promise<void>;
  /** Closes the store's connection (idempotent). */
  close(): Promise<void>;
}
