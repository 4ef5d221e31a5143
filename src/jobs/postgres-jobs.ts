/**
 * @module
 * The PostgreSQL job backend and worker, on **pg-boss** (BullMQ has no PostgreSQL backend; pg-boss
 * is the most used Node job queue on Postgres: `SKIP LOCKED` claims, retries with backoff,
 * heartbeats for dead workers, retention). Same {@link JobBackend} interface and job semantics
 * as the BullMQ backend, for teams that have Postgres but not Redis. Imported lazily: only code
 * that opens a Postgres backend or worker loads `pg-boss` and `pg`.
 *
 * Differences from BullMQ, all said in docs/jobs.md: job ids are UUIDs (an idempotency key maps
 * to a fixed UUID derived from it); `events` reports state changes by polling
 * ({@link DEFAULT_JOBS_PG_POLL_MS}), with no per-step progress; `logs` are the lines the worker
 * wrote (kept in `codecall.job_logs`) and the outcome read from the job's row; a running job sees a cancel within
 * {@link DEFAULT_JOBS_PG_POLL_MS} (its worker polls the row).
 */
import { connectionHost } from '../util/connection-host.js';
import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { PgBoss, type JobWithMetadata } from 'pg-boss';
import {
  DEFAULT_JOBS_ATTEMPTS,
  DEFAULT_JOBS_BACKOFF_MS,
  DEFAULT_JOBS_CONNECT_TIMEOUT_MS,
  DEFAULT_JOBS_KEEP_AGE_MS,
  DEFAULT_JOBS_LIST_LIMIT,
  DEFAULT_JOBS_MAX_LIST_LIMIT,
  DEFAULT_JOBS_MAX_LOG_LINES,
  DEFAULT_JOBS_PG_HEARTBEAT_S,
  DEFAULT_JOBS_PG_POLL_MS,
  DEFAULT_JOBS_PG_WORKER_POLL_S,
  DEFAULT_JOBS_STATE_CLIENT_PG_POOL_SIZE,
  DEFAULT_JOBS_SHUTDOWN_GRACE_MS,
  DEFAULT_JOBS_WORKER_CONCURRENCY,
} from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import type { JobApprovalDecision, JobApprovalStore, JobDecisionInput } from '../store/job-state.js';
import { PostgresJobStateStore } from '../store/job-state-postgres.js';
import { setLongTimeout } from '../util/long-timeout.js';
import { queueName, withTimeout } from './bullmq-shared.js';
import { cutLogLine, jobStateKey, waitForJobEnd } from './job-helpers.js';
import {
  startQueueWorker,
  type ClaimedJob,
  type JobProcessor,
  type JobWorkerHandle,
  type QueueAdapter,
} from './job-processor.js';
import { MAX_JOB_PRIORITY, parseJobSpec, type JobSpec, type JobSpecInput } from './job-spec.js';
import type {
  JobBackend,
  JobEvent,
  JobRecord,
  JobResult,
  JobState,
  JobSubmission,
  ListJobsOptions,
  WaitJobOptions,
} from './job-types.js';
import { JOB_ABORT_REASONS } from './run-job.js';
import { RuntimeRegistry, type RuntimeRegistryOptions } from './runtime-registry.js';
import { PostgresHistoryStore } from '../store/postgres-history-store.js';

/** What a Postgres job row holds in `data`. */
interface PgJobData {
  spec: JobSpec;
  /** Times the job was parked for an approval or handed back (each added one to `retry_limit`). */
  parked?: number;
}

/** Options of {@link openPgJobBackend} and {@link startPgJobWorker}. */
export interface PgJobConnectionOptions {
  /** `postgres://user:password@host:5432/db` */
  connection: string;
  /** @defaultValue {@link DEFAULT_JOBS_QUEUE} */
  queue?: string;
}

/** Options of {@link startPgJobWorker}. */
export interface PgJobWorkerOptions extends PgJobConnectionOptions {
  runtimes: RuntimeRegistryOptions;
  /** @defaultValue {@link DEFAULT_JOBS_WORKER_CONCURRENCY} */
  concurrency?: number;
  /** @defaultValue {@link DEFAULT_JOBS_SHUTDOWN_GRACE_MS} */
  shutdownGraceMs?: number;
  /** @defaultValue `<hostname>:<pid>` */
  name?: string;
  env?: NodeJS.ProcessEnv;
  /**
   * Keep usage history in the queue's PostgreSQL (one tool graph per configuration name, fed by
   * every worker) instead of each configuration's local store. @defaultValue false
   */
  sharedHistory?: boolean;
  /**
   * Time an exec job's call waits for `codecall jobs approve` before the job ends.
   * @defaultValue the job's configuration's `jobs.approvalTimeoutMs`, else `DEFAULT_JOBS_APPROVAL_TIMEOUT_MS` (one day)
   */
  approvalTimeoutMs?: number;
  onLog?: (line: string) => void;
}

const FINISHED: ReadonlySet<JobState> = new Set(['completed', 'failed']);
/** pg-boss's schema (its default). */
const SCHEMA = 'pgboss';

/** The fixed UUID of an idempotency key (so a second submit of the key conflicts with the first). */
export function jobIdOfKey(key: string): string {
  const hex = createHash('sha256').update(`codecall-job:${key}`, 'utf8').digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** codecall priority 1 (highest) … MAX; pg-boss runs higher numbers first. Unset runs first, as on BullMQ. */
const toPgPriority = (priority: number | undefined): number =>
  priority === undefined ? MAX_JOB_PRIORITY + 1 : MAX_JOB_PRIORITY + 1 - priority;
const fromPgPriority = (priority: number): number | undefined =>
  priority > MAX_JOB_PRIORITY ? undefined : MAX_JOB_PRIORITY + 1 - priority;

function unavailable(connection: string, error: unknown): CodecallError {
  const host = connectionHost(connection);
  return new CodecallError(
    'JOBS_BACKEND_UNAVAILABLE',
    `Cannot reach PostgreSQL at ${host}: ${(error as Error)?.message ?? String(error)}. ` +
      'Start PostgreSQL, or fix the connection URL (jobs.connection / --postgres).',
    { cause: error },
  );
}

async function openBoss(options: PgJobConnectionOptions): Promise<{ boss: PgBoss; name: string }> {
  const name = queueName(options.queue);
  const boss = new PgBoss({ connectionString: options.connection, schedule: false });
  boss.on('error', () => {});
  try {
    await withTimeout(boss.start(), DEFAULT_JOBS_CONNECT_TIMEOUT_MS, 'connecting');
    if ((await boss.getQueue(name)) === null) {
      await boss
        .createQueue(name, {
          retryLimit: DEFAULT_JOBS_ATTEMPTS - 1,
          retryBackoff: true,
          retryDelay: Math.max(1, Math.round(DEFAULT_JOBS_BACKOFF_MS / 1_000)),
          heartbeatSeconds: DEFAULT_JOBS_PG_HEARTBEAT_S,
          deleteAfterSeconds: Math.round(DEFAULT_JOBS_KEEP_AGE_MS / 1_000),
        })
        .catch(async (error: unknown) => {
          // Another process created it first.
          if ((await boss.getQueue(name)) === null) throw error;
        });
    }
  } catch (error) {
    await boss.stop({ graceful: false, timeout: 5_000 }).catch(() => {});
    throw unavailable(options.connection, error);
  }
  return { boss, name };
}

/**
 * Attempts a job used before its current claim: pg-boss's `retry_count` less the parks and
 * hand-backs (`data.parked`), which requeue without using an attempt.
 */
function attemptsBefore(job: { retryCount: number; data: PgJobData }): number {
  return job.retryCount - (job.data.parked ?? 0);
}

function toRecord(job: JobWithMetadata<PgJobData>): JobRecord {
  const spec = job.data.spec;
  const started = job.startedOn !== null && job.startedOn !== undefined && job.state !== 'created';
  const attemptsMade =
    attemptsBefore(job) +
    (job.state === 'active' || job.state === 'completed' || job.state === 'failed' ? 1 : 0);
  let state: JobState;
  let result: JobResult | undefined;
  let failedReason: string | undefined;
  switch (job.state) {
    case 'created':
      state = job.startAfter.getTime() > Date.now() ? 'delayed' : 'waiting';
      break;
    case 'retry':
      state = 'delayed';
      break;
    case 'active':
      state = 'active';
      break;
    case 'completed':
      state = 'completed';
      result = job.output as JobResult;
      break;
    case 'cancelled':
      state = 'completed';
      result = {
        kind: spec.kind,
        status: 'cancelled',
        error: { code: 'JOB_CANCELLED', message: 'The job was cancelled.' },
        attempt: Math.max(1, attemptsMade),
        durationMs: 0,
      };
      break;
    default:
      state = 'failed';
      failedReason = String((job.output as { message?: unknown } | null)?.message ?? 'failed');
  }
  const priority = fromPgPriority(job.priority);
  return {
    id: job.id,
    kind: spec.kind,
    config: spec.config,
    state,
    ...(result ? { result } : {}),
    ...(failedReason !== undefined ? { failedReason } : {}),
    attemptsMade,
    attempts: job.retryLimit + 1 - (job.data.parked ?? 0),
    ...(priority !== undefined ? { priority } : {}),
    ...(spec.deadline !== undefined ? { deadline: spec.deadline } : {}),
    ...(spec.labels ? { labels: spec.labels } : {}),
    createdAt: new Date(job.createdOn).getTime(),
    ...(started ? { startedAt: new Date(job.startedOn).getTime() } : {}),
    ...(job.completedOn ? { finishedAt: new Date(job.completedOn).getTime() } : {}),
    ...(job.state === 'cancelled' ? { cancelRequested: true } : {}),
  };
}

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

/** Opens the Postgres backend; throws `JOBS_BACKEND_UNAVAILABLE` when the database cannot be reached. */
export async function openPgJobBackend(options: PgJobConnectionOptions): Promise<JobBackend> {
  const { boss, name } = await openBoss(options);
  let closing: Promise<void> | undefined;
  const assertOpen = (): void => {
    if (closing) throw new CodecallError('CLOSED', 'The job client is closed.');
  };
  const find = async (id: string): Promise<JobWithMetadata<PgJobData> | undefined> => {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return undefined;
    const [job] = await boss.findJobs<PgJobData>(name, { id });
    return job;
  };
  /** Job state (approvals), opened on first use: a client that never meets one opens no pool. */
  let state: Promise<PostgresJobStateStore> | undefined;
  const stateStore = (): Promise<PostgresJobStateStore> => {
    if (!state) {
      const opening = PostgresJobStateStore.open({
        connection: options.connection,
        scope: name,
        poolSize: DEFAULT_JOBS_STATE_CLIENT_PG_POOL_SIZE,
      });
      state = opening;
      opening.catch(() => {
        if (state === opening) state = undefined;
      });
    }
    return state;
  };
  const keyOf = (job: JobWithMetadata<PgJobData>): string =>
    jobStateKey(job.id, new Date(job.createdOn).getTime());
  const approvalsOf = async (job: JobWithMetadata<PgJobData>): Promise<JobApprovalStore> =>
    (await stateStore()).approvals(keyOf(job));
  const recordOf = async (job: JobWithMetadata<PgJobData>): Promise<JobRecord> => {
    const record = toRecord(job);
    // A job parked by its worker (back in `retry`) with a pending request waits for a decision.
    if (record.state === 'delayed' || record.state === 'active') {
      const pending = await (await approvalsOf(job)).pending();
      if (pending && record.state === 'delayed') record.state = 'waiting-approval';
      if (pending) record.approval = pending;
    }
    return record;
  };
  const get = async (id: string): Promise<JobRecord | undefined> => {
    assertOpen();
    const job = await find(id);
    return job ? recordOf(job) : undefined;
  };
  async function* events(id: string, opts: { signal?: AbortSignal } = {}): AsyncGenerator<JobEvent> {
    let record = await get(id);
    if (!record) throw new CodecallError('JOB_NOT_FOUND', `No job "${id}".`, { details: { id } });
    let last: JobState | undefined;
    for (;;) {
      if (record.state !== last) {
        last = record.state;
        yield {
          type: 'state',
          id,
          state: record.state,
          ...(record.state === 'waiting-approval' && record.approval ? { approval: record.approval } : {}),
        };
      }
      if (FINISHED.has(record.state)) {
        yield { type: 'done', id, job: record };
        return;
      }
      if (opts.signal?.aborted || closing) return;
      await sleep(DEFAULT_JOBS_PG_POLL_MS, opts.signal);
      if (opts.signal?.aborted || closing) return;
      const next = await get(id);
      if (!next) return;
      record = next;
    }
  }
  const close = (): Promise<void> =>
    (closing ??= Promise.allSettled([
      boss.stop({ graceful: false, timeout: 5_000 }),
      state?.then((store) => store.close()),
    ]).then(() => {}));

  return {
    kind: 'postgres',
    async submit(input: JobSpecInput): Promise<JobSubmission> {
      assertOpen();
      const spec = parseJobSpec(input);
      const id = spec.idempotencyKey !== undefined ? jobIdOfKey(spec.idempotencyKey) : randomUUID();
      const attempts = spec.attempts ?? DEFAULT_JOBS_ATTEMPTS;
      const sent = await boss.send(name, { spec } satisfies PgJobData, {
        id,
        priority: toPgPriority(spec.priority),
        retryLimit: attempts - 1,
      });
      return { id, deduplicated: sent === null };
    },
    get,
    async approve(id: string, decision: JobDecisionInput): Promise<JobApprovalDecision> {
      assertOpen();
      const job = await find(id);
      if (!job) throw new CodecallError('JOB_NOT_FOUND', `No job "${id}".`, { details: { id } });
      const record = await recordOf(job);
      const recorded =
        record.state === 'waiting-approval' ? await (await approvalsOf(job)).decide(decision) : false;
      if (!recorded)
        throw new CodecallError(
          'JOB_NOT_WAITING_APPROVAL',
          `Job "${id}" is ${record.state} and waits for no approval (decided already, or it never asked).`,
          { details: { id, state: record.state } },
        );
      // Wakes the job now; a worker that has not finished parking it promotes it itself.
      await boss
        .getDb()
        .executeSql(
          `UPDATE ${SCHEMA}.job SET start_after = now() WHERE name = $1 AND id = $2 AND state IN ('created', 'retry')`,
          [name, id],
        );
      return recorded;
    },
    async wait(id: string, opts: WaitJobOptions = {}): Promise<JobRecord> {
      assertOpen();
      if (!(await find(id))) throw new CodecallError('JOB_NOT_FOUND', `No job "${id}".`, { details: { id } });
      return waitForJobEnd((signal) => events(id, { signal }), id, opts);
    },
    events,
    async logs(id: string): Promise<string[]> {
      const record = await get(id);
      if (!record) return [];
      const job = await find(id);
      const lines = [`created ${new Date(record.createdAt).toISOString()}`];
      if (job) lines.push(...(await (await stateStore()).logs(keyOf(job), DEFAULT_JOBS_MAX_LOG_LINES)));
      if (record.failedReason !== undefined) lines.push(cutLogLine(`failed: ${record.failedReason}`));
      if (record.result) lines.push(`completed: ${record.result.status}`);
      return lines;
    },
    async cancel(id: string): Promise<boolean> {
      assertOpen();
      const job = await find(id);
      if (!job || ['completed', 'cancelled', 'failed'].includes(job.state)) return false;
      await boss.cancel(name, id);
      // A parked job's state has no worker left to forget it.
      if (job.state !== 'active') await (await stateStore()).forget(keyOf(job));
      return true;
    },
    async list(opts: ListJobsOptions = {}): Promise<JobRecord[]> {
      assertOpen();
      const limit = Math.min(opts.limit ?? DEFAULT_JOBS_LIST_LIMIT, DEFAULT_JOBS_MAX_LIST_LIMIT);
      const states = opts.states ? new Set(opts.states) : undefined;
      // Newest first: pg-boss's findJobs is oldest first, so read the ids from its table.
      const { rows } = await boss
        .getDb()
        .executeSql(`SELECT id FROM ${SCHEMA}.job WHERE name = $1 ORDER BY created_on DESC LIMIT $2`, [
          name,
          states ? DEFAULT_JOBS_MAX_LIST_LIMIT : limit,
        ]);
      const out: JobRecord[] = [];
      for (const row of rows as { id: string }[]) {
        const record = await get(row.id);
        if (record && (!states || states.has(record.state))) out.push(record);
        if (out.length >= limit) break;
      }
      return out;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** Starts a worker on the Postgres queue; resolves once it is connected. */
export async function startPgJobWorker(options: PgJobWorkerOptions): Promise<JobWorkerHandle> {
  const { boss, name: queue } = await openBoss(options);
  const name = options.name ?? `${hostname()}:${process.pid}`;
  const runtimes = new RuntimeRegistry({
    env: options.env ?? process.env,
    ...options.runtimes,
    ...(options.sharedHistory
      ? {
          history: (config: string) =>
            PostgresHistoryStore.open({ connection: options.connection, namespace: `${queue}.${config}` }),
        }
      : {}),
  });
  let state: PostgresJobStateStore;
  try {
    state = await PostgresJobStateStore.open({
      connection: options.connection,
      scope: queue,
      poolSize: (options.concurrency ?? DEFAULT_JOBS_WORKER_CONCURRENCY) + 1,
    });
  } catch (error) {
    await boss.stop({ graceful: false, timeout: 5_000 }).catch(() => {});
    await runtimes.close();
    throw error;
  }
  return startQueueWorker({
    adapter: pgBossAdapter(boss, queue, options.concurrency ?? DEFAULT_JOBS_WORKER_CONCURRENCY, state),
    state,
    runtimes,
    worker: name,
    env: options.env,
    approvalTimeoutMs: options.approvalTimeoutMs,
    onLog: options.onLog,
    shutdownGraceMs: options.shutdownGraceMs ?? DEFAULT_JOBS_SHUTDOWN_GRACE_MS,
  });
}

/**
 * Rows a pg-boss `complete`/`fail` changed: 0 when the claimed attempt was no longer this worker's.
 * pg-boss returns `{ jobs, requested, affected }` (its `mapCommandResponse`) though its type
 * `CommandResponse` declares no field.
 */
const affected = (response: object): number => (response as { affected?: number }).affected ?? 0;

/**
 * The pg-boss queue adapter. pg-boss claims jobs (`SKIP LOCKED`, heartbeats); an attempt is
 * settled inside the handler: `complete`/`fail` are pg-boss's own (its retry with backoff, or
 * `failed` once `retry_limit` is used up; no retry sets the limit to the count first), and a park
 * or a hand-back moves the row back to `retry` with `start_after` at the wake time. pg-boss's completion
 * after the handler then finds the row no longer active and leaves it. A cancel from any client
 * (the row leaves `active`) is read by polling the row.
 */
function pgBossAdapter(
  boss: PgBoss,
  queue: string,
  concurrency: number,
  state: PostgresJobStateStore,
): QueueAdapter {
  const stopping = new AbortController();
  const sql = (text: string, values: unknown[]): Promise<unknown> => boss.getDb().executeSql(text, values);
  /**
   * Moves an active job back to the queue until `at` (now when undefined) without using an
   * attempt: the next claim counts one more (so pg-boss's attempt fence tells it from this one),
   * and `retry_limit` grows by one to match; `data.parked` remembers how many, for the record.
   */
  // Every settle below is fenced to the attempt this worker claimed (`retry_count` as fetched), as
  // pg-boss fences its own: a worker that lost its claim (a missed heartbeat) must not settle,
  // requeue or forget the attempt another worker now runs.
  const requeue = (id: string, attempt: number, at: number | undefined): Promise<unknown> =>
    sql(
      `UPDATE ${SCHEMA}.job SET state = 'retry', retry_limit = retry_limit + 1, ` +
        `data = jsonb_set(data, '{parked}', to_jsonb(COALESCE((data->>'parked')::int, 0) + 1)), ` +
        `start_after = ${at === undefined ? 'now()' : 'to_timestamp($4::double precision / 1000)'} ` +
        `WHERE name = $1 AND id = $2 AND retry_count = $3 AND state = 'active'`,
      at === undefined ? [queue, id, attempt] : [queue, id, attempt, at],
    );

  return {
    async claim(processor: JobProcessor) {
      const handle = async ([job]: JobWithMetadata<PgJobData>[]): Promise<void> => {
        const { id } = job!;
        /** The claimed attempt: pg-boss fences `complete`/`fail` given it to this attempt. */
        const attempt = { id, retryCount: job!.retryCount };
        const stateKey = jobStateKey(id, new Date(job!.createdOn).getTime());
        const controller = new AbortController();
        const abort = (reason: string): void => {
          if (!controller.signal.aborted) controller.abort(reason);
        };
        const onStop = (): void => abort(JOB_ABORT_REASONS.shutdown);
        stopping.signal.addEventListener('abort', onStop, { once: true });
        job!.signal.addEventListener(
          'abort',
          () => abort(stopping.signal.aborted ? JOB_ABORT_REASONS.shutdown : JOB_ABORT_REASONS.cancel),
          { once: true },
        );
        // A cancel from any client: the row leaves `active`.
        const watch = setInterval(() => {
          void boss
            .findJobs<PgJobData>(queue, { id })
            .then(([row]) => {
              if (row && row.state === 'cancelled') abort(JOB_ABORT_REASONS.cancel);
            })
            .catch(() => {});
        }, DEFAULT_JOBS_PG_POLL_MS);
        const claimed: ClaimedJob = {
          id,
          data: job!.data?.spec,
          attempt: attemptsBefore(job!) + 1,
          stateKey,
          signal: controller.signal,
          // Not claimed once cancelled; a cancel after the claim reaches the poll above.
          cancelRequested: () => Promise.resolve(false),
          log: (line) => void state.appendLog(stateKey, cutLogLine(line)).catch(() => {}),
          progress: () => {},
          complete: async (result) => {
            const settled = await boss.complete(queue, attempt, result as unknown as object);
            if (affected(settled) > 0) processor.ended(stateKey);
          },
          fail: async (error, retry) => {
            if (!retry)
              await sql(
                `UPDATE ${SCHEMA}.job SET retry_limit = retry_count WHERE name = $1 AND id = $2 AND retry_count = $3 AND state = 'active'`,
                [queue, id, attempt.retryCount],
              );
            const settled = await boss.fail(queue, attempt, { message: error.message });
            if (affected(settled) > 0 && (!retry || job!.retryCount >= job!.retryLimit))
              processor.ended(stateKey);
          },
          delayUntil: async (at) => {
            await requeue(
              id,
              attempt.retryCount,
              Number.isFinite(at) ? at : Date.now() + DEFAULT_JOBS_KEEP_AGE_MS,
            );
          },
          promote: async () => {
            await sql(
              `UPDATE ${SCHEMA}.job SET start_after = now() WHERE name = $1 AND id = $2 AND state IN ('created', 'retry')`,
              [queue, id],
            );
          },
          handBack: async () => {
            await requeue(id, attempt.retryCount, undefined);
          },
        };
        // First claim ever (`retry_count` 0): its journal is known empty and is not read back.
        state.firstClaim(stateKey, job!.retryCount === 0);
        try {
          await processor.process(claimed);
        } finally {
          state.firstClaim(stateKey, false);
          clearInterval(watch);
          stopping.signal.removeEventListener('abort', onStop);
        }
      };
      // One pg-boss worker per slot, so each knows its own id: when its job is done it is woken to
      // fetch again at once. pg-boss waits its polling interval (0.5 s at least) after every fetch,
      // full or not (its burst mode needs a batch above one), which capped a slot at 2 jobs/s.
      for (let slot = 0; slot < concurrency; slot++) {
        // Set once `work` answers; a job handled before then is not followed by a wake-up.
        const worker: { id?: string } = {};
        worker.id = await boss.work<
          PgJobData,
          void,
          { batchSize: 1; localConcurrency: 1; includeMetadata: true; pollingIntervalSeconds: number }
        >(
          queue,
          {
            batchSize: 1,
            localConcurrency: 1,
            includeMetadata: true,
            pollingIntervalSeconds: DEFAULT_JOBS_PG_WORKER_POLL_S,
          },
          async (jobs) => {
            try {
              await handle(jobs);
            } finally {
              // Skips the wait before the next fetch (a fetch that finds nothing waits as usual).
              if (worker.id !== undefined && !stopping.signal.aborted) boss.notifyWorker(worker.id);
            }
          },
        );
      }
    },
    async stop(graceMs: number) {
      const timer = setLongTimeout(() => stopping.abort(), graceMs);
      try {
        await boss.offWork(queue, { wait: true });
      } catch {
        // stopping anyway
      } finally {
        timer.cancel();
        await boss.stop({ graceful: false, timeout: 5_000 }).catch(() => {});
      }
    },
  };
}
