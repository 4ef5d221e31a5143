/**
 * @module
 * `codecall worker`: name, summary and usage text, loaded without the command's implementation
 * (`codecall --help` and `codecall worker --help` read only this).
 */
import {
  DEFAULT_JOBS_CONFIG_NAME,
  DEFAULT_JOBS_LOCK_DURATION_MS,
  DEFAULT_JOBS_QUEUE,
  DEFAULT_JOBS_SHUTDOWN_GRACE_MS,
  DEFAULT_JOBS_STALLED_INTERVAL_MS,
  DEFAULT_JOBS_WORKER_CONCURRENCY,
} from '../../config/defaults.js';
import type { CommandHelp } from '../command.js';

/** `codecall worker --help`. */
export const workerHelp: CommandHelp = {
  name: 'worker',
  summary: 'Run jobs from a BullMQ queue on Redis (server-side agent jobs)',
  usage: `Usage: codecall worker [--config [<name>=]<path>]... [--queue <name>] [--concurrency <n>]
                       [--redis <url>]

Runs jobs from a BullMQ queue on Redis (submitted with \`codecall jobs submit\`, the library's
createJobClient, or POST /v1/jobs on \`codecall serve --http --redis <url>\`). Each job names a
configuration this worker has; a job that names none gets "${DEFAULT_JOBS_CONFIG_NAME}". Secrets stay here:
\${VAR} references in the files are expanded from this worker's environment.

Options:
  --config [<name>=]<path>   a configuration jobs may name (repeatable; a bare path is "${DEFAULT_JOBS_CONFIG_NAME}";
                             default: ./codecall.json, then ./.mcp.json, as "${DEFAULT_JOBS_CONFIG_NAME}")
  --queue <name>             queue to consume (default: jobs.queue in the configuration, else "${DEFAULT_JOBS_QUEUE}")
  --concurrency <n>          jobs run at once (default ${DEFAULT_JOBS_WORKER_CONCURRENCY})
  --redis <url>              Redis (default: $CODECALL_REDIS_URL, else jobs.connection in the configuration)
  --postgres <url>           consume a PostgreSQL queue (pg-boss) instead of Redis: postgres://user@host:5432/db
  --shutdown-grace-ms <n>    time running jobs get to finish on SIGTERM before they are handed
                             back to the queue (default ${DEFAULT_JOBS_SHUTDOWN_GRACE_MS})
  --lock-duration-ms <n>     job lock; a worker that dies loses its jobs after this (default ${DEFAULT_JOBS_LOCK_DURATION_MS})
  --stalled-interval-ms <n>  how often to look for jobs of dead workers (default ${DEFAULT_JOBS_STALLED_INTERVAL_MS})
  --shared-history           keep usage history in the queue's Redis (or PostgreSQL with --postgres): every
                             worker's runs feed one tool graph per configuration name (default: each
                             configuration's own store)

Delivery is at-least-once: a job whose worker dies runs again from the start on another worker,
and the tool calls it had made are made again (see docs/jobs.md).
`,
};
