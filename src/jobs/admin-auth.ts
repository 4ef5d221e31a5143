/**
 * @module
 * How the browser pages of `codecall serve --http` (the jobs dashboard at `/admin/queues`, the
 * approvals page at `/admin/approvals`) check the server's token. The server applies its
 * `Host`/`Origin` and cross-site write checks first, then hands the token over (`HttpRoutes.ownAuth`):
 * a browser cannot send an `Authorization` header when it navigates, so a page accepts, in order,
 * `Authorization: Bearer <token>`; the cookie set below; or `?token=<token>` on a first visit
 * (GET), which sets that cookie (HttpOnly, SameSite=Strict, path `/admin`, a digest of the token
 * rather than the token) and redirects to the same page without the token in the address bar.
 *
 * The cookie opens the `/admin` pages only, never `/mcp` or `/v1/jobs`. A write it authenticates
 * must also say it comes from the page itself (`Sec-Fetch-Site: same-origin` or an `Origin` the
 * server has already checked): browsers send one of them on every form post and `fetch`, so a
 * request with neither was not made by one of these pages.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DEFAULT_JOBS_DASHBOARD_COOKIE_MAX_AGE_S } from '../config/defaults.js';

/** Path under which the browser pages live; the cookie is scoped to it. */
export const ADMIN_PATH = '/admin';
/** Name of the cookie that carries the pages' credential. */
export const ADMIN_COOKIE = 'codecall_dashboard';

/** How a request to an `/admin` page authenticated: `open` when the server has no token. */
export type AdminAuth = 'bearer' | 'cookie' | 'open';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

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

function refuse(response: ServerResponse, status: 401 | 403, message: string): void {
  response
    .writeHead(status, {
      'content-type': 'text/plain; charset=utf-8',
      'cache-control': 'no-store',
      ...(status === 401 ? { 'www-authenticate': 'Bearer' } : {}),
    })
    .end(`${message}\n`);
}

/**
 * Authenticates a request to the `/admin` page at `loginPath` (see the module comment). Returns
 * how it authenticated, or `undefined` once it has answered the request itself: `401` without a
 * valid credential, `403` for a cookie write that does not come from the page, `303` after a
 * `?token=` login.
 *
 * @example
 * ```ts
 * const auth = authenticateAdminRequest(request, response, { token, loginPath: '/admin/approvals' });
 * if (auth === undefined) return; // answered
 * ```
 */
export function authenticateAdminRequest(
  request: IncomingMessage,
  response: ServerResponse,
  options: { token: string | undefined; loginPath: string },
): AdminAuth | undefined {
  const { token, loginPath } = options;
  if (token === undefined) return 'open';
  const method = (request.method ?? 'GET').toUpperCase();
  const url = new URL(request.url ?? '/', 'http://localhost');
  const query = url.searchParams.get('token');
  if (query !== null && method === 'GET' && same(query, token)) {
    url.searchParams.delete('token');
    response
      .writeHead(303, {
        location: `${url.pathname}${url.search}`,
        'cache-control': 'no-store',
        'set-cookie':
          `${ADMIN_COOKIE}=${cookieValue(token)}; Path=${ADMIN_PATH}; HttpOnly; ` +
          `SameSite=Strict; Max-Age=${DEFAULT_JOBS_DASHBOARD_COOKIE_MAX_AGE_S}`,
      })
      .end();
    return undefined;
  }
  const bearer = /^Bearer\s+(.+)$/i.exec(request.headers.authorization?.trim() ?? '')?.[1];
  if (bearer !== undefined && same(bearer, token)) return 'bearer';
  const cookie = cookieOf(request, ADMIN_COOKIE);
  if (cookie === undefined || !same(cookie, cookieValue(token))) {
    refuse(
      response,
      401,
      `Unauthorized: this server needs its token. Open ${loginPath}?token=<token> once in the ` +
        'browser (it sets a cookie and drops the token from the address), or send "Authorization: Bearer <token>".',
    );
    return undefined;
  }
  const fetchSite = request.headers['sec-fetch-site'];
  if (STATE_CHANGING.has(method) && fetchSite !== 'same-origin' && request.headers.origin === undefined) {
    refuse(
      response,
      403,
      `Forbidden: a ${method} authenticated by the dashboard cookie must come from the page itself ` +
        '(no Origin or Sec-Fetch-Site header); use the page, or send "Authorization: Bearer <token>".',
    );
    return undefined;
  }
  return 'cookie';
}
