/**
 * @module
 * Where `codecall jobs` sends its requests: a running `codecall serve --http` (its jobs HTTP API,
 * by `--url` and bearer token), a BullMQ queue on Redis (`--redis`) or a pg-boss queue on
 * PostgreSQL (`--postgres`). Explicit flags decide first, then `$CODECALL_REDIS_URL`, then the
 * configuration's `jobs.backend` / `jobs.connection`; every choice remembers where it came from,
 * so that an error can say which backend was used and how to pick another.
 */
import { DEFAULT_JOBS_QUEUE } from '../../config/defaults.js';
import { loadConfig, type CodecallConfig } from '../../config/index.js';
import { CodecallError, isCodecallError } from '../../errors.js';
import { createJobClient, createPgJobClient, type JobBackend } from '../../jobs/index.js';
import { createHttpJobClient } from '../../jobs/http-job-client.js';
import { UsageError, type CliIo } from '../command.js';
import { configNoticeWriter } from '../config-notices.js';
import { SERVE_TOKEN_ENV } from './serve.help.js';
import { REDIS_URL_ENV } from './jobs.help.js';

/** The backend `codecall jobs` talks to, and where each part of the choice came from. */
export type JobTarget =
  | {
      backend: 'http';
      /** Address of the serve process. */
      url: string;
      token?: string;
      /** What chose it: `--url`, or `jobs.backend "local" in <file>`. */
      source: string;
      /** Where the token came from (`--token`, `$CODECALL_SERVE_TOKEN`, `serve.token in <file>`). */
      tokenSource?: string;
    }
  | {
      backend: 'bullmq' | 'postgres';
      url: string;
      queue: string;
      /** What chose it: `--redis`, `$CODECALL_REDIS_URL`, `jobs.connection in <file>`. */
      source: string;
    };

/** The flags of `codecall jobs` that choose a backend. */
export interface JobTargetFlags {
  url?: string | undefined;
  token?: string | undefined;
  redis?: string | undefined;
  postgres?: string | undefined;
  queue?: string | undefined;
  config?: string | undefined;
}

/** How to choose a backend, for the end of error messages. */
export const CHOOSE_BACKEND =
  'choose one with --url http://127.0.0.1:3737 (a running codecall serve --http; token: --token or ' +
  `$${SERVE_TOKEN_ENV}), --redis redis://127.0.0.1:6379 (BullMQ; or $${REDIS_URL_ENV}), ` +
  '--postgres postgres://user@host:5432/db (pg-boss), or "jobs": {"backend", "connection"} in the configuration';

const REDIS_SCHEME = /^rediss?:\/\//i;
const POSTGRES_SCHEME = /^postgres(ql)?:\/\//i;

/** `scheme://host[:port]` of a URL, without credentials or path (for messages). */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return url;
  }
}

/** One line naming the backend and why it was chosen. */
export function describeTarget(target: JobTarget): string {
  if (target.backend === 'http') return `codecall serve at ${target.url} (from ${target.source})`;
  const name = target.backend === 'bullmq' ? 'BullMQ on Redis' : 'pg-boss on PostgreSQL';
  return `${name} at ${displayUrl(target.url)}, queue "${target.queue}" (from ${target.source})`;
}

/** Checks that a queue URL has the scheme of its backend; `origin` names where it came from. */
function checkScheme(backend: 'bullmq' | 'postgres', url: string, origin: string, fix: string): void {
  if (backend === 'bullmq' && !REDIS_SCHEME.test(url))
    throw new UsageError(
      POSTGRES_SCHEME.test(url)
        ? `${origin} is a PostgreSQL URL, but it names a Redis queue; ${fix}.`
        : `${origin} must be a redis:// or rediss:// URL; got "${displayUrl(url)}".`,
    );
  if (backend === 'postgres' && !POSTGRES_SCHEME.test(url))
    throw new UsageError(
      REDIS_SCHEME.test(url)
        ? `${origin} is a Redis URL, but it names a PostgreSQL queue; ${fix}.`
        : `${origin} must be a postgres:// or postgresql:// URL; got "${displayUrl(url)}".`,
    );
}

/** The configuration, or `undefined` when none was asked for and none is in the working directory. */
async function readConfig(flags: JobTargetFlags, io: CliIo): Promise<CodecallConfig | undefined> {
  try {
    return await loadConfig({
      ...(flags.config !== undefined ? { path: flags.config } : {}),
      cwd: io.cwd,
      env: io.env,
      onNotice: configNoticeWriter(io),
    });
  } catch (error) {
    if (flags.config === undefined && isCodecallError(error) && error.code === 'CONFIG_NOT_FOUND')
      return undefined;
    throw error;
  }
}

/** `http://host:port` of the serve a configuration describes (wildcard binds reached on loopback). */
function serveUrlOf(config: CodecallConfig, file: string): string {
  const port = config.serve.port;
  if (port === 0)
    throw new UsageError(
      `jobs.backend is "local" in ${file} but serve.port is 0 (a port picked at start); pass --url with the address codecall serve printed.`,
    );
  let host = config.serve.host;
  if (host === '0.0.0.0') host = '127.0.0.1';
  else if (host === '::' || host === '[::]') host = '::1';
  if (host.includes(':') && !host.startsWith('[')) host = `[${host}]`;
  return `http://${host}:${port}`;
}

/**
 * Chooses the backend: `--url`, `--redis` or `--postgres` (at most one), then
 * `$CODECALL_REDIS_URL`, then the configuration's `jobs` section (`"backend": "local"` reaches the
 * `codecall serve --http` its `serve` section describes). Throws a `UsageError` naming the flag or
 * the configuration key at fault.
 */
export async function resolveJobTarget(flags: JobTargetFlags, io: CliIo): Promise<JobTarget> {
  const chosen = (['url', 'redis', 'postgres'] as const).filter((flag) => flags[flag] !== undefined);
  if (chosen.length > 1)
    throw new UsageError(
      `${chosen.map((flag) => `--${flag}`).join(' and ')} each choose a jobs backend; give one of them ` +
        '(--url: a running codecall serve --http, --redis: a BullMQ queue, --postgres: a pg-boss queue).',
    );
  const envToken = io.env[SERVE_TOKEN_ENV] || undefined;
  const httpToken = (configToken?: string, file?: string): { token?: string; tokenSource?: string } =>
    flags.token !== undefined
      ? { token: flags.token, tokenSource: '--token' }
      : envToken !== undefined
        ? { token: envToken, tokenSource: `$${SERVE_TOKEN_ENV}` }
        : configToken !== undefined
          ? { token: configToken, tokenSource: `serve.token in ${file}` }
          : {};
  if (flags.url !== undefined) {
    if (flags.queue !== undefined)
      throw new UsageError(
        '--queue applies to --redis and --postgres; the codecall serve at --url keeps jobs on its own queue.',
      );
    if (flags.config !== undefined)
      throw new UsageError(
        '--config is read to find a backend; with --url there is nothing to read (the codecall serve at --url runs with its own configuration). Give one of them.',
      );
    if (!/^https?:\/\//i.test(flags.url))
      throw new UsageError(
        `--url must be the http:// or https:// address of a running codecall serve --http, e.g. http://127.0.0.1:3737; got "${flags.url}".`,
      );
    return { backend: 'http', url: flags.url.replace(/\/+$/, ''), source: '--url', ...httpToken() };
  }
  const tokenMisplaced = (target: string): UsageError =>
    new UsageError(
      `--token is the bearer token of a codecall serve reached with --url; ${target} takes its credentials in its URL.`,
    );
  if (flags.redis !== undefined || flags.postgres !== undefined) {
    const backend = flags.redis !== undefined ? 'bullmq' : 'postgres';
    const url = (flags.redis ?? flags.postgres)!;
    const flag = backend === 'bullmq' ? '--redis' : '--postgres';
    checkScheme(
      backend,
      url,
      flag,
      backend === 'bullmq' ? 'pass it as --postgres <url>' : 'pass it as --redis <url>',
    );
    if (flags.token !== undefined) throw tokenMisplaced(`the queue of ${flag}`);
    const queue = flags.queue ?? (await readConfig(flags, io))?.jobs.queue ?? DEFAULT_JOBS_QUEUE;
    return { backend, url, queue, source: flag };
  }
  const envRedis = io.env[REDIS_URL_ENV] || undefined;
  if (envRedis !== undefined) {
    checkScheme(
      'bullmq',
      envRedis,
      `$${REDIS_URL_ENV}`,
      'pass it as --postgres <url> and unset the variable',
    );
    if (flags.token !== undefined) throw tokenMisplaced(`the Redis queue of $${REDIS_URL_ENV}`);
    const queue = flags.queue ?? (await readConfig(flags, io))?.jobs.queue ?? DEFAULT_JOBS_QUEUE;
    return { backend: 'bullmq', url: envRedis, queue, source: `$${REDIS_URL_ENV}` };
  }
  const config = await readConfig(flags, io);
  if (config === undefined)
    throw new UsageError(
      `no jobs backend chosen, and no configuration file in ${io.cwd}: ${CHOOSE_BACKEND}.`,
    );
  const file = config.configPath ?? 'the configuration';
  const { backend, connection } = config.jobs;
  if (backend === 'local') {
    if (flags.queue !== undefined)
      throw new UsageError(
        `--queue applies to Redis and PostgreSQL queues; jobs.backend is "local" in ${file} (the embedded backend of codecall serve --http).`,
      );
    return {
      backend: 'http',
      url: serveUrlOf(config, file),
      source: `jobs.backend "local" in ${file}`,
      ...httpToken(config.serve.token, file),
    };
  }
  const kind = backend;
  if (connection === undefined)
    throw new CodecallError(
      'CONFIG_INVALID',
      `jobs.backend is "${backend}" in ${file} but jobs.connection is not set; add "connection": "${
        kind === 'postgres' ? 'postgres://user@host:5432/db' : 'redis://127.0.0.1:6379'
      }", or ${CHOOSE_BACKEND}.`,
      { details: { file, issues: [{ path: 'jobs.connection', message: 'required by jobs.backend' }] } },
    );
  checkScheme(
    kind,
    connection,
    `jobs.connection in ${file}`,
    kind === 'bullmq' ? 'set "backend": "postgres" next to it' : 'set "backend": "bullmq" next to it',
  );
  if (flags.token !== undefined) throw tokenMisplaced(`the queue of jobs.connection in ${file}`);
  return {
    backend: kind,
    url: connection,
    queue: flags.queue ?? config.jobs.queue,
    source: `jobs.backend "${backend}" in ${file}`,
  };
}

/** Opens a client of the chosen backend. */
export async function openJobTarget(target: JobTarget): Promise<JobBackend> {
  if (target.backend === 'http')
    return createHttpJobClient({
      url: target.url,
      ...(target.token !== undefined ? { token: target.token } : {}),
    });
  return target.backend === 'postgres'
    ? createPgJobClient({ connection: target.url, queue: target.queue })
    : createJobClient({ connection: target.url, queue: target.queue });
}

/**
 * The error of a backend that cannot be reached or refused the request, with the backend, why it
 * was chosen and how to choose another; other errors unchanged.
 */
export function withTargetHint(error: unknown, target: JobTarget): unknown {
  if (!CodecallError.isInstance(error, ['JOBS_BACKEND_UNAVAILABLE', 'JOBS_AUTH_FAILED'])) return error;
  const token =
    error.code === 'JOBS_AUTH_FAILED' && error.details.status === 401 && target.backend === 'http'
      ? target.tokenSource !== undefined
        ? ` The token came from ${target.tokenSource}.`
        : ` No token was sent: pass --token <secret> or set $${SERVE_TOKEN_ENV}.`
      : '';
  return new CodecallError(
    error.code,
    `${error.message}${token}\nJobs backend: ${describeTarget(target)}. To use another, pass --url <serve address>, --redis <url> or --postgres <url> (see codecall jobs --help).`,
    { details: error.details, cause: error },
  );
}
