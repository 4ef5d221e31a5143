/**
 * @module
 * `codecall config check [--config path] [--json]`: what codecall understood of a configuration
 * file — the servers (transport, command or url as written, `${VAR}` unexpanded; env values and
 * headers never shown, only their names), their policies, disabled servers, the keys it ignored
 * and its notices. Starts no server.
 */
import { readFile } from 'node:fs/promises';
import { readClientShape } from '../../config/client-shapes.js';
import {
  loadConfig,
  parseConfigFile,
  type ClientPolicyMapping,
  type CodecallConfig,
  type RequireApproval,
  type ServerConfig,
} from '../../config/index.js';
import { parseCommandArgs, UsageError, type CliCommand, type CliIo } from '../command.js';
import { neutralizeControls } from '../terminal-text.js';
import { configHelp } from './config.help.js';

/** Names whose value, in a flag or a URL query, is a secret. */
const SECRET_NAME = /token|key|secret|password|passwd|auth|credential|bearer/i;
const REDACTED = '***';

/** A written value with literal secrets hidden; `${VAR}` references stay, they name no secret. */
function redactWritten(value: string): string {
  return value.includes('${') ? value : REDACTED;
}

/** A URL as written with the password of its user part and secret-looking query values hidden. */
export function redactUrl(written: string): string {
  let url: URL;
  try {
    url = new URL(written);
  } catch {
    return written;
  }
  if (url.password === '' && url.username === '' && url.search === '') return written;
  const [base, query] = written.split('?', 2) as [string, string | undefined];
  const withoutUser = base.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, (_, scheme: string) =>
    url.password !== '' || url.username !== '' ? `${scheme}${REDACTED}@` : scheme,
  );
  if (query === undefined) return withoutUser;
  const params = query.split('&').map((pair) => {
    const [name, value] = pair.split('=', 2) as [string, string | undefined];
    return value !== undefined && SECRET_NAME.test(name) ? `${name}=${redactWritten(value)}` : pair;
  });
  return `${withoutUser}?${params.join('&')}`;
}

/** Arguments as written, with the value of a secret-looking flag hidden (`--api-key x`, `--token=x`). */
export function redactArgs(args: readonly string[]): string[] {
  return args.map((arg, index) => {
    const inline = /^(--?[^=]+)=(.*)$/s.exec(arg);
    if (inline) return SECRET_NAME.test(inline[1]!) ? `${inline[1]}=${redactWritten(inline[2]!)}` : arg;
    const previous = args[index - 1];
    return previous !== undefined && /^--?[^=]+$/.test(previous) && SECRET_NAME.test(previous)
      ? redactWritten(arg)
      : arg;
  });
}

/** One server as `config check` reports it. */
interface ServerReport {
  name: string;
  transport: ServerConfig['transport'];
  command?: string;
  args?: string[];
  cwd?: string;
  url?: string;
  env?: string[];
  headers?: string[];
  allowedCallers?: string[];
  requireApproval?: RequireApproval;
  deferLoading: boolean;
  connectTimeoutMs: number;
  toolTimeoutMs: number;
  maxConcurrentCalls: number;
  tools: Record<
    string,
    {
      allowedCallers?: string[];
      requireApproval?: RequireApproval;
      deferLoading?: boolean;
      timeoutMs?: number;
      inputExamples?: number;
    }
  >;
}

/** The whole report. */
interface ConfigReport {
  file: string | undefined;
  servers: ServerReport[];
  disabledServers: string[];
  sandbox: { mode: string; minWorkers: number; maxWorkers: number };
  history: { enabled: boolean; path: string };
  /** The client whose file shape this is (`Zed`, `Codex`, …); absent for `mcpServers` / `servers`. */
  clientFormat?: string;
  /** Other clients' allow/deny lists and switches, and the codecall rule each became. */
  clientPolicy: ClientPolicyMapping[];
  ignoredKeys: string[];
  notices: string[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The server entries as written (before `${VAR}` expansion, in codecall's shape), by name. */
async function writtenServers(
  file: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<Record<string, Record<string, unknown>>> {
  if (file === undefined) return {};
  const parsed = await parseConfigFile(await readFile(file, 'utf8'), file);
  const json =
    parsed.ok && isRecord(parsed.value) ? readClientShape(parsed.value, file, env).json : undefined;
  if (!isRecord(json)) return {};
  const servers = json.mcpServers ?? json.servers;
  return isRecord(servers) ? (servers as Record<string, Record<string, unknown>>) : {};
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}

function reportServer(server: ServerConfig, written: Record<string, unknown> | undefined): ServerReport {
  const tools: ServerReport['tools'] = {};
  for (const [name, policy] of Object.entries(server.tools)) {
    tools[name] = {
      ...(policy.allowedCallers ? { allowedCallers: policy.allowedCallers } : {}),
      ...(policy.requireApproval !== undefined ? { requireApproval: policy.requireApproval } : {}),
      // What the tool changes from its server's values.
      ...(policy.deferLoading !== server.deferLoading ? { deferLoading: policy.deferLoading } : {}),
      ...(policy.timeoutMs !== server.toolTimeoutMs ? { timeoutMs: policy.timeoutMs } : {}),
      ...(policy.inputExamples.length > 0 ? { inputExamples: policy.inputExamples.length } : {}),
    };
  }
  const common = {
    ...(server.allowedCallers ? { allowedCallers: server.allowedCallers } : {}),
    ...(server.requireApproval !== undefined ? { requireApproval: server.requireApproval } : {}),
    deferLoading: server.deferLoading,
    connectTimeoutMs: server.connectTimeoutMs,
    toolTimeoutMs: server.toolTimeoutMs,
    maxConcurrentCalls: server.maxConcurrentCalls,
    tools,
  };
  if (server.transport === 'stdio') {
    const args = Array.isArray(written?.args) ? written.args.map(String) : server.args;
    return {
      name: server.name,
      transport: server.transport,
      command: stringOr(written?.command, server.command),
      args: redactArgs(args),
      cwd: server.cwd,
      env: Object.keys(server.env),
      ...common,
    };
  }
  return {
    name: server.name,
    transport: server.transport,
    url: redactUrl(stringOr(written?.url ?? written?.serverUrl, server.url)),
    headers: Object.keys(server.headers),
    ...common,
  };
}

/** What was understood of `config`, values as written in its file. */
async function buildReport(config: CodecallConfig, env: NodeJS.ProcessEnv): Promise<ConfigReport> {
  const written = await writtenServers(config.configPath, env);
  return {
    file: config.configPath,
    servers: Object.values(config.mcpServers).map((s) =>
      reportServer(s, Object.hasOwn(written, s.name) ? written[s.name] : undefined),
    ),
    disabledServers: config.disabledServers,
    sandbox: {
      mode: config.sandbox.mode,
      minWorkers: config.sandbox.minWorkers,
      maxWorkers: config.sandbox.maxWorkers,
    },
    history: { enabled: config.history.enabled, path: config.history.path },
    ...(config.clientFormat !== undefined ? { clientFormat: config.clientFormat } : {}),
    clientPolicy: config.clientPolicy ?? [],
    ignoredKeys: config.ignoredKeys,
    notices: config.notices,
  };
}

function callers(list: readonly string[] | undefined): string {
  return list ? list.map((c) => (c === 'code_execution' ? 'code' : c)).join('+') || 'none' : 'default';
}

function renderPlain(report: ConfigReport): string {
  const out: string[] = [`file: ${report.file ?? '(in memory)'}`];
  if (report.clientFormat !== undefined)
    out.push(`format: ${report.clientFormat}'s, read as codecall's mcpServers`);
  out.push('');
  out.push(report.servers.length === 0 ? 'servers: none' : `servers (${report.servers.length}):`);
  for (const s of report.servers) {
    out.push(`  ${s.name} (${s.transport})`);
    if (s.command !== undefined) out.push(`    command: ${[s.command, ...(s.args ?? [])].join(' ')}`);
    if (s.cwd !== undefined) out.push(`    cwd: ${s.cwd}`);
    if (s.url !== undefined) out.push(`    url: ${s.url}`);
    if (s.env && s.env.length > 0) out.push(`    env: ${s.env.join(', ')} (values not shown)`);
    if (s.headers && s.headers.length > 0)
      out.push(`    headers: ${s.headers.join(', ')} (values not shown)`);
    out.push(
      `    policy: callers ${callers(s.allowedCallers)}, deferLoading ${String(s.deferLoading)}, ` +
        `connect ${s.connectTimeoutMs} ms, tool calls ${s.toolTimeoutMs} ms, ${s.maxConcurrentCalls} at once` +
        (s.requireApproval !== undefined ? `, approval ${JSON.stringify(s.requireApproval)}` : ''),
    );
    for (const [tool, p] of Object.entries(s.tools)) {
      const parts = [
        p.allowedCallers ? `callers ${callers(p.allowedCallers)}` : undefined,
        p.requireApproval !== undefined ? `approval ${JSON.stringify(p.requireApproval)}` : undefined,
        p.deferLoading !== undefined ? `deferLoading ${String(p.deferLoading)}` : undefined,
        p.timeoutMs !== undefined ? `timeout ${p.timeoutMs} ms` : undefined,
        p.inputExamples !== undefined ? `${p.inputExamples} input examples` : undefined,
      ].filter((x) => x !== undefined);
      out.push(`    tool ${tool}: ${parts.join(', ') || 'no policy'}`);
    }
  }
  if (report.disabledServers.length > 0) out.push(`disabled: ${report.disabledServers.join(', ')}`);
  out.push(
    '',
    `sandbox: ${report.sandbox.mode}, ${report.sandbox.minWorkers}–${report.sandbox.maxWorkers} workers`,
    `history: ${report.history.enabled ? report.history.path : 'off'}`,
  );
  if (report.clientPolicy.length > 0) {
    out.push('', "other clients' allow/deny lists, kept as codecall policy:");
    for (const { from, to } of report.clientPolicy) out.push(`  ${from} → ${to}`);
  }
  out.push('', report.ignoredKeys.length === 0 ? 'ignored keys: none' : 'ignored keys:');
  for (const key of report.ignoredKeys) out.push(`  ${key}`);
  for (const notice of report.notices) out.push(`notice: ${notice}`);
  return `${out.join('\n')}\n`;
}

function parse(argv: string[]): { config?: string; json: boolean } {
  const [sub, ...rest] = argv;
  if (sub !== 'check')
    throw new UsageError(
      sub === undefined ? 'give a subcommand: check.' : `unknown subcommand "${sub}"; the only one is check.`,
    );
  const { values } = parseCommandArgs({
    args: rest,
    options: { config: { type: 'string' }, json: { type: 'boolean' } },
    allowPositionals: false,
  });
  return { ...(values.config !== undefined ? { config: values.config } : {}), json: values.json === true };
}

async function run(argv: string[], io: CliIo): Promise<number> {
  const args = parse(argv);
  // Reading a file starts nothing, so no trust prompt: this is how a user reviews a file first.
  const config = await loadConfig({
    ...(args.config !== undefined ? { path: args.config } : {}),
    cwd: io.cwd,
    env: io.env,
  });
  const report = await buildReport(config, io.env);
  // Names and values come from the file: no raw control sequences on the terminal.
  io.stdout.write(
    args.json ? `${JSON.stringify(report, null, 2)}\n` : neutralizeControls(renderPlain(report)),
  );
  return 0;
}

/** `codecall config check`. */
export const configCommand: CliCommand = { ...configHelp, run };
