/**
 * @module
 * Where the journals of scripts paused on client tool calls live: in memory (bounded, oldest
 * dropped first, expired ones swept), or as files in a folder that several serve processes share
 * (`serve.vendorJournalDir`), so a paused script resumes on whichever process the client reaches.
 * The folder is bounded the same way: a periodic sweep (one `readdir` and a `stat` per file, at
 * most once per `DEFAULT_VENDOR_PAUSED_SWEEP_MS`) removes journals idle past the TTL, and a new
 * run past the count removes the oldest run the process knows of. Redis and PostgreSQL stores
 * live in `store/` (`paused-runs-redis.ts`, `paused-runs-postgres.ts`).
 */
import { mkdir, readdir, rm, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import {
  DEFAULT_VENDOR_CONTAINER_TTL_MS,
  DEFAULT_VENDOR_MAX_PAUSED_RUNS,
  DEFAULT_VENDOR_PAUSED_SWEEP_MAX_FILES,
  DEFAULT_VENDOR_PAUSED_SWEEP_MS,
} from '../config/defaults.js';
import {
  FileRunJournal,
  MemoryRunJournal,
  type OpenedRunJournal,
  type PausedRunStore,
} from '../store/index.js';

/** The journals of paused scripts, by run id (memory, a folder, Redis, PostgreSQL). */
export type PausedRuns = PausedRunStore;
export type { OpenedRunJournal };

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

  close(): Promise<void> {
    this.#runs.clear();
    return Promise.resolve();
  }
}

const RUN_ID = /^[0-9a-f]{32}$/;

/** Options of {@link FilePausedRuns}. */
export interface FilePausedRunsOptions {
  /** Paused runs the folder keeps (the oldest is removed past it). @defaultValue {@link DEFAULT_VENDOR_MAX_PAUSED_RUNS} */
  maxRuns?: number;
  /** Milliseconds a paused run lives after its last turn (the containers' TTL). @defaultValue {@link DEFAULT_VENDOR_CONTAINER_TTL_MS} */
  ttlMs?: number;
  /** Milliseconds between two reads of the folder that remove expired journals. @defaultValue {@link DEFAULT_VENDOR_PAUSED_SWEEP_MS} */
  sweepMs?: number;
}

/** Paused runs as journal files in a folder (`<runId>.jsonl`), durable across restarts. */
export class FilePausedRuns implements PausedRuns {
  readonly #dir: string;
  readonly #max: number;
  readonly #ttlMs: number;
  readonly #sweepMs: number;
  /**
   * The folder's runs as this process knows them: from its last sweep, plus those it created
   * since (run id → epoch milliseconds after which the run is gone). Map order is oldest first.
   */
  readonly #known = new Map<string, number>();
  /** Runs this process holds open now (never swept under a request). */
  readonly #open = new Set<string>();
  #sweptAt = Number.NEGATIVE_INFINITY;
  #sweeping: Promise<void> | undefined;
  #made = false;

  constructor(dir: string, options: FilePausedRunsOptions = {}) {
    this.#dir = dir;
    this.#max = options.maxRuns ?? DEFAULT_VENDOR_MAX_PAUSED_RUNS;
    this.#ttlMs = options.ttlMs ?? DEFAULT_VENDOR_CONTAINER_TTL_MS;
    this.#sweepMs = options.sweepMs ?? DEFAULT_VENDOR_PAUSED_SWEEP_MS;
  }

  #path(runId: string): string {
    return join(this.#dir, `${runId}.jsonl`);
  }

  async #remove(runId: string): Promise<void> {
    this.#known.delete(runId);
    await rm(this.#path(runId), { force: true });
  }

  /** Removes a run nobody drives: not open here, and no live lock of another process. */
  async #evict(runId: string, now: number): Promise<boolean> {
    if (this.#open.has(runId)) return false;
    const lock = await stat(`${this.#path(runId)}.lock`).then(
      (s) => s.mtimeMs,
      () => undefined,
    );
    if (lock !== undefined && lock + this.#ttlMs > now) return false;
    await this.#remove(runId);
    if (lock !== undefined) await rm(`${this.#path(runId)}.lock`, { force: true });
    return true;
  }

  /**
   * Reads the folder once: files whose last write is older than the TTL are removed (a journal is
   * written on every turn, and a container expires one TTL after its turn), the others are known.
   */
  async #sweep(now: number): Promise<void> {
    this.#sweptAt = now;
    const names = await readdir(this.#dir).catch(() => [] as string[]);
    const found: [string, number][] = [];
    for (const name of names.slice(0, DEFAULT_VENDOR_PAUSED_SWEEP_MAX_FILES)) {
      const runId = name.endsWith('.jsonl') ? name.slice(0, -'.jsonl'.length) : '';
      if (!RUN_ID.test(runId) || this.#open.has(runId)) continue;
      const modified = await stat(join(this.#dir, name)).then(
        (s) => s.mtimeMs,
        () => undefined,
      );
      if (modified === undefined) continue;
      const expiresAt = modified + this.#ttlMs;
      if (expiresAt > now || !(await this.#evict(runId, now)))
        found.push([runId, Math.max(expiresAt, this.#known.get(runId) ?? 0)]);
    }
    this.#known.clear();
    found.sort((a, b) => a[1] - b[1]);
    for (const [runId, expiresAt] of found) this.#known.set(runId, expiresAt);
  }

  /** Sweeps at most once per `sweepMs`, however many requests arrive (never a stat per request). */
  async #maybeSweep(now: number): Promise<void> {
    if (now - this.#sweptAt < this.#sweepMs) return;
    this.#sweeping ??= this.#sweep(now).finally(() => (this.#sweeping = undefined));
    await this.#sweeping;
  }

  async open(
    runId: string,
    options: { create: boolean; expiresAt: number },
  ): Promise<OpenedRunJournal | undefined> {
    if (!this.#made) {
      await mkdir(this.#dir, { recursive: true });
      this.#made = true;
    }
    await this.#maybeSweep(Date.now());
    const path = this.#path(runId);
    if (options.create && !this.#known.has(runId)) {
      // Oldest first, like the memory store; runs another process created since the last sweep
      // are counted at the next one.
      const now = Date.now();
      for (const id of [...this.#known.keys()]) {
        if (this.#known.size < this.#max) break;
        await this.#evict(id, now);
      }
    }
    const journal = await FileRunJournal.open(path);
    if (!options.create && (await journal.entries()).length === 0) {
      await journal.close();
      await rm(path, { force: true });
      this.#known.delete(runId);
      return undefined;
    }
    this.#open.add(runId);
    this.#known.delete(runId);
    this.#known.set(runId, Math.max(options.expiresAt, Date.now() + this.#ttlMs));
    return {
      journal,
      release: async () => {
        await journal.close();
        this.#open.delete(runId);
        // The last write is what the sweep reads: a turn that appended nothing still renews it.
        const now = new Date();
        await utimes(path, now, now).catch(() => {});
      },
    };
  }

  async drop(runId: string): Promise<void> {
    await this.#remove(runId);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
