/**
 * @module
 * The BullMQ dashboard (`@bull-board`) that `codecall serve --http --dashboard` mounts at
 * `/admin/queues`: the queue's counts, its jobs, their data, results, logs and errors, in a UI
 * BullMQ users already know, with a style sheet of ours that keeps a job's script readable and
 * every tab in view, and a link to the approvals page (see `job-dashboard-additions.ts`). Loaded
 * lazily (bull-board, its Express adapter and BullMQ load only when the dashboard is enabled).
 *
 * Authentication: the server's `Host`/`Origin` checks apply as for `/mcp`, then this module
 * checks the same token the rest of the server needs, as every `/admin` page does (bearer, the
 * cookie a `?token=` visit sets, see `admin-auth.ts`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ADMIN_COOKIE, authenticateAdminRequest } from './admin-auth.js';
import { queueName, redisConnection } from './bullmq-shared.js';
import { JOB_APPROVALS_PAGE_PATH } from './job-approvals-page.js';
import { addToDashboardPage } from './job-dashboard-additions.js';

/** Path the dashboard is served at. */
export const JOBS_DASHBOARD_PATH = '/admin/queues';
/** Name of the cookie that carries the dashboard's credential (shared by every `/admin` page). */
export const JOBS_DASHBOARD_COOKIE = ADMIN_COOKIE;

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

/** An Express view engine (`app.engine`): renders the file at `path` with `options`. */
type RenderFile = (
  path: string,
  options: object,
  callback: (error: Error | null, html?: string) => void,
) => void;

/** The part of bull-board's Express app used here. */
interface ExpressApp extends Handler {
  engines: Record<string, RenderFile | undefined>;
  engine(extension: string, render: RenderFile): unknown;
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
    options: {
      uiConfig: {
        boardTitle: 'codecall jobs',
        miscLinks: [{ text: 'Approvals', url: JOB_APPROVALS_PAGE_PATH }],
      },
    },
  });
  const app = adapter.getRouter() as ExpressApp;
  // bull-board renders its page with the `ejs` engine it registered: our additions go in there.
  const render = app.engines['.ejs'];
  if (render)
    app.engine('ejs', (path, renderOptions, callback) =>
      render(path, renderOptions, (error, html) =>
        callback(
          error,
          html === undefined ? html : addToDashboardPage(html, { approvalsPath: JOB_APPROVALS_PAGE_PATH }),
        ),
      ),
    );
  let closing: Promise<void> | undefined;

  const matches = (pathname: string): boolean =>
    pathname === JOBS_DASHBOARD_PATH || pathname.startsWith(`${JOBS_DASHBOARD_PATH}/`);

  const handle: JobDashboardRoutes['handle'] = async (request, response, { token }) => {
    if (authenticateAdminRequest(request, response, { token, loginPath: JOBS_DASHBOARD_PATH }) === undefined)
      return;
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
