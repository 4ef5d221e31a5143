/**
 * @module
 * Resolves `mcpServers.<name>.oauth` into its required form: the grant, the client's identity, the
 * loopback redirect of a login, and the token file in the user's state folder (never in the
 * project, so a cloned configuration cannot read or plant tokens).
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { z } from 'zod';
import { DEFAULT_UPSTREAM_OAUTH_REDIRECT_URL } from './defaults.js';
import type { upstreamOAuthSchema } from './schema.js';
import type { UpstreamOAuthConfig } from './types.js';

/** The folder of the state directory that holds upstream OAuth token files. */
export const OAUTH_TOKEN_FOLDER = 'oauth';

/**
 * The token file of one server: its name (made file-safe) and a hash of its URL, so a server
 * moved to another URL starts without the old server's tokens.
 */
export function oauthTokenFile(stateDir: string, server: string, url: string): string {
  const safe = server.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  const digest = createHash('sha256').update(url).digest('hex').slice(0, 16);
  return join(stateDir, OAUTH_TOKEN_FOLDER, `${safe}-${digest}.json`);
}

/** Resolves one server's `oauth` entry; pushes an issue naming the field and the fix when wrong. */
export function resolveUpstreamOAuth(
  entry: z.infer<typeof upstreamOAuthSchema> | undefined,
  context: {
    server: string;
    url: string;
    headers: Record<string, string>;
    stateDir: string;
    at: (...rest: string[]) => string;
    issues: { path: string; message: string }[];
  },
): UpstreamOAuthConfig | undefined {
  if (entry === undefined) return undefined;
  const { at, issues } = context;
  const grant = entry.grant ?? 'authorization_code';
  if (grant === 'client_credentials' && (entry.clientId === undefined || entry.clientSecret === undefined))
    issues.push({
      path: at(entry.clientId === undefined ? 'clientId' : 'clientSecret'),
      message:
        'the client_credentials grant needs "clientId" and "clientSecret" (a machine has no person to log in). Fix: add both, the secret as "${ENV_VAR}", or use "grant": "authorization_code".',
    });
  if (Object.keys(context.headers).some((header) => header.toLowerCase() === 'authorization'))
    issues.push({
      path: at(),
      message:
        '"headers" already sets Authorization, which OAuth would replace. Fix: remove the Authorization header, or remove "oauth".',
    });
  const redirectUrl = entry.redirectUrl ?? DEFAULT_UPSTREAM_OAUTH_REDIRECT_URL;
  let redirect: URL | undefined;
  try {
    redirect = new URL(redirectUrl);
  } catch {
    // Reported below.
  }
  if (
    !redirect ||
    redirect.protocol !== 'http:' ||
    !['127.0.0.1', 'localhost', '[::1]'].includes(redirect.hostname)
  )
    issues.push({
      path: at('redirectUrl'),
      message: `${JSON.stringify(redirectUrl)} is not a loopback http URL; codecall receives the login's redirect on this machine. Fix: use e.g. "http://127.0.0.1:8976/callback" (port 0: any free port).`,
    });
  if (entry.clientMetadataUrl !== undefined) {
    let metadata: URL | undefined;
    try {
      metadata = new URL(entry.clientMetadataUrl);
    } catch {
      // Reported below.
    }
    if (!metadata || metadata.protocol !== 'https:' || metadata.pathname === '/')
      issues.push({
        path: at('clientMetadataUrl'),
        message:
          'a client ID metadata document needs an https URL with a path (SEP-991). Fix: e.g. "https://example.com/codecall/client.json", or remove it.',
      });
  }
  return {
    grant,
    clientId: entry.clientId,
    clientSecret: entry.clientSecret,
    clientMetadataUrl: entry.clientMetadataUrl,
    scope: entry.scope,
    redirectUrl,
    tokenFile: oauthTokenFile(context.stateDir, context.server, context.url),
  };
}
