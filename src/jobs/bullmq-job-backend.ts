/**
 * @module
 * The BullMQ job backend, client side: submits jobs to a Redis queue that `codecall worker`
 * processes consume, reads their state, results and logs, follows their events (BullMQ's
 * `QueueEvents` stream), and asks running workers to cancel (a Redis key plus a pub/sub
 * announcement, so a job that has not started yet is cancelled when a worker takes it).
 * Imported lazily by {@link createJobClient}: only code that uses BullMQ loads it.
 */
import { randomUUID } from 'node:crypto';
import { Job, Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import {
  DEFAULT_JOBS_CONNECT_TIMEOUT_MS,
  DEFAULT_JOBS_ENQUEUE_TIMEOUT_MS,
  DEFAULT_JOBS_KEEP_AGE_MS,
  DEFAULT_JOBS_LIST_LIMIT,
  DEFAULT_JOBS_MAX_LIST_LIMIT,
} from '../config/defaults.js';
import { CodecallError, isCodecallError } from '../errors.js';
import {
  cancelChannel,
  cancelKey,
  jobOptions,
  jobStatePrefix,
  queueName,
  redisConnection,
  toRecord,
  withTimeout,
  type JobConnectionOptions,
  type JobRetentionOptions,
} from './bullmq-shared.js';
import type { JobApprovalDecision, JobApprovalStore, JobDecisionInput } from '../store/job-state.js';
import { RedisJobStateStore } from '../store/job-state-redis.js';
import { jobStateKey, waitForJobEnd } from './job-helpers.js';
import { parseJobSpec, type JobSpecInput } from './job-spec.js';
import type {
  JobBackend,
  JobEvent,
  JobRecord,
  JobState,
  JobSubmission,
  ListJobsOptions,
  WaitJobOptions,
} from './job-types.js';

/** Interval at which a watcher re-reads a job's state, in case an event was missed. */
const EVENTS_POLL_MS = 5_000;
const FINISHED: ReadonlySet<JobState> = new Set(['completed', 'failed']);
/** Errors of a Redis connection that is down or going away (ioredis and BullMQ messages). */
const CONNECTION_ERROR =
  /Stream isn't writeable|enableOfflineQueue|Connection is closed|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|MaxRetriesPerRequest/i;

/** Options of the BullMQ backend. */
export interface BullmqJobBackendOptions extends JobConnectionOptions, JobRetentionOptions {
  /** @defaultValue {@link DEFAULT_JOBS_CONNECT_TIMEOUT_MS} */
  connectTimeoutMs?: number;
  /** Time `submit` waits for Redis to take a job before `JOBS_BACKEND_UNAVAILABLE`. @defaultValue {@link DEFAULT_JOBS_ENQUEUE_TIMEOUT_MS} */
  enqueueTimeoutMs?: number;
}

type QueueEventName = 'waiting' | 'active' | 'delayed' | 'progress' | 'completed' | 'failed' | 'removed';

/** Opens the BullMQ backend; throws `JOBS_BACKEND_UNAVAILABLE` when Redis cannot be reached. */
export async function openBullmqJobBackend(options: BullmqJobBackendOptions): Promise<JobBackend> {
  const connection = redisConnection(options.connection);
  const name = queueName(options.queue);
  // Commands fail at once while Redis is unreachable, instead of queueing until it returns
  // (a request would hang, and a job it gave up on would be queued later all the same).
  const queue = new Queue(name, { connection: { ...connection, enableOfflineQueue: false } });
  queue.on('error', () => {});
  try {
    await withTimeout(
      queue.waitUntilReady(),
      options.connectTimeoutMs ?? DEFAULT_JOBS_CONNECT_TIMEOUT_MS,
      'connecting',
    );
  } catch (error) {
    await queue.close().catch(() => {});
    throw new CodecallError(
      'JOBS_BACKEND_UNAVAILABLE',
      `Cannot reach Redis at ${new URL(options.connection).host}: ${(error as Error)?.message ?? String(error)}. ` +
        'Start redis-server, or fix the connection URL (jobs.connection / --redis).',
      { cause: error },
    );
  }
  return new BullmqJobBackend(queue, name, connection, options);
}

class BullmqJobBackend implements JobBackend {
  readonly kind = 'bullmq' as const;
  readonly #queue: Queue;
  readonly #name: string;
  readonly #connection: { url: string; maxRetriesPerRequest: null };
  readonly #retention: JobRetentionOptions;
  readonly #host: string;
  readonly #enqueueTimeoutMs: number;
  #events: Promise<QueueEvents> | undefined;
  #redis: Redis | undefined;
  #state: Promise<RedisJobStateStore> | undefined;
  #closing: Promise<void> | undefined;

  constructor(
    queue: Queue,
    name: string,
    connection: { url: string; maxRetriesPerRequest: null },
    options: BullmqJobBackendOptions,
  ) {
    this.#queue = queue;
    this.#name = name;
    this.#connection = connection;
    this.#retention = options;
    this.#host = new URL(options.connection).host;
    this.#enqueueTimeoutMs = options.enqueueTimeoutMs ?? DEFAULT_JOBS_ENQUEUE_TIMEOUT_MS;
  }

  #assertOpen(): void {
    if (this.#closing) throw new CodecallError('CLOSED', 'The job client is closed.');
  }

  #client(): Redis {
    if (!this.#redis) {
      this.#redis = new Redis(this.#connection.url, { maxRetriesPerRequest: null });
      this.#redis.on('error', () => {});
    }
    return this.#redis;
  }

  #queueEvents(): Promise<QueueEvents> {
    this.#events ??= (async () => {
      const events = new QueueEvents(this.#name, { connection: this.#connection });
      events.on('error', () => {});
      events.setMaxListeners(0);
      await events.waitUntilReady();
      return events;
    })();
    return this.#events;
  }

  async submit(input: JobSpecInput): Promise<JobSubmission> {
    this.#assertOpen();
    const spec = parseJobSpec(input);
    const id = spec.idempotencyKey ?? randomUUID();
    const enqueue = async (): Promise<JobSubmission> => {
      const added = await this.#queue.add(spec.kind, spec, jobOptions(spec, id, this.#retention));
      // BullMQ returns the existing job for a known id; its timestamp tells whether it is new.
      const stored = await Job.fromId(this.#queue, id);
      return { id, deduplicated: stored !== undefined && stored.timestamp !== added.timestamp };
    };
    try {
      return await withTimeout(enqueue(), this.#enqueueTimeoutMs, 'queueing the job');
    } catch (error) {
      const message = (error as Error)?.message ?? String(error);
      const timedOut = message.startsWith('queueing the job took longer');
      if (isCodecallError(error) || !(timedOut || CONNECTION_ERROR.test(message))) throw error;
      throw new CodecallError(
        'JOBS_BACKEND_UNAVAILABLE',
        `Redis at ${this.#host} did not take the job (${message}); retry later. ` +
          (timedOut
            ? 'Redis may still queue it once it answers: retry with the same idempotencyKey so it runs once.'
            : 'Nothing was queued.'),
        { details: { timeoutMs: this.#enqueueTimeoutMs }, cause: error },
      );
    }
  }

  async get(id: string): Promise<JobRecord | undefined> {
    this.#assertOpen();
    // State first, then the job: a job read before it completed and a state read after would
    // show "completed" without its result.
    const [state, cancelled] = await Promise.all([
      this.#queue.getJobState(id),
      this.#client().exists(cancelKey(this.#name, id)),
    ]);
    if (state === 'unknown') return undefined;
    const job = await Job.fromId(this.#queue, id);
    if (!job) return undefined;
    const record = toRecord(job, state, cancelled === 1);
    if (record.state === 'delayed' || record.state === 'active') {
      // A delayed job with a pending request waits for a decision, not for a retry.
      const pending = await (await this.#approvals(job)).pending();
      if (pending && record.state === 'delayed') record.state = 'waiting-approval';
      if (pending) record.approval = pending;
    }
    return record;
  }

  #approvals(job: Job): Promise<JobApprovalStore> {
    this.#state ??= RedisJobStateStore.open({
      redis: this.#client(),
      prefix: jobStatePrefix(this.#name),
      ttlMs: this.#retention.keepAgeMs ?? DEFAULT_JOBS_KEEP_AGE_MS,
    });
    return this.#state.then((state) => state.approvals(jobStateKey(job.id ?? '', job.timestamp)));
  }

  async approve(id: string, decision: JobDecisionInput): Promise<JobApprovalDecision> {
    const record = await this.#require(id);
    const job = await Job.fromId(this.#queue, id);
    const recorded =
      job && record.state === 'waiting-approval'
        ? await (await this.#approvals(job)).decide(decision)
        : false;
    if (!job || !recorded)
      throw new CodecallError(
        'JOB_NOT_WAITING_APPROVAL',
        `Job "${id}" is ${record.state} and waits for no approval (decided already, or it never asked).`,
        { details: { id, state: record.state } },
      );
    // Wakes the job now; a worker that has not finished moving it to delayed promotes it itself.
    await job.promote().catch(() => {});
    return recorded;
  }

  async #require(id: string): Promise<JobRecord> {
    const record = await this.get(id);
    if (!record)
      throw new CodecallError('JOB_NOT_FOUND', `No job "${id}" (never submitted, or removed by retention).`, {
        details: { id },
      });
    return record;
  }

  async wait(id: string, options: WaitJobOptions = {}): Promise<JobRecord> {
    await this.#require(id);
    return waitForJobEnd((signal) => this.events(id, { signal }), id, options);
  }

  async *events(
    id: string,
    options: { signal?: AbortSignal } = {},
  ): AsyncGenerator<JobEvent, void, undefined> {
    this.#assertOpen();
    const events = await this.#queueEvents();
    const buffer: { event: QueueEventName; data?: unknown }[] = [];
    let wake: (() => void) | undefined;
    const listeners = new Map<QueueEventName, (args: { jobId: string; data?: unknown }) => void>();
    for (const event of [
      'waiting',
      'active',
      'delayed',
      'progress',
      'completed',
      'failed',
      'removed',
    ] as const) {
      const listener = (args: { jobId: string; data?: unknown }): void => {
        if (args.jobId !== id) return;
        buffer.push({ event, data: args.data });
        wake?.();
      };
      listeners.set(event, listener);
      events.on(event, listener as never);
    }
    const onAbort = (): void => wake?.();
    options.signal?.addEventListener('abort', onAbort);
    try {
      // Listeners first, then the state: nothing that happens in between is missed.
      let record = await this.#require(id);
      yield {
        type: 'state',
        id,
        state: record.state,
        ...(record.approval && record.state === 'waiting-approval' ? { approval: record.approval } : {}),
      };
      let state = record.state;
      for (;;) {
        if (FINISHED.has(state)) {
          yield { type: 'done', id, job: record };
          return;
        }
        if (options.signal?.aborted) return;
        if (buffer.length === 0) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            if (buffer.length > 0 || options.signal?.aborted) resolve();
            setTimeout(resolve, EVENTS_POLL_MS).unref();
          });
          wake = undefined;
        }
        if (options.signal?.aborted) return;
        const batch = buffer.splice(0);
        let reread = batch.length === 0; // a poll: check the state anyway
        for (const item of batch) {
          if (item.event === 'progress') {
            if (typeof item.data === 'object' && item.data !== null && 'type' in item.data)
              yield { type: 'progress', id, progress: item.data as never };
          } else if (item.event === 'removed') {
            throw new CodecallError('JOB_NOT_FOUND', `Job "${id}" was removed.`, { details: { id } });
          } else if (item.event === 'completed' || item.event === 'failed' || item.event === 'delayed') {
            // A delayed job may be waiting for an approval: the record says which.
            reread = true;
          } else {
            const next: JobState = item.event === 'active' ? 'active' : 'waiting';
            if (next !== state) {
              state = next;
              yield { type: 'state', id, state };
            }
          }
        }
        if (reread) {
          record = await this.#require(id);
          if (record.state !== state) {
            state = record.state;
            yield {
              type: 'state',
              id,
              state,
              ...(state === 'waiting-approval' && record.approval ? { approval: record.approval } : {}),
            };
          }
        }
      }
    } finally {
      for (const [event, listener] of listeners) events.off(event, listener as never);
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  async logs(id: string): Promise<string[]> {
    await this.#require(id);
    const { logs } = await this.#queue.getJobLogs(id);
    return logs;
  }

  async cancel(id: string): Promise<boolean> {
    const record = await this.get(id);
    if (!record || FINISHED.has(record.state)) return false;
    const redis = this.#client();
    const ttlSeconds = Math.ceil((this.#retention.keepAgeMs ?? DEFAULT_JOBS_KEEP_AGE_MS) / 1_000);
    await redis.set(cancelKey(this.#name, id), '1', 'EX', ttlSeconds);
    await redis.publish(cancelChannel(this.#name), id);
    // A delayed job (waiting for a retry) is promoted, so a worker takes it and ends it cancelled.
    if (record.state === 'delayed' || record.state === 'waiting-approval')
      await (await Job.fromId(this.#queue, id))?.promote().catch(() => {});
    return true;
  }

  async list(options: ListJobsOptions = {}): Promise<JobRecord[]> {
    this.#assertOpen();
    const limit = Math.min(options.limit ?? DEFAULT_JOBS_LIST_LIMIT, DEFAULT_JOBS_MAX_LIST_LIMIT);
    const wanted = options.states ?? [
      'waiting',
      'delayed',
      'active',
      'completed',
      'failed',
      'waiting-approval',
    ];
    const types = [
      ...new Set(
        wanted.flatMap((state) =>
          state === 'waiting'
            ? ['waiting', 'prioritized']
            : state === 'waiting-approval'
              ? ['delayed']
              : [state],
        ),
      ),
    ];
    const jobs = await this.#queue.getJobs(types as never, 0, limit - 1, false);
    const records = await Promise.all(
      jobs
        .filter((job): job is Job => job !== undefined)
        .map(async (job) => (await this.get(job.id ?? '')) ?? toRecord(job, 'waiting', false)),
    );
    const states = new Set(wanted);
    return (
      records
        // BullMQ's `delayed` holds both; keep the one asked for.
        .filter(
          (record) =>
            !(record.state === 'delayed' || record.state === 'waiting-approval') || states.has(record.state),
        )
        .sort((a, b) => b.createdAt - a.createdAt)
        .slice(0, limit)
    );
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      const events = this.#events;
      await Promise.allSettled([
        this.#queue.close(),
        events?.then((e) => e.close()),
        this.#redis?.quit().catch(() => this.#redis?.disconnect()),
      ]);
    })();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
