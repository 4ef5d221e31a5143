/**
 * @module
 * Consent before starting the servers of a configuration that codecall merely found in the
 * working directory (`codecall.json`, `.mcp.json`): a freshly cloned folder must not run its
 * commands, or send its headers to its URLs, because someone typed `codecall tools` in it. As
 * MCP clients do for project-scoped servers, codecall asks once per file and content (a SHA-256
 * of the bytes) and remembers the answer in the user's state directory. `--config` given
 * explicitly counts as consent; so do `--trust` and `CODECALL_TRUST=1`.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, realpath, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { CONFIG_FILE_NAMES, configDocumentOf, readConfigBytes } from '../config/index.js';
import { stateDirectory } from '../config/state-directory.js';
import { CodecallError } from '../errors.js';
import type { CliIo } from './command.js';
import { neutralizeControls } from './terminal-text.js';

/** File of approvals inside the state directory. */
const TRUST_FILE_NAME = 'trusted-configs.json';
/** Servers listed in the consent prompt or refusal (the rest are counted). */
const MAX_LISTED_SERVERS = 20;
/** Characters of one server's command line or URL shown in the prompt. */
const MAX_SERVER_LINE_CHARS = 200;

export { stateDirectory };

interface Approvals {
  version: 1;
  /** Real path of a configuration file → SHA-256 (hex) of the content the user approved. */
  approved: Record<string, string>;
}

async function readApprovals(file: string): Promise<Approvals> {
  try {
    const json = JSON.parse(await readFile(file, 'utf8')) as Partial<Approvals>;
    if (json.version === 1 && typeof json.approved === 'object' && json.approved !== null)
      return {
        version: 1,
        approved: Object.assign(Object.create(null) as Record<string, string>, json.approved),
      };
  } catch {
    // Missing or unreadable: nothing approved yet.
  }
  return { version: 1, approved: Object.create(null) as Record<string, string> };
}

async function writeApprovals(dir: string, approvals: Approvals): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, TRUST_FILE_NAME);
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(approvals, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, file);
}

/** One line per server: what starting it would do (as written, before `${VAR}` expansion). */
function describeServers(json: unknown): string[] {
  // Both keys: loadConfig reads VS Code's `servers` too (and Windsurf's `serverUrl`).
  const document = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  const entries = [document.mcpServers, document.servers].flatMap((servers) =>
    typeof servers === 'object' && servers !== null ? Object.entries(servers) : [],
  );
  const lines: string[] = [];
  for (const [name, raw] of entries) {
    const entry = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    if (entry.disabled === true) continue;
    const url = entry.url ?? entry.serverUrl;
    const what =
      typeof entry.command === 'string'
        ? `runs ${[entry.command, ...(Array.isArray(entry.args) ? entry.args.map(String) : [])].join(' ')}`
        : typeof url === 'string'
          ? `connects to ${url}${entry.headers !== undefined ? ' with headers' : ''}`
          : 'an incomplete entry';
    const line = `${name}: ${what}`;
    lines.push(
      neutralizeControls(
        line.length > MAX_SERVER_LINE_CHARS ? `${line.slice(0, MAX_SERVER_LINE_CHARS - 1)}…` : line,
      ),
    );
  }
  return lines;
}

/** Options of {@link ensureConfigTrusted}. */
export interface EnsureTrustedOptions {
  /** `--config` as given; when set, the user named the file: consent. */
  config: string | undefined;
  /** The command may prompt on stderr and read the answer from stdin (both TTYs). */
  interactive: boolean;
}

/**
 * Resolves when the servers of the configuration codecall would load may start: the file was
 * named with `--config`, `--trust` or `CODECALL_TRUST=1` was given, this file with this content
 * was approved before, or the user approves it now at the prompt. Otherwise throws
 * `CONFIG_NOT_TRUSTED` naming the flag.
 */
export async function ensureConfigTrusted(io: CliIo, options: EnsureTrustedOptions): Promise<void> {
  if (options.config !== undefined || io.trust === true || io.env.CODECALL_TRUST === '1') return;
  let file: string | undefined;
  let content: Buffer | undefined;
  for (const name of CONFIG_FILE_NAMES) {
    try {
      content = await readConfigBytes(join(io.cwd, name));
      file = join(io.cwd, name);
      break;
    } catch {
      // Not there: loadConfig reports a missing configuration.
    }
  }
  if (file === undefined || content === undefined) return;
  // Read as loadConfig reads it (JSON, TOML or YAML, any client's shape): what it would start is
  // what is listed. A file that does not parse starts nothing; loadConfig reports it.
  const document = await configDocumentOf(content.toString('utf8'), file, io.env);
  if (document === undefined) return;
  const servers = describeServers(document);
  if (servers.length === 0) return;
  const key = await realpath(file);
  const digest = createHash('sha256').update(content).digest('hex');
  const dir = stateDirectory(io.env);
  const approvals = await readApprovals(join(dir, TRUST_FILE_NAME));
  if (approvals.approved[key] === digest) return;

  const listed = servers.slice(0, MAX_LISTED_SERVERS).map((line) => `  - ${line}`);
  if (servers.length > listed.length) listed.push(`  … and ${servers.length - listed.length} more`);
  const shownFile = neutralizeControls(key);
  if (options.interactive) {
    io.stderr.write(
      `codecall found ${shownFile}, which starts these MCP servers:\n${listed.join('\n')}\n` +
        'They run with your permissions. Only continue if you trust this folder.\n',
    );
    const prompt = createInterface({ input: io.stdin, output: io.stderr, terminal: false });
    let answer: string;
    try {
      answer = await prompt.question('Start them? [y/N] ', { signal: io.signal });
    } catch {
      answer = '';
    } finally {
      prompt.close();
    }
    if (/^\s*y(es)?\s*$/i.test(answer)) {
      approvals.approved[key] = digest;
      try {
        await writeApprovals(dir, approvals);
      } catch (error) {
        io.stderr.write(
          `codecall: could not remember the approval in ${dir} (${(error as Error).message}); you will be asked again.\n`,
        );
      }
      return;
    }
  }
  throw new CodecallError(
    'CONFIG_NOT_TRUSTED',
    `${shownFile} was found in the working directory (not named with --config) and would start these MCP servers:\n` +
      `${listed.join('\n')}\n` +
      'codecall does not start the servers of a folder without your consent. Fix: review the file, then run ' +
      'again with --trust (or CODECALL_TRUST=1), or name it with --config; run in a terminal to be asked ' +
      `(the answer is remembered in ${dir} until the file changes).`,
    { details: { file: key, sha256: digest } },
  );
}

/**
 * Records `file`, with its content as it is now, as approved: for a configuration codecall wrote
 * itself at the user's request (`codecall demo`), whose servers the user asked to run.
 */
export async function rememberTrustedConfig(env: NodeJS.ProcessEnv, file: string): Promise<void> {
  const content = await readConfigBytes(file);
  const dir = stateDirectory(env);
  const approvals = await readApprovals(join(dir, TRUST_FILE_NAME));
  approvals.approved[await realpath(file)] = createHash('sha256').update(content).digest('hex');
  await writeApprovals(dir, approvals);
}

/** True when the command may prompt: stdin and stderr are terminals. */
export function canPrompt(io: CliIo): boolean {
  return (
    (io.stdin as { isTTY?: boolean }).isTTY === true && (io.stderr as { isTTY?: boolean }).isTTY === true
  );
}
