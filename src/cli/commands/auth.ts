/**
 * @module
 * `codecall auth login|status|logout`: OAuth tokens of upstream MCP servers (docs/upstream-auth.md).
 * Never prints a token or a client secret.
 */
import { DEFAULT_UPSTREAM_OAUTH_LOGIN_TIMEOUT_MS } from '../../config/defaults.js';
import { loadConfig } from '../../config/index.js';
import type { CodecallConfig, RemoteServerConfig, UpstreamOAuthConfig } from '../../config/types.js';
import { loginUpstream } from '../../tools/oauth/login.js';
import { OAuthTokenStore } from '../../tools/oauth/token-store.js';
import { parseCommandArgs, UsageError, type CliCommand, type CliIo } from '../command.js';
import { configNoticeWriter } from '../config-notices.js';
import { neutralizeControls } from '../terminal-text.js';
import { canPrompt, ensureConfigTrusted } from '../trust.js';
import { authHelp } from './auth.help.js';

type OAuthServer = RemoteServerConfig & { oauth: UpstreamOAuthConfig };

function oauthServers(config: CodecallConfig): OAuthServer[] {
  return Object.values(config.mcpServers).filter(
    (server): server is OAuthServer => server.transport !== 'stdio' && server.oauth !== undefined,
  );
}

function pick(config: CodecallConfig, name: string | undefined, verb: string): OAuthServer {
  if (name === undefined) throw new UsageError(`codecall auth ${verb} needs a server name.`);
  const servers = oauthServers(config);
  const server = servers.find((s) => s.name === name);
  if (!server)
    throw new UsageError(
      `no server "${name}" with an "oauth" section in the configuration${servers.length > 0 ? ` (servers with one: ${servers.map((s) => s.name).join(', ')})` : ''}. Fix: add "oauth": {} to mcpServers.${name} (see docs/upstream-auth.md).`,
    );
  return server;
}

async function status(server: OAuthServer): Promise<Record<string, unknown>> {
  const state = await new OAuthTokenStore(server.oauth.tokenFile).read();
  const tokens = state.tokens;
  const expiresIn = typeof tokens?.expires_in === 'number' ? tokens.expires_in : undefined;
  const savedAt = state.tokensSavedAt;
  return {
    server: server.name,
    grant: server.oauth.grant,
    tokenFile: server.oauth.tokenFile,
    token: tokens !== undefined,
    savedAt: savedAt !== undefined ? new Date(savedAt).toISOString() : undefined,
    expiresAt:
      savedAt !== undefined && expiresIn !== undefined
        ? new Date(savedAt + expiresIn * 1000).toISOString()
        : undefined,
    refreshable: typeof tokens?.refresh_token === 'string',
    clientRegistered: state.clientInformation !== undefined,
  };
}

async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs({
    args: argv,
    options: {
      config: { type: 'string' },
      timeout: { type: 'string' },
      json: { type: 'boolean' },
    },
    allowPositionals: true,
  });
  const [verb, name, ...rest] = positionals;
  if (verb !== 'login' && verb !== 'status' && verb !== 'logout')
    throw new UsageError(`codecall auth needs login, status or logout; got ${JSON.stringify(verb ?? '')}.`);
  if (rest.length > 0) throw new UsageError(`unexpected arguments: ${rest.join(' ')}`);
  const rawTimeout = values.timeout as string | undefined;
  const timeoutMs = rawTimeout === undefined ? DEFAULT_UPSTREAM_OAUTH_LOGIN_TIMEOUT_MS : Number(rawTimeout);
  if (rawTimeout !== undefined && (!/^\d+$/.test(rawTimeout) || timeoutMs < 1))
    throw new UsageError(`--timeout must be a positive number of milliseconds; got "${rawTimeout}".`);
  const configPath = values.config as string | undefined;
  // A login sends this configuration's client id to its URLs: ask first, as `tools` does.
  if (verb === 'login') await ensureConfigTrusted(io, { config: configPath, interactive: canPrompt(io) });
  const config = await loadConfig({
    ...(configPath !== undefined ? { path: configPath } : {}),
    cwd: io.cwd,
    env: io.env,
    onNotice: configNoticeWriter(io),
  });
  if (verb === 'status') {
    const servers = name === undefined ? oauthServers(config) : [pick(config, name, verb)];
    const rows = await Promise.all(servers.map(status));
    if (values.json === true) io.stdout.write(`${JSON.stringify({ servers: rows })}\n`);
    else if (rows.length === 0) io.stdout.write('No server has an "oauth" section.\n');
    else
      for (const row of rows)
        io.stdout.write(
          neutralizeControls(
            `${String(row.server)}: ${String(row.grant)}, ${row.token ? `token saved ${String(row.savedAt)}${row.expiresAt ? `, expires ${String(row.expiresAt)}` : ''}${row.refreshable ? ', refreshable' : ''}` : 'no token (run `codecall auth login ' + String(row.server) + '`)'}\n`,
          ),
        );
    return 0;
  }
  const server = pick(config, name, verb);
  if (verb === 'logout') {
    const removed = await new OAuthTokenStore(server.oauth.tokenFile).remove();
    io.stdout.write(
      removed ? `Forgot the tokens of "${server.name}".\n` : `No tokens were stored for "${server.name}".\n`,
    );
    return 0;
  }
  const result = await loginUpstream({
    config: server,
    timeoutMs,
    onAuthorizationUrl: (url) => {
      io.stdout.write(
        `Open this URL in a browser to log in to "${server.name}" (waiting up to ${Math.round(timeoutMs / 1000)} s):\n\n  ${url.toString()}\n\n`,
      );
    },
  });
  io.stdout.write(
    result.outcome === 'already'
      ? `"${server.name}" already accepts the stored credentials; nothing to do.\n`
      : `Logged in to "${server.name}"; tokens stored in ${result.tokenFile}.\n`,
  );
  return 0;
}

/** `codecall auth`. */
export const authCommand: CliCommand = {
  ...authHelp,
  run,
};
