/**
 * @module
 * Start-up phase marks for `codecall exec` and friends, printed on stderr only when the
 * environment variable {@link STARTUP_TRACE_ENV} is `1`:
 *
 *   codecall trace   41.2 ms  cli loaded
 *
 * Each line gives the time since the process started (`performance.now()`, whose origin is the
 * process's start), so the gaps between lines are the phases' costs. Off by default: one
 * environment read, then every mark is a no-op.
 */

/** The environment variable that turns the marks on (`CODECALL_TRACE_STARTUP=1`). */
export const STARTUP_TRACE_ENV = 'CODECALL_TRACE_STARTUP';

/** The prefix of every mark line, so a reader can pick them out of stderr. */
export const STARTUP_TRACE_PREFIX = 'codecall trace';

const enabled = process.env[STARTUP_TRACE_ENV] === '1';

/** True when marks are printed. */
export function startupTraceEnabled(): boolean {
  return enabled;
}

/** Prints `phase` with the time since the process started, when tracing is on. */
export function traceStartup(phase: string): void {
  if (!enabled) return;
  process.stderr.write(`${STARTUP_TRACE_PREFIX} ${performance.now().toFixed(1).padStart(7)} ms  ${phase}\n`);
}
