/**
 * @module
 * Per-call progress of `codecall exec` on a terminal's stderr, in the style of `codecall jobs
 * wait`: `codecall exec: ✓ expenses.get_team_members · 0.4 s`. Calls that finish within
 * {@link DEFAULT_EXEC_PROGRESS_INTERVAL_MS} of the last line are counted into the next one
 * (`✓ expenses.get_expenses (+37 more) · 2.1 s`), and {@link ExecProgress.flush} writes what is
 * left when the run ends.
 */
import { DEFAULT_EXEC_PROGRESS_INTERVAL_MS } from '../config/defaults.js';
import { neutralizeControls } from './terminal-text.js';

/** Elapsed time for a progress line: `850 ms`, `2.1 s`, `3 min 05 s`. */
export function formatElapsed(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1_000);
  return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, '0')} s`;
}

/** One progress line: the last call, how many more finished since the previous line, elapsed run time. */
export function formatCallProgress(
  last: { name: string; ok: boolean },
  more: number,
  failed: number,
  elapsedMs: number,
): string {
  const others =
    more > 0 ? ` (+${more} more call${more === 1 ? '' : 's'}${failed > 0 ? `, ${failed} failed` : ''})` : '';
  return `${last.ok ? '✓' : '✗'} ${last.name}${others} · ${formatElapsed(elapsedMs)}`;
}

/** Options of {@link ExecProgress}. */
export interface ExecProgressOptions {
  /** Where lines go (stderr). */
  write: (line: string) => void;
  /** @defaultValue `performance.now` */
  now?: () => number;
  /** @defaultValue {@link DEFAULT_EXEC_PROGRESS_INTERVAL_MS} */
  intervalMs?: number;
}

/** Turns finished tool calls into throttled progress lines. */
export class ExecProgress {
  readonly #write: (line: string) => void;
  readonly #now: () => number;
  readonly #intervalMs: number;
  readonly #start: number;
  #lastLineAt = -Infinity;
  #pending: { name: string; ok: boolean } | undefined;
  #more = 0;
  #failed = 0;

  constructor(options: ExecProgressOptions) {
    this.#write = options.write;
    this.#now = options.now ?? (() => performance.now());
    this.#intervalMs = options.intervalMs ?? DEFAULT_EXEC_PROGRESS_INTERVAL_MS;
    this.#start = this.#now();
  }

  /** A tool call finished (`ok`: it succeeded on the host). */
  onCall(call: { name: string; ok: boolean }): void {
    if (this.#pending !== undefined) {
      this.#more++;
      if (!this.#pending.ok) this.#failed++;
    }
    this.#pending = { name: call.name, ok: call.ok };
    if (this.#now() - this.#lastLineAt >= this.#intervalMs) this.flush();
  }

  /** Writes the calls not reported yet, if any. */
  flush(): void {
    if (this.#pending === undefined) return;
    const now = this.#now();
    // Names come from the configuration and the script: no raw control sequences on the terminal.
    this.#write(
      `codecall exec: ${neutralizeControls(formatCallProgress(this.#pending, this.#more, this.#failed, now - this.#start))}\n`,
    );
    this.#lastLineAt = now;
    this.#pending = undefined;
    this.#more = 0;
    this.#failed = 0;
  }
}
