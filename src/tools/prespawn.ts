/**
 * @module
 * Starting the stdio MCP servers' processes before the MCP client is loaded. A one-shot command
 * (`codecall exec`) spends its first tenth of a second loading the MCP SDK, ajv, the sandbox
 * and compile code, while its servers' start-up (a Node server: a Node start-up plus its own
 * SDK) is the longest wait of the run; with the process started first, the two overlap. The
 * process is started exactly as the stdio transport would start it (same command, arguments,
 * environment, working directory and pipes), only earlier, and only once the configuration is
 * trusted and loaded; {@link ToolPool} adopts it for the server's first connection. Light on
 * purpose: no MCP SDK import here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { statSync } from 'node:fs';
import { DEFAULT_SERVER_STDERR_TAIL_BYTES } from '../config/defaults.js';
import type { CodecallConfig, StdioServerConfig } from '../config/types.js';

/**
 * The variables a stdio server inherits from codecall's environment: the MCP SDK's
 * `DEFAULT_INHERITED_ENV_VARS` (its "inspired by sudo" list), which the stdio transport passes
 * under the server's `env`. Kept equal to the SDK's by a test.
 */
export const INHERITED_ENV_VARS: readonly string[] =
  process.platform === 'win32'
    ? [
        'APPDATA',
        'HOMEDRIVE',
        'HOMEPATH',
        'LOCALAPPDATA',
        'PATH',
        'PROCESSOR_ARCHITECTURE',
        'SYSTEMDRIVE',
        'SYSTEMROOT',
        'TEMP',
        'USERNAME',
        'USERPROFILE',
        'PROGRAMFILES',
      ]
    : ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];

/** The SDK's `getDefaultEnvironment()`: {@link INHERITED_ENV_VARS} that are set, minus shell functions. */
export function inheritedEnvironment(parent: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of INHERITED_ENV_VARS) {
    const value = parent[key];
    if (value === undefined || value.startsWith('()')) continue;
    env[key] = value;
  }
  return env;
}

/** A stdio server's process started ahead of its MCP client, and what it did before adoption. */
export class PrespawnedServer {
  readonly child: ChildProcess;
  readonly #started: Promise<void>;
  #closed = false;
  #adopted = false;
  #stopped = false;
  /**
   * What it wrote to stderr before adoption (the last {@link DEFAULT_SERVER_STDERR_TAIL_BYTES}):
   * read at once, since Node discards unread output of a process that exits, and a server that
   * dies at start says why there.
   */
  #stderr: Buffer[] = [];
  #stderrBytes = 0;
  readonly #onStderr = (chunk: Buffer): void => {
    this.#stderr.push(chunk);
    this.#stderrBytes += chunk.length;
    while (
      this.#stderr.length > 1 &&
      this.#stderrBytes - this.#stderr[0]!.length >= DEFAULT_SERVER_STDERR_TAIL_BYTES
    )
      this.#stderrBytes -= this.#stderr.shift()!.length;
  };

  constructor(child: ChildProcess) {
    this.child = child;
    child.stderr?.on('data', this.#onStderr);
    this.#started = new Promise<void>((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', reject);
    });
    this.#started.catch(() => {});
    // Kept for the process's life: an 'error' with no listener would throw in the host.
    child.on('error', () => {});
    child.once('close', () => {
      this.#closed = true;
    });
  }

  /** Resolves once the process runs; rejects with the spawn error (e.g. `spawn x ENOENT`). */
  started(): Promise<void> {
    return this.#started;
  }

  /** True once the process has exited and its pipes closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Hands the process to its transport (once), with what it wrote to stderr so far (its stderr
   * stream is the transport's to read from now on); undefined when it was taken or stopped.
   */
  adopt(): { child: ChildProcess; stderr: Buffer[] } | undefined {
    if (this.#adopted || this.#stopped) return undefined;
    this.#adopted = true;
    this.child.stderr?.off('data', this.#onStderr);
    const stderr = this.#stderr;
    this.#stderr = [];
    return { child: this.child, stderr };
  }

  /** True once a transport took the process. */
  get adopted(): boolean {
    return this.#adopted;
  }

  /**
   * Stops a process no transport took: its input is closed (an MCP server's signal to exit) and
   * it is sent SIGTERM.
   */
  stop(): void {
    if (this.#adopted || this.#stopped || this.#closed) return;
    this.#stopped = true;
    try {
      this.child.stdin?.end();
    } catch {
      // Already closed.
    }
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Starts one server's process as the stdio transport does (`StdioClientTransport.start`). */
function spawnServer(server: StdioServerConfig): PrespawnedServer {
  const child = spawn(server.command, server.args, {
    env: { ...inheritedEnvironment(), ...server.env },
    stdio: ['pipe', 'pipe', 'pipe'],
    shell: false,
    cwd: server.cwd,
  });
  return new PrespawnedServer(child);
}

/**
 * Starts the process of every stdio server of `config`, keyed by server name, for
 * `ToolPoolOptions.prespawned`. Servers whose start the transport reports better are left to it:
 * a missing working directory (its error names the `cwd`), and every server on Windows (where
 * the transport resolves commands through cross-spawn). Call only for a trusted configuration.
 */
export function prespawnStdioServers(config: CodecallConfig): Map<string, PrespawnedServer> {
  const started = new Map<string, PrespawnedServer>();
  if (process.platform === 'win32') return started;
  for (const [name, server] of Object.entries(config.mcpServers)) {
    if (server.transport !== 'stdio' || !isDirectory(server.cwd)) continue;
    started.set(name, spawnServer(server));
  }
  return started;
}

/** Stops every process of `servers` that no transport took. */
export function stopPrespawned(servers: ReadonlyMap<string, PrespawnedServer> | undefined): void {
  for (const server of servers?.values() ?? []) server.stop();
}
