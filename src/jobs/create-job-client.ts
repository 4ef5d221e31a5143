/**
 * @module
 * Entry points that load BullMQ only when asked: {@link createJobClient} (submit and watch jobs
 * on a Redis queue), {@link startWorker} (consume them), and {@link openJobBackend} (what
 * `codecall serve --http` uses: BullMQ when configured, else the embedded backend).
 */
import type { JobsConfig } from '../config/index.js';
import { CodecallError } from '../errors.js';
import type { BullmqJobBackendOptions } from './bullmq-job-backend.js';
import type { JobDashboardOptions, JobDashboardRoutes } from './job-dashboard.js';
import type { PgJobConnectionOptions, PgJobWorkerOptions } from './postgres-jobs.js';
import type { JobWorkerOptions } from './bullmq-worker.js';
import type { JobWorkerHandle } from './job-processor.js';
import type { JobBackend } from './job-types.js';
import { createLocalJobBackend } from './local-job-backend.js';
import { importOptional } from '../util/optional-package.js';

/**
 * Checks the optional packages a backend needs are installed, so that a missing one is
 * `PACKAGE_MISSING` naming `npm install <package>`, not a raw module error from deep inside.
 */
async function requirePackages(packages: readonly string[], feature: string): Promise<void> {
  for (const name of packages) await importOptional(name, feature);
}

const BULLMQ_FEATURE = 'The BullMQ jobs backend (jobs.backend "bullmq")';
const POSTGRES_FEATURE = 'The PostgreSQL jobs backend (jobs.backend "postgres")';
import type { RuntimeRegistry } from './runtime-registry.js';

/** Options of {@link createJobClient}. */
export type JobClientOptions = BullmqJobBackendOptions;

/**
 * Connects to a BullMQ queue on Redis to submit and follow jobs (`codecall worker` processes run
 * them). Throws `JOBS_BACKEND_UNAVAILABLE` when Redis cannot be reached.
 *
 * @example
 * ```ts
 * await using jobs = await createJobClient({ connection: 'redis://127.0.0.1:6379' });
 * const { id } = await jobs.submit({ kind: 'exec', code: 'console.log(1 + 1)' });
 * for await (const event of jobs.events(id)) console.log(event.type);
 * ```
 */
export async function createJobClient(options: JobClientOptions): Promise<JobBackend> {
  await requirePackages(['bullmq', 'ioredis'], BULLMQ_FEATURE);
  const { openBullmqJobBackend } = await import('./bullmq-job-backend.js');
  return openBullmqJobBackend(options);
}

/** Starts a BullMQ worker (see `codecall worker`). */
export async function startWorker(options: JobWorkerOptions): Promise<JobWorkerHandle> {
  await requirePackages(['bullmq', 'ioredis'], BULLMQ_FEATURE);
  const { startJobWorker } = await import('./bullmq-worker.js');
  return startJobWorker(options);
}

/**
 * The BullMQ dashboard (`@bull-board`) over a queue, as routes for `/admin/queues` on the HTTP
 * server; loads bull-board and BullMQ on first use.
 */
export async function openJobDashboard(options: JobDashboardOptions): Promise<JobDashboardRoutes> {
  await requirePackages(
    ['bullmq', 'ioredis', '@bull-board/api', '@bull-board/express'],
    'The jobs dashboard',
  );
  const { createJobDashboardRoutes } = await import('./job-dashboard.js');
  return createJobDashboardRoutes(options);
}

/**
 * Connects to a PostgreSQL job queue (pg-boss) to submit and follow jobs, the same interface as
 * {@link createJobClient}; throws `JOBS_BACKEND_UNAVAILABLE` when the database cannot be reached.
 */
export async function createPgJobClient(options: PgJobConnectionOptions): Promise<JobBackend> {
  await requirePackages(['pg-boss', 'pg'], POSTGRES_FEATURE);
  const { openPgJobBackend } = await import('./postgres-jobs.js');
  return openPgJobBackend(options);
}

/** Starts a worker on a PostgreSQL job queue (pg-boss). */
export async function startPgWorker(options: PgJobWorkerOptions): Promise<JobWorkerHandle> {
  await requirePackages(['pg-boss', 'pg'], POSTGRES_FEATURE);
  const { startPgJobWorker } = await import('./postgres-jobs.js');
  return startPgJobWorker(options);
}

/** Options of {@link openJobBackend}. */
export interface OpenJobBackendOptions {
  /** The configuration's `jobs` section, with flags already applied. */
  jobs: JobsConfig;
  /** Runtimes the embedded backend runs jobs with (borrowed). */
  runtimes: RuntimeRegistry;
  /** Environment of model providers (embedded backend). */
  env?: NodeJS.ProcessEnv;
}

/** The BullMQ backend when `jobs.backend` is `bullmq`, the pg-boss one for `postgres`, else the embedded one. */
export async function openJobBackend(options: OpenJobBackendOptions): Promise<JobBackend> {
  const { jobs } = options;
  if (jobs.backend === 'local')
    return createLocalJobBackend({
      runtimes: options.runtimes,
      concurrency: jobs.concurrency,
      maxWaiting: jobs.maxWaiting,
      maxParked: jobs.maxParked,
      ...(options.env ? { env: options.env } : {}),
    });
  if (jobs.connection === undefined)
    throw new CodecallError(
      'CONFIG_INVALID',
      jobs.backend === 'postgres'
        ? 'jobs.backend is "postgres" but jobs.connection is not set; add "connection": "postgres://user@host:5432/db".'
        : 'jobs.backend is "bullmq" but jobs.connection is not set; add "connection": "redis://127.0.0.1:6379" or pass --redis <url>.',
      {
        details: {
          issues: [{ path: 'jobs.connection', message: `required for the "${jobs.backend}" backend` }],
        },
      },
    );
  if (jobs.backend === 'postgres')
    return createPgJobClient({ connection: jobs.connection, queue: jobs.queue });
  return createJobClient({ connection: jobs.connection, queue: jobs.queue });
}
