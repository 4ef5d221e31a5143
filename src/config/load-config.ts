/**
 * @module
 * Finds, reads, expands, validates and resolves a codecall configuration file. Every failure is a
 * `CodecallError` whose message names the file, the JSON path inside it and the fix.
 */
import { realpathSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { z } from 'zod';
import { CodecallError, isCodecallError } from '../errors.js';
import type { ToolCaller } from '../types.js';
import {
  DEFAULT_HISTORY_MAX_RUNS,
  DEFAULT_HISTORY_PATH,
  DEFAULT_MAX_CODE_BYTES,
  DEFAULT_SANDBOX_MAX_SESSIONS,
  DEFAULT_SANDBOX_SESSION_TTL_MS,
  DEFAULT_SANDBOX_LIMITS,
  DEFAULT_SANDBOX_MODE,
  DEFAULT_SANDBOX_MAX_WORKERS,
  DEFAULT_SANDBOX_MIN_WORKERS,
  DEFAULT_SANDBOX_WORKER_IDLE_MS,
  DEFAULT_SANDBOX_WORKER_SPIN_US,
  DEFAULT_SANDBOX_ISOLATE_RUNS,
  DEFAULT_CONFIG_MAX_BYTES,
  DEFAULT_SERVER_CONNECT_TIMEOUT_MS,
  DEFAULT_SERVER_MAX_CONCURRENT_CALLS,
  DEFAULT_UPSTREAM_PROTOCOL,
  DEFAULT_SERVER_MAX_MESSAGE_BYTES,
  DEFAULT_TOOL_CALL_TIMEOUT_MS,
} from './defaults.js';
import {
  DEFAULT_AGENT_MAX_STEPS,
  DEFAULT_APPROVAL_TIMEOUT_MS,
  DEFAULT_BEAM_DEPTH,
  DEFAULT_BEAM_WIDTH,
  DEFAULT_EMBEDDING_BATCH_SIZE,
  DEFAULT_EMBEDDING_CACHE_MAX_ENTRIES,
  DEFAULT_EMBEDDING_CACHE_PATH,
  DEFAULT_EMBEDDING_TIMEOUT_MS,
  DEFAULT_EMBEDDING_WEIGHT,
  DEFAULT_EMBEDDING_GUARD,
  DEFAULT_EMBEDDING_FLAT_SHARE,
  DEFAULT_ONNX_EMBEDDING_BATCH_SIZE,
  DEFAULT_ONNX_EMBEDDING_MAX_TOKENS,
  DEFAULT_ONNX_EMBEDDING_THREADS,
  DEFAULT_EXPANSION_DOCS,
  DEFAULT_EXPANSION_FLAT_SHARE,
  DEFAULT_EXPANSION_RERANK_DOCS,
  DEFAULT_EXPANSION_TERMS,
  DEFAULT_EXPANSION_WEIGHT,
  DEFAULT_EXPANSION_WHEN,
  DEFAULT_GRAPH_WEIGHT,
  DEFAULT_JOBS_APPROVAL_TIMEOUT_MS,
  DEFAULT_JOBS_LOCAL_CONCURRENCY,
  DEFAULT_JOBS_LOCAL_MAX_PARKED,
  DEFAULT_JOBS_LOCAL_MAX_WAITING,
  DEFAULT_JOBS_QUEUE,
  DEFAULT_PROVIDER_MAX_OUTPUT_TOKENS,
  DEFAULT_SERVE_HOST,
  DEFAULT_SERVE_IDLE_COLLECT_MS,
  DEFAULT_SERVE_MAX_CONCURRENT_RUNS,
  DEFAULT_SERVE_MAX_SESSIONS,
  DEFAULT_SERVE_MAX_SESSIONS_PER_CLIENT,
  DEFAULT_SERVE_TASK_POLL_INTERVAL_MS,
  DEFAULT_SERVE_TASK_TTL_MS,
  DEFAULT_SERVE_TASKS_PER_CLIENT,
  DEFAULT_SERVE_MCP_2026,
  DEFAULT_SERVE_MAX_SUBSCRIPTIONS_PER_SESSION,
  DEFAULT_SERVE_PORT,
  DEFAULT_SERVE_SEARCH_WAIT_FOR_SERVERS_MS,
  DEFAULT_SERVE_SESSION_IDLE_MS,
  DEFAULT_SERVE_WAIT_FOR_SERVERS_MS,
  DEFAULT_SERVE_YOUNG_GENERATION_MAX_MB,
  DEFAULT_STEMMING,
  DEFAULT_STORE_MAX_NAMESPACE_BYTES,
  DEFAULT_RESULT_HANDLE_MIN_BYTES,
  DEFAULT_RESULT_HANDLE_SPILL_BYTES,
  DEFAULT_STORE_MAX_VALUE_BYTES,
  DEFAULT_STORE_SCOPE,
  DEFAULT_VERB_NORMALIZATION,
  DEFAULT_VENDOR_CONTAINER_TTL_MS,
  IN_MEMORY_STORE_NAMESPACE,
} from './defaults.js';
import { toolPolicyOf } from './tool-policy.js';
import { resolveUpstreamOAuth } from './upstream-oauth.js';
import { ignoredKeysNotice, readClientFormat } from './client-formats.js';
import { readClientShape, type ClientServerPolicy } from './client-shapes.js';
import { expandEnvDeep } from './expand-env.js';
import { stateDirectory } from './state-directory.js';
import { parseConfigFile } from './parse-config-text.js';
import { closestName, formatJsonPath, type JsonPath } from './json-path.js';
import {
  agentSchema,
  approvalsSchema,
  storeSchema,
  resultHandlesSchema,
  configFileSchema,
  historySchema,
  sandboxSchema,
  searchSchema,
  serverSchema,
  serveSchema,
  jobsSchema,
  toolPolicySchema,
  type ConfigFile,
  type ServerEntry,
} from './schema.js';
import type {
  ClientPolicyMapping,
  CodecallConfig,
  JobsConfig,
  RequireApproval,
  SearchConfig,
  ServeConfig,
  ServerConfig,
  ToolPolicyConfig,
} from './types.js';

/** Files looked for in the working directory, in order, when no path is given. */
export const CONFIG_FILE_NAMES: readonly string[] = ['codecall.json', '.mcp.json'];

/** Options for {@link loadConfig}. */
export interface LoadConfigOptions {
  /** A configuration file (`--config`); relative to `cwd`. Unset: look for {@link CONFIG_FILE_NAMES}. */
  path?: string;
  /**
   * Directory to look in and to resolve `path` against.
   * @defaultValue `process.cwd()`
   */
  cwd?: string;
  /**
   * Variables for `${VAR}` expansion.
   * @defaultValue `process.env`
   */
  env?: NodeJS.ProcessEnv;
  /**
   * Called with each of the loaded configuration's `notices` (e.g. the keys it ignored), once,
   * after it loaded; the CLI writes them on stderr.
   * @defaultValue none (the notices stay on `config.notices`)
   */
  onNotice?: (notice: string) => void;
}

/** Options for {@link parseConfig}. */
export interface ParseConfigOptions {
  /** File name (or a label such as `<inline>`) used in messages; its directory anchors relative paths. */
  file: string;
  /**
   * Variables for `${VAR}` expansion.
   * @defaultValue `process.env`
   */
  env?: NodeJS.ProcessEnv;
  /**
   * Directory that relative paths resolve against.
   * @defaultValue the directory of `file` when it is a path, else `process.cwd()`
   */
  dir?: string;
}

/** One problem found in a configuration. */
export interface ConfigIssue {
  /** JSON path, e.g. `mcpServers.expenses.args[0]`. */
  path: string;
  /** What is wrong and how to fix it. */
  message: string;
}

/**
 * The bytes of a configuration file, refused before they are read when the path is not a regular
 * file (a device such as `/dev/zero`, a FIFO) or is past {@link DEFAULT_CONFIG_MAX_BYTES}: a
 * configuration path may name any file, and a cloned folder may link `.mcp.json` anywhere.
 * File-system errors (`ENOENT`…) are thrown as they are.
 */
export async function readConfigBytes(file: string): Promise<Buffer> {
  const stats = await stat(file);
  const refuse = (problem: string): never => {
    throw new CodecallError(
      'CONFIG_INVALID',
      `${file} ${problem}. Fix: shrink or replace the file, or pass --config <file> to use another.`,
      { details: { file, issues: [{ path: '(root)', message: problem }] } },
    );
  };
  if (!stats.isFile()) refuse('is not a regular file');
  if (stats.size > DEFAULT_CONFIG_MAX_BYTES)
    refuse(
      `is ${stats.size} bytes; a configuration is at most ${DEFAULT_CONFIG_MAX_BYTES} (DEFAULT_CONFIG_MAX_BYTES)`,
    );
  return readFile(file);
}

/**
 * Finds and loads the configuration: `path` if given, else `codecall.json`, then `.mcp.json` in
 * `cwd`.
 *
 * @throws CodecallError `CONFIG_NOT_FOUND`, `CONFIG_INVALID` or `CONFIG_ENV_MISSING`.
 * @example
 * ```ts
 * const config = await loadConfig({ path: 'examples/codecall.json' });
 * console.log(Object.keys(config.mcpServers));
 * ```
 */
export async function loadConfig(options: LoadConfigOptions = {}): Promise<CodecallConfig> {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const candidates =
    options.path !== undefined ? [resolve(cwd, options.path)] : CONFIG_FILE_NAMES.map((n) => join(cwd, n));
  for (const file of candidates) {
    let text: string;
    try {
      text = (await readConfigBytes(file)).toString('utf8');
    } catch (error) {
      if (isCodecallError(error)) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') continue;
      throw new CodecallError(
        'CONFIG_NOT_FOUND',
        `Cannot read ${file}: ${(error as Error).message}. Fix: check the file's permissions.`,
        {
          details: { file },
          cause: error,
        },
      );
    }
    const parsed = await parseConfigFile(text, file);
    if (!parsed.ok) {
      const allowed =
        parsed.format === 'JSON' ? ' (comments and trailing commas are allowed, as in VS Code)' : '';
      throw new CodecallError(
        'CONFIG_INVALID',
        `${file} is not valid ${parsed.format}: ${parsed.message}. Fix: correct the syntax${allowed}.`,
        { details: { file, format: parsed.format, issues: [{ path: '(root)', message: parsed.message }] } },
      );
    }
    const config = resolveConfig(parsed.value, { file, env }, true);
    for (const notice of config.notices) options.onNotice?.(notice);
    return config;
  }
  if (options.path !== undefined) {
    throw new CodecallError(
      'CONFIG_NOT_FOUND',
      `No configuration file at ${candidates[0]}. Fix: check the --config path.`,
      { details: { file: candidates[0] } },
    );
  }
  throw new CodecallError(
    'CONFIG_NOT_FOUND',
    `No ${CONFIG_FILE_NAMES.join(' or ')} in ${cwd}. Fix: create codecall.json with ` +
      `{"mcpServers": {"name": {"command": "...", "args": []}}}, or pass --config <path>.`,
    { details: { cwd, looked: candidates } },
  );
}

/**
 * The document {@link loadConfig} would start servers from, given a file's text: parsed as that
 * file is (JSON, TOML or YAML) and read in its client's shape (servers under `mcpServers` or
 * `servers`), before `${VAR}` expansion. Undefined when the text does not parse: then
 * `loadConfig` starts nothing either. The consent check lists servers from this, so it sees
 * exactly what loading would start.
 */
export async function configDocumentOf(
  text: string,
  file: string,
  env: NodeJS.ProcessEnv,
): Promise<Record<string, unknown> | undefined> {
  const parsed = await parseConfigFile(text, file);
  const value = parsed.ok ? parsed.value : undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return readClientShape(value as Record<string, unknown>, file, env).json;
}

/**
 * Validates and resolves an in-memory configuration (the parsed JSON of a file).
 *
 * @throws CodecallError `CONFIG_INVALID` or `CONFIG_ENV_MISSING`.
 * @example
 * ```ts
 * const config = parseConfig({ mcpServers: { fs: { command: 'npx', args: ['-y', 'server'] } } }, { file: '<inline>' });
 * ```
 */
export function parseConfig(json: unknown, options: ParseConfigOptions): CodecallConfig {
  return resolveConfig(json, options, false);
}

/**
 * {@link parseConfig}; `fromFile`: a file that yields no server is an error even when it holds
 * nothing else (in memory, `{}` with codecall's own sections is a valid configuration).
 */
function resolveConfig(json: unknown, options: ParseConfigOptions, fromFile: boolean): CodecallConfig {
  const file = options.file;
  const env = options.env ?? process.env;
  const looksLikePath = isAbsolute(file) || file.includes('/') || file.endsWith('.json');
  const configDir = resolve(options.dir ?? (looksLikePath ? dirname(resolve(file)) : process.cwd()));
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    fail(file, [
      { path: '(root)', message: 'the configuration must be a JSON object like {"mcpServers": {...}}.' },
    ]);
  }
  const shape = readClientShape(json as Record<string, unknown>, file, env);
  const client = readClientFormat(shape.json);
  const ignoredKeys = [...shape.ignoredKeys, ...client.ignoredKeys];
  const reserved = [...shape.issues, ...client.issues, ...reservedNameIssues(client.json)];
  if (reserved.length > 0) fail(file, reserved);
  // The predefined variables VS Code, Cursor and Windsurf expand; the environment wins.
  const expansionEnv = { workspaceFolder: workspaceFolderOf(configDir), userHome: homedir(), ...env };
  const expanded = expandEnvDeep(client.json, {
    env: expansionEnv,
    file,
    inputs: client.inputs,
    skipKeys: new Set(['inputExamples']),
  });
  // reportInput: type errors can then say what was found ("got a number (5)").
  const parsed = configFileSchema.safeParse(expanded, { reportInput: true });
  if (!parsed.success) fail(file, parsed.error.issues.map(describeIssue));
  const data = parsed.data;
  const issues: ConfigIssue[] = [];
  const mcpServers: Record<string, ServerConfig> = {};
  const disabledServers: string[] = [];
  const sandbox = resolveSandbox(data.sandbox, issues);
  // A stdio message carries a result (often twice: text and structured content) plus framing.
  const maxMessageBytes = Math.max(DEFAULT_SERVER_MAX_MESSAGE_BYTES, 2 * sandbox.limits.maxToolResultBytes);
  const serversKey = data.mcpServers === undefined && data.servers !== undefined ? 'servers' : 'mcpServers';
  if (data.mcpServers !== undefined && data.servers !== undefined)
    issues.push({
      path: 'servers',
      message:
        'both "mcpServers" and "servers" (VS Code\'s name) list servers. Fix: move every server into one of them.',
    });
  const clientPolicy: ClientPolicyMapping[] = [...shape.mappings];
  const entries = Object.entries(data[serversKey] ?? {});
  if (
    entries.length === 0 &&
    (shape.unreadable.length > 0 || (!shape.serverMap && (fromFile || ignoredKeys.length > 0)))
  )
    fail(file, [noServerIssue(json as Record<string, unknown>, shape.unreadable, shape.client)]);
  for (const [name, entry] of entries) {
    const server = resolveServer(
      name,
      entry,
      { configDir, maxMessageBytes, serversKey, stateDir: stateDirectory(env) },
      issues,
    );
    if (entry.disabled === true) disabledServers.push(name);
    else if (server) {
      const policy = shape.policies.get(name);
      if (policy) applyClientPolicy(server, policy, clientPolicy);
      mcpServers[name] = server;
    }
  }
  const serve = resolveServe(data.serve, configDir, issues);
  const jobs = resolveJobs(data.jobs);
  const historyPath = resolveHistoryPath(data.history?.path, configDir, env, issues);
  const keyed = data.history?.path === undefined && !env[HISTORY_PATH_ENV] ? historyFileOf(file) : undefined;
  if (issues.length > 0) fail(file, issues);
  return {
    configPath: looksLikePath ? resolve(file) : undefined,
    configDir,
    mcpServers,
    disabledServers,
    sandbox,
    history: {
      enabled: data.history?.enabled ?? true,
      path: keyed ? resolve(configDir, keyed.path) : historyPath,
      key: keyed ? keyed.key : data.history?.path !== undefined ? 'history.path' : HISTORY_PATH_ENV,
      migrateFrom: keyed && keyed.path !== DEFAULT_HISTORY_PATH ? historyPath : undefined,
      maxRuns: data.history?.maxRuns ?? DEFAULT_HISTORY_MAX_RUNS,
    },
    search: resolveSearch(data.search, configDir),
    agent: {
      model: data.agent?.model,
      maxSteps: data.agent?.maxSteps ?? DEFAULT_AGENT_MAX_STEPS,
      maxOutputTokens: data.agent?.maxOutputTokens ?? DEFAULT_PROVIDER_MAX_OUTPUT_TOKENS,
    },
    serve,
    jobs,
    approvals: {
      timeoutMs: data.approvals?.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS,
      requireForDestructive: data.approvals?.requireForDestructive ?? true,
    },
    store: {
      enabled: data.store?.enabled ?? true,
      namespace: data.store?.namespace ?? (looksLikePath ? resolve(file) : IN_MEMORY_STORE_NAMESPACE),
      scope: data.store?.scope ?? DEFAULT_STORE_SCOPE,
      maxValueBytes: data.store?.maxValueBytes ?? DEFAULT_STORE_MAX_VALUE_BYTES,
      maxNamespaceBytes: data.store?.maxNamespaceBytes ?? DEFAULT_STORE_MAX_NAMESPACE_BYTES,
    },
    resultHandles: {
      minBytes: data.resultHandles?.minBytes ?? DEFAULT_RESULT_HANDLE_MIN_BYTES,
      spillBytes: data.resultHandles?.spillBytes ?? DEFAULT_RESULT_HANDLE_SPILL_BYTES,
      // Relative folders are read from the config file's folder, like other paths of the config.
      linkRoots: (data.resultHandles?.linkRoots ?? []).map((root) => resolve(configDir, root)),
    },
    ignoredKeys,
    notices: [
      ...shape.unreadable.map((what) => `skipped ${what}.`),
      ignoredKeysNotice(ignoredKeys),
      clientPolicyNotice(clientPolicy),
    ].filter((n): n is string => n !== undefined),
    clientFormat: shape.client,
    clientPolicy,
  };
}

/** Top-level keys named in the "no server" error. */
const NO_SERVER_LISTED_KEYS = 12;

/** The error of a configuration that yields no server: what was found instead. */
function noServerIssue(
  json: Record<string, unknown>,
  unreadable: string[],
  client: string | undefined,
): ConfigIssue {
  const keys = Object.keys(json);
  // Keys come from the file: quoted where not plain names, so no control character reaches a terminal.
  const listed = keys
    .slice(0, NO_SERVER_LISTED_KEYS)
    .map((key) => formatJsonPath([key]))
    .join(', ');
  const found =
    keys.length === 0
      ? 'the configuration is empty'
      : `found top-level key${keys.length === 1 ? '' : 's'} ${listed}${keys.length > NO_SERVER_LISTED_KEYS ? ` and ${keys.length - NO_SERVER_LISTED_KEYS} more` : ''}${client ? ` (${client}'s format)` : ''}`;
  const why = unreadable.length > 0 ? `; ${unreadable.join('; ')}` : '';
  return {
    path: '(root)',
    message:
      `${found} but no MCP server codecall can read${why}. Fix: list servers as ` +
      '{"mcpServers": {"name": {"command": "...", "args": []}}} (or in the format of Claude, VS Code, ' +
      'Cursor, Windsurf, Cline, Gemini CLI, Zed, opencode, Codex, Goose or Continue), or write ' +
      '"mcpServers": {} to mean no servers.',
  };
}

/** The one notice about other clients' lists kept as policy, or undefined when there are none. */
function clientPolicyNotice(all: readonly ClientPolicyMapping[]): string | undefined {
  // "disabled": true is codecall's own key too: `config check` lists it, the notice does not.
  const mappings = all.filter((m) => !m.from.endsWith('.disabled'));
  if (mappings.length === 0) return undefined;
  return (
    `kept ${mappings.length} setting${mappings.length === 1 ? '' : 's'} of other clients' allow/deny lists ` +
    `as codecall policy (codecall config check shows each): ${mappings
      .slice(0, 3)
      .map((m) => m.from)
      .join(', ')}${mappings.length > 3 ? ', …' : ''}.`
  );
}

/**
 * Applies another client's lists to a resolved server: deny and allow-only lists become
 * `clientRules` (enforced by the tool policy whatever codecall's own keys say); tools the client
 * always asks about get `requireApproval: true` unless codecall's own key for the tool (or, for
 * the whole server, the server's) sets it. A pre-approval never lifts an approval that stands:
 * it makes a tool's `requireApproval` false only when neither codecall's own key (the tool's or
 * the server's) nor an ask of the client (for the tool or its server) says otherwise. Records
 * each mapping.
 */
function applyClientPolicy(
  server: ServerConfig,
  policy: ClientServerPolicy,
  out: ClientPolicyMapping[],
): void {
  const name = server.name;
  if (policy.rules.length > 0) {
    server.clientRules = policy.rules.map((rule) => ({ ...rule, tools: [...rule.tools] }));
    for (const rule of policy.rules)
      out.push({
        from: rule.key,
        to:
          rule.effect === 'deny'
            ? `${name}: ${rule.tools.join(', ')} never callable, from code included`
            : rule.tools.length === 0
              ? `${name}: every tool never callable (the list names none)`
              : `${name}: only ${rule.tools.join(', ')} callable; every other tool never callable`,
      });
  }
  const ownServer = server.requireApproval;
  const ownFor = (tool: string): ToolPolicyConfig | undefined =>
    Object.hasOwn(server.tools, tool) ? server.tools[tool] : undefined;
  /** Sets the tool's requireApproval, unless `stands` says why the approval in place stays. */
  const setApproval = (tool: string, value: boolean, key: string, stands?: string): void => {
    const own = ownFor(tool);
    const why = own?.requireApproval !== undefined ? "codecall's own requireApproval for it wins" : stands;
    if (why !== undefined) {
      out.push({ from: key, to: `${name}.${tool}: no change (${why})` });
      return;
    }
    // A tool name from the file is an own key, `__proto__` included (never the prototype).
    Object.defineProperty(server.tools, tool, {
      value: { ...(own ?? toolPolicyOf(server, tool)), requireApproval: value },
      enumerable: true,
      writable: true,
      configurable: true,
    });
    out.push({ from: key, to: `${name}.${tool}: requireApproval ${String(value)}` });
  };
  for (const [tool, key] of policy.approve) {
    const asked = policy.ask.get(tool);
    setApproval(
      tool,
      false,
      key,
      asked !== undefined
        ? `${asked} asks about it, and an ask wins`
        : ownServer !== undefined
          ? "codecall's own requireApproval for the server wins"
          : policy.askAll !== undefined
            ? `${policy.askAll} asks about every tool of ${name}, and an ask wins`
            : undefined,
    );
  }
  for (const [tool, key] of policy.ask) setApproval(tool, true, key);
  if (policy.askAll !== undefined) {
    if (server.requireApproval === undefined) {
      server.requireApproval = true;
      out.push({ from: policy.askAll, to: `${name}: requireApproval true (every tool)` });
    } else out.push({ from: policy.askAll, to: `${name}: no change (codecall's own requireApproval wins)` });
  }
}

/** `${workspaceFolder}`: the folder holding `.vscode/` or `.cursor/`, else the configuration's folder. */
function workspaceFolderOf(configDir: string): string {
  return ['.vscode', '.cursor'].includes(basename(configDir)) ? dirname(configDir) : configDir;
}

/** The environment variable with which the user (not a project file) places the history store anywhere. */
export const HISTORY_PATH_ENV = 'CODECALL_HISTORY_PATH';

/**
 * The history file of a configuration, by default (history is kept per configuration, keyed by the
 * configuration file's name): `codecall.json` keeps {@link DEFAULT_HISTORY_PATH}, any other file
 * `.codecall/history.<name>.sqlite` beside it, so two configurations in one folder learn apart.
 */
function historyFileOf(file: string): { key: string; path: string } {
  const name = basename(file);
  if (name === '' || name === 'codecall.json')
    return { key: name || 'codecall.json', path: DEFAULT_HISTORY_PATH };
  const safe =
    name
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .replace(/^\.+/, '')
      .slice(0, 100) || 'config';
  return { key: name, path: join(dirname(DEFAULT_HISTORY_PATH), `history.${safe}.sqlite`) };
}

/** `path` with symbolic links resolved as far as the path exists (the rest appended). */
function realPathSoFar(path: string): string {
  let head = path;
  const tail: string[] = [];
  for (;;) {
    try {
      return join(realpathSync(head), ...tail);
    } catch {
      const parent = dirname(head);
      if (parent === head) return path;
      tail.unshift(head.slice(parent.length).replace(/^[\\/]+/, ''));
      head = parent;
    }
  }
}

/**
 * Where usage history lives. `CODECALL_HISTORY_PATH` (the user's choice) wins; a configuration
 * file may only place it inside its own folder (symbolic links resolved), because a cloned
 * project's file must not aim codecall's writes at another application's files.
 */
function resolveHistoryPath(
  written: string | undefined,
  configDir: string,
  env: NodeJS.ProcessEnv,
  issues: ConfigIssue[],
): string {
  const fromEnv = env[HISTORY_PATH_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return resolve(fromEnv);
  const path = resolve(configDir, written ?? DEFAULT_HISTORY_PATH);
  if (written === undefined) return path;
  const root = realPathSoFar(configDir);
  const inside = relative(root, realPathSoFar(path));
  if (inside === '' || inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
    issues.push({
      path: 'history.path',
      message:
        `${JSON.stringify(written)} leads outside the configuration's folder; a configuration file may only keep history inside it ` +
        `(default ${DEFAULT_HISTORY_PATH}). Fix: use a path inside the folder, or set ${HISTORY_PATH_ENV} in your environment to put it elsewhere.`,
    });
  }
  return path;
}

/**
 * Names that JavaScript objects already carry (`__proto__`, `constructor`, `toString`, …): as a
 * server name one vanishes in parsing or finds a built-in instead of the server, so it is refused.
 */
const RESERVED_NAMES: ReadonlySet<string> = new Set([
  '__proto__',
  'prototype',
  ...Object.getOwnPropertyNames(Object.prototype),
]);

function reservedNameIssues(json: object): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const key of ['mcpServers', 'servers'] as const) {
    const servers = (json as Record<string, unknown>)[key];
    if (typeof servers === 'object' && servers !== null) reservedServerNameIssues(key, servers, issues);
  }
  return issues;
}

function reservedServerNameIssues(
  key: 'mcpServers' | 'servers',
  servers: object,
  issues: ConfigIssue[],
): void {
  for (const [name, entry] of Object.entries(servers)) {
    if (RESERVED_NAMES.has(name))
      issues.push({
        path: formatJsonPath([key, name]),
        message: `server name ${JSON.stringify(name)} is reserved (a built-in name of JavaScript objects). Fix: rename it, e.g. ${JSON.stringify(`${name.replace(/^_+|_+$/g, '') || 'server'}_server`)}.`,
      });
    const tools =
      typeof entry === 'object' && entry !== null ? (entry as { tools?: unknown }).tools : undefined;
    if (typeof tools === 'object' && tools !== null && Object.hasOwn(tools, '__proto__'))
      issues.push({
        path: formatJsonPath([key, name, 'tools', '__proto__']),
        message:
          'a tool policy cannot be keyed "__proto__" (JSON parsers drop or misread that key). Fix: remove it.',
      });
  }
}

function resolveServe(section: ConfigFile['serve'], configDir: string, issues: ConfigIssue[]): ServeConfig {
  const given = section ?? {};
  const allowedOrigins = given.allowedOrigins ?? [];
  allowedOrigins.forEach((origin, index) => {
    let exact: string | undefined;
    try {
      exact = new URL(origin).origin;
    } catch {
      // Reported below.
    }
    if (exact !== origin)
      issues.push({
        path: formatJsonPath(['serve', 'allowedOrigins', index]),
        message: `${JSON.stringify(origin)} is not an origin (browsers send scheme://host[:port], no path or trailing slash).${exact && exact !== 'null' ? ` Fix: write ${JSON.stringify(exact)}.` : ' Fix: write e.g. "https://app.example.com".'}`,
      });
  });
  return {
    host: given.host ?? DEFAULT_SERVE_HOST,
    port: given.port ?? DEFAULT_SERVE_PORT,
    token: given.token === '' ? undefined : given.token,
    allowedOrigins: [...allowedOrigins],
    maxConcurrentRuns: given.maxConcurrentRuns ?? DEFAULT_SERVE_MAX_CONCURRENT_RUNS,
    maxSessions: given.maxSessions ?? DEFAULT_SERVE_MAX_SESSIONS,
    maxSessionsPerClient: given.maxSessionsPerClient ?? DEFAULT_SERVE_MAX_SESSIONS_PER_CLIENT,
    taskTtlMs: given.taskTtlMs ?? DEFAULT_SERVE_TASK_TTL_MS,
    taskPollIntervalMs: given.taskPollIntervalMs ?? DEFAULT_SERVE_TASK_POLL_INTERVAL_MS,
    maxTasksPerClient: given.maxTasksPerClient ?? DEFAULT_SERVE_TASKS_PER_CLIENT,
    sessionIdleMs: given.sessionIdleMs ?? DEFAULT_SERVE_SESSION_IDLE_MS,
    learning: given.learning ?? 'shared',
    waitForServersMs: given.waitForServersMs ?? DEFAULT_SERVE_WAIT_FOR_SERVERS_MS,
    searchWaitForServersMs: given.searchWaitForServersMs ?? DEFAULT_SERVE_SEARCH_WAIT_FOR_SERVERS_MS,
    originalNames: given.originalNames ?? false,
    maxSubscriptionsPerSession:
      given.maxSubscriptionsPerSession ?? DEFAULT_SERVE_MAX_SUBSCRIPTIONS_PER_SESSION,
    youngGenerationMaxMb: given.youngGenerationMaxMb ?? DEFAULT_SERVE_YOUNG_GENERATION_MAX_MB,
    idleCollectMs: given.idleCollectMs ?? DEFAULT_SERVE_IDLE_COLLECT_MS,
    models: { ...given.models },
    vendorSecret: given.vendorSecret,
    // A relative folder is read from the config file's folder, like other paths of the config.
    vendorJournalDir:
      given.vendorJournalDir === undefined ? undefined : resolve(configDir, given.vendorJournalDir),
    vendorContainerTtlMs: given.vendorContainerTtlMs ?? DEFAULT_VENDOR_CONTAINER_TTL_MS,
    telemetry: given.telemetry ?? false,
    mcp2026: given.mcp2026 ?? DEFAULT_SERVE_MCP_2026,
  };
}

function resolveJobs(section: ConfigFile['jobs']): JobsConfig {
  const given = section ?? {};
  // A connection without a backend names its queue by its scheme (as `codecall worker` does).
  const backend =
    given.backend ??
    (given.connection === undefined
      ? 'local'
      : /^postgres(ql)?:/i.test(given.connection)
        ? 'postgres'
        : 'bullmq');
  return {
    backend,
    connection: given.connection,
    queue: given.queue ?? DEFAULT_JOBS_QUEUE,
    concurrency: given.concurrency ?? DEFAULT_JOBS_LOCAL_CONCURRENCY,
    dashboard: given.dashboard ?? false,
    approvalTimeoutMs: given.approvalTimeoutMs ?? DEFAULT_JOBS_APPROVAL_TIMEOUT_MS,
    maxWaiting: given.maxWaiting ?? DEFAULT_JOBS_LOCAL_MAX_WAITING,
    maxParked: given.maxParked ?? DEFAULT_JOBS_LOCAL_MAX_PARKED,
  };
}

function resolveSearch(section: ConfigFile['search'], configDir: string): SearchConfig {
  const given = section ?? {};
  const embeddings = given.embeddings;
  const cache = embeddings?.cache ?? DEFAULT_EMBEDDING_CACHE_PATH;
  return {
    limit: given.limit,
    beamWidth: given.beamWidth ?? DEFAULT_BEAM_WIDTH,
    beamDepth: given.beamDepth ?? DEFAULT_BEAM_DEPTH,
    graphWeight: given.graphWeight ?? DEFAULT_GRAPH_WEIGHT,
    stemming: given.stemming ?? DEFAULT_STEMMING,
    verbNormalization: given.verbNormalization ?? DEFAULT_VERB_NORMALIZATION,
    expansionDocs: given.expansionDocs ?? DEFAULT_EXPANSION_DOCS,
    expansionTerms: given.expansionTerms ?? DEFAULT_EXPANSION_TERMS,
    expansionWhen: given.expansionWhen ?? DEFAULT_EXPANSION_WHEN,
    expansionFlatShare: given.expansionFlatShare ?? DEFAULT_EXPANSION_FLAT_SHARE,
    expansionRerankDocs: given.expansionRerankDocs ?? DEFAULT_EXPANSION_RERANK_DOCS,
    expansionWeight: given.expansionWeight ?? DEFAULT_EXPANSION_WEIGHT,
    embeddings:
      embeddings === undefined
        ? undefined
        : {
            baseUrl: embeddings.baseUrl,
            model: embeddings.model,
            apiKey: embeddings.apiKey === '' ? undefined : embeddings.apiKey,
            dimensions: embeddings.dimensions,
            onnx:
              embeddings.onnx === undefined
                ? undefined
                : {
                    model: resolve(configDir, embeddings.onnx.model),
                    tokenizer:
                      embeddings.onnx.tokenizer === undefined
                        ? undefined
                        : resolve(configDir, embeddings.onnx.tokenizer),
                    pooling: embeddings.onnx.pooling ?? 'mean',
                    normalize: embeddings.onnx.normalize ?? true,
                    maxTokens: embeddings.onnx.maxTokens ?? DEFAULT_ONNX_EMBEDDING_MAX_TOKENS,
                    output: embeddings.onnx.output,
                    threads: embeddings.onnx.threads ?? DEFAULT_ONNX_EMBEDDING_THREADS,
                  },
            cache: cache === false || cache === ':memory:' ? cache : resolve(configDir, cache),
            maxCacheEntries: embeddings.maxCacheEntries ?? DEFAULT_EMBEDDING_CACHE_MAX_ENTRIES,
            batchSize:
              embeddings.batchSize ??
              (embeddings.onnx ? DEFAULT_ONNX_EMBEDDING_BATCH_SIZE : DEFAULT_EMBEDDING_BATCH_SIZE),
            timeoutMs: embeddings.timeoutMs ?? DEFAULT_EMBEDDING_TIMEOUT_MS,
            weight: embeddings.weight ?? DEFAULT_EMBEDDING_WEIGHT,
            guard: embeddings.guard ?? DEFAULT_EMBEDDING_GUARD,
            flatShare: embeddings.flatShare ?? DEFAULT_EMBEDDING_FLAT_SHARE,
          },
  };
}

/** Drops `undefined` fields (zod's optional output allows them; exact optional types do not). */
function definedOnly<T extends Record<string, unknown>>(
  value: T,
): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

function resolveSandbox(section: ConfigFile['sandbox'], issues: ConfigIssue[]): CodecallConfig['sandbox'] {
  const {
    mode,
    workers,
    minWorkers,
    maxWorkers,
    workerIdleMs,
    workerSpinUs,
    isolateRuns,
    maxCodeBytes,
    sessionTtlMs,
    maxSessions,
    ...limits
  } = section ?? {};
  if (workers !== undefined && (minWorkers !== undefined || maxWorkers !== undefined)) {
    issues.push({
      path: 'sandbox.workers',
      message:
        '"workers" sets a fixed number of sandbox workers, "minWorkers"/"maxWorkers" a range. Fix: keep one of them.',
    });
  }
  const min = workers ?? minWorkers ?? DEFAULT_SANDBOX_MIN_WORKERS;
  // An explicit minimum above the core count raises the default maximum with it.
  const max = workers ?? maxWorkers ?? Math.max(min, DEFAULT_SANDBOX_MAX_WORKERS);
  if (min > max) {
    issues.push({
      path: 'sandbox.minWorkers',
      message: `"minWorkers" (${min}) is above "maxWorkers" (${max}). Fix: lower "minWorkers" or raise "maxWorkers".`,
    });
  }
  return {
    mode: mode ?? DEFAULT_SANDBOX_MODE,
    minWorkers: min,
    maxWorkers: max,
    workerIdleMs: workerIdleMs ?? DEFAULT_SANDBOX_WORKER_IDLE_MS,
    workerSpinUs: workerSpinUs ?? DEFAULT_SANDBOX_WORKER_SPIN_US,
    isolateRuns: isolateRuns ?? DEFAULT_SANDBOX_ISOLATE_RUNS,
    maxCodeBytes: maxCodeBytes ?? DEFAULT_MAX_CODE_BYTES,
    sessionTtlMs: sessionTtlMs ?? DEFAULT_SANDBOX_SESSION_TTL_MS,
    maxSessions: maxSessions ?? DEFAULT_SANDBOX_MAX_SESSIONS,
    limits: { ...DEFAULT_SANDBOX_LIMITS, ...definedOnly(limits) },
  };
}

function resolveServer(
  name: string,
  entry: ServerEntry,
  defaults: {
    configDir: string;
    maxMessageBytes: number;
    serversKey: 'mcpServers' | 'servers';
    /** The user's state folder (upstream OAuth tokens live there). */
    stateDir: string;
  },
  issues: ConfigIssue[],
): ServerConfig | undefined {
  const { configDir } = defaults;
  const at = (...rest: (string | number)[]): string => formatJsonPath([defaults.serversKey, name, ...rest]);
  const before = issues.length;
  if (name.trim() === '' || name.includes('.')) {
    issues.push({
      path: at(),
      message: `server name ${JSON.stringify(name)} cannot be empty or contain "." (tools are named "server.tool"). Fix: rename it, e.g. ${JSON.stringify(name.replaceAll('.', '_') || 'server')}.`,
    });
  }
  if (entry.type !== undefined && entry.transportType !== undefined && entry.type !== entry.transportType)
    issues.push({
      path: at('transportType'),
      message: `"transportType" (${JSON.stringify(entry.transportType)}) contradicts "type" (${JSON.stringify(entry.type)}). Fix: remove "transportType".`,
    });
  const urlKey = entry.url === undefined && entry.serverUrl !== undefined ? 'serverUrl' : 'url';
  if (entry.url !== undefined && entry.serverUrl !== undefined && entry.url !== entry.serverUrl)
    issues.push({
      path: at('serverUrl'),
      message: '"serverUrl" (Windsurf\'s name for "url") differs from "url". Fix: keep one of them.',
    });
  const url = entry.url ?? entry.serverUrl;
  const written = entry.type ?? entry.transportType;
  const kind =
    written === 'streamable-http' || written === 'streamableHttp'
      ? 'http'
      : (written ?? (url !== undefined ? 'http' : entry.command !== undefined ? 'stdio' : undefined));
  if (kind === undefined) {
    issues.push({
      path: at(),
      message:
        'a server needs "command" (a local stdio server) or "url" (a remote server). ' +
        'Fix: add "command": "npx", "args": ["-y", "<package>"], or "type": "http", "url": "https://…/mcp".',
    });
  } else if (kind === 'stdio') {
    if (entry.command === undefined)
      issues.push({
        path: at('command'),
        message: 'a stdio server needs "command". Fix: add "command": "<executable>".',
      });
    for (const key of ['url', 'serverUrl', 'headers', 'oauth'] as const) {
      if (entry[key] !== undefined)
        issues.push({
          path: at(key),
          message: `"${key}" belongs to remote servers, but this one is stdio. Fix: remove "${key}", or remove "command" and set "type": "http".`,
        });
    }
  } else {
    if (kind === 'sse' && entry.protocol !== undefined && entry.protocol !== '2025-11-25')
      issues.push({
        path: at('protocol'),
        message: `the 2026-07-28 revision has no SSE transport, so "protocol": "${entry.protocol}" cannot apply to an "sse" server. Fix: set "type": "http" if the server speaks Streamable HTTP, or remove "protocol".`,
      });
    if (url === undefined)
      issues.push({
        path: at('url'),
        message: `a "${kind}" server needs "url". Fix: add "url": "https://…".`,
      });
    else {
      let parsed: URL | undefined;
      try {
        parsed = new URL(url);
      } catch {
        issues.push({
          path: at(urlKey),
          message: `${JSON.stringify(url)} is not a URL. Fix: write an absolute http(s) URL.`,
        });
      }
      if (parsed && parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
        issues.push({
          path: at(urlKey),
          message: `unsupported protocol "${parsed.protocol}". Fix: use an http:// or https:// URL.`,
        });
    }
    for (const key of ['command', 'args', 'env', 'cwd', 'maxMessageBytes'] as const) {
      if (entry[key] !== undefined)
        issues.push({
          path: at(key),
          message: `"${key}" belongs to stdio servers, but this one is "${kind}". Fix: remove "${key}", or remove "url" and "type".`,
        });
    }
  }
  for (const [tool, policy] of Object.entries(entry.tools ?? {})) {
    if (
      policy.inputExamples?.some(
        (example) => typeof example !== 'object' || example === null || Array.isArray(example),
      )
    )
      issues.push({
        path: at('tools', tool, 'inputExamples'),
        message: 'each example must be an arguments object.',
      });
  }
  if (issues.length > before || kind === undefined) return undefined;
  const deferLoading = entry.deferLoading ?? true;
  const toolTimeoutMs = entry.toolTimeoutMs ?? DEFAULT_TOOL_CALL_TIMEOUT_MS;
  const base = {
    name,
    allowedCallers:
      entry.allowedCallers !== undefined ? ([...entry.allowedCallers] as ToolCaller[]) : undefined,
    requireApproval: entry.requireApproval !== undefined ? copyRule(entry.requireApproval) : undefined,
    deferLoading,
    connectTimeoutMs: entry.connectTimeoutMs ?? DEFAULT_SERVER_CONNECT_TIMEOUT_MS,
    toolTimeoutMs,
    maxConcurrentCalls: entry.maxConcurrentCalls ?? DEFAULT_SERVER_MAX_CONCURRENT_CALLS,
    protocol: entry.protocol ?? DEFAULT_UPSTREAM_PROTOCOL,
    tools: Object.fromEntries(
      Object.entries(entry.tools ?? {}).map(([tool, policy]): [string, ToolPolicyConfig] => [
        tool,
        copyPolicy(policy, { deferLoading, toolTimeoutMs }),
      ]),
    ),
    clientRules: [],
  };
  if (kind === 'stdio') {
    return {
      ...base,
      transport: 'stdio',
      command: entry.command!,
      args: [...(entry.args ?? [])],
      env: { ...entry.env },
      cwd: resolve(configDir, entry.cwd ?? '.'),
      maxMessageBytes: entry.maxMessageBytes ?? defaults.maxMessageBytes,
    };
  }
  const oauth = resolveUpstreamOAuth(entry.oauth, {
    server: name,
    url: url!,
    headers: entry.headers ?? {},
    stateDir: defaults.stateDir,
    at: (...rest) => at('oauth', ...rest),
    issues,
  });
  if (issues.length > before) return undefined;
  return { ...base, transport: kind, url: url!, headers: { ...entry.headers }, oauth };
}

function copyPolicy(
  policy: z.infer<typeof toolPolicySchema>,
  server: { deferLoading: boolean; toolTimeoutMs: number },
): ToolPolicyConfig {
  return {
    allowedCallers: policy.allowedCallers !== undefined ? [...policy.allowedCallers] : undefined,
    requireApproval: policy.requireApproval !== undefined ? copyRule(policy.requireApproval) : undefined,
    deferLoading: policy.deferLoading ?? server.deferLoading,
    inputExamples: policy.inputExamples ?? [],
    timeoutMs: policy.timeoutMs ?? server.toolTimeoutMs,
  };
}

function copyRule(rule: boolean | { pointer: string; values: unknown[] }): RequireApproval {
  return typeof rule === 'boolean' ? rule : { pointer: rule.pointer, values: [...rule.values] };
}

/** The keys allowed at a given path, for "unknown key" messages. */
function knownKeysAt(path: JsonPath): string[] {
  const p = path.map(String);
  const keys = (schema: { shape: Record<string, unknown> }): string[] => Object.keys(schema.shape);
  if (p.length === 0) return keys(configFileSchema);
  const servers = p[0] === 'mcpServers' || p[0] === 'servers';
  if (servers && p.length === 2) return keys(serverSchema);
  if (servers && p[2] === 'tools' && p.length === 4) return keys(toolPolicySchema);
  if (p.length === 1) {
    const section = {
      sandbox: sandboxSchema,
      history: historySchema,
      search: searchSchema,
      agent: agentSchema,
      serve: serveSchema,
      jobs: jobsSchema,
      approvals: approvalsSchema,
      store: storeSchema,
      resultHandles: resultHandlesSchema,
    }[p[0]!];
    if (section) return keys(section);
  }
  return [];
}

/** What was found, for "expected X, got Y": `a number (5)`, `a string ("x")`, `an array`. */
function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  const shown = JSON.stringify(value) ?? String(value);
  return `${article(typeof value)}${typeof value} (${shown.length > 40 ? `${shown.slice(0, 39)}…` : shown})`;
}

function describeIssue(issue: z.core.$ZodIssue): ConfigIssue {
  const path = formatJsonPath(issue.path);
  switch (issue.code) {
    case 'unrecognized_keys': {
      const known = knownKeysAt(issue.path);
      const messages = issue.keys.map((key) => {
        const suggestion = closestName(key, known);
        return suggestion
          ? `unknown key "${key}". Fix: did you mean "${suggestion}"?`
          : `unknown key "${key}". Fix: remove it${known.length ? ` (keys allowed here: ${known.filter((k) => k !== '$schema').join(', ')})` : ''}.`;
      });
      return { path, message: messages.join(' ') };
    }
    case 'invalid_type': {
      const input = (issue as { input?: unknown }).input;
      const got = input === undefined ? 'nothing' : typeOf(input);
      const expected = issue.expected === 'record' ? 'object' : issue.expected;
      return {
        path,
        message: `expected ${article(expected)}${expected}, got ${got}. Fix: write ${article(expected)}${expected} here.`,
      };
    }
    case 'invalid_value':
      return {
        path,
        message: `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}. Fix: use one of those values.`,
      };
    case 'too_small':
      return {
        path,
        message:
          issue.origin === 'number'
            ? `must be ${issue.inclusive ? '≥' : '>'} ${String(issue.minimum)}. Fix: use a ${issue.minimum === 0 && !issue.inclusive ? 'positive ' : ''}number.`
            : `must not be empty. Fix: give a value.`,
      };
    case 'too_big':
      return {
        path,
        message: `must be at most ${String(issue.maximum)}. Fix: use a smaller value or fewer items.`,
      };
    default:
      return { path, message: `${issue.message}.` };
  }
}

function article(word: string): string {
  if (/^[aeiou]/.test(word)) return 'an ';
  return 'a ';
}

function fail(file: string, issues: ConfigIssue[]): never {
  const shown = issues.slice(0, 10);
  const more = issues.length > shown.length ? `\n  … and ${issues.length - shown.length} more` : '';
  throw new CodecallError(
    'CONFIG_INVALID',
    `Invalid configuration in ${file}:\n${shown.map((i) => `  - ${i.path}: ${i.message}`).join('\n')}${more}`,
    { details: { file, issues } },
  );
}
