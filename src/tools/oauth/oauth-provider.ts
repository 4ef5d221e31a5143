/**
 * @module
 * The `OAuthClientProvider` codecall hands to the MCP SDK's HTTP transports (1.x and v2 share the
 * interface) for a server with `mcpServers.<name>.oauth`. The SDK runs the whole flow (protected
 * resource metadata, authorization server discovery, dynamic registration or a client ID
 * metadata document, PKCE, resource indicators, refresh on a 401); this class only keeps its
 * state in the server's token file and decides what happens when a person is needed:
 *
 * - `client_credentials`: no redirect URL, so the SDK takes its non-interactive path and
 *   {@link UpstreamOAuthProvider.prepareTokenRequest} names the grant.
 * - `authorization_code` during `codecall auth login`: the authorization URL goes to the login.
 * - `authorization_code` anywhere else (`run`, `serve`, `worker`): no person to ask, so the
 *   connection fails with an error naming `codecall auth login <server>`.
 *
 * Token values are never put in a message or a log line.
 */
import { createHash } from 'node:crypto';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { UpstreamOAuthConfig } from '../../config/types.js';
import { CodecallError } from '../../errors.js';
import { OAuthTokenStore } from './token-store.js';

/** What an interactive login supplies: where the browser is sent back, and who shows the URL. */
export interface OAuthLoginHooks {
  /** The redirect URL actually listened on (the configured port 0 resolved). */
  redirectUrl: string;
  /** The `state` sent with the authorization request and expected back. */
  state: string;
  /** Shows the authorization URL to the person (prints it, opens a browser). */
  onAuthorizationUrl(url: URL): void | Promise<void>;
}

/** The error of a server that needs a login nobody is there to do. */
export function loginRequiredError(server: string, why: string): CodecallError {
  const reason = `${why}; run \`codecall auth login ${server}\` once to log in (tokens are kept and refreshed)`;
  return new CodecallError('SERVER_START_FAILED', `MCP server "${server}" did not start: ${reason}.`, {
    details: { server, servers: [server], stderrTail: '', reason, timedOut: false },
  });
}

/** Tells two token sets apart without keeping a token value: the refresh token, else the access token. */
function tokenIdentity(tokens: unknown): string | undefined {
  if (typeof tokens !== 'object' || tokens === null) return undefined;
  const { refresh_token: refresh, access_token: access } = tokens as Record<string, unknown>;
  const value = typeof refresh === 'string' ? refresh : typeof access === 'string' ? access : undefined;
  return value === undefined ? undefined : createHash('sha256').update(value).digest('base64url');
}

/** {@link OAuthClientProvider} over one server's token file. */
export class UpstreamOAuthProvider implements OAuthClientProvider {
  readonly store: OAuthTokenStore;
  /** Which stored tokens this provider last handed to the SDK (or saved), by {@link tokenIdentity}. */
  #used: string | undefined;
  /** The client ID metadata document (SEP-991), used when the authorization server supports it. */
  readonly clientMetadataUrl?: string;

  constructor(
    private readonly server: string,
    private readonly oauth: UpstreamOAuthConfig,
    private readonly login?: OAuthLoginHooks,
  ) {
    this.store = new OAuthTokenStore(oauth.tokenFile);
    if (oauth.clientMetadataUrl !== undefined) this.clientMetadataUrl = oauth.clientMetadataUrl;
  }

  get redirectUrl(): string | undefined {
    if (this.oauth.grant === 'client_credentials') return undefined;
    return this.login?.redirectUrl ?? this.oauth.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const machine = this.oauth.grant === 'client_credentials';
    return {
      client_name: 'codecall',
      redirect_uris: machine ? [] : [this.redirectUrl!],
      grant_types: machine ? ['client_credentials'] : ['authorization_code', 'refresh_token'],
      response_types: machine ? [] : ['code'],
      token_endpoint_auth_method: this.oauth.clientSecret !== undefined ? 'client_secret_basic' : 'none',
      ...(this.oauth.scope !== undefined ? { scope: this.oauth.scope } : {}),
    };
  }

  state(): string {
    if (!this.login) throw loginRequiredError(this.server, 'it needs an OAuth login');
    return this.login.state;
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const stored = (await this.store.read()).clientInformation as OAuthClientInformationMixed | undefined;
    const { clientId, clientSecret } = this.oauth;
    if (clientId === undefined) return stored;
    // A configured client wins; what the SDK stored for it (with its issuer stamp) is kept.
    if (stored?.client_id === clientId) return stored;
    return { client_id: clientId, ...(clientSecret !== undefined ? { client_secret: clientSecret } : {}) };
  }

  async saveClientInformation(information: OAuthClientInformationMixed): Promise<void> {
    await this.store.update((state) => ({ ...state, clientInformation: { ...information } }));
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    const tokens = (await this.store.read()).tokens as OAuthTokens | undefined;
    this.#used = tokenIdentity(tokens);
    return tokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    this.#used = tokenIdentity(tokens);
    await this.store.update((state) => ({ ...state, tokens: { ...tokens }, tokensSavedAt: Date.now() }));
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    if (!this.login)
      throw loginRequiredError(
        this.server,
        'it answered 401 (OAuth authorization required) and no usable token is stored',
      );
    await this.login.onAuthorizationUrl(authorizationUrl);
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    await this.store.update((state) => ({ ...state, codeVerifier }));
  }

  async codeVerifier(): Promise<string> {
    const verifier = (await this.store.read()).codeVerifier;
    if (verifier === undefined) throw loginRequiredError(this.server, 'no login is in progress');
    return verifier;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    await this.store.update((state) => {
      const next = { ...state };
      // The SDK drops the tokens when a refresh is refused (`invalid_grant`). Another process (a
      // second worker, a serve node) on the same token file may have refreshed them a moment
      // before, spending the refresh token this one had read: those newer tokens are kept, and
      // the SDK's retry reads and uses them instead of asking for a login nobody can do.
      const newer = state.tokens !== undefined && tokenIdentity(state.tokens) !== this.#used;
      if ((scope === 'all' || scope === 'tokens') && !newer) {
        delete next.tokens;
        delete next.tokensSavedAt;
      }
      if (scope === 'all' || scope === 'client') delete next.clientInformation;
      if (scope === 'all' || scope === 'verifier') delete next.codeVerifier;
      if (scope === 'all' || scope === 'discovery') delete next.discoveryState;
      return next;
    });
  }

  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (this.oauth.grant !== 'client_credentials') return undefined;
    const params = new URLSearchParams({ grant_type: 'client_credentials' });
    const wanted = scope ?? this.oauth.scope;
    if (wanted !== undefined) params.set('scope', wanted);
    return params;
  }

  async saveDiscoveryState(discovery: OAuthDiscoveryState): Promise<void> {
    await this.store.update((state) => ({ ...state, discoveryState: { ...discovery } }));
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    return (await this.store.read()).discoveryState as OAuthDiscoveryState | undefined;
  }
}
