/**
 * @module
 * `codecall worker`: consumes jobs from a BullMQ queue on Redis and runs them with the runtime
 * of each job's named configuration (MCP servers, sandbox, search and usage history opened once
 * per configuration and shared by its jobs). SIGTERM/SIGINT stops taking jobs, lets running ones
 * finish for the grace period, then hands them back to the queue; a second signal exits at once.
 */
import {
  DEFAULT_JOBS_CONFIG_NAME,
  DEFAULT_JOBS_QUEUE,
  DEFAULT_JOBS_WORKER_CONCURRENCY,
} from '../../config/defaults.js';
import { startPgWorker, startWorker, type NamedConfigSource } from '../../jobs/index.js';
import { parseCommandArgs, UsageError, type CliCommand, type CliIo } from '../command.js';
import { positiveOption, resolveJobConnection } from './jobs.js';
import { workerHelp } from './worker.help.js';

/** Parses `--config` values into named sources. */
export function parseNamedConfigs(values: string[]): Record<string, NamedConfigSource> {
  const configs: Record<string, NamedConfigSource> = {};
  for (const value of values) {
    const match = /^([A-Za-z0-9_.-]{1,64})=(.+)$/.exec(value);
    const [name, path] = match ? [match[1]!, match[2]!] : [DEFAULT_JOBS_CONFIG_NAME, value];
    if (Object.hasOwn(configs, name)) throw new UsageError(`--config names "${name}" twice.`);
    configs[name] = path;
  }
  if (Object.keys(configs).length === 0) configs[DEFAULT_JOBS_CONFIG_NAME] = {};
  return configs;
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

async function run(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs({
    args: argv,
    options: {
      config: { type: 'string', multiple: true },
      queue: { type: 'string' },
      concurrency: { type: 'string' },
      redis: { type: 'string' },
      postgres: { type: 'string' },
      'shutdown-grace-ms': { type: 'string' },
      'lock-duration-ms': { type: 'string' },
      'stalled-interval-ms': { type: 'string' },
      'shared-history': { type: 'boolean' },
    },
    allowPositionals: false,
  });
  const configs = parseNamedConfigs(values.config ?? []);
  const defaultSource = configs[DEFAULT_JOBS_CONFIG_NAME] ?? Object.values(configs)[0]!;
  if (values.postgres !== undefined && values.redis !== undefined)
    throw new UsageError('--postgres and --redis name two different queues; give one.');
  const connection =
    values.postgres !== undefined
      ? {
          url: values.postgres,
          queue: values.queue ?? DEFAULT_JOBS_QUEUE,
          display: `PostgreSQL ${new URL(values.postgres).host}`,
        }
      : await resolveJobConnection(
          {
            ...(values.redis !== undefined ? { redis: values.redis } : {}),
            ...(typeof defaultSource === 'string' ? { config: defaultSource } : {}),
            ...(values.queue !== undefined ? { queue: values.queue } : {}),
          },
          io,
        );
  const log = (line: string): void => {
    io.stderr.write(`codecall worker: ${line}\n`);
  };
  const concurrency = positiveOption('--concurrency', values.concurrency);
  const grace = positiveOption('--shutdown-grace-ms', values['shutdown-grace-ms']);
  const lock = positiveOption('--lock-duration-ms', values['lock-duration-ms']);
  const stalled = positiveOption('--stalled-interval-ms', values['stalled-interval-ms']);
  const runtimes = {
    configs,
    cwd: io.cwd,
    env: io.env,
    runtimeOptions: {
      tools: {
        onServerError: (event: { server: string; error: Error }) =>
          log(`${event.server}: ${event.error.message.split('\n')[0]}`),
      },
      onHistoryError: (error: unknown) => log(`usage history: ${(error as Error)?.message ?? String(error)}`),
    },
  };
  if (values.postgres !== undefined && (lock !== undefined || stalled !== undefined))
    throw new UsageError(
      '--lock-duration-ms and --stalled-interval-ms are for Redis queues; a Postgres worker uses heartbeats.',
    );
  const worker =
    values.postgres !== undefined
      ? await startPgWorker({
          connection: connection.url,
          queue: connection.queue,
          runtimes,
          env: io.env,
          onLog: log,
          ...(values['shared-history'] ? { sharedHistory: true } : {}),
          ...(concurrency !== undefined ? { concurrency } : {}),
          ...(grace !== undefined ? { shutdownGraceMs: grace } : {}),
        })
      : await startWorker({
          connection: connection.url,
          queue: connection.queue,
          runtimes: {
            configs,
            cwd: io.cwd,
            env: io.env,
            runtimeOptions: {
              tools: {
                onServerError: (event) => log(`${event.server}: ${event.error.message.split('\n')[0]}`),
              },
              onHistoryError: (error) => log(`usage history: ${(error as Error)?.message ?? String(error)}`),
            },
          },
          env: io.env,
          onLog: log,
          ...(values['shared-history'] ? { sharedHistory: true } : {}),
          ...(concurrency !== undefined ? { concurrency } : {}),
          ...(grace !== undefined ? { shutdownGraceMs: grace } : {}),
          ...(lock !== undefined ? { lockDurationMs: lock } : {}),
          ...(stalled !== undefined ? { stalledIntervalMs: stalled } : {}),
        });
  log(
    `${worker.name} consuming queue "${connection.queue}" on ${connection.display} ` +
      `(concurrency ${concurrency ?? DEFAULT_JOBS_WORKER_CONCURRENCY}; configurations: ${Object.keys(configs).join(', ')})`,
  );
  try {
    await aborted(io.signal);
    log(`shutting down: ${worker.running()} job(s) running; finishing or handing them back`);
  } finally {
    await worker.close();
  }
  log('stopped');
  return 0;
}

/** `codecall worker`. */
export const workerCommand: CliCommand = {
  ...workerHelp,
  run,
};
