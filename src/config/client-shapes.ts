/**
 * @module
 * The shapes other MCP clients give their configuration files, turned into the `mcpServers` map
 * codecall reads, before `${VAR}` expansion and validation: Zed's `context_servers`, opencode's
 * `mcp`, OpenAI Codex's `[mcp_servers.NAME]` (TOML), Goose's `extensions` (YAML), Continue's
 * `mcpServers` list (YAML), and in `mcpServers` files Gemini CLI's `httpUrl`, `url` (SSE),
 * `timeout` and `$VAR`. Every key that switches a server or a tool off or on, or pre-approves
 * it, is read into a {@link ClientServerPolicy} (applied by `load-config.ts`) and never merely
 * dropped: what the user switched off in their client stays off in codecall. The mapping, and
 * the few switches not read, are documented in docs/configuration.md ("Other clients' allow- and
 * deny-lists").
 */
import { basename, dirname } from 'node:path';
import { formatJsonPath, type JsonPath } from './json-path.js';
import type { ConfigIssue } from './load-config.js';
import type { ClientPolicyMapping, ClientToolRule } from './types.js';

type Json = Record<string, unknown>;

/** What another client's lists say about one server. */
export interface ClientServerPolicy {
  /** Deny- and allow-only lists of tools. */
  rules: ClientToolRule[];
  /** Tools the client runs without asking (exact names), with the key that says so. */
  approve: Map<string, string>;
  /** Tools the client always asks about (exact names), with the key that says so. */
  ask: Map<string, string>;
  /** The key that makes the client ask about every tool of the server. */
  askAll?: string;
}

/** What {@link readClientShape} made of a parsed file. */
export interface ClientShape {
  /** The client whose shape the file has; undefined for the `mcpServers` / `servers` map. */
  client?: string;
  /** The document in codecall's shape (servers under `mcpServers` or `servers`). */
  json: Json;
  /** JSON paths of client keys codecall does not use (reported with the other ignored keys). */
  ignoredKeys: string[];
  /** Per server name. */
  policies: Map<string, ClientServerPolicy>;
  /** Client settings read, and what they became (more are added when policies are applied). */
  mappings: ClientPolicyMapping[];
  /** Entries found that name no server codecall can start, and why. */
  unreadable: string[];
  /** Problems in the client's keys. */
  issues: ConfigIssue[];
  /** The file has a map (or list) of servers under a key codecall reads, possibly empty. */
  serverMap: boolean;
}

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Sets `key` as an own property (a `__proto__` server name stays a key, for later checks to name). */
function put(object: Json, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

class Shaper {
  readonly ignoredKeys: string[] = [];
  readonly policies = new Map<string, ClientServerPolicy>();
  readonly mappings: ClientPolicyMapping[] = [];
  readonly unreadable: string[] = [];
  readonly issues: ConfigIssue[] = [];

  constructor(readonly env: NodeJS.ProcessEnv) {}

  policy(server: string): ClientServerPolicy {
    let policy = this.policies.get(server);
    if (policy === undefined) {
      policy = { rules: [], approve: new Map(), ask: new Map() };
      this.policies.set(server, policy);
    }
    return policy;
  }

  /** A list of names at `path`, or undefined (with an issue) when it is not one. */
  names(value: unknown, path: JsonPath): string[] | undefined {
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value;
    this.issues.push({
      path: formatJsonPath(path),
      message: 'expected a list of names, e.g. ["read_file"]. Fix: write the names as a list of strings.',
    });
    return undefined;
  }

  disable(
    out: Json,
    server: string,
    path: JsonPath,
    why = 'server disabled (never started; none of its tools is callable)',
  ): void {
    out.disabled = true;
    this.mappings.push({ from: formatJsonPath(path), to: `${server}: ${why}` });
  }

  /**
   * A deny or allow-only list of `server`'s tools. An empty deny list is no rule. An empty
   * allow-only list switches every tool off (Gemini CLI's `includeTools`, Codex's `enabled_tools`),
   * unless `emptyMeansAll` (Goose's `available_tools`, where it means every tool).
   */
  deny(
    server: string,
    path: JsonPath,
    value: unknown,
    effect: ClientToolRule['effect'],
    emptyMeansAll = false,
  ): void {
    const tools = this.names(value, path);
    if (tools === undefined) return;
    if (tools.length === 0 && (effect === 'deny' || emptyMeansAll)) return;
    const key = formatJsonPath(path);
    this.policy(server).rules.push({ key, effect, tools: [...tools] });
  }

  approve(server: string, path: JsonPath, value: unknown): void {
    const tools = this.names(value, path);
    tools?.forEach((tool, index) => this.policy(server).approve.set(tool, formatJsonPath([...path, index])));
  }

  /** Records the keys of `entry` not in `used` as ignored. */
  ignoreRest(entry: Json, used: ReadonlySet<string>, path: JsonPath): void {
    for (const key of Object.keys(entry))
      if (!used.has(key)) this.ignoredKeys.push(formatJsonPath([...path, key]));
  }

  /** `process.env` names a client passes through (`env_vars`, `env_keys`): those that are set. */
  passThrough(names: string[], env: Json): void {
    for (const name of names)
      if (this.env[name] !== undefined && !Object.hasOwn(env, name)) put(env, name, `\${${name}}`);
  }
}

/** Seconds (Codex, Goose) to milliseconds, or the value unchanged for validation to name. */
function secondsToMs(value: unknown): unknown {
  return typeof value === 'number' && Number.isFinite(value) ? Math.round(value * 1000) : value;
}

// --- mcpServers / servers (Claude, Cursor, VS Code, Windsurf, Cline, Gemini CLI, Claude Code) ---

/** Server keys only Gemini CLI writes. */
const GEMINI_SERVER_KEYS = ['httpUrl', 'trust', 'includeTools', 'excludeTools', 'authProviderType'];

/** Gemini CLI's top-level server lists before its settings moved them to `mcp.allowed` / `mcp.excluded`. */
const GEMINI_OLD_SERVER_LISTS = ['allowMCPServers', 'excludeMCPServers'];

/** A file Gemini CLI wrote: `.gemini/settings.json`, or Gemini-only keys. */
function isGeminiFile(json: Json, servers: Json, file: string): boolean {
  if (basename(file) === 'settings.json' && basename(dirname(file)) === '.gemini') return true;
  if (isRecord(json.mcp) && ['allowed', 'excluded', 'serverCommand'].some((k) => k in (json.mcp as Json)))
    return true;
  if (GEMINI_OLD_SERVER_LISTS.some((k) => k in json)) return true;
  return Object.values(servers).some((e) => isRecord(e) && GEMINI_SERVER_KEYS.some((k) => k in e));
}

/**
 * Gemini CLI's `$VAR` to codecall's `${VAR}`, in every string, when `env` has `VAR`. Gemini CLI
 * leaves an unset `$VAR` as written, so it stays literal here too (braced, it would be an error).
 */
function bracedVars(value: unknown, env: NodeJS.ProcessEnv): unknown {
  if (typeof value === 'string')
    return value.replace(/\$([A-Za-z_][A-Za-z0-9_]*)/g, (written, name: string) =>
      typeof env[name] === 'string' ? `\${${name}}` : written,
    );
  if (Array.isArray(value)) return value.map((item) => bracedVars(item, env));
  if (isRecord(value)) {
    const out: Json = {};
    for (const [key, item] of Object.entries(value)) put(out, key, bracedVars(item, env));
    return out;
  }
  return value;
}

function nativeEntry(shaper: Shaper, mapKey: string, name: string, entry: Json, gemini: boolean): Json {
  const path = [mapKey, name];
  const out: Json = {};
  const policyKeys = new Set([
    'enabled',
    'disabledTools',
    'excludeTools',
    'includeTools',
    'trust',
    'alwaysAllow',
    'autoApprove',
    'httpUrl',
  ]);
  for (const [key, value] of Object.entries(gemini ? (bracedVars(entry, shaper.env) as Json) : entry)) {
    if (!policyKeys.has(key) && !(gemini && key === 'timeout')) put(out, key, value);
  }
  if (entry.disabled === true)
    shaper.mappings.push({
      from: formatJsonPath([...path, 'disabled']),
      to: `${name}: server disabled (never started; none of its tools is callable)`,
    });
  if (entry.enabled === false) shaper.disable(out, name, [...path, 'enabled']);
  else if (entry.enabled !== undefined && entry.enabled !== true)
    shaper.issues.push({ path: formatJsonPath([...path, 'enabled']), message: 'expected true or false.' });
  if (entry.disabledTools !== undefined)
    shaper.deny(name, [...path, 'disabledTools'], entry.disabledTools, 'deny');
  if (entry.excludeTools !== undefined)
    shaper.deny(name, [...path, 'excludeTools'], entry.excludeTools, 'deny');
  if (entry.includeTools !== undefined)
    shaper.deny(name, [...path, 'includeTools'], entry.includeTools, 'allowOnly');
  for (const key of ['alwaysAllow', 'autoApprove'] as const)
    if (entry[key] !== undefined) shaper.approve(name, [...path, key], entry[key]);
  if (entry.trust === true)
    shaper.mappings.push({
      from: formatJsonPath([...path, 'trust']),
      to:
        `${name}: no change (codecall asks no approval for tools not marked destructive; ` +
        'a destructive tool still needs approval, since trust names no tool)',
    });
  if (entry.httpUrl !== undefined) {
    if (entry.url !== undefined)
      shaper.issues.push({
        path: formatJsonPath([...path, 'url']),
        message:
          '"url" (an SSE endpoint in Gemini CLI) and "httpUrl" (Streamable HTTP) are both set. Fix: keep one of them.',
      });
    out.url = gemini ? bracedVars(entry.httpUrl, shaper.env) : entry.httpUrl;
    out.type ??= 'http';
  } else if (gemini && entry.url !== undefined && entry.type === undefined) out.type = 'sse';
  if (gemini && entry.timeout !== undefined) out.toolTimeoutMs ??= entry.timeout;
  return out;
}

/** `mcp__server`, `mcp__server__*`, `mcp__server__tool` (Claude Code's permission rules) to a server and tool. */
function parseMcpRule(
  rule: string,
  servers: readonly string[],
): { server: string; tool?: string } | undefined {
  if (!rule.startsWith('mcp__') || /[()]/.test(rule)) return undefined;
  const body = rule.slice('mcp__'.length);
  for (const server of [...servers].sort((a, b) => b.length - a.length)) {
    for (const spelled of new Set([server, server.replace(/[^A-Za-z0-9_-]/g, '_')])) {
      if (body === spelled) return { server };
      if (body.startsWith(`${spelled}__`)) {
        const tool = body.slice(spelled.length + 2);
        return tool === '*' ? { server } : { server, tool };
      }
    }
  }
  return undefined;
}

/** Claude Code's `permissions.allow` / `ask` / `deny` entries for MCP tools, and `disabledMcpjsonServers`. */
function claudePermissions(shaper: Shaper, json: Json, servers: Json): Set<string> {
  const used = new Set<string>();
  const names = Object.keys(servers);
  const permissions = json.permissions;
  if (isRecord(permissions)) {
    const lists = ['deny', 'ask', 'allow'] as const;
    const mcp = lists.some(
      (list) =>
        Array.isArray(permissions[list]) &&
        (permissions[list] as unknown[]).some((r) => typeof r === 'string' && r.startsWith('mcp__')),
    );
    if (mcp) {
      used.add('permissions');
      for (const list of lists) {
        const rules = permissions[list];
        if (!Array.isArray(rules)) continue;
        rules.forEach((rule, index) => {
          if (typeof rule !== 'string' || !rule.startsWith('mcp__')) return;
          const path = ['permissions', list, index];
          const from = formatJsonPath(path);
          const target = parseMcpRule(rule, names);
          if (target === undefined) {
            shaper.mappings.push({
              from,
              to: `not mapped: ${JSON.stringify(rule)} names no server of this file`,
            });
            return;
          }
          const entry = servers[target.server];
          if (list === 'deny') {
            if (target.tool === undefined) {
              if (isRecord(entry)) shaper.disable(entry, target.server, path);
            } else
              shaper.policy(target.server).rules.push({ key: from, effect: 'deny', tools: [target.tool] });
          } else if (target.tool !== undefined && !target.tool.includes('*')) {
            shaper.policy(target.server)[list === 'allow' ? 'approve' : 'ask'].set(target.tool, from);
          } else if (list === 'ask' && target.tool === undefined) {
            shaper.policy(target.server).askAll = from;
          } else {
            shaper.mappings.push({
              from,
              to:
                list === 'allow'
                  ? `${target.server}: no change (codecall asks no approval for tools not marked destructive; a destructive tool still needs approval unless named exactly)`
                  : `${target.server}: not mapped (codecall's approval rules name tools exactly; set requireApproval on the tools)`,
            });
          }
        });
      }
    }
  }
  if (json.disabledMcpjsonServers !== undefined) {
    used.add('disabledMcpjsonServers');
    shaper.names(json.disabledMcpjsonServers, ['disabledMcpjsonServers'])?.forEach((name, index) => {
      const entry = Object.hasOwn(servers, name) ? servers[name] : undefined;
      if (isRecord(entry)) shaper.disable(entry, name, ['disabledMcpjsonServers', index]);
    });
  }
  return used;
}

/**
 * Gemini CLI's server lists: `mcp.allowed` / `mcp.excluded`, and the top-level
 * `allowMCPServers` / `excludeMCPServers` older versions wrote (same meaning).
 */
function geminiServerLists(shaper: Shaper, json: Json, servers: Json): Set<string> {
  const used = new Set<string>();
  const exclude = (value: unknown, path: JsonPath): void =>
    shaper.names(value, path)?.forEach((name, index) => {
      const entry = Object.hasOwn(servers, name) ? servers[name] : undefined;
      if (isRecord(entry) && entry.disabled !== true) shaper.disable(entry, name, [...path, index]);
    });
  const allow = (value: unknown, path: JsonPath): void => {
    const allowed = shaper.names(value, path);
    if (allowed !== undefined)
      for (const [name, entry] of Object.entries(servers))
        if (!allowed.includes(name) && isRecord(entry) && entry.disabled !== true)
          shaper.disable(entry, name, path, 'server disabled (not in the allowed list)');
  };
  const mcp = json.mcp;
  if (isRecord(mcp)) {
    used.add('mcp');
    if (mcp.excluded !== undefined) exclude(mcp.excluded, ['mcp', 'excluded']);
    if (mcp.allowed !== undefined) allow(mcp.allowed, ['mcp', 'allowed']);
    for (const key of Object.keys(mcp))
      if (key !== 'allowed' && key !== 'excluded') shaper.ignoredKeys.push(formatJsonPath(['mcp', key]));
  }
  if (json.excludeMCPServers !== undefined) {
    used.add('excludeMCPServers');
    exclude(json.excludeMCPServers, ['excludeMCPServers']);
  }
  if (json.allowMCPServers !== undefined) {
    used.add('allowMCPServers');
    allow(json.allowMCPServers, ['allowMCPServers']);
  }
  return used;
}

function nativeShape(shaper: Shaper, json: Json, file: string): { json: Json; client?: string } {
  const mapKey = json.mcpServers === undefined && isRecord(json.servers) ? 'servers' : 'mcpServers';
  const written = json[mapKey];
  if (!isRecord(written)) return { json };
  const gemini = isGeminiFile(json, written, file);
  const servers: Json = {};
  for (const [name, entry] of Object.entries(written))
    put(servers, name, isRecord(entry) ? nativeEntry(shaper, mapKey, name, entry, gemini) : entry);
  const used = new Set([
    ...claudePermissions(shaper, json, servers),
    ...(gemini ? geminiServerLists(shaper, json, servers) : []),
  ]);
  const out: Json = {};
  for (const [key, value] of Object.entries(json)) if (!used.has(key)) put(out, key, value);
  put(out, mapKey, servers);
  return gemini ? { json: out, client: 'Gemini CLI' } : { json: out };
}

// --- Zed ---

function zedShape(shaper: Shaper, servers: Json): Json {
  const out: Json = {};
  for (const [name, entry] of Object.entries(servers)) {
    const path = ['context_servers', name];
    if (!isRecord(entry)) {
      shaper.issues.push({
        path: formatJsonPath(path),
        message: 'expected an object with "command" or "url".',
      });
      continue;
    }
    const server: Json = {};
    const command = entry.command;
    if (isRecord(command)) {
      // Zed's older shape: "command": { "path", "args", "env" }.
      server.command = command.path;
      if (command.args !== undefined) server.args = command.args;
      if (command.env !== undefined) server.env = command.env;
    } else if (command !== undefined) {
      server.command = command;
      if (entry.args !== undefined) server.args = entry.args;
      if (entry.env !== undefined) server.env = entry.env;
    } else if (entry.url !== undefined) {
      server.url = entry.url;
      if (entry.headers !== undefined) server.headers = entry.headers;
    } else {
      shaper.unreadable.push(
        `${formatJsonPath(path)}: ${entry.source === 'extension' || entry.source === undefined ? 'a server a Zed extension provides (source "extension"); codecall cannot start it without its "command"' : 'no "command" or "url"'}`,
      );
      continue;
    }
    if (entry.enabled === false) shaper.disable(server, name, [...path, 'enabled']);
    shaper.ignoreRest(
      entry,
      new Set(['source', 'settings', 'enabled', 'command', 'args', 'env', 'url', 'headers']),
      path,
    );
    put(out, name, server);
  }
  return out;
}

// --- opencode ---

function isOpencodeMap(mcp: Json): boolean {
  const entries = Object.values(mcp);
  return (
    entries.length > 0 &&
    entries.every(
      (e) => isRecord(e) && (e.type === 'local' || e.type === 'remote' || Array.isArray(e.command)),
    )
  );
}

function opencodeShape(shaper: Shaper, servers: Json, tools: unknown): Json {
  const out: Json = {};
  for (const [name, entry] of Object.entries(servers)) {
    const path = ['mcp', name];
    if (!isRecord(entry)) continue;
    const server: Json = {};
    if (entry.type === 'remote') {
      server.type = 'http';
      server.url = entry.url;
      if (entry.headers !== undefined) server.headers = entry.headers;
    } else {
      const command = entry.command;
      if (!Array.isArray(command) || command.length === 0 || !command.every((c) => typeof c === 'string')) {
        shaper.issues.push({
          path: formatJsonPath([...path, 'command']),
          message:
            'opencode\'s local server needs "command": a non-empty list, e.g. ["npx", "-y", "my-mcp"].',
        });
        continue;
      }
      server.command = command[0];
      server.args = command.slice(1);
      if (entry.environment !== undefined) server.env = entry.environment;
    }
    if (entry.timeout !== undefined) server.connectTimeoutMs = entry.timeout;
    if (entry.enabled === false) shaper.disable(server, name, [...path, 'enabled']);
    shaper.ignoreRest(
      entry,
      new Set(['type', 'url', 'headers', 'command', 'environment', 'timeout', 'enabled']),
      path,
    );
    put(out, name, server);
  }
  // opencode's top-level "tools": { "<server>_<tool>": false }, globs allowed.
  if (isRecord(tools))
    for (const [pattern, on] of Object.entries(tools)) {
      const from = formatJsonPath(['tools', pattern]);
      if (on !== false) continue;
      const server = Object.keys(out)
        .sort((a, b) => b.length - a.length)
        .find((name) => pattern.startsWith(`${name}_`));
      if (server === undefined) {
        shaper.mappings.push({
          from,
          to: 'not mapped: names no MCP server of this file (a built-in opencode tool?)',
        });
        continue;
      }
      shaper
        .policy(server)
        .rules.push({ key: from, effect: 'deny', tools: [pattern.slice(server.length + 1)] });
    }
  return out;
}

// --- OpenAI Codex (config.toml) ---

function codexShape(shaper: Shaper, servers: Json): Json {
  const out: Json = {};
  const used = new Set([
    'command',
    'args',
    'env',
    'env_vars',
    'cwd',
    'url',
    'bearer_token_env_var',
    'http_headers',
    'env_http_headers',
    'startup_timeout_sec',
    'startup_timeout_ms',
    'tool_timeout_sec',
    'enabled',
    'enabled_tools',
    'disabled_tools',
  ]);
  for (const [name, entry] of Object.entries(servers)) {
    const path = ['mcp_servers', name];
    if (!isRecord(entry)) continue;
    const server: Json = {};
    if (entry.url !== undefined) {
      server.type = 'http';
      server.url = entry.url;
      const headers: Json = isRecord(entry.http_headers) ? { ...entry.http_headers } : {};
      if (isRecord(entry.env_http_headers))
        for (const [header, variable] of Object.entries(entry.env_http_headers))
          if (typeof variable === 'string') put(headers, header, `\${${variable}}`);
      if (typeof entry.bearer_token_env_var === 'string')
        headers.Authorization = `Bearer \${${entry.bearer_token_env_var}}`;
      if (Object.keys(headers).length > 0) server.headers = headers;
    } else {
      if (entry.command !== undefined) server.command = entry.command;
      if (entry.args !== undefined) server.args = entry.args;
      if (entry.cwd !== undefined) server.cwd = entry.cwd;
      const env: Json = isRecord(entry.env) ? { ...entry.env } : {};
      if (entry.env_vars !== undefined) {
        const names = shaper.names(entry.env_vars, [...path, 'env_vars']);
        if (names) shaper.passThrough(names, env);
      }
      // A non-object "env" goes on as written, for validation to name.
      if (entry.env !== undefined && !isRecord(entry.env)) server.env = entry.env;
      else if (Object.keys(env).length > 0) server.env = env;
    }
    const startup =
      entry.startup_timeout_sec !== undefined
        ? secondsToMs(entry.startup_timeout_sec)
        : entry.startup_timeout_ms;
    if (startup !== undefined) server.connectTimeoutMs = startup;
    if (entry.tool_timeout_sec !== undefined) server.toolTimeoutMs = secondsToMs(entry.tool_timeout_sec);
    if (entry.enabled === false) shaper.disable(server, name, [...path, 'enabled']);
    if (entry.enabled_tools !== undefined)
      shaper.deny(name, [...path, 'enabled_tools'], entry.enabled_tools, 'allowOnly');
    if (entry.disabled_tools !== undefined)
      shaper.deny(name, [...path, 'disabled_tools'], entry.disabled_tools, 'deny');
    shaper.ignoreRest(entry, used, path);
    put(out, name, server);
  }
  return out;
}

// --- Goose (config.yaml) ---

function isGooseMap(extensions: Json, json: Json): boolean {
  if (Object.keys(json).some((key) => key.startsWith('GOOSE_'))) return true;
  const entries = Object.values(extensions);
  return (
    entries.length > 0 && entries.every((e) => isRecord(e) && (typeof e.type === 'string' || 'cmd' in e))
  );
}

function gooseShape(shaper: Shaper, extensions: Json): Json {
  const out: Json = {};
  for (const [name, entry] of Object.entries(extensions)) {
    const path = ['extensions', name];
    if (!isRecord(entry)) continue;
    const server: Json = {};
    const type = entry.type;
    if (type === 'stdio') {
      server.command = entry.cmd;
      if (entry.args !== undefined) server.args = entry.args;
      const env: Json = isRecord(entry.envs) ? { ...entry.envs } : {};
      if (entry.env_keys !== undefined) {
        const names = shaper.names(entry.env_keys, [...path, 'env_keys']);
        if (names) shaper.passThrough(names, env);
      }
      if (Object.keys(env).length > 0) server.env = env;
    } else if (type === 'sse' || type === 'streamable_http') {
      server.type = type === 'sse' ? 'sse' : 'http';
      server.url = entry.uri;
      if (entry.headers !== undefined) server.headers = entry.headers;
    } else {
      shaper.unreadable.push(
        `${formatJsonPath(path)}: a Goose ${typeof type === 'string' ? JSON.stringify(type) : 'untyped'} extension, not an MCP server codecall can start (only stdio, sse and streamable_http are)`,
      );
      continue;
    }
    if (entry.timeout !== undefined) server.toolTimeoutMs = secondsToMs(entry.timeout);
    if (entry.enabled === false) shaper.disable(server, name, [...path, 'enabled']);
    if (entry.available_tools !== undefined)
      shaper.deny(name, [...path, 'available_tools'], entry.available_tools, 'allowOnly', true);
    const used = [
      'type',
      'cmd',
      'args',
      'envs',
      'env_keys',
      'uri',
      'headers',
      'timeout',
      'enabled',
      'available_tools',
    ];
    shaper.ignoreRest(entry, new Set([...used, 'name', 'display_name', 'description', 'bundled']), path);
    put(out, name, server);
  }
  return out;
}

// --- Continue (config.yaml, .continue/mcpServers/*.yaml) ---

/** Continue's `${{ secrets.NAME }}` and `${{ inputs.NAME }}`: read from the environment variable NAME. */
function continueSecrets(value: unknown): unknown {
  if (typeof value === 'string')
    return value.replace(/\$\{\{\s*(?:secrets|inputs)\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, '${$1}');
  if (Array.isArray(value)) return value.map(continueSecrets);
  if (isRecord(value)) {
    const out: Json = {};
    for (const [key, item] of Object.entries(value)) put(out, key, continueSecrets(item));
    return out;
  }
  return value;
}

function continueShape(shaper: Shaper, list: unknown[]): Json {
  const out: Json = {};
  list.forEach((raw, index) => {
    const path = ['mcpServers', index];
    if (!isRecord(raw)) {
      shaper.issues.push({
        path: formatJsonPath(path),
        message: 'expected an object with "name" and "command" or "url".',
      });
      return;
    }
    const entry = continueSecrets(raw) as Json;
    const name = entry.name;
    if (typeof name !== 'string' || name === '') {
      shaper.issues.push({
        path: formatJsonPath([...path, 'name']),
        message: 'each server needs a "name". Fix: add "name": "my-server".',
      });
      return;
    }
    if (Object.hasOwn(out, name)) {
      shaper.issues.push({
        path: formatJsonPath([...path, 'name']),
        message: `a second server is named ${JSON.stringify(name)}. Fix: rename one.`,
      });
      return;
    }
    if (entry.command === undefined && entry.url === undefined) {
      shaper.unreadable.push(
        `${formatJsonPath(path)} (${JSON.stringify(name)}): ${entry.uses !== undefined || entry.namespace !== undefined ? 'a Continue Hub block; codecall cannot fetch it' : 'no "command" or "url"'}`,
      );
      return;
    }
    const server: Json = {};
    for (const key of ['type', 'command', 'args', 'env', 'cwd', 'url'] as const)
      if (entry[key] !== undefined) server[key] = entry[key];
    if (entry.connectionTimeout !== undefined) server.connectTimeoutMs = entry.connectionTimeout;
    const options = entry.requestOptions;
    if (isRecord(options) && options.headers !== undefined) server.headers = options.headers;
    shaper.ignoreRest(
      entry,
      new Set([
        'name',
        'type',
        'command',
        'args',
        'env',
        'cwd',
        'url',
        'connectionTimeout',
        'requestOptions',
      ]),
      path,
    );
    put(out, name, server);
  });
  return out;
}

/** A foreign shape: its servers under `mcpServers`, every other top-level key ignored. */
function foreign(shaper: Shaper, json: Json, key: string, servers: Json): Json {
  for (const other of Object.keys(json))
    if (other !== key && other !== '$schema') shaper.ignoredKeys.push(formatJsonPath([other]));
  return { mcpServers: servers };
}

/**
 * Turns a parsed configuration of any client codecall knows into codecall's shape, reading
 * the client's allow and deny lists on the way. `file` helps recognise Gemini CLI's
 * `settings.json`; `env` answers which pass-through variables (`env_vars`, `env_keys`) are set.
 */
export function readClientShape(json: Json, file: string, env: NodeJS.ProcessEnv): ClientShape {
  const shaper = new Shaper(env);
  let shaped: { json: Json; client?: string; serverMap: boolean };
  if (Array.isArray(json.mcpServers)) {
    shaped = {
      json: foreign(shaper, json, 'mcpServers', continueShape(shaper, json.mcpServers)),
      client: 'Continue',
      serverMap: true,
    };
  } else if (isRecord(json.mcpServers) || isRecord(json.servers)) {
    shaped = { ...nativeShape(shaper, json, file), serverMap: true };
  } else if (isRecord(json.context_servers)) {
    shaped = {
      json: foreign(shaper, json, 'context_servers', zedShape(shaper, json.context_servers)),
      client: 'Zed',
      serverMap: true,
    };
  } else if (isRecord(json.mcp_servers)) {
    shaped = {
      json: foreign(shaper, json, 'mcp_servers', codexShape(shaper, json.mcp_servers)),
      client: 'Codex',
      serverMap: true,
    };
  } else if (isRecord(json.extensions) && isGooseMap(json.extensions, json)) {
    shaped = {
      json: foreign(shaper, json, 'extensions', gooseShape(shaper, json.extensions)),
      client: 'Goose',
      serverMap: true,
    };
  } else if (isRecord(json.mcp) && isOpencodeMap(json.mcp)) {
    const servers = opencodeShape(shaper, json.mcp, json.tools);
    const out = foreign(shaper, json, 'mcp', servers);
    // "tools" was read as opencode's tool switches.
    const tools = shaper.ignoredKeys.indexOf('tools');
    if (tools >= 0 && isRecord(json.tools)) shaper.ignoredKeys.splice(tools, 1);
    shaped = { json: out, client: 'opencode', serverMap: true };
  } else {
    shaped = { json, serverMap: false };
  }
  return {
    ...(shaped.client !== undefined ? { client: shaped.client } : {}),
    json: shaped.json,
    ignoredKeys: shaper.ignoredKeys,
    policies: shaper.policies,
    mappings: shaper.mappings,
    unreadable: shaper.unreadable,
    issues: shaper.issues,
    serverMap: shaped.serverMap,
  };
}
