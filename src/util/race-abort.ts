/**
 * @module
 * Leaving work that ignores a signal: {@link raceAbort} settles with the work, or rejects as soon
 * as the signal fires (the work runs on; what it settles with then is dropped).
 */

/** Resolves with `promise`, or rejects as soon as `signal` fires (the work itself sees the signal too). */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error as Error);
      },
    );
  });
}
