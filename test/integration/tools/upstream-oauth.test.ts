/**
 * OAuth for upstream servers (`mcpServers.<name>.oauth`), against a real protected MCP server over
 * loopback HTTP: the SDK's expense server behind a small resource server + authorization server
 * (RFC 9728 protected resource metadata, RFC 8414 metadata, a token endpoint for the
 * `client_credentials` and `refresh_token` grants, 401 with `WWW-Authenticate` otherwise). The SDK
 * client's own auth code runs the flow; these tests hold codecall's part of it: the token file
 * (mode 0600 in a 0700 folder), the refresh of an expired token, the error naming
 * `codecall auth login` when a 401 comes and nothing is stored, and no secret in any output.
 * The `authorization_code` login itself runs under the conformance suite's `auth/*` scenarios
 * (test/e2e/upstream-conformance.test.ts), through the real `codecall auth login`.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { createExpenseServer } from '../../../src/testing/servers/expense-server.js';
import { UpstreamOAuthProvider } from '../../../src/tools/oauth/oauth-provider.js';
import { ToolPool } from '../../../src/tools/index.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLIENT_ID = 'codecall-test-client';
const CLIENT_SECRET = 'sEcReT-client-9f8e7d';

interface Issued {
  access: string;
  expiresAt: number;
}

/** A protected MCP endpoint and its authorization server on one loopback port. */
class ProtectedServer {
  readonly grants: string[] = [];
  readonly issued: Issued[] = [];
  /** Refresh tokens the token endpoint accepts. */
  readonly refreshTokens = new Set<string>();
  accessLifetimeSeconds = 3600;
  private http!: Server;
  private counter = 0;
  base = '';

  async start(): Promise<void> {
    this.http = createServer((request, response) => {
      this.handle(request, response).catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(500);
        response.end(String(error));
      });
    });
    await new Promise<void>((resolve) => this.http.listen(0, '127.0.0.1', () => resolve()));
    this.base = `http://127.0.0.1:${(this.http.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  issue(): { access_token: string; token_type: string; expires_in: number; refresh_token: string } {
    const access = `access-${++this.counter}-${Math.random().toString(36).slice(2)}`;
    const refresh = `refresh-${this.counter}-${Math.random().toString(36).slice(2)}`;
    this.issued.push({ access, expiresAt: Date.now() + this.accessLifetimeSeconds * 1000 });
    this.refreshTokens.add(refresh);
    return {
      access_token: access,
      token_type: 'Bearer',
      expires_in: this.accessLifetimeSeconds,
      refresh_token: refresh,
    };
  }

  private async body(request: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.base);
    const json = (status: number, value: unknown, headers: Record<string, string> = {}): void => {
      response
        .writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers })
        .end(JSON.stringify(value));
    };
    if (url.pathname.startsWith('/.well-known/oauth-protected-resource'))
      return json(200, { resource: `${this.base}/mcp`, authorization_servers: [this.base] });
    if (url.pathname.startsWith('/.well-known/oauth-authorization-server'))
      return json(200, {
        issuer: this.base,
        authorization_endpoint: `${this.base}/authorize`,
        token_endpoint: `${this.base}/token`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'client_credentials', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      });
    if (url.pathname === '/token') {
      const form = new URLSearchParams(await this.body(request));
      const grant = form.get('grant_type') ?? '';
      this.grants.push(grant);
      const basic = request.headers.authorization ?? '';
      const clientOk =
        basic === `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}` ||
        (form.get('client_id') === CLIENT_ID && form.get('client_secret') === CLIENT_SECRET);
      if (!clientOk) return json(401, { error: 'invalid_client' });
      if (grant === 'client_credentials') return json(200, this.issue());
      if (grant === 'refresh_token' && this.refreshTokens.delete(form.get('refresh_token') ?? ''))
        return json(200, this.issue());
      return json(400, { error: 'invalid_grant' });
    }
    if (url.pathname === '/mcp') {
      const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
      const token = this.issued.find((t) => t.access === bearer);
      if (!token || token.expiresAt <= Date.now())
        return json(
          401,
          { error: 'invalid_token' },
          {
            'www-authenticate': `Bearer resource_metadata="${this.base}/.well-known/oauth-protected-resource/mcp"`,
          },
        );
      const body = request.method === 'POST' ? JSON.parse(await this.body(request)) : undefined;
      const transport = new StreamableHTTPServerTransport({});
      const server = createExpenseServer();
      await server.connect(transport);
      response.on('close', () => void server.close());
      await transport.handleRequest(request, response, body);
      return;
    }
    response.writeHead(404).end();
  }
}

const protectedServer = new ProtectedServer();
const dirs: string[] = [];
beforeAll(() => protectedServer.start());
afterAll(async () => {
  await protectedServer.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Everything written to stdout and stderr (and console) while `body` runs. */
async function capture<T>(
  body: () => Promise<T>,
): Promise<{ value: T | undefined; error: unknown; output: string }> {
  let output = '';
  const write = (chunk: unknown): boolean => {
    output += String(chunk);
    return true;
  };
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  const consoleMethods = ['log', 'info', 'warn', 'error', 'debug'] as const;
  const saved = consoleMethods.map((m) => console[m]);
  process.stdout.write = write as typeof process.stdout.write;
  process.stderr.write = write as typeof process.stderr.write;
  for (const m of consoleMethods)
    console[m] = (...args: unknown[]) => void write(`${args.map(String).join(' ')}\n`);
  try {
    return { value: await body(), error: undefined, output };
  } catch (error) {
    return { value: undefined, error, output };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
    consoleMethods.forEach((m, i) => (console[m] = saved[i]!));
  }
}

function configFor(oauth: Record<string, unknown>) {
  const state = mkdtempSync(join(tmpdir(), 'codecall-oauth-state-'));
  dirs.push(state);
  const config = parseConfig(
    {
      mcpServers: {
        expenses: { type: 'http', url: `${protectedServer.base}/mcp`, oauth, connectTimeoutMs: 60_000 },
      },
    },
    { file: join(state, 'codecall.json'), env: { CODECALL_STATE_DIR: state } },
  );
  const server = config.mcpServers.expenses!;
  if (server.transport === 'stdio' || !server.oauth) throw new Error('expected an oauth server');
  return { config, tokenFile: server.oauth.tokenFile };
}

let pool: ToolPool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

describe('OAuth for upstream servers', { timeout: 120_000 }, () => {
  it('client_credentials: gets a token without a person, keeps it mode 0600, and never prints a secret', async () => {
    const { config, tokenFile } = configFor({
      grant: 'client_credentials',
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
    });
    const before = protectedServer.issued.length;
    const run = await capture(async () => {
      pool = await ToolPool.open(config, { requireAll: true });
      return pool.callResult('expenses.get_team_members', {}, { caller: 'direct' });
    });
    expect(run.error).toBeUndefined();
    expect(JSON.stringify(run.value)).toContain('members');
    expect(protectedServer.grants).toContain('client_credentials');
    const access = protectedServer.issued[before]!.access;
    const stored = JSON.parse(readFileSync(tokenFile, 'utf8')) as { tokens: { access_token: string } };
    expect(stored.tokens.access_token).toBe(access);
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(tokenFile)).mode & 0o777).toBe(0o700);
    const status = JSON.stringify(pool!.serverStatus());
    for (const secret of [CLIENT_SECRET, access]) {
      expect(run.output).not.toContain(secret);
      expect(status).not.toContain(secret);
    }
  });

  it('refreshes an expired token with the stored refresh token, and stores the new one', async () => {
    const { config, tokenFile } = configFor({
      grant: 'authorization_code',
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
    });
    // A login done earlier: its access token has expired since, its refresh token is still good.
    const old = protectedServer.issue();
    protectedServer.issued.at(-1)!.expiresAt = Date.now() - 1;
    mkdirSync(dirname(tokenFile), { recursive: true, mode: 0o700 });
    writeFileSync(tokenFile, JSON.stringify({ tokens: old, tokensSavedAt: Date.now() - 7_200_000 }), {
      mode: 0o600,
    });
    const grants = protectedServer.grants.length;
    const run = await capture(async () => {
      pool = await ToolPool.open(config, { requireAll: true });
      return pool.callResult('expenses.get_team_members', {}, { caller: 'direct' });
    });
    expect(run.error).toBeUndefined();
    expect(protectedServer.grants.slice(grants)).toEqual(['refresh_token']);
    const stored = JSON.parse(readFileSync(tokenFile, 'utf8')) as { tokens: { access_token: string } };
    expect(stored.tokens.access_token).toBe(protectedServer.issued.at(-1)!.access);
    expect(stored.tokens.access_token).not.toBe(old.access_token);
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    for (const secret of [CLIENT_SECRET, old.refresh_token, stored.tokens.access_token])
      expect(run.output).not.toContain(secret);
  });

  it("two processes refreshing one token file at once: the one whose refresh token was spent keeps the other's new tokens", async () => {
    const { config, tokenFile } = configFor({
      grant: 'authorization_code',
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
    });
    const server = config.mcpServers.expenses!;
    if (server.transport === 'stdio' || !server.oauth) throw new Error('expected an oauth server');
    const old = protectedServer.issue();
    mkdirSync(dirname(tokenFile), { recursive: true, mode: 0o700 });
    writeFileSync(tokenFile, JSON.stringify({ tokens: old, tokensSavedAt: Date.now() }), { mode: 0o600 });
    // Two providers on one token file, as two workers (or serve nodes) with one state folder.
    const first = new UpstreamOAuthProvider('expenses', server.oauth);
    const second = new UpstreamOAuthProvider('expenses', server.oauth);
    const serverUrl = `${protectedServer.base}/mcp`;
    // The second one has read the stored refresh token; its token request is held until the
    // first one has refreshed with the same refresh token (which the server then no longer takes).
    let firstDone!: () => void;
    const firstRefreshed = new Promise<void>((resolve) => (firstDone = resolve));
    let secondAsks!: () => void;
    const secondAsking = new Promise<void>((resolve) => (secondAsks = resolve));
    const held: typeof fetch = async (input, init) => {
      if (String(input instanceof Request ? input.url : input).endsWith('/token')) {
        secondAsks();
        await firstRefreshed;
      }
      return fetch(input, init);
    };
    const grants = protectedServer.grants.length;
    const run = await capture(async () => {
      const racing = auth(second, { serverUrl, fetchFn: held });
      await secondAsking;
      expect(await auth(first, { serverUrl })).toBe('AUTHORIZED');
      firstDone();
      return racing;
    });
    expect(run.error).toBeUndefined();
    expect(run.value).toBe('AUTHORIZED');
    // The first refresh, the second's refused one (its refresh token spent), its retry with the first's.
    expect(protectedServer.grants.slice(grants)).toEqual(['refresh_token', 'refresh_token', 'refresh_token']);
    const stored = JSON.parse(readFileSync(tokenFile, 'utf8')) as { tokens: { access_token: string } };
    expect(stored.tokens.access_token).toBe(protectedServer.issued.at(-1)!.access);
    for (const secret of [CLIENT_SECRET, old.refresh_token, stored.tokens.access_token])
      expect(run.output).not.toContain(secret);
  });

  it('codecall auth status shows the stored token without its value, and logout deletes it', async () => {
    const { config, tokenFile } = configFor({
      grant: 'client_credentials',
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
    });
    pool = await ToolPool.open(config, { requireAll: true });
    const access = protectedServer.issued.at(-1)!.access;
    const state = dirname(dirname(tokenFile));
    const configFile = join(state, 'codecall.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        mcpServers: {
          expenses: {
            type: 'http',
            url: `${protectedServer.base}/mcp`,
            oauth: { grant: 'client_credentials', clientId: CLIENT_ID, clientSecret: '${TEST_SECRET}' },
          },
        },
      }),
    );
    const cli = (...args: string[]) =>
      run(process.execPath, [join(ROOT, 'bin', 'codecall.js'), 'auth', ...args, '--config', configFile], {
        env: { ...process.env, CODECALL_STATE_DIR: state, TEST_SECRET: CLIENT_SECRET },
      });
    const status = await cli('status', '--json');
    const rows = (JSON.parse(status.stdout) as { servers: Record<string, unknown>[] }).servers;
    expect(rows).toMatchObject([
      { server: 'expenses', grant: 'client_credentials', token: true, refreshable: true },
    ]);
    for (const secret of [access, CLIENT_SECRET]) expect(status.stdout + status.stderr).not.toContain(secret);
    const logout = await cli('logout', 'expenses');
    expect(logout.stdout).toContain('Forgot the tokens of "expenses"');
    expect(() => statSync(tokenFile)).toThrow();
  });

  it('a 401 with no stored token fails the server with an error naming `codecall auth login <server>`', async () => {
    const { config } = configFor({
      grant: 'authorization_code',
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
    });
    const run = await capture(() => ToolPool.open(config, { requireAll: true }));
    expect(run.error).toBeDefined();
    const message = (run.error as Error).message;
    expect(message).toContain('MCP server "expenses"');
    expect(message).toContain('codecall auth login expenses');
    expect(message).not.toContain(CLIENT_SECRET);
    expect(run.output).not.toContain(CLIENT_SECRET);
  });
});
