import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseConfig, type CodecallConfig } from '../../../src/config/index.js';
import { isCodecallError, type CodecallError } from '../../../src/errors.js';

/** Each listed tool's own `requireApproval` (what a client's list set), by tool name. */
function approvalsOf(tools: Record<string, { requireApproval: unknown }>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(tools).map(([name, policy]) => [name, policy.requireApproval]));
}

const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), '../../fixtures/client-configs');

function load(name: string, env: NodeJS.ProcessEnv = {}): Promise<CodecallConfig> {
  return loadConfig({ path: join(FIXTURES, name), env });
}

/** Transport and command or url of each server, by name. */
function servers(config: CodecallConfig): Record<string, string> {
  return Object.fromEntries(
    Object.values(config.mcpServers).map((s) => [
      s.name,
      s.transport === 'stdio' ? `stdio ${[s.command, ...s.args].join(' ')}` : `${s.transport} ${s.url}`,
    ]),
  );
}

function thrown(fn: () => unknown): CodecallError {
  try {
    fn();
  } catch (error) {
    if (isCodecallError(error)) return error;
    throw error;
  }
  throw new Error('expected a CodecallError');
}

describe('configuration files written by other MCP clients load unchanged', () => {
  it('Claude Desktop: mcpServers; globalShortcut and preferences ignored with one notice', async () => {
    const config = await load('claude-desktop.json');
    expect(servers(config)).toEqual({
      filesystem:
        'stdio npx -y @modelcontextprotocol/server-filesystem /Users/username/Desktop /Users/username/Downloads',
      'brave-search': 'stdio npx -y @modelcontextprotocol/server-brave-search',
    });
    expect(config.mcpServers['brave-search']).toMatchObject({ env: { BRAVE_API_KEY: 'YOUR_API_KEY_HERE' } });
    expect(config.ignoredKeys).toEqual(['globalShortcut', 'preferences']);
    expect(config.notices).toEqual([
      "ignored 2 keys that codecall does not use (other clients' settings): globalShortcut, preferences.",
    ]);
  });

  it('Claude Code .mcp.json: stdio, http with ${VAR:-default} and headers, sse; nothing ignored', async () => {
    const config = await load('claude-code.mcp.json', { API_KEY: 'k1' });
    expect(servers(config)).toEqual({
      'shared-server': 'stdio /path/to/server',
      'api-server': 'http https://api.example.com/mcp',
      sentry: 'sse https://mcp.sentry.dev/sse',
    });
    expect(config.mcpServers['api-server']).toMatchObject({ headers: { Authorization: 'Bearer k1' } });
    expect(config.ignoredKeys).toEqual([]);
    expect(config.notices).toEqual([]);
  });

  it('Cursor: url without type is http, type "streamable-http" is http, ${env:NAME} expands, envFile ignored', async () => {
    const config = await load('cursor.mcp.json', { CURSOR_API_KEY: 'c1' });
    expect(servers(config)).toEqual({
      'server-name': 'stdio npx -y mcp-server',
      'remote-server': 'http http://localhost:3000/mcp',
      streamable: 'http https://mcp.example.com/mcp',
    });
    expect(config.mcpServers['server-name']).toMatchObject({ env: { API_KEY: 'c1' } });
    expect(config.ignoredKeys).toEqual(['mcpServers["server-name"].envFile']);
  });

  it('VS Code: the servers key, inputs resolved from CODECALL_INPUT_<ID>, ${workspaceFolder}', async () => {
    const config = await load('vscode.mcp.json', { CODECALL_INPUT_PERPLEXITY_KEY: 'p1' });
    expect(servers(config)).toEqual({
      Perplexity: 'stdio npx -y server-perplexity-ask',
      github: 'http https://api.githubcopilot.com/mcp/',
      fetch: `stdio uvx mcp-server-fetch --root ${FIXTURES}`,
    });
    expect(config.mcpServers.Perplexity).toMatchObject({ env: { PERPLEXITY_API_KEY: 'p1' } });
    expect(config.ignoredKeys).toEqual(['servers.fetch.envFile', 'servers.fetch.dev']);
    expect(config.notices).toHaveLength(1);
  });

  it('VS Code: an input that is not in the environment is refused, naming the input and the variable', async () => {
    const error = await load('vscode.mcp.json').then(
      () => undefined,
      (e: unknown) => e as CodecallError,
    );
    expect(error?.code).toBe('CONFIG_ENV_MISSING');
    expect(error?.message).toContain(
      'servers.Perplexity.env.PERPLEXITY_API_KEY uses ${input:perplexity-key}',
    );
    expect(error?.message).toContain('"Perplexity API Key"');
    expect(error?.message).toContain('Fix: set CODECALL_INPUT_PERPLEXITY_KEY in the environment.');
  });

  it('VS Code and Cursor: comments and trailing commas (JSON with comments) are read', async () => {
    const config = await load('vscode-comments.mcp.jsonc');
    expect(servers(config)).toEqual({
      memory: 'stdio npx -y @modelcontextprotocol/server-memory',
      github: 'http https://api.githubcopilot.com/mcp/',
    });
  });

  it('Windsurf: serverUrl is the url; ${env:NAME} in headers', async () => {
    const config = await load('windsurf.mcp_config.json', { GITHUB_TOKEN: 'g1', FIGMA_TOKEN: 'f1' });
    expect(servers(config)).toEqual({
      github: 'stdio npx -y @modelcontextprotocol/server-github',
      figma: 'http https://your-server-url/mcp',
    });
    expect(config.mcpServers.figma).toMatchObject({ headers: { Authorization: 'Bearer f1' } });
    expect(config.ignoredKeys).toEqual([]);
    // disabledTools is kept as policy, not ignored (see client-shapes.test.ts).
    expect(config.mcpServers.github!.clientRules).toEqual([
      { key: 'mcpServers.github.disabledTools', effect: 'deny', tools: ['delete_repository', 'push_files'] },
    ]);
  });

  it('Cline: alwaysAllow pre-approves the tools it names; timeout ignored; streamableHttp and transportType; disabled kept out', async () => {
    const config = await load('cline.mcp_settings.json');
    expect(servers(config)).toEqual({
      weather: 'stdio node /path/to/weather-server/build/index.js',
      remote: 'http https://mcp.example.com/mcp',
    });
    expect(config.disabledServers).toEqual(['legacy-sse']);
    expect(approvalsOf(config.mcpServers.weather!.tools)).toEqual({ get_forecast: false });
    expect(config.ignoredKeys).toEqual(['mcpServers.weather.timeout']);
    expect(config.clientPolicy).toEqual([
      {
        from: 'mcpServers["legacy-sse"].disabled',
        to: 'legacy-sse: server disabled (never started; none of its tools is callable)',
      },
      { from: 'mcpServers.weather.alwaysAllow[0]', to: 'weather.get_forecast: requireApproval false' },
    ]);
    expect(config.notices).toEqual([
      "ignored 1 key that codecall does not use (other clients' settings): mcpServers.weather.timeout.",
      "kept 1 setting of other clients' allow/deny lists as codecall policy (codecall config check shows each): mcpServers.weather.alwaysAllow[0].",
    ]);
  });
});

describe('client formats keep codecall strict where it counts', () => {
  const file = '/project/codecall.json';

  it('an unknown server key close to a codecall key is still an error with "did you mean"', () => {
    const error = thrown(() =>
      parseConfig({ mcpServers: { s: { comand: 'x', alwaysAllow: [] } } }, { file, env: {} }),
    );
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain('mcpServers.s: unknown key "comand". Fix: did you mean "command"?');
    expect(error.message).not.toContain('alwaysAllow');
  });

  it('an unknown key far from every codecall key is ignored; sections of codecall alone stay strict', () => {
    const config = parseConfig(
      { mcpServers: { s: { command: 'x', icon: 'x.png' } }, theme: 'dark' },
      { file, env: {} },
    );
    expect(config.ignoredKeys).toEqual(['theme', 'mcpServers.s.icon']);
    const error = thrown(() => parseConfig({ sandbox: { colour: 'red' } }, { file, env: {} }));
    expect(error.message).toContain('sandbox: unknown key "colour"');
  });

  it('an ignored key is not expanded, so its ${VAR} needs no value', () => {
    const config = parseConfig(
      { mcpServers: { s: { command: 'x', envFile: '${UNSET_VARIABLE}/.env' } } },
      { file, env: {} },
    );
    expect(config.ignoredKeys).toEqual(['mcpServers.s.envFile']);
  });

  it('servers and mcpServers together, url against serverUrl, type against transportType are refused', () => {
    const both = thrown(() =>
      parseConfig(
        { mcpServers: { a: { command: 'x' } }, servers: { b: { command: 'y' } } },
        { file, env: {} },
      ),
    );
    expect(both.message).toContain('servers: both "mcpServers" and "servers"');
    const urls = thrown(() =>
      parseConfig(
        { mcpServers: { a: { url: 'https://a/mcp', serverUrl: 'https://b/mcp' } } },
        { file, env: {} },
      ),
    );
    expect(urls.message).toContain(
      'mcpServers.a.serverUrl: "serverUrl" (Windsurf\'s name for "url") differs',
    );
    const types = thrown(() =>
      parseConfig(
        { mcpServers: { a: { url: 'https://a/mcp', type: 'http', transportType: 'sse' } } },
        { file, env: {} },
      ),
    );
    expect(types.message).toContain('mcpServers.a.transportType: "transportType" ("sse") contradicts "type"');
  });

  it('errors in a VS Code file name the servers key it uses', () => {
    const error = thrown(() => parseConfig({ servers: { a: { type: 'stdio' } } }, { file, env: {} }));
    expect(error.message).toContain('servers.a.command: a stdio server needs "command"');
  });

  it('${userHome} expands; a malformed ${input:…} is a syntax error', () => {
    const config = parseConfig({ mcpServers: { s: { command: '${userHome}/bin/x' } } }, { file, env: {} });
    expect(config.mcpServers.s).toMatchObject({ command: `${homedir()}/bin/x` });
    const error = thrown(() =>
      parseConfig({ mcpServers: { s: { command: '${input:}' } } }, { file, env: {} }),
    );
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain('"${input:" is not followed by an id');
  });

  it('a bad inputs array names the field', () => {
    const error = thrown(() =>
      parseConfig({ inputs: [{ type: 'promptString' }], servers: {} }, { file, env: {} }),
    );
    expect(error.message).toContain('inputs[0].id: each input needs a non-empty string "id"');
  });
});
