/**
 * @module
 * The jobs HTTP API that `codecall serve --http` mounts beside `/mcp` (behind the same bearer
 * token, `Host`/`Origin` checks and body bound, which the server applies before calling here):
 *
 * | Method and path | Answer |
 * | --- | --- |
 * | `POST /v1/jobs` | `201 {id, deduplicated}` (`200` when the idempotency key existed) |
 * | `GET /v1/jobs?state=&limit=` | `200 {jobs: [...]}` most recent first |
 * | `GET /v1/jobs/:id` | `200` the job record, `404` unknown |
 * | `GET /v1/jobs/:id/logs` | `200 {logs: [...]}` |
 * | `GET /v1/jobs/:id/events` | server-sent events: `state`, `progress`, and a last `done` |
 * | `DELETE /v1/jobs/:id` | `202 {cancelled: true}`, `409` already finished, `404` unknown |
 * | `POST /v1/jobs/:id/approvals` | body `{approved, reason?}` (`approved` required): `200 {id, decision}`, `409` waits for no approval |
 *
 * Errors are `{"error": {"code", "message"}}` with a status that says whose fault it is; a `503`
 * (queue full, backend unreachable, too many event streams) carries `Retry-After`.
 * `POST /v1/jobs` answers within the backend's own bound (the BullMQ backend's enqueue timeout).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  DEFAULT_JOBS_MAX_EVENT_STREAMS,
  DEFAULT_JOBS_RETRY_AFTER_S,
  DEFAULT_JOBS_SSE_KEEPALIVE_MS,
} from '../config/defaults.js';
import { isCodecallError } from '../errors.js';
import { parseApprovalInput } from './job-approvals.js';
import type { JobBackend, JobState } from './job-types.js';

/** Path prefix of the jobs API. */
export const JOBS_HTTP_PATH = '/v1/jobs';

/** What the HTTP server gives a route besides the request (see `HttpRoutes` in server/). */
export interface JobRouteContext {
  /** Bytes of a request body accepted. */
  maxBodyBytes: number;
}

/** Options of {@link createJobRoutes}. */
export interface JobRoutesOptions {
  /** Event streams open at once. @defaultValue {@link DEFAULT_JOBS_MAX_EVENT_STREAMS} */
  maxEventStreams?: number;
  /** Interval of SSE keep-alive comments. @defaultValue {@link DEFAULT_JOBS_SSE_KEEPALIVE_MS} */
  keepAliveMs?: number;
  /** `Retry-After` of 503 answers, in seconds. @defaultValue {@link DEFAULT_JOBS_RETRY_AFTER_S} */
  retryAfterS?: number;
}

/** A route handler the HTTP server calls for paths it `matches`. */
export interface JobRoutes {
  matches(pathname: string): boolean;
  handle(request: IncomingMessage, response: ServerResponse, context: JobRouteContext): Promise<void>;
}

const STATES: ReadonlySet<string> = new Set([
  'waiting',
  'delayed',
  'active',
  'completed',
  'failed',
  'waiting-approval',
]);
/** What a job id looks like (ids outside it are answered `404` without asking the backend). */
export const JOB_ID_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;

const STATUS_OF_CODE: Record<string, number> = {
  INVALID_ARGUMENT: 400,
  JOB_NOT_FOUND: 404,
  JOB_NOT_WAITING_APPROVAL: 409,
  JOBS_QUEUE_FULL: 503,
  JOBS_BACKEND_UNAVAILABLE: 503,
  CLOSED: 503,
};

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  response
    .writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers })
    .end(JSON.stringify(body));
}

function readJsonBody(request: IncomingMessage, maxBytes: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (Number(request.headers['content-length'] ?? 0) > maxBytes) {
      reject(new HttpError(413, 'BODY_TOO_LARGE', `Request body larger than ${maxBytes} bytes.`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        request.off('data', onData);
        request.pause();
        reject(new HttpError(413, 'BODY_TOO_LARGE', `Request body larger than ${maxBytes} bytes.`));
        return;
      }
      chunks.push(chunk);
    };
    request.on('data', onData);
    request.once('error', reject);
    request.once('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown);
      } catch {
        reject(
          new HttpError(
            400,
            'INVALID_JSON',
            'The body is not JSON; send a job like {"kind": "exec", "code": "..."}.',
          ),
        );
      }
    });
  });
}

/**
 * The jobs API over `backend`, to pass to the HTTP server as its extra routes.
 *
 * @example
 * ```ts
 * const routes = createJobRoutes(backend);
 * await using http = await startHttpServer({ runtime, routes, port: 0 });
 * ```
 */
export function createJobRoutes(backend: JobBackend, options: JobRoutesOptions = {}): JobRoutes {
  const maxStreams = options.maxEventStreams ?? DEFAULT_JOBS_MAX_EVENT_STREAMS;
  const keepAliveMs = options.keepAliveMs ?? DEFAULT_JOBS_SSE_KEEPALIVE_MS;
  const retryAfter = { 'retry-after': String(options.retryAfterS ?? DEFAULT_JOBS_RETRY_AFTER_S) };
  let streams = 0;

  const streamEvents = async (
    id: string,
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<void> => {
    if (streams >= maxStreams)
      throw new HttpError(
        503,
        'TOO_MANY_STREAMS',
        `${maxStreams} event streams are open; close one and retry.`,
      );
    // The slot is taken before the first await (concurrent requests cannot all pass the check)
    // and given back once: when the client leaves, whatever the stream is waiting for, or at its end.
    streams++;
    let held = true;
    const stop = new AbortController();
    const onClose = (): void => {
      if (held) streams--;
      held = false;
      stop.abort();
    };
    response.once('close', onClose);
    request.once('close', onClose);
    const iterator = backend.events(id, { signal: stop.signal })[Symbol.asyncIterator]();
    let keepAlive: NodeJS.Timeout | undefined;
    try {
      // The first event proves the job exists before the 200 goes out.
      const first = await iterator.next();
      if (stop.signal.aborted) return;
      response.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      response.flushHeaders();
      keepAlive = setInterval(() => response.write(': keep-alive\n\n'), keepAliveMs);
      keepAlive.unref();
      let next = first;
      while (!next.done && !stop.signal.aborted) {
        response.write(`event: ${next.value.type}\ndata: ${JSON.stringify(next.value)}\n\n`);
        if (next.value.type === 'done') break;
        next = await iterator.next();
      }
    } finally {
      onClose();
      clearInterval(keepAlive);
      response.off('close', onClose);
      request.off('close', onClose);
      await iterator.return?.(undefined);
      // Before the 200 (an unknown job), the error handler answers.
      if (response.headersSent) response.end();
    }
  };

  const route = async (
    request: IncomingMessage,
    response: ServerResponse,
    context: JobRouteContext,
  ): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const parts = url.pathname.slice(JOBS_HTTP_PATH.length).split('/').filter(Boolean);
    const method = request.method ?? 'GET';
    if (parts.length === 0) {
      if (method === 'POST') {
        const body = await readJsonBody(request, context.maxBodyBytes);
        const submission = await backend.submit(body as never);
        return sendJson(response, submission.deduplicated ? 200 : 201, submission);
      }
      if (method === 'GET') {
        const states = url.searchParams.getAll('state');
        for (const state of states)
          if (!STATES.has(state))
            throw new HttpError(
              400,
              'INVALID_ARGUMENT',
              `state "${state}" is not one of ${[...STATES].join(', ')}.`,
            );
        const limitText = url.searchParams.get('limit');
        const limit = limitText === null ? undefined : Number(limitText);
        if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1))
          throw new HttpError(
            400,
            'INVALID_ARGUMENT',
            `limit must be a positive integer, not "${limitText}".`,
          );
        const jobs = await backend.list({
          ...(states.length > 0 ? { states: states as JobState[] } : {}),
          ...(limit !== undefined ? { limit } : {}),
        });
        return sendJson(response, 200, { jobs });
      }
      throw new HttpError(
        405,
        'METHOD_NOT_ALLOWED',
        `${method} ${JOBS_HTTP_PATH}: use POST to submit, GET to list.`,
      );
    }
    const id = decodeURIComponent(parts[0]!);
    if (!JOB_ID_PATTERN.test(id) || parts.length > 2)
      throw new HttpError(404, 'JOB_NOT_FOUND', `No job "${id}".`);
    const sub = parts[1];
    if (sub === undefined && method === 'GET') {
      const record = await backend.get(id);
      if (!record)
        throw new HttpError(
          404,
          'JOB_NOT_FOUND',
          `No job "${id}" (never submitted, or removed by retention).`,
        );
      return sendJson(response, 200, record);
    }
    if (sub === undefined && method === 'DELETE') {
      const record = await backend.get(id);
      if (!record) throw new HttpError(404, 'JOB_NOT_FOUND', `No job "${id}".`);
      const cancelled = await backend.cancel(id);
      if (!cancelled)
        throw new HttpError(409, 'JOB_FINISHED', `Job "${id}" already finished (${record.state}).`);
      return sendJson(response, 202, { id, cancelled: true });
    }
    if (sub === 'logs' && method === 'GET')
      return sendJson(response, 200, { id, logs: await backend.logs(id) });
    if (sub === 'events' && method === 'GET') return streamEvents(id, request, response);
    if (sub === 'approvals' && method === 'POST') {
      const decision = parseApprovalInput(await readJsonBody(request, context.maxBodyBytes));
      return sendJson(response, 200, { id, decision: await backend.approve(id, decision) });
    }
    throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${method} ${url.pathname} is not part of the jobs API.`);
  };

  return {
    matches: (pathname) => pathname === JOBS_HTTP_PATH || pathname.startsWith(`${JOBS_HTTP_PATH}/`),
    async handle(request, response, context) {
      try {
        await route(request, response, context);
      } catch (error) {
        if (error instanceof HttpError) {
          if (error.status === 413) response.once('finish', () => request.destroy());
          return sendJson(
            response,
            error.status,
            { error: { code: error.code, message: error.message } },
            error.status === 503 ? retryAfter : {},
          );
        }
        if (isCodecallError(error)) {
          const status = STATUS_OF_CODE[error.code] ?? 500;
          return sendJson(
            response,
            status,
            { error: { code: error.code, message: error.message } },
            status === 503 ? retryAfter : {},
          );
        }
        return sendJson(response, 500, {
          error: { code: 'INTERNAL', message: (error as Error)?.message ?? String(error) },
        });
      }
    },
  };
}
