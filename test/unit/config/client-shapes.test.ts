/**
 * The configuration files of Zed, opencode, OpenAI Codex (TOML), Goose and Continue (YAML),
 * Gemini CLI and Claude Code's permission lists: one fixture each in
 * test/fixtures/client-configs, written after each client's documented format. Each loads into
 * codecall's servers, and each allow/deny list becomes codecall policy.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { loadConfig, parseConfig, type CodecallConfig } from '../../../src/config/index.js';
import { sniffConfigFormat } from '../../../src/config/parse-config-text.js';
import { isCodecallError, type CodecallError } from '../../../src/errors.js';
import { assertCallerAllowed, clientDisabledBy, resolveAllowedCallers } from '../../../src/tools/policy.js';
import { resolveRequireApproval } from '../../../src/tools/approval.js';
import { tempDir } from '../../fixtures/temp-dir.js';

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

/** The mapping as `from → to` lines. */
function mapping(config: CodecallConfig): string[] {
  return (config.clientPolicy ?? []).map((m) => `${m.from} → ${m.to}`);
}

async function rejected(promise: Promise<unknown>): Promise<CodecallError> {
  try {
    await promise;
  } catch (error) {
    if (isCodecallError(error)) return error;
    throw error;
  }
  throw new Error('expected a CodecallError');
}

function write(name: string, text: string): string {
  const file = join(tempDir('codecall-shapes-'), name);
  writeFileSync(file, text);
  return file;
}

describe("other clients' configuration files", () => {
  it('Zed: context_servers (source "custom", the older command object, url); an extension server is skipped with a reason', async () => {
    const config = await load('zed.settings.json', { ZED_TOKEN: 'z1' });
    expect(config.clientFormat).toBe('Zed');
    expect(servers(config)).toEqual({
      filesystem: 'stdio npx -y @modelcontextprotocol/server-filesystem /home/user/project',
      legacy: 'stdio /usr/local/bin/legacy-mcp --stdio',
      remote: 'http https://mcp.example.com/mcp',
    });
    expect(config.mcpServers.filesystem).toMatchObject({ env: { DEBUG: '1' } });
    expect(config.mcpServers.remote).toMatchObject({ headers: { Authorization: 'Bearer z1' } });
    // Zed's own settings (theme, its "agent") are not codecall's: ignored, never validated.
    expect(config.ignoredKeys).toEqual(['theme', 'agent']);
    expect(config.notices[0]).toBe(
      'skipped context_servers["postgres-context-server"]: a server a Zed extension provides (source "extension"); codecall cannot start it without its "command".',
    );
  });

  it('opencode: mcp with type local (command as an array, environment, enabled) and remote; tools switches become deny rules', async () => {
    const config = await load('opencode.json');
    expect(config.clientFormat).toBe('opencode');
    expect(servers(config)).toEqual({
      'my-local-mcp-server': 'stdio npx -y my-mcp-command',
      'my-remote-mcp': 'http https://my-mcp-server.com',
    });
    expect(config.mcpServers['my-local-mcp-server']).toMatchObject({
      env: { MY_ENV_VAR: 'my_env_var_value' },
    });
    expect(config.mcpServers['my-remote-mcp']).toMatchObject({
      headers: { Authorization: 'Bearer MY_API_KEY' },
    });
    expect(config.disabledServers).toEqual(['switched-off']);
    expect(config.mcpServers['my-local-mcp-server']!.clientRules).toEqual([
      { key: 'tools["my-local-mcp-server_delete_*"]', effect: 'deny', tools: ['delete_*'] },
    ]);
    expect(mapping(config)).toEqual([
      'mcp["switched-off"].enabled → switched-off: server disabled (never started; none of its tools is callable)',
      'tools.bash → not mapped: names no MCP server of this file (a built-in opencode tool?)',
      'tools["my-local-mcp-server_delete_*"] → my-local-mcp-server: delete_* never callable, from code included',
    ]);
    expect(config.ignoredKeys).toEqual(['model']);
  });

  it('Codex config.toml: [mcp_servers.NAME], env_vars, bearer_token_env_var, timeouts in seconds, enabled, enabled_tools, disabled_tools', async () => {
    const config = await load('codex.config.toml', { DOCS_HOME: '/docs', FIGMA_OAUTH_TOKEN: 'f1' });
    expect(config.clientFormat).toBe('Codex');
    expect(servers(config)).toEqual({
      docs: 'stdio npx -y mcp-server-docs',
      figma: 'http https://mcp.figma.com/mcp',
    });
    expect(config.mcpServers.docs).toMatchObject({
      env: { LOG_LEVEL: 'info', DOCS_HOME: '/docs' },
      connectTimeoutMs: 20_000,
      toolTimeoutMs: 45_000,
      clientRules: [
        { key: 'mcp_servers.docs.enabled_tools', effect: 'allowOnly', tools: ['search', 'fetch_page'] },
      ],
    });
    expect(config.mcpServers.figma).toMatchObject({
      headers: { 'X-Figma-Region': 'us-east-1', Authorization: 'Bearer f1' },
      clientRules: [{ key: 'mcp_servers.figma.disabled_tools', effect: 'deny', tools: ['delete_file'] }],
    });
    expect(config.disabledServers).toEqual(['old']);
    expect(config.ignoredKeys).toEqual(['model', 'approval_policy']);
    // env_vars passes a variable through only when it is set.
    const unset = await load('codex.config.toml', { FIGMA_OAUTH_TOKEN: 'f1' });
    expect(unset.mcpServers.docs).toMatchObject({ env: { LOG_LEVEL: 'info' } });
    expect((unset.mcpServers.docs as { env: Record<string, string> }).env).not.toHaveProperty('DOCS_HOME');
  });

  it('Goose config.yaml: extensions of type stdio (cmd, envs, env_keys), streamable_http and sse (uri), timeout in seconds; builtins skipped', async () => {
    const config = await load('goose.config.yaml', { GITHUB_PERSONAL_ACCESS_TOKEN: 'g1', FETCH_TOKEN: 't1' });
    expect(config.clientFormat).toBe('Goose');
    expect(servers(config)).toEqual({
      github: 'stdio github-mcp-server',
      fetch: 'http http://localhost:8000/mcp',
    });
    expect(config.mcpServers.github).toMatchObject({
      env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'g1' },
      toolTimeoutMs: 300_000,
    });
    expect(config.mcpServers.fetch).toMatchObject({
      headers: { Authorization: 'Bearer t1' },
      toolTimeoutMs: 120_000,
    });
    // An empty available_tools means every tool (Goose's default): no rule.
    expect(config.mcpServers.github!.clientRules).toEqual([]);
    expect(config.disabledServers).toEqual(['events']);
    expect(config.notices[0]).toContain('skipped extensions.developer: a Goose "builtin" extension');
    expect(config.ignoredKeys).toEqual(['GOOSE_PROVIDER', 'GOOSE_MODEL']);
  });

  it('Continue config.yaml: mcpServers as a list of {name, command, args, type, url}; ${{ secrets.X }} read from X; Hub blocks skipped', async () => {
    const config = await load('continue/config.yaml', { REMOTE_TOKEN: 'r1' });
    expect(config.clientFormat).toBe('Continue');
    expect(servers(config)).toEqual({
      'SQLite MCP': 'stdio npx -y mcp-sqlite /path/to/your/database.db',
      remote: 'http https://mcp.example.com/mcp',
      events: 'sse http://localhost:8080/sse',
    });
    expect(config.mcpServers.remote).toMatchObject({ headers: { Authorization: 'Bearer r1' } });
    expect(config.notices[0]).toBe(
      'skipped mcpServers[3] ("Linear MCP"): a Continue Hub block; codecall cannot fetch it.',
    );
    expect(config.ignoredKeys).toEqual(['name', 'version', 'schema', 'models']);
  });

  it('Gemini CLI settings.json: httpUrl is http, url is SSE, $VAR and ${VAR} expand, timeout, includeTools/excludeTools, trust, mcp.excluded', async () => {
    const config = await load('gemini/.gemini/settings.json', {
      DB_CONNECTION_STRING: 'db1',
      EXTERNAL_API_KEY: 'e1',
      GITHUB_TOKEN: 'gh1',
    });
    expect(config.clientFormat).toBe('Gemini CLI');
    expect(servers(config)).toEqual({
      pythonTools: 'stdio python -m my_mcp_server --port 8080',
      github: 'http https://api.githubcopilot.com/mcp/',
      'sse-server': 'sse http://localhost:8081/sse',
    });
    expect(config.mcpServers.pythonTools).toMatchObject({
      env: { DATABASE_URL: 'db1', API_KEY: 'e1' },
      toolTimeoutMs: 15_000,
    });
    expect(config.mcpServers.github).toMatchObject({ headers: { Authorization: 'Bearer gh1' } });
    expect(config.disabledServers).toEqual(['experimental']);
    expect(mapping(config)).toEqual([
      'mcpServers.pythonTools.trust → pythonTools: no change (codecall asks no approval for tools not marked destructive; a destructive tool still needs approval, since trust names no tool)',
      'mcp.excluded[0] → experimental: server disabled (never started; none of its tools is callable)',
      'mcpServers.pythonTools.includeTools → pythonTools: only safe_tool, file_reader callable; every other tool never callable',
      'mcpServers.github.excludeTools → github: delete_repository never callable, from code included',
    ]);
    // A $VAR that is not set stays as written, as in Gemini CLI; a ${VAR} that is not set is named.
    const unset = await load('gemini/.gemini/settings.json', { EXTERNAL_API_KEY: 'e1', GITHUB_TOKEN: 'g' });
    expect(unset.mcpServers.pythonTools).toMatchObject({
      env: { DATABASE_URL: '$DB_CONNECTION_STRING', API_KEY: 'e1' },
    });
    const missing = await rejected(
      load('gemini/.gemini/settings.json', { DB_CONNECTION_STRING: 'db1', GITHUB_TOKEN: 'g' }),
    );
    expect(missing.message).toContain('EXTERNAL_API_KEY');
  });

  it('Claude Code: permissions.allow/ask/deny entries for mcp__server__tool and disabledMcpjsonServers in the same file', async () => {
    const config = await load('claude-code.settings.json', { GITHUB_TOKEN: 'g' });
    expect(Object.keys(config.mcpServers)).toEqual(['github', 'filesystem']);
    expect(config.disabledServers).toEqual(['puppeteer', 'memory']);
    expect(config.mcpServers.github!.clientRules).toEqual([
      { key: 'permissions.deny[0]', effect: 'deny', tools: ['delete_repository'] },
      { key: 'permissions.deny[1]', effect: 'deny', tools: ['merge_*'] },
    ]);
    expect(approvalsOf(config.mcpServers.github!.tools)).toEqual({ get_issue: false });
    expect(approvalsOf(config.mcpServers.filesystem!.tools)).toEqual({ write_file: true });
    expect(mapping(config)).toEqual([
      'permissions.deny[2] → puppeteer: server disabled (never started; none of its tools is callable)',
      'permissions.allow[2] → filesystem: no change (codecall asks no approval for tools not marked destructive; a destructive tool still needs approval unless named exactly)',
      'permissions.allow[3] → github: no change (codecall asks no approval for tools not marked destructive; a destructive tool still needs approval unless named exactly)',
      'disabledMcpjsonServers[0] → memory: server disabled (never started; none of its tools is callable)',
      'permissions.deny[0] → github: delete_repository never callable, from code included',
      'permissions.deny[1] → github: merge_* never callable, from code included',
      'permissions.allow[1] → github.get_issue: requireApproval false',
      'permissions.ask[0] → filesystem.write_file: requireApproval true',
    ]);
    // Non-MCP permission rules (Bash, Read) are Claude Code's own: the key is read, nothing else.
    expect(config.ignoredKeys).toEqual(['model']);
  });

  it("codecall's own requireApproval wins over a client's pre-approval; a client's deny wins over codecall's allowedCallers", () => {
    const config = parseConfig(
      {
        mcpServers: {
          fs: {
            command: 'x',
            autoApprove: ['write_file', 'read_file'],
            disabledTools: ['delete_file'],
            tools: {
              write_file: { requireApproval: true },
              delete_file: { allowedCallers: ['direct', 'code_execution'] },
            },
          },
        },
      },
      { file: '/p/codecall.json', env: {} },
    );
    const fs = config.mcpServers.fs!;
    expect(approvalsOf(fs.tools).write_file).toBe(true);
    expect(approvalsOf(fs.tools).read_file).toBe(false);
    const disabledBy = clientDisabledBy(fs, 'delete_file');
    expect(disabledBy).toBe('mcpServers.fs.disabledTools');
    const callers = resolveAllowedCallers({ tool: fs.tools.delete_file!.allowedCallers, disabledBy });
    expect(callers).toEqual({ allowedCallers: [], source: 'client', disabledBy });
    expect(() =>
      assertCallerAllowed(
        {
          name: 'fs.delete_file',
          server: 'fs',
          tool: 'delete_file',
          allowedCallersSource: 'client',
          ...callers,
        },
        'code_execution',
      ),
    ).toThrow('Tool fs.delete_file may not be called from code: mcpServers.fs.disabledTools switches it off');
  });

  it('clientDisabledBy: deny lists match names and * patterns; allow-only lists switch off every other tool', () => {
    const server = {
      clientRules: [
        { key: 'a.excludeTools', effect: 'deny' as const, tools: ['drop_*', 'exact'] },
        { key: 'a.includeTools', effect: 'allowOnly' as const, tools: ['exact', 'read_*', 'drop_table'] },
      ],
    };
    expect(clientDisabledBy(server, 'drop_table')).toBe('a.excludeTools');
    expect(clientDisabledBy(server, 'exact')).toBe('a.excludeTools');
    expect(clientDisabledBy(server, 'read_file')).toBeUndefined();
    expect(clientDisabledBy(server, 'write_file')).toBe('a.includeTools');
    // Regular-expression characters in a name are literal.
    expect(
      clientDisabledBy({ clientRules: [{ key: 'k', effect: 'deny', tools: ['a.b*'] }] }, 'axb'),
    ).toBeUndefined();
    expect(clientDisabledBy({ clientRules: [] }, 'anything')).toBeUndefined();
  });
});

describe('a configuration that yields no server', () => {
  it('is an error naming what was found: a Zed file whose servers all come from extensions', async () => {
    const file = write(
      'settings.json',
      JSON.stringify({ theme: 'One', context_servers: { pg: { source: 'extension', settings: {} } } }),
    );
    const error = await rejected(loadConfig({ path: file, env: {} }));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain(
      "(root): found top-level keys theme, context_servers (Zed's format) but no MCP server codecall can read; context_servers.pg: a server a Zed extension provides",
    );
  });

  it('is an error for a file with only other keys, or empty; an explicit empty "mcpServers" (or Continue list) is not', async () => {
    const other = await rejected(
      loadConfig({ path: write('c.json', '{"globalShortcut": "Ctrl+Space", "sandbox": {}}'), env: {} }),
    );
    expect(other.message).toContain(
      '(root): found top-level keys globalShortcut, sandbox but no MCP server codecall can read. Fix:',
    );
    const empty = await rejected(loadConfig({ path: write('c.json', '{}'), env: {} }));
    expect(empty.message).toContain('(root): the configuration is empty but no MCP server codecall can read');
    const explicit = await loadConfig({ path: write('c.json', '{"mcpServers": {}}'), env: {} });
    expect(explicit.mcpServers).toEqual({});
    const list = await loadConfig({ path: write('config.yaml', 'name: a\nmcpServers: []\n'), env: {} });
    expect(list.mcpServers).toEqual({});
    // In memory, codecall's own sections alone stay a valid configuration (libraries, tests).
    expect(parseConfig({ sandbox: { workers: 1 } }, { file: '/p/c.json', env: {} }).mcpServers).toEqual({});
  });

  it('config check, tools and exec exit 2 for it', async () => {
    const dir = tempDir('codecall-noserver-');
    writeFileSync(join(dir, 'opencode.json'), JSON.stringify({ mcp: { a: { type: 'local', command: [] } } }));
    writeFileSync(
      join(dir, 'zed.json'),
      JSON.stringify({ context_servers: { pg: { source: 'extension' } } }),
    );
    writeFileSync(join(dir, 'script.js'), 'console.log(1)');
    for (const argv of [
      ['config', 'check', '--config', 'zed.json'],
      ['tools', '--config', 'zed.json'],
      ['exec', 'script.js', '--config', 'zed.json'],
    ]) {
      let err = '';
      const stderr = new PassThrough().on('data', (d: Buffer) => (err += d.toString()));
      const code = await main(argv, {
        stdout: new PassThrough(),
        stderr,
        stdin: new PassThrough(),
        cwd: dir,
        env: {},
        signal: new AbortController().signal,
      });
      expect({ argv, code }).toEqual({ argv, code: 2 });
      expect(err).toContain('but no MCP server codecall can read');
    }
  }, 60_000);
});

describe('TOML and YAML files', () => {
  it('a syntax error names the format the file was read as and the line', async () => {
    const toml = await rejected(
      loadConfig({ path: write('config.toml', '[mcp_servers.a]\ncommand = "x"\nargs = [\n'), env: {} }),
    );
    expect(toml.message).toMatch(
      /config\.toml is not valid TOML: line \d+, column \d+: .+\. Fix: correct the syntax\.$/,
    );
    const yaml = await rejected(
      loadConfig({ path: write('config.yaml', 'extensions:\n  a:\n    cmd: [x\n'), env: {} }),
    );
    expect(yaml.message).toMatch(
      /config\.yaml is not valid YAML: line \d+, column \d+: .+\. Fix: correct the syntax\.$/,
    );
    const json = await rejected(loadConfig({ path: write('c.json', '{"mcpServers": {"a": }}'), env: {} }));
    expect(json.message).toContain(
      'c.json is not valid JSON: line 1, column 22: ValueExpected. Fix: correct the syntax (comments',
    );
  });

  it('a file without a telling extension is read as TOML or YAML when it is not JSON and looks like one', async () => {
    const toml = await loadConfig({
      path: write('config', '# codex\n[mcp_servers.a]\ncommand = "x"\n'),
      env: {},
    });
    expect(servers(toml)).toEqual({ a: 'stdio x' });
    const yaml = await loadConfig({
      path: write('mcp', 'mcpServers:\n  - name: a\n    command: x\n'),
      env: {},
    });
    expect(servers(yaml)).toEqual({ a: 'stdio x' });
    expect(sniffConfigFormat('{\n "a": 1')).toBeUndefined();
    expect(sniffConfigFormat('// comment\n{')).toBeUndefined();
    expect(sniffConfigFormat('\n\nmodel = "x"')).toBe('TOML');
    expect(sniffConfigFormat('---\na: 1')).toBe('YAML');
  });

  it('YAML aliases are bounded', async () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 0; i < 12; i++)
      bomb.push(
        `${'bcdefghijklm'[i]}: &${'bcdefghijklm'[i]} [${Array(10)
          .fill(`*${i === 0 ? 'a' : 'bcdefghijklm'[i - 1]}`)
          .join(', ')}]`,
      );
    const error = await rejected(loadConfig({ path: write('bomb.yaml', `${bomb.join('\n')}\n`), env: {} }));
    expect(error.message).toContain('is not valid YAML');
  });
});

describe("other clients' lists never loosen what was asked for", () => {
  const file = '/p/codecall.json';
  /** The approval a destructive tool of `server` ends up with. */
  const approval = (server: CodecallConfig['mcpServers'][string], tool: string): unknown =>
    resolveRequireApproval({
      tool: Object.hasOwn(server.tools, tool) ? server.tools[tool]!.requireApproval : undefined,
      server: server.requireApproval,
      annotations: { destructiveHint: true },
    }).requireApproval;

  it('a Claude Code ask for a server wins over an allow for one of its tools', () => {
    const config = parseConfig(
      {
        permissions: { ask: ['mcp__gh'], allow: ['mcp__gh__delete_issue'] },
        mcpServers: { gh: { command: 'x', alwaysAllow: ['close_issue'] } },
      },
      { file, env: {} },
    );
    const gh = config.mcpServers.gh!;
    expect(gh.requireApproval).toBe(true);
    expect(gh.tools).toEqual({});
    expect(approval(gh, 'delete_issue')).toBe(true);
    expect(approval(gh, 'close_issue')).toBe(true);
    expect(mapping(config)).toEqual([
      'mcpServers.gh.alwaysAllow[0] → gh.close_issue: no change (permissions.ask[0] asks about every tool of gh, and an ask wins)',
      'permissions.allow[0] → gh.delete_issue: no change (permissions.ask[0] asks about every tool of gh, and an ask wins)',
      'permissions.ask[0] → gh: requireApproval true (every tool)',
    ]);
  });

  it("codecall's own server-level requireApproval wins over Cline's alwaysAllow", () => {
    const config = parseConfig(
      {
        mcpServers: {
          fs: { command: 'x', requireApproval: true, alwaysAllow: ['write_file'] },
          db: {
            command: 'x',
            requireApproval: { pointer: '/table', values: ['users'] },
            autoApprove: ['drop_table'],
          },
        },
      },
      { file, env: {} },
    );
    const { fs, db } = config.mcpServers;
    expect(fs!.tools).toEqual({});
    expect(approval(fs!, 'write_file')).toBe(true);
    expect(db!.tools).toEqual({});
    expect(approval(db!, 'drop_table')).toEqual({ pointer: '/table', values: ['users'] });
    expect(mapping(config)).toEqual([
      "mcpServers.fs.alwaysAllow[0] → fs.write_file: no change (codecall's own requireApproval for the server wins)",
      "mcpServers.db.autoApprove[0] → db.drop_table: no change (codecall's own requireApproval for the server wins)",
    ]);
  });

  it('an empty Gemini includeTools or Codex enabled_tools enables no tool; an empty deny list is no rule; an empty Goose available_tools is every tool', async () => {
    const gemini = parseConfig(
      {
        mcpServers: {
          g: { command: 'x', includeTools: [], excludeTools: [] },
          w: { command: 'x', disabledTools: [] },
        },
      },
      { file: '/p/.gemini/settings.json', env: {} },
    );
    const g = gemini.mcpServers.g!;
    expect(g.clientRules).toEqual([{ key: 'mcpServers.g.includeTools', effect: 'allowOnly', tools: [] }]);
    expect(clientDisabledBy(g, 'read_file')).toBe('mcpServers.g.includeTools');
    expect(gemini.mcpServers.w!.clientRules).toEqual([]);
    expect(mapping(gemini)).toEqual([
      'mcpServers.g.includeTools → g: every tool never callable (the list names none)',
    ]);
    const codex = await loadConfig({
      path: write('config.toml', '[mcp_servers.c]\ncommand = "x"\nenabled_tools = []\ndisabled_tools = []\n'),
      env: {},
    });
    const c = codex.mcpServers.c!;
    expect(c.clientRules).toEqual([{ key: 'mcp_servers.c.enabled_tools', effect: 'allowOnly', tools: [] }]);
    expect(clientDisabledBy(c, 'search')).toBe('mcp_servers.c.enabled_tools');
    const goose = await loadConfig({
      path: write('config.yaml', 'extensions:\n  e:\n    type: stdio\n    cmd: x\n    available_tools: []\n'),
      env: {},
    });
    expect(goose.mcpServers.e!.clientRules).toEqual([]);
  });

  it("Gemini CLI's $VAR is braced only when the variable is set; an unset one stays literal, as in Gemini CLI", () => {
    const config = parseConfig(
      {
        mcpServers: {
          g: {
            command: 'x',
            args: ['$SET', '$UNSET', '--dir=$UNSET/$SET'],
            env: { A: '$UNSET', B: 'pre-$SET' },
          },
        },
      },
      { file: '/p/.gemini/settings.json', env: { SET: 'v' } },
    );
    const g = config.mcpServers.g as { args: string[]; env: Record<string, string> };
    expect(g.args).toEqual(['v', '$UNSET', '--dir=$UNSET/v']);
    expect(g.env).toEqual({ A: '$UNSET', B: 'pre-v' });
  });

  // eslint-disable-next-line no-control-regex
  const RAW_CONTROLS = /[\u0007\u001b]/;

  it('config names and values reach messages quoted, never as raw control characters', async () => {
    const title = '\u001b]0;pwned\u0007';
    const noServer = await rejected(
      loadConfig({ path: write('c.json', JSON.stringify({ [title]: 1, theme: 'x' })), env: {} }),
    );
    expect(noServer.message).not.toMatch(RAW_CONTROLS);
    expect(noServer.message).toContain(
      'found top-level keys ["\\u001b]0;pwned\\u0007"], theme but no MCP server',
    );
    const goose = await rejected(
      loadConfig({
        path: write('config.yaml', `extensions:\n  e:\n    type: ${JSON.stringify(title)}\n    cmd: x\n`),
        env: {},
      }),
    );
    expect(goose.message).not.toMatch(RAW_CONTROLS);
    expect(goose.message).toContain('extensions.e: a Goose "\\u001b]0;pwned\\u0007" extension');
    const continued = await loadConfig({
      path: write(
        'config.yaml',
        `mcpServers:\n  - name: ${JSON.stringify(title)}\n    uses: a/b\n  - name: ok\n    command: x\n`,
      ),
      env: {},
    });
    expect(continued.notices.join('\n')).not.toMatch(RAW_CONTROLS);
    expect(continued.notices[0]).toBe(
      'skipped mcpServers[0] ("\\u001b]0;pwned\\u0007"): a Continue Hub block; codecall cannot fetch it.',
    );
  });

  it("Gemini CLI's older top-level excludeMCPServers and allowMCPServers switch servers off, as mcp.excluded and mcp.allowed do", () => {
    const servers = { a: { command: 'x' }, b: { command: 'y' }, c: { command: 'z' } };
    const excluded = parseConfig(
      { excludeMCPServers: ['b'], mcpServers: servers },
      { file: '/p/settings.json', env: {} },
    );
    expect(excluded.clientFormat).toBe('Gemini CLI');
    expect(excluded.disabledServers).toEqual(['b']);
    expect(excluded.ignoredKeys).toEqual([]);
    const allowed = parseConfig(
      { allowMCPServers: ['a'], mcpServers: servers },
      { file: '/p/.gemini/settings.json', env: {} },
    );
    expect(allowed.disabledServers).toEqual(['b', 'c']);
    expect(mapping(allowed)).toEqual([
      'allowMCPServers → b: server disabled (not in the allowed list)',
      'allowMCPServers → c: server disabled (not in the allowed list)',
    ]);
  });

  it("switches codecall does not map: Claude Code's enabledMcpjsonServers and Zed's profiles are ignored keys", () => {
    const claude = parseConfig(
      {
        enabledMcpjsonServers: ['a'],
        enableAllProjectMcpServers: false,
        mcpServers: { a: { command: 'x' }, b: { command: 'y' } },
      },
      { file: '/p/.claude/settings.json', env: {} },
    );
    expect(Object.keys(claude.mcpServers)).toEqual(['a', 'b']);
    expect(claude.ignoredKeys).toEqual(['enabledMcpjsonServers', 'enableAllProjectMcpServers']);
    const zed = parseConfig(
      {
        agent: { profiles: { ask: { context_servers: { a: { tools: { t: false } } } } } },
        context_servers: { a: { command: 'x' } },
      },
      { file: '/p/settings.json', env: {} },
    );
    expect(zed.mcpServers.a!.clientRules).toEqual([]);
    expect(zed.ignoredKeys).toEqual(['agent']);
  });

  it('a tool named __proto__ gets its pre-approval as an ordinary tool name, and nothing else is touched', () => {
    const config = parseConfig(
      {
        permissions: { allow: ['mcp__gh____proto__'], ask: ['mcp__fs____proto__'] },
        mcpServers: {
          fs: { command: 'x', alwaysAllow: ['__proto__', 'read_file'] },
          gh: { command: 'x' },
        },
      },
      { file, env: {} },
    );
    for (const [server, value] of [
      ['fs', true],
      ['gh', false],
    ] as const) {
      const tools = config.mcpServers[server]!.tools;
      expect(Object.getPrototypeOf(tools)).toBe(Object.prototype);
      expect(Object.getOwnPropertyDescriptor(tools, '__proto__')?.value).toMatchObject({
        requireApproval: value,
      });
      expect((tools as Record<string, unknown>).requireApproval).toBeUndefined();
    }
    expect(Object.keys(config.mcpServers.fs!.tools)).toEqual(['read_file', '__proto__']);
    expect(approvalsOf(config.mcpServers.fs!.tools).read_file).toBe(false);
    expect(({} as Record<string, unknown>).requireApproval).toBeUndefined();
  });
});
