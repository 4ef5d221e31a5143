import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { tempDir } from '../../fixtures/temp-dir.js';

function cli(cwd: string, env: NodeJS.ProcessEnv = {}) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  return {
    run: (argv: string[]) =>
      main(argv, {
        stdout,
        stderr,
        stdin: new PassThrough(),
        cwd,
        env,
        signal: new AbortController().signal,
      }),
    out: () => out,
    err: () => err,
  };
}

function project(file: string, content: unknown): string {
  const root = tempDir('codecall-config-check-');
  writeFileSync(join(root, file), JSON.stringify(content, null, 2));
  return root;
}

// A loopback MCP endpoint that counts requests: `config check` must never reach it.
let upstream: Server;
let requests = 0;
let upstreamUrl = '';
beforeAll(async () => {
  upstream = createServer((_request, response) => {
    requests++;
    response.writeHead(500).end();
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`;
});
afterAll(async () => {
  await new Promise((resolve) => upstream.close(resolve));
});

function clineStyleConfig() {
  return {
    mcpServers: {
      weather: {
        command: 'node',
        args: ['server.js', '--api-key', 'sk-literal-secret', '--token=tok-literal', '--port', '8080'],
        env: { OPENWEATHER_API_KEY: 'env-literal-secret' },
        alwaysAllow: ['get_forecast'],
        timeout: 60,
        allowedCallers: ['code_execution'],
        tools: { get_forecast: { timeoutMs: 5000, inputExamples: [{ city: 'Oslo' }] } },
      },
      remote: {
        type: 'streamableHttp',
        url: upstreamUrl,
        headers: { Authorization: 'Bearer header-literal-secret' },
        autoApprove: [],
      },
      templated: {
        serverUrl: '${BASE:-https://api.example.com}/mcp?api_key=${API_KEY}&region=eu',
      },
      leaky: { type: 'sse', url: 'https://user:url-password@example.com/sse?token=query-literal-secret&v=2' },
      off: { command: 'never-run', disabled: true },
    },
  };
}

describe('codecall config check', () => {
  it('prints servers, policies, ignored keys and notices, with secrets redacted, and starts nothing', async () => {
    const cwd = project('.mcp.json', clineStyleConfig());
    const t = cli(cwd, { API_KEY: 'expanded-secret' });
    // Found in the working directory, without --trust: reading it starts nothing, so no consent is asked.
    expect(await t.run(['config', 'check'])).toBe(0);
    const out = t.out();
    expect(out).toContain(`file: ${join(cwd, '.mcp.json')}`);
    expect(out).toContain('servers (4):');
    expect(out).toContain(
      '  weather (stdio)\n    command: node server.js --api-key *** --token=*** --port 8080\n',
    );
    expect(out).toContain('    env: OPENWEATHER_API_KEY (values not shown)\n');
    expect(out).toContain('    policy: callers code, deferLoading true,');
    // Cline's alwaysAllow pre-approves the tool it names, as Cline does.
    expect(out).toContain('    tool get_forecast: approval false, timeout 5000 ms, 1 input examples\n');
    expect(out).toContain(
      `  remote (http)\n    url: ${upstreamUrl}\n    headers: Authorization (values not shown)\n`,
    );
    expect(out).toContain(
      '  templated (http)\n    url: ${BASE:-https://api.example.com}/mcp?api_key=${API_KEY}&region=eu\n',
    );
    expect(out).toContain('  leaky (sse)\n    url: https://***@example.com/sse?token=***&v=2\n');
    expect(out).toContain('disabled: off\n');
    expect(out).toContain(
      "other clients' allow/deny lists, kept as codecall policy:\n" +
        '  mcpServers.off.disabled → off: server disabled (never started; none of its tools is callable)\n' +
        '  mcpServers.weather.alwaysAllow[0] → weather.get_forecast: requireApproval false\n',
    );
    expect(out).toContain('ignored keys:\n  mcpServers.weather.timeout\n');
    expect(out).toContain("notice: ignored 1 key that codecall does not use (other clients' settings)");
    for (const secret of [
      'sk-literal-secret',
      'tok-literal',
      'env-literal-secret',
      'header-literal-secret',
      'expanded-secret',
      'url-password',
      'query-literal-secret',
    ])
      expect(out).not.toContain(secret);
    expect(t.err()).toBe('');
    expect(requests).toBe(0);
  });

  it('--json gives the same report as data', async () => {
    const cwd = project('codecall.json', clineStyleConfig());
    const t = cli(cwd, { API_KEY: 'expanded-secret' });
    expect(await t.run(['config', 'check', '--json', '--config', 'codecall.json'])).toBe(0);
    const report = JSON.parse(t.out()) as {
      file: string;
      servers: {
        name: string;
        transport: string;
        url?: string;
        env?: string[];
        headers?: string[];
        args?: string[];
      }[];
      disabledServers: string[];
      clientPolicy: { from: string; to: string }[];
      ignoredKeys: string[];
      notices: string[];
    };
    expect(report.file).toBe(join(cwd, 'codecall.json'));
    expect(report.servers.map((s) => `${s.name}:${s.transport}`)).toEqual([
      'weather:stdio',
      'remote:http',
      'templated:http',
      'leaky:sse',
    ]);
    expect(report.servers[0]).toMatchObject({
      args: ['server.js', '--api-key', '***', '--token=***', '--port', '8080'],
      env: ['OPENWEATHER_API_KEY'],
    });
    expect(report.servers[1]).toMatchObject({ headers: ['Authorization'] });
    expect(report.disabledServers).toEqual(['off']);
    expect(report.ignoredKeys).toEqual(['mcpServers.weather.timeout']);
    expect(report.clientPolicy).toEqual([
      {
        from: 'mcpServers.off.disabled',
        to: 'off: server disabled (never started; none of its tools is callable)',
      },
      { from: 'mcpServers.weather.alwaysAllow[0]', to: 'weather.get_forecast: requireApproval false' },
    ]);
    expect(report.notices).toHaveLength(2);
    expect(t.out()).not.toContain('secret');
    expect(requests).toBe(0);
  });

  it('an invalid configuration exits 2 with the usual error naming the field and the fix', async () => {
    const cwd = project('codecall.json', { mcpServers: { s: { command: 'x', toolTimeoutMS: 5 } } });
    const t = cli(cwd);
    expect(await t.run(['config', 'check'])).toBe(2);
    expect(t.err()).toContain('codecall config: Invalid configuration in');
    expect(t.err()).toContain(
      'mcpServers.s: unknown key "toolTimeoutMS". Fix: did you mean "toolTimeoutMs"?',
    );
    expect(t.out()).toBe('');
  });

  it('bad usage exits 2 and shows the usage', async () => {
    const cwd = project('codecall.json', { mcpServers: {} });
    const missing = cli(cwd);
    expect(await missing.run(['config'])).toBe(2);
    expect(missing.err()).toContain('give a subcommand: check.');
    const unknown = cli(cwd);
    expect(await unknown.run(['config', 'check', '--verbose'])).toBe(2);
    expect(unknown.err()).toContain('unknown option "--verbose". The options are below.');
    expect(unknown.err()).toContain('Usage: codecall config check');
  });

  it('other commands print the notice once on stderr, keeping stdout for their output', async () => {
    const cwd = project('codecall.json', { mcpServers: {}, preferences: { menuBarEnabled: false } });
    const t = cli(cwd);
    expect(await t.run(['tools', '--json', '--config', 'codecall.json'])).toBe(0);
    expect(JSON.parse(t.out())).toEqual({ servers: [], tools: [] });
    expect(t.err()).toBe(
      "codecall: ignored 1 key that codecall does not use (other clients' settings): preferences.\n",
    );
  });
});
