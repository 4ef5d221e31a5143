/**
 * @module
 * The checks `codecall serve --http` applies before a request reaches the MCP transport:
 * loopback detection for the bind address, `Host` and `Origin` validation against DNS
 * rebinding (as the MCP transport specification requires), the same-origin rule of
 * state-changing requests (against cross-site request forgery), and bearer-token comparison in
 * constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { CodecallError } from '../errors.js';

/** Host names that always mean this machine. */
const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

/** True when `host` (a bind address or a URL hostname) is a loopback address or `localhost`. */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (LOOPBACK_NAMES.has(name) || name.endsWith('.localhost')) return true;
  const bare = name.startsWith('[') && name.endsWith(']') ? name.slice(1, -1) : name;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (bare.startsWith('::ffff:')) return isIP(bare.slice(7)) === 4 && bare.slice(7).startsWith('127.');
  return bare === '::1' || bare === '0:0:0:0:0:0:0:1';
}

/** The hostname part of a `Host` header (`example.com:8080` → `example.com`, `[::1]:80` → `[::1]`). */
export function hostnameOf(hostHeader: string): string {
  const value = hostHeader.trim().toLowerCase();
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    return end > 0 ? value.slice(0, end + 1) : value;
  }
  const colon = value.lastIndexOf(':');
  return colon >= 0 ? value.slice(0, colon) : value;
}

/** What {@link checkHostAndOrigin} needs to know. */
export interface HostOriginPolicy {
  /** Serving on a loopback address: only loopback `Host` names are accepted. */
  loopback: boolean;
  /** Extra accepted `Host` hostnames (lowercase, without port). */
  allowedHosts: readonly string[];
  /** Extra accepted origins, exact (`https://app.example.com`). */
  allowedOrigins: readonly string[];
}

/**
 * Returns why a request must be refused (403), or `undefined` when it may proceed.
 * - `Host` (loopback binding, or when `allowedHosts` is set): a loopback name or an allowed host,
 *   so a page that rebinds its own domain to 127.0.0.1 is refused.
 * - `Origin`, when present (browsers send it): a loopback origin on any port or an allowed origin.
 *   Requests without `Origin` (non-browser clients) pass this check.
 */
export function checkHostAndOrigin(
  headers: { host?: string | undefined; origin?: string | undefined },
  policy: HostOriginPolicy,
): string | undefined {
  if (policy.loopback || policy.allowedHosts.length > 0) {
    const host = headers.host === undefined ? '' : hostnameOf(headers.host);
    const allowed = (policy.loopback && isLoopbackHost(host)) || policy.allowedHosts.includes(host);
    if (!allowed) return `Host "${headers.host ?? ''}" is not allowed (DNS rebinding protection).`;
  }
  const origin = headers.origin;
  if (origin === undefined) return undefined;
  if (policy.allowedOrigins.includes(origin)) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return `Origin "${origin}" is not allowed.`;
  }
  if ((parsed.protocol === 'http:' || parsed.protocol === 'https:') && isLoopbackHost(parsed.hostname))
    return undefined;
  return `Origin "${origin}" is not allowed; start the server with --allow-origin ${origin} to accept it.`;
}

/** Methods that change state: a page on another origin must not be able to send them. */
const STATE_CHANGING_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** True when `origin` is `http://` + `host` (the origin of pages this server itself served). */
function isOwnOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    return new URL(origin).origin === new URL(`http://${host}`).origin;
  } catch {
    return false;
  }
}

/**
 * Returns why a state-changing request (`POST`, `PUT`, `PATCH`, `DELETE`) must be refused (403),
 * or `undefined`. {@link checkHostAndOrigin} accepts loopback origins on any port, and a page on
 * another loopback port is the same *site*, so even a `SameSite=Strict` cookie goes along with its
 * requests: a write is refused when `Sec-Fetch-Site` is `cross-site` or `same-site`, or when
 * `Origin` is present and is neither this server's own origin (`http://` + the request's `Host`)
 * nor one of `allowedOrigins`. Requests with neither header (curl, SDKs, MCP clients) pass.
 */
export function checkStateChangeOrigin(
  method: string,
  headers: { host?: string | undefined; origin?: string | undefined; secFetchSite?: string | undefined },
  policy: Pick<HostOriginPolicy, 'allowedOrigins'>,
): string | undefined {
  const verb = method.toUpperCase();
  if (!STATE_CHANGING_METHODS.has(verb)) return undefined;
  const { origin, secFetchSite } = headers;
  if (origin !== undefined && policy.allowedOrigins.includes(origin)) return undefined;
  if (origin !== undefined && !isOwnOrigin(origin, headers.host))
    return (
      `Origin "${origin}" is not this server's origin: a page elsewhere may not ${verb} here ` +
      `(cross-site request forgery protection); start the server with --allow-origin ${origin} to accept it.`
    );
  if (secFetchSite === 'cross-site' || secFetchSite === 'same-site')
    return (
      `Sec-Fetch-Site is "${secFetchSite}": a page on another origin may not ${verb} here ` +
      '(cross-site request forgery protection).'
    );
  return undefined;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** True when the `Authorization` header carries `Bearer <token>` (constant-time comparison). */
export function hasBearerToken(authorization: string | undefined, token: string): boolean {
  if (authorization === undefined) return false;
  const match = /^Bearer\s+(.+)$/i.exec(authorization.trim());
  if (!match) return false;
  return timingSafeEqual(digest(match[1]!), digest(token));
}

/**
 * Throws `SERVE_TOKEN_REQUIRED` when `host` is not loopback and no token is set, and
 * `INVALID_ARGUMENT` for an empty token.
 */
export function assertSafeBinding(host: string, token: string | undefined): void {
  if (token !== undefined && token.trim() === '')
    throw new CodecallError('INVALID_ARGUMENT', 'The bearer token is empty; give a long random secret.', {
      details: { field: 'token' },
    });
  if (token === undefined && !isLoopbackHost(host)) {
    throw new CodecallError(
      'SERVE_TOKEN_REQUIRED',
      `Refusing to serve on ${host} without a bearer token: anyone who can reach it could run code ` +
        'against your MCP servers. Set CODECALL_SERVE_TOKEN, pass --token <secret>, or set "serve": ' +
        '{"token": "${CODECALL_TOKEN}"} in the configuration; or bind to 127.0.0.1.',
      { details: { host } },
    );
  }
}
