/**
 * The small parts of `codecall serve`: argument parsing, loopback detection, Host/Origin and
 * bearer checks, the run limiter, the search-result renderer.
 */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/cli/command.js';
import { parseServeArgs, resolveServeSettings } from '../../../src/cli/commands/serve.js';
import { parseConfig } from '../../../src/config/index.js';
import {
  assertSafeBinding,
  checkHostAndOrigin,
  hasBearerToken,
  isLoopbackHost,
  RunLimiter,
} from '../../../src/server/index.js';
import { checkStateChangeOrigin } from '../../../src/server/http-security.js';
import { renderSearchResult } from '../../../src/meta/render-search-result.js';
import type { CatalogTool } from '../../../src/tools/index.js';

describe('parseServeArgs', () => {
  it('defaults to stdio; --http takes host, port, token, origins', () => {
    expect(parseServeArgs([])).toEqual({ http: false, allowedOrigins: [], passThrough: true });
    expect(resolveServeSettings(parseServeArgs([]), parseConfig({}, { file: 'memory' }).serve)).toEqual({
      http: false,
      host: '127.0.0.1',
      port: 3737,
      allowedOrigins: [],
      maxConcurrentRuns: 4,
      passThrough: true,
    });
    const args = parseServeArgs([
      '--http',
      '--host=0.0.0.0',
      '--port',
      '0',
      '--token',
      't',
      '--allow-origin',
      'https://a.example',
      '--config',
      'x.json',
      '--max-concurrent-runs',
      '2',
      '--no-pass-through',
    ]);
    expect(args).toEqual({
      http: true,
      host: '0.0.0.0',
      port: 0,
      token: 't',
      allowedOrigins: ['https://a.example'],
      config: 'x.json',
      maxConcurrentRuns: 2,
      passThrough: false,
    });
  });

  it('takes the token from CODECALL_SERVE_TOKEN unless --token is given; empty means none', () => {
    expect(parseServeArgs(['--http'], { CODECALL_SERVE_TOKEN: 'env' }).token).toBe('env');
    expect(parseServeArgs(['--http', '--token', 'flag'], { CODECALL_SERVE_TOKEN: 'env' }).token).toBe('flag');
    expect(parseServeArgs(['--http'], { CODECALL_SERVE_TOKEN: '' }).token).toBeUndefined();
    expect(parseServeArgs([], { CODECALL_SERVE_TOKEN: 'env' }).token).toBeUndefined();
  });

  it('--mcp-2026 takes nothing, true or false; --no-mcp-2026 is false; serve.mcp2026 defaults to true', () => {
    expect(parseServeArgs([]).mcp2026).toBeUndefined();
    expect(parseServeArgs(['--mcp-2026']).mcp2026).toBe(true);
    expect(parseServeArgs(['--mcp-2026=true']).mcp2026).toBe(true);
    expect(parseServeArgs(['--mcp-2026=false']).mcp2026).toBe(false);
    expect(parseServeArgs(['--http', '--no-mcp-2026']).mcp2026).toBe(false);
    expect(() => parseServeArgs(['--mcp-2026=no'])).toThrow(/--mcp-2026 takes true or false.*got "no"/);
    expect(() => parseServeArgs(['--mcp-2026', '--no-mcp-2026'])).toThrow(/contradict/);
    expect(parseConfig({}, { file: 'memory' }).serve.mcp2026).toBe(true);
    expect(parseConfig({ serve: { mcp2026: false } }, { file: 'memory' }).serve.mcp2026).toBe(false);
  });

  it("merges flag > environment > the configuration's serve section > default", () => {
    const { serve } = parseConfig(
      {
        serve: {
          host: '0.0.0.0',
          port: 8080,
          token: '${CFG_TOKEN}',
          allowedOrigins: ['https://app.example'],
          maxConcurrentRuns: 3,
        },
      },
      { file: '/project/codecall.json', env: { CFG_TOKEN: 'from-config' } },
    );
    expect(resolveServeSettings(parseServeArgs(['--http'], {}), serve)).toEqual({
      http: true,
      host: '0.0.0.0',
      port: 8080,
      token: 'from-config',
      allowedOrigins: ['https://app.example'],
      maxConcurrentRuns: 3,
      passThrough: true,
    });
    const env = { CODECALL_SERVE_TOKEN: 'from-env' };
    expect(resolveServeSettings(parseServeArgs(['--http'], env), serve).token).toBe('from-env');
    const flags = parseServeArgs(
      [
        '--http',
        '--host',
        '127.0.0.1',
        '--port',
        '0',
        '--token',
        'from-flag',
        '--allow-origin',
        'https://b.example',
        '--max-concurrent-runs',
        '1',
      ],
      env,
    );
    expect(resolveServeSettings(flags, serve)).toMatchObject({
      host: '127.0.0.1',
      port: 0,
      token: 'from-flag',
      allowedOrigins: ['https://b.example'],
      maxConcurrentRuns: 1,
    });
    // stdio ignores the HTTP token; an empty expanded token is no token.
    expect(resolveServeSettings(parseServeArgs([], {}), serve).token).toBeUndefined();
    const empty = parseConfig({ serve: { token: '${CFG_TOKEN:-}' } }, { file: '/p/c.json', env: {} });
    expect(empty.serve.token).toBeUndefined();
    expect(resolveServeSettings(parseServeArgs(['--http'], {}), empty.serve).token).toBeUndefined();
  });

  it('rejects a bad serve section, naming the key', () => {
    const check = (serve: unknown): string => {
      try {
        parseConfig({ serve }, { file: '/p/c.json', env: {} });
      } catch (error) {
        return (error as Error).message;
      }
      return 'accepted';
    };
    expect(check({ tokn: 'x' })).toMatch(/serve: unknown key "tokn"\. Fix: did you mean "token"\?/);
    expect(check({ port: 70_000 })).toMatch(/serve\.port: must be at most 65535/);
    expect(check({ maxConcurrentRuns: 0 })).toMatch(/serve\.maxConcurrentRuns/);
    expect(check({ allowedOrigins: ['https://a.example/'] })).toMatch(
      /serve\.allowedOrigins\[0\]: .*Fix: write "https:\/\/a\.example"/,
    );
  });

  it('rejects bad usage with a message naming the flag', () => {
    expect(() => parseServeArgs(['--port', '80'])).toThrow(/apply to --http only/);
    expect(() => parseServeArgs(['--http', '--port', 'abc'])).toThrow(UsageError);
    expect(() => parseServeArgs(['--http', '--port', '70000'])).toThrow(/at most 65535/);
    expect(() => parseServeArgs(['--http', '--max-concurrent-runs', '0'])).toThrow(/positive/);
    expect(() => parseServeArgs(['--confg', 'x'])).toThrow(/unknown option "--confg"/);
    expect(() => parseServeArgs(['--config'])).toThrow(/--config needs a value/);
    expect(() => parseServeArgs(['stray'])).toThrow(/unknown argument "stray"/);
  });
});

describe('HTTP security checks', () => {
  it('knows loopback hosts', () => {
    for (const host of [
      '127.0.0.1',
      '127.1.2.3',
      'localhost',
      'LOCALHOST.',
      '::1',
      '[::1]',
      '::ffff:127.0.0.1',
    ])
      expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '192.168.1.10', 'example.com', '128.0.0.1', 'localhost.example.com'])
      expect(isLoopbackHost(host), host).toBe(false);
  });

  it('refuses non-loopback binds without a token, and empty tokens', () => {
    expect(() => assertSafeBinding('127.0.0.1', undefined)).not.toThrow();
    expect(() => assertSafeBinding('0.0.0.0', undefined)).toThrow(/without a bearer token/);
    expect(() => assertSafeBinding('0.0.0.0', 'secret')).not.toThrow();
    expect(() => assertSafeBinding('127.0.0.1', '  ')).toThrow(/token is empty/);
  });

  it('checks Host on loopback and Origin always', () => {
    const loopback = { loopback: true, allowedHosts: [], allowedOrigins: [] };
    expect(checkHostAndOrigin({ host: '127.0.0.1:3737' }, loopback)).toBeUndefined();
    expect(
      checkHostAndOrigin({ host: 'localhost:3737', origin: 'http://localhost:6274' }, loopback),
    ).toBeUndefined();
    expect(checkHostAndOrigin({ host: '[::1]:3737' }, loopback)).toBeUndefined();
    expect(checkHostAndOrigin({ host: 'attacker.example:3737' }, loopback)).toMatch(/Host/);
    expect(checkHostAndOrigin({}, loopback)).toMatch(/Host/);
    expect(checkHostAndOrigin({ host: 'localhost', origin: 'https://attacker.example' }, loopback)).toMatch(
      /--allow-origin https:\/\/attacker\.example/,
    );
    expect(checkHostAndOrigin({ host: 'localhost', origin: 'null' }, loopback)).toMatch(/Origin/);
    expect(checkHostAndOrigin({ host: 'localhost', origin: 'file://x' }, loopback)).toMatch(/Origin/);
    const open = { loopback: false, allowedHosts: [], allowedOrigins: ['https://app.example'] };
    expect(checkHostAndOrigin({ host: 'server.lan:3737' }, open)).toBeUndefined();
    expect(checkHostAndOrigin({ host: 'server.lan', origin: 'https://app.example' }, open)).toBeUndefined();
    expect(checkHostAndOrigin({ host: 'server.lan', origin: 'https://other.example' }, open)).toMatch(
      /Origin/,
    );
    const pinned = { loopback: false, allowedHosts: ['server.lan'], allowedOrigins: [] };
    expect(checkHostAndOrigin({ host: 'server.lan:1' }, pinned)).toBeUndefined();
    expect(checkHostAndOrigin({ host: 'evil.lan:1' }, pinned)).toMatch(/Host/);
  });

  it('refuses writes from another origin, even another loopback port; reads and header-less clients pass', () => {
    const policy = { allowedOrigins: ['https://app.example'] };
    const host = '127.0.0.1:3737';
    const check = (method: string, headers: { origin?: string; secFetchSite?: string }) =>
      checkStateChangeOrigin(method, { host, ...headers }, policy);
    expect(check('POST', {})).toBeUndefined();
    expect(check('POST', { origin: 'http://127.0.0.1:3737', secFetchSite: 'same-origin' })).toBeUndefined();
    expect(check('DELETE', { origin: 'http://127.0.0.1:3737/' })).toBeUndefined();
    expect(check('POST', { origin: 'http://127.0.0.1:3738' })).toMatch(
      /Origin "http:\/\/127\.0\.0\.1:3738" is not this server's origin.*--allow-origin/,
    );
    expect(check('PUT', { origin: 'http://localhost:3737' })).toMatch(/not this server's origin/);
    expect(check('PATCH', { origin: 'null' })).toMatch(/Origin "null"/);
    expect(check('POST', { secFetchSite: 'same-site' })).toMatch(/Sec-Fetch-Site is "same-site"/);
    expect(check('delete', { secFetchSite: 'cross-site' })).toMatch(/may not DELETE/);
    expect(check('POST', { secFetchSite: 'none' })).toBeUndefined();
    // Reads are left to checkHostAndOrigin; an origin given with --allow-origin may write.
    expect(check('GET', { origin: 'http://127.0.0.1:3738', secFetchSite: 'same-site' })).toBeUndefined();
    expect(check('POST', { origin: 'https://app.example', secFetchSite: 'cross-site' })).toBeUndefined();
    expect(checkStateChangeOrigin('POST', { origin: 'http://127.0.0.1:3737' }, policy)).toMatch(/Origin/);
  });

  it('compares bearer tokens exactly', () => {
    expect(hasBearerToken('Bearer abc', 'abc')).toBe(true);
    expect(hasBearerToken('bearer   abc', 'abc')).toBe(true);
    expect(hasBearerToken('Bearer abcd', 'abc')).toBe(false);
    expect(hasBearerToken('Basic abc', 'abc')).toBe(false);
    expect(hasBearerToken(undefined, 'abc')).toBe(false);
  });
});

describe('RunLimiter', () => {
  it('grants up to maxConcurrent, queues up to maxQueued in order, refuses the rest', async () => {
    const limiter = new RunLimiter({ maxConcurrent: 2, maxQueued: 1 });
    const a = await limiter.acquire();
    const b = await limiter.acquire();
    expect(typeof a).toBe('function');
    expect(typeof b).toBe('function');
    const queued = limiter.acquire();
    expect(limiter.queued).toBe(1);
    expect(await limiter.acquire()).toBe('busy');
    (a as () => void)();
    (a as () => void)(); // a second release is ignored
    const c = await queued;
    expect(typeof c).toBe('function');
    expect(limiter.running).toBe(2);
    (b as () => void)();
    (c as () => void)();
    expect(limiter.running).toBe(0);
  });

  it('a waiter whose signal aborts leaves the queue', async () => {
    const limiter = new RunLimiter({ maxConcurrent: 1, maxQueued: 4 });
    const slot = (await limiter.acquire()) as () => void;
    const controller = new AbortController();
    const waiting = limiter.acquire(controller.signal);
    controller.abort();
    expect(await waiting).toBe('aborted');
    expect(limiter.queued).toBe(0);
    expect(await limiter.acquire(AbortSignal.abort())).toBe('aborted');
    slot();
    expect(limiter.running).toBe(0);
  });

  it('rejects invalid bounds', () => {
    expect(() => new RunLimiter({ maxConcurrent: 0 })).toThrow(/maxConcurrent/);
    expect(() => new RunLimiter({ maxQueued: -1 })).toThrow(/maxQueued/);
  });
});

describe('renderSearchResult', () => {
  const tool = (name: string, callers: CatalogTool['allowedCallers']): CatalogTool => ({
    name: `s.${name}`,
    server: 's',
    tool: name,
    namespace: 's',
    member: name,
    description: `Does ${name}.\nMore detail.`,
    inputSchema: { type: 'object' },
    allowedCallers: callers,
    allowedCallersSource: 'default',
    deferLoading: true,
    timeoutMs: 1000,
  });

  it('says how to call each hit, shows chains and declarations', () => {
    const text = renderSearchResult(
      {
        hits: [
          { name: 's.a', score: 2, reasons: ['matches a'], tool: tool('a', ['code_execution']) },
          { name: 's.b', score: 1, reasons: [], tool: tool('b', ['direct']) },
        ],
        chains: [{ tools: ['s.a', 's.b'], score: 1, reasons: [] }],
        declarations: 'declare const tools: {};\n',
        truncated: false,
      },
      { query: 'q', directName: (t) => (t.name === 's.b' ? 's__b' : undefined) },
    );
    expect(text).toBe(
      [
        '2 tools for "q", best first:',
        '',
        '1. s.a: in execute_code: await tools.s.a(args)',
        '   Does a.',
        '   why: matches a',
        '2. s.b: not callable from code; call the tool "s__b" directly',
        '   Does b.',
        '',
        'Usually called in this order:',
        '- s.a → s.b',
        '',
        'Declarations (for execute_code):',
        '```ts',
        'declare const tools: {};',
        '```',
      ].join('\n'),
    );
  });

  it('tells the model what to try when nothing matches', () => {
    const text = renderSearchResult(
      { hits: [], chains: [], declarations: '', truncated: true },
      { query: 'zzz' },
    );
    expect(text).toMatch(/^No tools match "zzz"\.\nTry other or fewer words/);
    expect(text).toMatch(/ran out of time/);
  });
});
