#!/usr/bin/env node
// The container image's HEALTHCHECK (Dockerfile). `codecall serve --http`, the image's default
// command, is healthy while its port answers HTTP with a status below 500: without the token the
// answer is a 401, which is enough to show the server is up; 503 means it is shutting down. Any
// other command (`worker`, a one-off `codecall tools`) has no port to ask and counts as healthy
// while it runs. The command line read is PID 1's, the image's entrypoint, or the arguments when
// there are some (`node deploy/healthcheck.mjs serve --http --port 3737`). A port or host set only
// in the configuration's "serve" section is not seen: give --port / --host on the command.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';

/** The port of `serve --http` without --port (DEFAULT_SERVE_PORT, src/config/defaults.ts). */
const DEFAULT_SERVE_PORT = 3737;
/** How long one probe waits for the answer. */
const PROBE_TIMEOUT_MS = 3_000;

/** The value of `--name value` or `--name=value` in `argv`, or undefined. */
function flag(argv, name) {
  const at = argv.indexOf(name);
  if (at >= 0) return argv[at + 1];
  const inline = argv.find((word) => word.startsWith(`${name}=`));
  return inline === undefined ? undefined : inline.slice(name.length + 1);
}

/** Resolves with the HTTP status of GET `path` on `host`:`port`, or undefined when none came. */
function statusOf(host, port, path, timeoutMs) {
  return new Promise((resolve) => {
    const probe = request({ host, port, path, method: 'GET', timeout: timeoutMs }, (response) => {
      response.resume();
      resolve(response.statusCode);
    });
    probe.once('timeout', () => probe.destroy(new Error('timed out')));
    probe.once('error', () => resolve(undefined));
    probe.end();
  });
}

/**
 * True when the process started as `argv` (a whole command line, e.g. `node /usr/local/bin/codecall
 * serve --http --port 3737 …`) is healthy: for `serve --http`, its /mcp endpoint answers below 500.
 */
async function isHealthy(argv, timeoutMs = PROBE_TIMEOUT_MS) {
  if (!argv.includes('serve') || !argv.includes('--http')) return true;
  const port = Number(flag(argv, '--port') ?? DEFAULT_SERVE_PORT);
  // --port 0 picks a free port at start: nothing known to ask.
  if (!Number.isInteger(port) || port <= 0) return true;
  const bound = flag(argv, '--host');
  const host = bound === undefined || bound === '0.0.0.0' || bound === '::' ? '127.0.0.1' : bound;
  const status = await statusOf(host, port, '/mcp', timeoutMs);
  return status !== undefined && status < 500;
}

const argv =
  process.argv.length > 2
    ? process.argv.slice(2)
    : readFileSync('/proc/1/cmdline', 'utf8').split('\0').filter(Boolean);
process.exitCode = (await isHealthy(argv)) ? 0 : 1;
