/**
 * @module
 * Small helpers both job backends share: bounding a log line, waiting for a job's end by
 * reading its event stream (with a timeout and a signal), and checking the options of a shared
 * usage-history store.
 */
import { DEFAULT_JOBS_MAX_LOG_LINE_BYTES } from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import { setLongTimeout } from '../util/long-timeout.js';
import type { JobEvent, JobRecord, WaitJobOptions } from './job-types.js';

/** Cuts a log line to {@link DEFAULT_JOBS_MAX_LOG_LINE_BYTES}, with a marker saying so. */
export function cutLogLine(line: string): string {
  const buffer = Buffer.from(line, 'utf8');
  if (buffer.length <= DEFAULT_JOBS_MAX_LOG_LINE_BYTES) return line;
  const kept = buffer
    .subarray(0, DEFAULT_JOBS_MAX_LOG_LINE_BYTES)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
  return `${kept}… [cut: ${buffer.length} bytes]`;
}

/**
 * Reads the events `events(signal)` yields until `done` (the signal fires when waiting stops, so the
 * stream can let go) and and resolves with its record. Throws `JOB_WAIT_TIMEOUT` after
 * `timeoutMs`, `ABORTED` when `signal` fires.
 */
export async function waitForJobEnd(
  events: (signal: AbortSignal) => AsyncIterable<JobEvent>,
  id: string,
  options: WaitJobOptions = {},
): Promise<JobRecord> {
  const stop = new AbortController();
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setLongTimeout(() => stop.abort('timeout'), options.timeoutMs);
  const onAbort = (): void => stop.abort('aborted');
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const iterator = events(stop.signal)[Symbol.asyncIterator]();
  const stopped = new Promise<never>((_, reject) => {
    const fail = (): void =>
      reject(
        stop.signal.reason === 'timeout'
          ? new CodecallError(
              'JOB_WAIT_TIMEOUT',
              `Job "${id}" did not finish within ${options.timeoutMs} ms; it goes on running.`,
              {
                details: { id, timeoutMs: options.timeoutMs ?? 0 },
              },
            )
          : new CodecallError('ABORTED', `Stopped waiting for job "${id}"; it goes on running.`, {
              details: { id },
            }),
      );
    if (stop.signal.aborted) fail();
    else stop.signal.addEventListener('abort', fail, { once: true });
  });
  stopped.catch(() => {});
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), stopped]);
      if (next.done)
        throw new CodecallError(
          'JOB_NOT_FOUND',
          `Job "${id}" disappeared while waiting (removed by retention?).`,
          { details: { id } },
        );
      if (next.value.type === 'done') return next.value.job;
    }
  } finally {
    timer?.cancel();
    stop.abort('done');
    options.signal?.removeEventListener('abort', onAbort);
    void iterator.return?.()?.catch?.(() => {});
  }
}

/**
 * The key of a job's state: its id and creation time, so a job submitted again under the same id
 * (same idempotency key, after the first was removed) does not replay the journal of the first.
 */
export function jobStateKey(id: string, createdAt: number): string {
  return `${id}:${createdAt}`;
}
