/**
 * @module
 * The BullMQ dashboard (`@bull-board`) that `codecall serve --http --dashboard` mounts at
 * `/admin/queues`: the queue's counts, its jobs, their data, results, logs and errors, in a UI
 * BullMQ users already know. Loaded lazily (bull-board, its Express adapter and BullMQ load only
 * when the dashboard is enabled).
 *
 * Authentication: the server's `Host`/`Origin` checks apply as for `/mcp`, then this module
 * checks the same token the rest of the server needs (the server hands it over instead of
 * checking it itself, see `HttpRoutes.ownAuth`). A browser cannot send an `Authorization` header
 * when it navigates, so the dashboard accepts, in order: `Authorization: Bearer <token>`; a
 * cookie it set; or `?token=<token>` on the first visit, which sets that cookie (HttpOnly,
 * SameSite=Strict, path `/admin/queues`, a digest of the token rather than the token) and
 * redirects to the same page without the token in the address bar.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DEFAULT_JOBS_DASHBOARD_COOKIE_MAX_AGE_S } from '../config/defaults.js';
import { queueName, redisConnection } from './bullmq-shared.js';

/** Path the dashboard is served at. */
export const JOBS_DASHBOARD_PATH = '/admin/queues';
/** Name of the cookie that carries the dashboard's credential. */
export const JOBS_DASHBOARD_COOKIE = 'codecall_dashboard';

/** Options of {@link createJobDashboardRoutes}. */
export interface JobDashboardOptions {
  /** Redis URL of the BullMQ queue. */
  connection: string;
  /** @defaultValue {@link DEFAULT_JOBS_QUEUE} */
  queue?: string;
  /** Actions (retry, remove, clean, pause) hidden and refused. @defaultValue false */
  readOnly?: boolean;
}

/** Routes the HTTP server mounts; they check the token themselves (see the module comment). */
export interface JobDashboardRoutes {
  readonly ownAuth: true;
  matches(pathname: string): boolean;
  handle(
    request: IncomingMessage,
    response: ServerResponse,
    context: { maxBodyBytes: number; token?: string },
  ): Promise<void>;
  /** Closes the dashboard's Redis connections. Idempotent. */
  close(): Promise<void>;
}

type Handler = (request: IncomingMessage, response: ServerResponse, next: (error?: unknown) => void) => void;

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();
/** The cookie's value: a digest of the token (the cookie never holds the token itself). */
const cookieValue = (token: string): string =>
  createHash('sha256').update(`codecall-dashboard:${token}`, 'utf8').digest('hex');
const same = (a: string, b: string): boolean => timingSafeEqual(digest(a), digest(b));

function cookieOf(request: IncomingMessage, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function refuse(response: ServerResponse): void {
  response
    .writeHead(401, {
      'content-type': 'text/plain; charset=utf-8',
      'cache-control': 'no-store',
      'www-authenticate': 'Bearer',
    })
    .end(
      `Unauthorized: this server needs its token. Open ${JOBS_DASHBOARD_PATH}?token=<token> once in the ` +
        'browser (it sets a cookie and drops the token from the address), or send "Authorization: Bearer <token>".\n',
    );
}

/**
 * The dashboard over the BullMQ queue at `connection`, as routes for the HTTP server.
 *
 * @example
 * ```ts
 * const dashboard = await createJobDashboardRoutes({ connection: 'redis://127.0.0.1:6379' });
 * await using http = await startHttpServer({ runtime, routes: [jobRoutes, dashboard], token, port: 0 });
 * ```
 */
export async function createJobDashboardRoutes(options: JobDashboardOptions): Promise<JobDashboardRoutes> {
  const [{ Queue }, { createBullBoard }, { BullMQAdapter }, { ExpressAdapter }] = await Promise.all([
    import('bullmq'),
    import('@bull-board/api'),
    import('@bull-board/api/bullMQAdapter'),
    import('@bull-board/express'),
  ]);
  const queue = new Queue(queueName(options.queue), { connection: redisConnection(options.connection) });
  queue.on('error', () => {});
  const adapter = new ExpressAdapter();
  adapter.setBasePath(JOBS_DASHBOARD_PATH);
  createBullBoard({
    queues: [new BullMQAdapter(queue, { readOnlyMode: options.readOnly === true })],
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: 'codecall jobs' } },
  });
  const app = adapter.getRouter() as Handler;
  let closing: Promise<void> | undefined;

  const matches = (pathname: string): boolean =>
    pathname === JOBS_DASHBOARD_PATH || pathname.startsWith(`${JOBS_DASHBOARD_PATH}/`);

  const handle: JobDashboardRoutes['handle'] = async (request, response, { token }) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (token !== undefined) {
      const bearer = /^Bearer\s+(.+)$/i.exec(request.headers.authorization?.trim() ?? '')?.[1];
      const cookie = cookieOf(request, JOBS_DASHBOARD_COOKIE);
      const query = url.searchParams.get('token');
      if (query !== null && request.method === 'GET' && same(query, token)) {
        url.searchParams.delete('token');
        response
          .writeHead(303, {
            location: `${url.pathname}${url.search}`,
            'cache-control': 'no-store',
            'set-cookie':
              `${JOBS_DASHBOARD_COOKIE}=${cookieValue(token)}; Path=${JOBS_DASHBOARD_PATH}; HttpOnly; ` +
              `SameSite=Strict; Max-Age=${DEFAULT_JOBS_DASHBOARD_COOKIE_MAX_AGE_S}`,
          })
          .end();
        return;
      }
      const ok =
        (bearer !== undefined && same(bearer, token)) ||
        (cookie !== undefined && same(cookie, cookieValue(token)));
      if (!ok) return refuse(response);
    }
    // The board's routes are relative to its base path.
    request.url = request.url!.slice(JOBS_DASHBOARD_PATH.length) || '/';
    await new Promise<void>((resolve, reject) => {
      response.once('close', () => resolve());
      app(request, response, (error?: unknown) => {
        if (error !== undefined) reject(error as Error);
        else {
          response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found.\n');
          resolve();
        }
      });
    });
  };

  return {
    ownAuth: true,
    matches,
    handle,
    close: () => (closing ??= queue.close().catch(() => {})),
  };
}
