/**
 * @module
 * The host of a database or queue connection URL, for error messages: never the URL itself, which
 * may carry a password.
 */

/** `host[:port]` of `connection`, or `fallback` when it is not a URL. */
export function connectionHost(connection: string, fallback = 'the database'): string {
  try {
    return new URL(connection).host || fallback;
  } catch {
    return fallback;
  }
}
