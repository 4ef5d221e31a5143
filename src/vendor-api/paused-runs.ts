/**
 * @module
 * Where the journals of scripts paused on client tool calls live: in memory (bounded, oldest
 * dropped first, expired ones swept), or as files in a folder that several serve processes share
 * (`serve.vendorJournalDir`), so a paused script resumes on whichever process the client reaches.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_VENDOR_MAX_PAUSED_RUNS } from '../config/defaults.js';
import { FileRunJournal, MemoryRunJournal, type RunJournal } from '../store/index.js';

/** A run's journal, opened for one request. */
export interface OpenedRunJournal {
  journal: RunJournal;
  /** Releases it (a file journal's lock), keeping what it holds. */
  release(): Promise<void>;
}

/** The journals of paused scripts, by run id. */
export interface PausedRuns {
  /** Opens the journal of `runId` (created empty when new); `undefined` when it is gone. */
  open(runId: string, options: { create: boolean; expiresAt: number }): Promise<OpenedRunJournal | undefined>;
  /** Forgets a finished run. */
  drop(runId: string): Promise<void>;
}

/** Paused runs in this process's memory. */
export class MemoryPausedRuns implements PausedRuns {
  readonly #runs = new Map<string, { journal: MemoryRunJournal; expiresAt: number }>();
  readonly #max: number;

  constructor(max = DEFAULT_VENDOR_MAX_PAUSED_RUNS) {
    this.#max = max;
  }

  open(
    runId: string,
    options: { create: boolean; expiresAt: number },
  ): Promise<OpenedRunJournal | undefined> {
    const now = Date.now();
    for (const [id, run] of this.#runs) if (run.expiresAt <= now) this.#runs.delete(id);
    let run = this.#runs.get(runId);
    if (run === undefined) {
      if (!options.create) return Promise.resolve(undefined);
      // Oldest first: a Map iterates in insertion order.
      while (this.#runs.size >= this.#max) this.#runs.delete(this.#runs.keys().next().value!);
      run = { journal: new MemoryRunJournal(), expiresAt: options.expiresAt };
      this.#runs.set(runId, run);
    } else run.expiresAt = Math.max(run.expiresAt, options.expiresAt);
    return Promise.resolve({ journal: run.journal, release: () => Promise.resolve() });
  }

  drop(runId: string): Promise<void> {
    this.#runs.delete(runId);
    return Promise.resolve();
  }
}

/** Paused runs as journal files in a folder (`<runId>.jsonl`), durable across restarts. */
export class FilePausedRuns implements PausedRuns {
  readonly #dir: string;
  #made = false;

  constructor(dir: string) {
    this.#dir = dir;
  }

  async open(
    runId: string,
    options: { create: boolean; expiresAt: number },
  ): Promise<OpenedRunJournal | undefined> {
    if (!this.#made) {
      await mkdir(this.#dir, { recursive: true });
      this.#made = true;
    }
    const path = join(this.#dir, `${runId}.jsonl`);
    const journal = await FileRunJournal.open(path);
    if (!options.create && (await journal.entries()).length === 0) {
      await journal.close();
      await rm(path, { force: true });
      return undefined;
    }
    return { journal, release: () => journal.close() };
  }

  async drop(runId: string): Promise<void> {
    await rm(join(this.#dir, `${runId}.jsonl`), { force: true });
  }
}
