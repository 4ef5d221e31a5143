/**
 * @module
 * A {@link JobBackend} over the jobs HTTP API of a running `codecall serve --http` (`/v1/jobs…`,
 * served by job-http-routes.ts), whichever backend that server keeps its jobs on (embedded,
 * BullMQ or pg-boss): what `codecall jobs --url` uses. Every request carries the bearer token and
 * is bounded in time and bytes; an event stream is bounded by the time between two bytes, since
 * the server writes a keep-alive comment every `DEFAULT_JOBS_SSE_KEEPALIVE_MS`.
 */
import {
  DEFAULT_JOBS_HTTP_MAX_RESPONSE_BYTES,
  DEFAULT_JOBS_HTTP_TIMEOUT_MS,
  DEFAULT_JOBS_SSE_KEEPALIVE_MS,
} from '../config/defaults.js';
import { CodecallError, isCodecallError } from '../errors.js';
import type { JobApprovalDecision, JobDecisionInput } from '../store/job-state.js';
import { waitForJobEnd } from './job-helpers.js';
import { JOBS_HTTP_PATH } from './job-http-routes.js';
import type { JobSpecInput } from './job-spec.js';
import type {
  JobBackend,
  JobEvent,
  JobRecord,
  JobSubmission,
  ListJobsOptions,
  WaitJobOptions,
} from './job-types.js';

/** Options of {@link createHttpJobClient}. */
export interface HttpJobClientOptions {
  /**
   * Address of the server, e.g. `http://127.0.0.1:3737`. A trailing `/mcp` (what `codecall serve`
   * prints) or `/v1/jobs` is dropped; another path is kept as a prefix (a server behind a proxy).
   */
  url: string;
  /** Bearer token the server was started with. @defaultValue none (a server without a token) */
  token?: string;
  /**
   * Time one request may take, to its last byte (to its headers, for an event stream); an event
   * stream may then stay silent for `DEFAULT_JOBS_SSE_KEEPALIVE_MS` plus this long.
   * @defaultValue {@link DEFAULT_JOBS_HTTP_TIMEOUT_MS}
   */
  timeoutMs?: number;
  /** Bytes of one answer or one event read. @defaultValue {@link DEFAULT_JOBS_HTTP_MAX_RESPONSE_BYTES} */
  maxResponseBytes?: number;
}

/** Error codes of the API's answers that mean the same here. */
type ForwardedCode =
  | 'INVALID_ARGUMENT'
  | 'JOB_NOT_FOUND'
  | 'JOB_NOT_WAITING_APPROVAL'
  | 'JOBS_QUEUE_FULL'
  | 'JOBS_BACKEND_UNAVAILABLE';
const FORWARDED: ReadonlySet<string> = new Set<ForwardedCode>([
  'INVALID_ARGUMENT',
  'JOB_NOT_FOUND',
  'JOB_NOT_WAITING_APPROVAL',
  'JOBS_QUEUE_FULL',
  'JOBS_BACKEND_UNAVAILABLE',
]);

/** Why a request was aborted (the reason of its controller). */
const TIMEOUT = Symbol('timeout');
const IDLE = Symbol('idle');
const CLOSED = Symbol('closed');
const ABORTED = Symbol('aborted');

const TOKEN_HINT = 'give the token it was started with (its --token, $CODECALL_SERVE_TOKEN or serve.token)';

/** The server's address and the jobs API's base, from what a user typed. */
function parseServerUrl(url: string): { display: string; api: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `"${url}" is not a URL; give the address of codecall serve --http, e.g. http://127.0.0.1:3737.`,
      { details: { field: 'url', value: url } },
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `"${url}" is not an http:// or https:// address; give the address of codecall serve --http, e.g. http://127.0.0.1:3737.`,
      { details: { field: 'url', value: url } },
    );
  if (parsed.username !== '' || parsed.password !== '')
    throw new CodecallError(
      'INVALID_ARGUMENT',
      'The server address carries credentials; give the bearer token as the token, not in the URL.',
      { details: { field: 'url' } },
    );
  const path = parsed.pathname.replace(/\/+$/, '').replace(/\/(mcp|v1\/jobs)$/, '');
  const display = `${parsed.origin}${path}`;
  return { display, api: `${display}${JOBS_HTTP_PATH}` };
}

/** The message of an error answer: the jobs API's `{error: {code, message}}` or the server's JSON-RPC error. */
function errorOf(text: string): { code?: string; message: string } {
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    const message = typeof body.error?.message === 'string' ? body.error.message : text.trim().slice(0, 200);
    return typeof body.error?.code === 'string' ? { code: body.error.code, message } : { message };
  } catch {
    return { message: text.trim().slice(0, 200) };
  }
}

/** Parses one server-sent event block; `undefined` for a comment or a block without data. */
function parseEventBlock(block: string): JobEvent | undefined {
  const data: string[] = [];
  for (const line of block.split('\n')) if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
  if (data.length === 0) return undefined;
  return JSON.parse(data.join('\n')) as JobEvent;
}

/** What {@link HttpJobClient} got back from one request. */
interface Sent {
  status: number;
  /** The body's JSON (not for a stream). */
  json: unknown;
  /** The code of a tolerated error answer. */
  code?: string;
  response: Response;
  controller: AbortController;
  /** Lets go of the request's timer and listeners. */
  release(): void;
}

class HttpJobClient implements JobBackend {
  readonly kind = 'http' as const;
  readonly #display: string;
  readonly #api: string;
  readonly #token: string | undefined;
  readonly #timeoutMs: number;
  readonly #maxBytes: number;
  readonly #closed = new AbortController();

  constructor(options: HttpJobClientOptions) {
    ({ display: this.#display, api: this.#api } = parseServerUrl(options.url));
    this.#token = options.token;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_JOBS_HTTP_TIMEOUT_MS;
    this.#maxBytes = options.maxResponseBytes ?? DEFAULT_JOBS_HTTP_MAX_RESPONSE_BYTES;
  }

  /** Turns what a request threw into an error saying what to do. */
  #failure(error: unknown, reason: unknown, what: string): CodecallError {
    if (isCodecallError(error)) return error;
    if (reason === TIMEOUT || reason === IDLE)
      return new CodecallError(
        'JOBS_BACKEND_UNAVAILABLE',
        `codecall serve at ${this.#display} did not answer ${what} within ${
          reason === IDLE ? DEFAULT_JOBS_SSE_KEEPALIVE_MS + this.#timeoutMs : this.#timeoutMs
        } ms; check that it runs there and is not overloaded.`,
        { details: { url: this.#display, timeoutMs: this.#timeoutMs }, cause: error },
      );
    if (reason === CLOSED) return new CodecallError('CLOSED', 'The job client is closed.');
    if (reason === ABORTED)
      return new CodecallError('ABORTED', `Stopped ${what}.`, { details: {}, cause: error });
    const cause = (error as { cause?: { message?: unknown } })?.cause;
    const detail =
      typeof cause?.message === 'string' ? cause.message : ((error as Error)?.message ?? String(error));
    return new CodecallError(
      'JOBS_BACKEND_UNAVAILABLE',
      `Cannot reach codecall serve at ${this.#display}: ${detail}. Start \`codecall serve --http\` there, or fix the address.`,
      { details: { url: this.#display }, cause: error },
    );
  }

  /** The error an answer with a non-2xx `status` stands for. */
  #refusal(status: number, text: string): CodecallError {
    const { code, message } = errorOf(text);
    if (status === 401)
      return new CodecallError(
        'JOBS_AUTH_FAILED',
        this.#token === undefined
          ? `codecall serve at ${this.#display} requires a bearer token (401 Unauthorized); ${TOKEN_HINT}.`
          : `codecall serve at ${this.#display} refused the bearer token (401 Unauthorized); ${TOKEN_HINT}.`,
        { details: { url: this.#display, status } },
      );
    if (status === 403)
      return new CodecallError(
        'JOBS_AUTH_FAILED',
        `codecall serve at ${this.#display} refused the request (403): ${message}`,
        { details: { url: this.#display, status } },
      );
    if (code !== undefined && FORWARDED.has(code)) {
      const facts = { url: this.#display, status };
      // The server's message names the field at fault; its answer carries no other facts.
      return code === 'INVALID_ARGUMENT'
        ? new CodecallError('INVALID_ARGUMENT', message, { details: { field: 'request', ...facts } })
        : new CodecallError<Exclude<ForwardedCode, 'INVALID_ARGUMENT'>>(
            code as Exclude<ForwardedCode, 'INVALID_ARGUMENT'>,
            message,
            { details: facts },
          );
    }
    if (status === 404)
      return new CodecallError(
        'JOBS_BACKEND_UNAVAILABLE',
        `${this.#display} has no jobs API at ${JOBS_HTTP_PATH} (404); give the address of codecall serve --http.`,
        { details: { url: this.#display } },
      );
    return new CodecallError(
      'JOBS_BACKEND_UNAVAILABLE',
      `codecall serve at ${this.#display} answered ${status}${code !== undefined ? ` ${code}` : ''}: ${message}`,
      { details: { url: this.#display } },
    );
  }

  /** Reads a body to its end, at most `#maxBytes`. */
  async #readText(response: Response): Promise<string> {
    if (!response.body) return '';
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > this.#maxBytes)
        throw new CodecallError(
          'JOBS_BACKEND_UNAVAILABLE',
          `codecall serve at ${this.#display} answered more than ${this.#maxBytes} bytes; ask for less (e.g. list --limit).`,
          { details: { url: this.#display } },
        );
      chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  /**
   * Sends one request. For a stream, resolves with the open response once its headers are in (the
   * caller reads it and calls `release`); else with the body's JSON, read within the timeout.
   */
  async #send(
    method: string,
    path: string,
    options: {
      body?: unknown;
      signal?: AbortSignal | undefined;
      stream?: boolean;
      /** Codes of error answers to return (with `code`) instead of throwing. */
      tolerate?: readonly string[];
    } = {},
  ): Promise<Sent> {
    const what = `${method} ${JOBS_HTTP_PATH}${path}`;
    if (this.#closed.signal.aborted) throw new CodecallError('CLOSED', 'The job client is closed.');
    const controller = new AbortController();
    const onClose = (): void => controller.abort(CLOSED);
    const onAbort = (): void => controller.abort(ABORTED);
    this.#closed.signal.addEventListener('abort', onClose, { once: true });
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    const timer = setTimeout(() => controller.abort(TIMEOUT), this.#timeoutMs);
    const release = (): void => {
      clearTimeout(timer);
      this.#closed.signal.removeEventListener('abort', onClose);
      options.signal?.removeEventListener('abort', onAbort);
    };
    try {
      const response = await fetch(`${this.#api}${path}`, {
        method,
        headers: {
          accept: options.stream ? 'text/event-stream' : 'application/json',
          ...(this.#token !== undefined ? { authorization: `Bearer ${this.#token}` } : {}),
          ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
        redirect: 'manual',
        signal: controller.signal,
      });
      if (response.status < 200 || response.status > 299) {
        const text = await this.#readText(response);
        const { code } = errorOf(text);
        if (code !== undefined && options.tolerate?.includes(code)) {
          release();
          return { status: response.status, json: undefined, code, response, controller, release };
        }
        throw this.#refusal(response.status, text);
      }
      if (options.stream) {
        clearTimeout(timer);
        return { status: response.status, json: undefined, response, controller, release };
      }
      const text = await this.#readText(response);
      let json: unknown;
      try {
        json = JSON.parse(text) as unknown;
      } catch {
        throw new CodecallError(
          'JOBS_BACKEND_UNAVAILABLE',
          `${this.#display} answered ${what} with something that is not JSON; give the address of codecall serve --http.`,
          { details: { url: this.#display } },
        );
      }
      release();
      return { status: response.status, json, response, controller, release };
    } catch (error) {
      release();
      throw this.#failure(error, controller.signal.reason, what);
    }
  }

  async submit(spec: JobSpecInput): Promise<JobSubmission> {
    return (await this.#send('POST', '', { body: spec })).json as JobSubmission;
  }

  async get(id: string): Promise<JobRecord | undefined> {
    try {
      return (await this.#send('GET', `/${encodeURIComponent(id)}`)).json as JobRecord;
    } catch (error) {
      if (CodecallError.isInstance(error, 'JOB_NOT_FOUND')) return undefined;
      throw error;
    }
  }

  wait(id: string, options: WaitJobOptions = {}): Promise<JobRecord> {
    return waitForJobEnd((signal) => this.events(id, { signal }), id, options);
  }

  async *events(
    id: string,
    options: { signal?: AbortSignal } = {},
  ): AsyncGenerator<JobEvent, void, undefined> {
    const what = `the events of job "${id}"`;
    let sent: Sent;
    try {
      sent = await this.#send('GET', `/${encodeURIComponent(id)}/events`, {
        signal: options.signal,
        stream: true,
      });
    } catch (error) {
      if (CodecallError.isInstance(error, 'ABORTED')) return;
      throw error;
    }
    const { response, controller, release } = sent;
    const idleMs = DEFAULT_JOBS_SSE_KEEPALIVE_MS + this.#timeoutMs;
    let idle = setTimeout(() => controller.abort(IDLE), idleMs);
    const iterator = (response.body as AsyncIterable<Uint8Array> | null)?.[Symbol.asyncIterator]();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      if (!iterator) throw this.#failure(new Error('the event stream has no body'), undefined, what);
      for (;;) {
        let chunk: IteratorResult<Uint8Array>;
        try {
          chunk = await iterator.next();
        } catch (error) {
          if (controller.signal.reason === ABORTED) return;
          throw this.#failure(error, controller.signal.reason, what);
        }
        if (chunk.done) {
          if (controller.signal.reason === ABORTED) return;
          throw new CodecallError(
            'JOBS_BACKEND_UNAVAILABLE',
            `The event stream of job "${id}" from ${this.#display} ended before the job finished (the server stopped?); the job may go on: wait for it again.`,
            { details: { url: this.#display } },
          );
        }
        clearTimeout(idle);
        idle = setTimeout(() => controller.abort(IDLE), idleMs);
        buffer += decoder.decode(chunk.value, { stream: true }).replaceAll('\r\n', '\n');
        if (buffer.length > this.#maxBytes)
          throw new CodecallError(
            'JOBS_BACKEND_UNAVAILABLE',
            `One event of job "${id}" from ${this.#display} is larger than ${this.#maxBytes} bytes.`,
            { details: { url: this.#display } },
          );
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = parseEventBlock(block);
          if (event === undefined) continue;
          yield event;
          if (event.type === 'done') return;
        }
      }
    } finally {
      clearTimeout(idle);
      release();
      controller.abort(ABORTED);
      await iterator?.return?.().catch(() => {});
    }
  }

  async logs(id: string): Promise<string[]> {
    return ((await this.#send('GET', `/${encodeURIComponent(id)}/logs`)).json as { logs: string[] }).logs;
  }

  async approve(id: string, decision: JobDecisionInput): Promise<JobApprovalDecision> {
    const answer = await this.#send('POST', `/${encodeURIComponent(id)}/approvals`, { body: decision });
    return (answer.json as { decision: JobApprovalDecision }).decision;
  }

  async cancel(id: string): Promise<boolean> {
    // 404 JOB_NOT_FOUND: unknown; 409 JOB_FINISHED: already finished.
    const answer = await this.#send('DELETE', `/${encodeURIComponent(id)}`, {
      tolerate: ['JOB_NOT_FOUND', 'JOB_FINISHED'],
    });
    return answer.code === undefined;
  }

  async list(options: ListJobsOptions = {}): Promise<JobRecord[]> {
    const query = new URLSearchParams();
    for (const state of options.states ?? []) query.append('state', state);
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    const text = query.toString();
    return ((await this.#send('GET', text === '' ? '' : `?${text}`)).json as { jobs: JobRecord[] }).jobs;
  }

  close(): Promise<void> {
    this.#closed.abort(CLOSED);
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * A client of the jobs HTTP API of a running `codecall serve --http`: the same interface as
 * `createJobClient`, whichever backend the server keeps its jobs on. Nothing is sent until the
 * first call; a server that cannot be reached, or does not answer within `timeoutMs`, is
 * `JOBS_BACKEND_UNAVAILABLE`, a missing or wrong token `JOBS_AUTH_FAILED`.
 *
 * @example
 * ```ts
 * await using jobs = createHttpJobClient({ url: 'http://127.0.0.1:3737', token: process.env.CODECALL_SERVE_TOKEN });
 * const { id } = await jobs.submit({ kind: 'exec', code: 'console.log(1 + 1)' });
 * console.log((await jobs.wait(id)).result?.exec?.stdout);
 * ```
 */
export function createHttpJobClient(options: HttpJobClientOptions): JobBackend {
  return new HttpJobClient(options);
}
