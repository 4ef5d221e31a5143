/**
 * @module
 * `codecall auth login <server>`: the interactive `authorization_code` login of one upstream
 * server, done by the MCP SDK's own transport (its 401 handling discovers the protected resource
 * and the authorization server, registers the client or uses its metadata document, builds the
 * PKCE authorization URL with the resource indicator, and redeems the code). codecall supplies a
 * loopback listener for the redirect (RFC 8252 § 7.3), checks `state`, and hands the callback to
 * the transport's `finishAuth`; the tokens land in the server's token file.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_UPSTREAM_OAUTH_LOGIN_TIMEOUT_MS } from '../../config/defaults.js';
import type { RemoteServerConfig, UpstreamOAuthConfig } from '../../config/types.js';
import { CodecallError } from '../../errors.js';
import { loadClientModule } from '../modern-connection.js';
import { UpstreamOAuthProvider } from './oauth-provider.js';

/** Options of {@link loginUpstream}. */
export interface UpstreamLoginOptions {
  /** The server, with its `oauth` section. */
  config: RemoteServerConfig & { oauth: UpstreamOAuthConfig };
  /** Shows the authorization URL to the person (the CLI prints it). */
  onAuthorizationUrl(url: URL): void | Promise<void>;
  /** How long to wait for the browser's redirect. @defaultValue `DEFAULT_UPSTREAM_OAUTH_LOGIN_TIMEOUT_MS` */
  timeoutMs?: number;
}

/** What {@link loginUpstream} did. */
export interface UpstreamLoginResult {
  /** `logged-in`: a new token was obtained; `already`: the stored token (or none needed) was accepted. */
  outcome: 'logged-in' | 'already';
  tokenFile: string;
}

interface Callback {
  params: URLSearchParams;
}

/** Listens on the redirect URL's loopback address; resolves with the first callback whose state matches. */
async function listenForCallback(
  redirectUrl: string,
  state: string,
  timeoutMs: number,
): Promise<{ url: string; callback: Promise<Callback>; close(): void }> {
  const configured = new URL(redirectUrl);
  let settle!: { resolve(value: Callback): void; reject(error: Error): void };
  const callback = new Promise<Callback>((resolve, reject) => (settle = { resolve, reject }));
  callback.catch(() => undefined);
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', configured);
    if (request.method !== 'GET' || url.pathname !== configured.pathname) {
      response.writeHead(404).end();
      return;
    }
    if (url.searchParams.get('state') !== state) {
      response
        .writeHead(400, { 'content-type': 'text/plain' })
        .end('codecall: unexpected state; login ignored.\n');
      return;
    }
    const error = url.searchParams.get('error');
    response
      .writeHead(error ? 400 : 200, { 'content-type': 'text/plain' })
      .end(
        error
          ? `codecall: login failed (${error}).\n`
          : 'codecall: login complete; you can close this tab.\n',
      );
    if (error)
      settle.reject(
        new Error(
          `the authorization server answered ${JSON.stringify(error.slice(0, 100))}${url.searchParams.has('error_description') ? `: ${url.searchParams.get('error_description')!.slice(0, 300)}` : ''}`,
        ),
      );
    else settle.resolve({ params: url.searchParams });
  });
  const host = configured.hostname.replace(/^\[|\]$/g, '');
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(configured.port || 80), host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const timer = setTimeout(
    () =>
      settle.reject(
        new Error(
          `no redirect came back within ${timeoutMs} ms (DEFAULT_UPSTREAM_OAUTH_LOGIN_TIMEOUT_MS); open the URL printed above and finish the login`,
        ),
      ),
    timeoutMs,
  );
  const actual = new URL(configured);
  actual.port = String(port);
  return {
    url: actual.toString(),
    callback,
    close() {
      clearTimeout(timer);
      server.closeAllConnections();
      server.close();
    },
  };
}

/** A client and transport of the server's revision, with `provider`; `finish` redeems a callback. */
async function openClient(
  config: RemoteServerConfig,
  provider: UpstreamOAuthProvider,
): Promise<{
  connect(): Promise<void>;
  finish(params: URLSearchParams): Promise<void>;
  close(): Promise<void>;
}> {
  const url = new URL(config.url);
  const requestInit = { headers: config.headers };
  if (config.protocol === '2025-11-25' || config.transport === 'sse') {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const transport =
      config.transport === 'http'
        ? new (
            await import('@modelcontextprotocol/sdk/client/streamableHttp.js')
          ).StreamableHTTPClientTransport(url, {
            requestInit,
            authProvider: provider,
          })
        : new (await import('@modelcontextprotocol/sdk/client/sse.js')).SSEClientTransport(url, {
            requestInit,
            authProvider: provider,
          });
    const client = new Client({ name: 'codecall', version: '0.1.0' });
    return {
      connect: () => client.connect(transport),
      finish: (params) => transport.finishAuth(params.get('code') ?? ''),
      close: () => client.close(),
    };
  }
  const sdk = await loadClientModule();
  const transport = new sdk.StreamableHTTPClientTransport(url, {
    requestInit,
    authProvider: provider as never,
  });
  const client = new sdk.Client(
    { name: 'codecall', version: '0.1.0' },
    { versionNegotiation: { mode: config.protocol === 'auto' ? 'auto' : { pin: '2026-07-28' } } },
  );
  return {
    connect: () => client.connect(transport),
    // The v2 transport checks the callback's `iss` against the issuer (RFC 9207) itself.
    finish: (params) => transport.finishAuth(params),
    close: () => client.close(),
  };
}

/**
 * Logs in to one upstream server interactively (`authorization_code`) and stores its tokens.
 *
 * @example
 * ```ts
 * const result = await loginUpstream({ config, onAuthorizationUrl: (url) => console.log(`Open ${url}`) });
 * ```
 */
export async function loginUpstream(options: UpstreamLoginOptions): Promise<UpstreamLoginResult> {
  const { config } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_UPSTREAM_OAUTH_LOGIN_TIMEOUT_MS;
  const state = randomBytes(24).toString('base64url');
  const listener = await listenForCallback(config.oauth.redirectUrl, state, timeoutMs);
  let asked = false;
  const provider = new UpstreamOAuthProvider(config.name, config.oauth, {
    redirectUrl: listener.url,
    state,
    onAuthorizationUrl: async (url) => {
      asked = true;
      await options.onAuthorizationUrl(url);
    },
  });
  try {
    // The SDK's pattern: connect, which answers 401 and sends the person to the authorization
    // URL; redeem the callback on that same transport; connect again with the new tokens.
    const first = await openClient(config, provider);
    try {
      try {
        await first.connect();
        return { outcome: 'already', tokenFile: config.oauth.tokenFile };
      } catch (error) {
        if (!asked) throw error;
      }
      const { params } = await listener.callback;
      await first.finish(params);
    } finally {
      await first.close().catch(() => undefined);
    }
    const second = await openClient(config, provider);
    try {
      await second.connect();
    } finally {
      await second.close().catch(() => undefined);
    }
    return { outcome: 'logged-in', tokenFile: config.oauth.tokenFile };
  } catch (error) {
    const reason = (error as Error)?.message ?? String(error);
    throw new CodecallError(
      'SERVER_START_FAILED',
      `Login to MCP server "${config.name}" failed: ${reason}. Fix: check mcpServers.${config.name}.url and .oauth, then run \`codecall auth login ${config.name}\` again.`,
      {
        details: { server: config.name, servers: [config.name], stderrTail: '', reason, timedOut: false },
        cause: error,
      },
    );
  } finally {
    listener.close();
  }
}
