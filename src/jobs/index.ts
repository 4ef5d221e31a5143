/**
 * @module
 * Server-side jobs: job specs, the embedded (in-process) backend, the BullMQ backend and worker
 * (loaded lazily), and the HTTP routes `codecall serve --http` mounts. The only home of
 * `bullmq`. Curated exports only.
 */
export { MAX_IDEMPOTENCY_KEY_CHARS, MAX_JOB_PRIORITY, parseJobSpec } from './job-spec.js';
export type { ExecJobSpec, JobLimits, JobMessage, JobSpec, JobSpecInput, RunJobSpec } from './job-spec.js';
export type {
  ExecJobOutput,
  JobBackend,
  JobEvent,
  JobProgress,
  JobRecord,
  JobResult,
  JobState,
  JobStatus,
  JobSubmission,
  ListJobsOptions,
  RunJobOutput,
  WaitJobOptions,
} from './job-types.js';
export { RuntimeRegistry } from './runtime-registry.js';
export type { NamedConfigSource, RuntimeRegistryOptions } from './runtime-registry.js';
export { JobWaitingApprovalError, parseApprovalInput } from './job-approvals.js';
export { MemoryJobApprovalStore, MemoryJobStateStore } from '../store/job-state.js';
export type {
  JobApprovalDecision,
  JobApprovalStore,
  JobStateStore,
  PendingApproval,
} from '../store/job-state.js';
export { createLocalJobBackend } from './local-job-backend.js';
export type { LocalJobBackendOptions } from './local-job-backend.js';
export { isRetryableJobError, JOB_ABORT_REASONS, JobHandBackError, runJob } from './run-job.js';
export type { RunJobOptions } from './run-job.js';
export {
  createJobClient,
  createPgJobClient,
  openJobBackend,
  openJobDashboard,
  startPgWorker,
  startWorker,
} from './create-job-client.js';
export type { PgJobConnectionOptions, PgJobWorkerOptions } from './postgres-jobs.js';
export type { JobDashboardOptions, JobDashboardRoutes } from './job-dashboard.js';
export type { JobClientOptions, OpenJobBackendOptions } from './create-job-client.js';
export type { BullmqJobBackendOptions } from './bullmq-job-backend.js';
export type { JobWorkerOptions } from './bullmq-worker.js';
export type { ClaimedJob, JobProcessor, JobWorkerHandle, QueueAdapter } from './job-processor.js';
export type { JobConnectionOptions, JobRetentionOptions } from './bullmq-shared.js';
export { createJobRoutes, JOBS_HTTP_PATH } from './job-http-routes.js';
export type { JobRouteContext, JobRoutes, JobRoutesOptions } from './job-http-routes.js';
