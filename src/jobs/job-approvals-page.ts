/**
 * @module
 * The approvals page that `codecall serve --http --dashboard` mounts at `/admin/approvals`,
 * beside the jobs dashboard: the calls that server-side jobs wait on (state `waiting-approval`),
 * each shown whole (see `job-approvals-page-html.ts`), and a form per call to approve it or deny
 * it with a reason, for a person who would otherwise answer with `codecall jobs approve` or a
 * `POST /v1/jobs/:id/approvals`. Works on any job backend (it needs only `list`, `get` and
 * `approve`).
 *
 * | Method and path | Answer |
 * | --- | --- |
 * | `GET /admin/approvals` | the page (`?token=<token>` once: sets the cookie, `303` to the page) |
 * | `POST /admin/approvals` | a form `job, call, args, decision=approve\|deny, reason?`: `303` back to the page, or the page with why nothing was decided (`400`, `404`, `409`) |
 * | `GET /admin/approvals/style.css` | its style sheet |
 *
 * Authentication and forgery: the server's `Host`/`Origin` checks and its cross-site write rule
 * apply first (a form posted from a page elsewhere is refused with `403`), then the token, as on
 * every `/admin` page (`admin-auth.ts`: bearer, or the HttpOnly SameSite=Strict cookie, whose
 * writes must come from the page). Approving needs `decision=approve` spelled out, and applies
 * only to the call the person saw: the form names the call's index and its arguments' hash, and a
 * job that now waits on anything else is not decided (`409`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DEFAULT_JOBS_APPROVALS_PAGE_MAX_JOBS } from '../config/defaults.js';
import { isCodecallError } from '../errors.js';
import { authenticateAdminRequest } from './admin-auth.js';
import { parseApprovalInput } from './job-approvals.js';
import {
  JOB_APPROVALS_PAGE_PATH,
  JOB_APPROVALS_PAGE_STYLE,
  JOB_APPROVALS_PAGE_STYLE_PATH,
  renderApprovalsPage,
  type ApprovalsPageModel,
  type WaitingJob,
} from './job-approvals-page-html.js';
import { JOB_ID_PATTERN } from './job-http-routes.js';
import type { JobBackend } from './job-types.js';

export { JOB_APPROVALS_PAGE_PATH } from './job-approvals-page-html.js';

/** Options of {@link createJobApprovalsPage}. */
export interface JobApprovalsPageOptions {
  /** Jobs listed at once. @defaultValue {@link DEFAULT_JOBS_APPROVALS_PAGE_MAX_JOBS} */
  maxJobs?: number;
  /** Path of the jobs dashboard, linked from the page. @defaultValue no link */
  dashboardPath?: string;
}

/** Routes the HTTP server mounts; they check the token themselves (see the module comment). */
export interface JobApprovalsPageRoutes {
  readonly ownAuth: true;
  matches(pathname: string): boolean;
  handle(
    request: IncomingMessage,
    response: ServerResponse,
    context: { maxBodyBytes: number; token?: string },
  ): Promise<void>;
}

/**
 * Headers of every answer: nothing cached, no script, no framing, no referrer to other sites.
 * (`no-referrer` would also make the browser send `Origin: null` with the page's own form, which
 * the server's cross-site write rule rightly refuses.)
 */
const PAGE_HEADERS = {
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
};

/** A decision the page could not make: the page is shown again with `message`. */
class PageError extends Error {
  constructor(
    readonly status: 400 | 404 | 409 | 413 | 415,
    message: string,
  ) {
    super(message);
  }
}

function readBody(request: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const tooLarge = (): PageError => new PageError(413, `The form is larger than ${maxBytes} bytes.`);
    if (Number(request.headers['content-length'] ?? 0) > maxBytes) return reject(tooLarge());
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        request.off('data', onData);
        request.pause();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    request.on('data', onData);
    request.once('error', reject);
    request.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/**
 * The approvals page over `backend`, as routes for the HTTP server.
 *
 * @example
 * ```ts
 * const approvals = createJobApprovalsPage(backend, { dashboardPath: '/admin/queues' });
 * await using http = await startHttpServer({ runtime, routes: [createJobRoutes(backend), approvals], token, port: 0 });
 * ```
 */
export function createJobApprovalsPage(
  backend: Pick<JobBackend, 'list' | 'get' | 'approve'>,
  options: JobApprovalsPageOptions = {},
): JobApprovalsPageRoutes {
  const maxJobs = options.maxJobs ?? DEFAULT_JOBS_APPROVALS_PAGE_MAX_JOBS;

  const sendPage = async (
    response: ServerResponse,
    status: number,
    notice: ApprovalsPageModel['notice'],
  ): Promise<void> => {
    const listed = await backend.list({ states: ['waiting-approval'], limit: maxJobs + 1 });
    // A job waiting for its task client's answer to an upstream input request is not an approval.
    const waiting = listed.filter(
      (job): job is typeof job & WaitingJob => job.approval !== undefined && job.approval.input === undefined,
    );
    // The calls whose time runs out first come first.
    const jobs = waiting
      .sort((a, b) => a.approval.expiresAt - b.approval.expiresAt || a.createdAt - b.createdAt)
      .slice(0, maxJobs);
    const html = renderApprovalsPage({
      jobs,
      more: listed.length > maxJobs,
      ...(notice !== undefined ? { notice } : {}),
      ...(options.dashboardPath !== undefined ? { dashboardPath: options.dashboardPath } : {}),
    });
    response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...PAGE_HEADERS }).end(html);
  };

  /** The notice of a decision just made (`?approved=<id>&call=<n>`, after the redirect). */
  const noticeOf = (url: URL): ApprovalsPageModel['notice'] => {
    const call = url.searchParams.get('call') ?? '';
    for (const outcome of ['approved', 'denied'] as const) {
      const id = url.searchParams.get(outcome);
      if (id === null || !JOB_ID_PATTERN.test(id) || !/^\d{1,9}$/.test(call)) continue;
      return {
        kind: 'ok',
        text:
          outcome === 'approved'
            ? `Approved call ${call} of job ${id}: the job resumes and makes the call.`
            : `Denied call ${call} of job ${id}: the job resumes and the call fails with APPROVAL_DENIED.`,
      };
    }
    return undefined;
  };

  const decide = async (request: IncomingMessage, maxBodyBytes: number): Promise<string> => {
    const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/x-www-form-urlencoded')
      throw new PageError(415, 'Send the form of this page (application/x-www-form-urlencoded).');
    const form = new URLSearchParams(await readBody(request, maxBodyBytes));
    const id = form.get('job') ?? '';
    if (!JOB_ID_PATTERN.test(id)) throw new PageError(400, 'The form names no job; reload the page.');
    const choice = form.get('decision');
    if (choice !== 'approve' && choice !== 'deny')
      throw new PageError(400, 'Nothing was decided: press "Approve" or "Deny".');
    const reason = form.get('reason')?.trim() ?? '';
    let decision: { approved: boolean; reason?: string };
    try {
      decision = parseApprovalInput({ approved: choice === 'approve', ...(reason !== '' ? { reason } : {}) });
    } catch (error) {
      if (isCodecallError(error) && error.code === 'INVALID_ARGUMENT')
        throw new PageError(400, error.message);
      throw error;
    }
    const record = await backend.get(id);
    if (!record) throw new PageError(404, `No job "${id}" (removed by retention?); nothing was decided.`);
    const pending = record.state === 'waiting-approval' ? record.approval : undefined;
    if (
      !pending ||
      pending.input !== undefined ||
      String(pending.callIndex) !== form.get('call') ||
      pending.argsHash !== form.get('args')
    )
      throw new PageError(
        409,
        `Job ${id} no longer waits on the call shown (decided already, or it now waits on another); ` +
          'nothing was decided. The list below is current.',
      );
    try {
      const recorded = await backend.approve(id, decision);
      const outcome = recorded.approved ? 'approved' : 'denied';
      return `${JOB_APPROVALS_PAGE_PATH}?${outcome}=${encodeURIComponent(id)}&call=${recorded.callIndex}`;
    } catch (error) {
      if (isCodecallError(error) && error.code === 'JOB_NOT_WAITING_APPROVAL')
        throw new PageError(409, `${error.message} Nothing was decided.`);
      if (isCodecallError(error) && error.code === 'JOB_NOT_FOUND')
        throw new PageError(404, `${error.message} Nothing was decided.`);
      throw error;
    }
  };

  const handle: JobApprovalsPageRoutes['handle'] = async (request, response, { maxBodyBytes, token }) => {
    if (
      authenticateAdminRequest(request, response, { token, loginPath: JOB_APPROVALS_PAGE_PATH }) === undefined
    )
      return;
    const url = new URL(request.url ?? '/', 'http://localhost');
    const method = (request.method ?? 'GET').toUpperCase();
    if (url.pathname === JOB_APPROVALS_PAGE_STYLE_PATH && method === 'GET') {
      response
        .writeHead(200, { 'content-type': 'text/css; charset=utf-8', ...PAGE_HEADERS })
        .end(JOB_APPROVALS_PAGE_STYLE);
      return;
    }
    if (url.pathname !== JOB_APPROVALS_PAGE_PATH) {
      response
        .writeHead(404, { 'content-type': 'text/plain; charset=utf-8', ...PAGE_HEADERS })
        .end(`Not found: the approvals page is ${JOB_APPROVALS_PAGE_PATH}.\n`);
      return;
    }
    if (method === 'GET') return sendPage(response, 200, noticeOf(url));
    if (method !== 'POST') {
      response
        .writeHead(405, { 'content-type': 'text/plain; charset=utf-8', allow: 'GET, POST', ...PAGE_HEADERS })
        .end(`${method} ${JOB_APPROVALS_PAGE_PATH}: use GET to see the page, POST its form to decide.\n`);
      return;
    }
    try {
      const location = await decide(request, maxBodyBytes);
      response.writeHead(303, { location, ...PAGE_HEADERS }).end();
    } catch (error) {
      if (!(error instanceof PageError)) throw error;
      // Whatever is left of a body too large is not read: the connection closes after the answer.
      if (error.status === 413) response.once('finish', () => request.destroy());
      await sendPage(response, error.status, { kind: 'error', text: error.message });
    }
  };

  return {
    ownAuth: true,
    matches: (pathname) =>
      pathname === JOB_APPROVALS_PAGE_PATH || pathname.startsWith(`${JOB_APPROVALS_PAGE_PATH}/`),
    handle,
  };
}
