/**
 * @module
 * The `codecall` command line. The only place that calls `process.exit` and owns the terminal.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isCodecallError } from '../errors.js';
import { closestName } from '../util/edit-distance.js';
import { interruptingSignal, SignalInterrupt, UsageError, type CliCommand, type CliIo } from './command.js';
import { configCommand } from './commands/config.js';
import { evalSearchCommand } from './commands/eval-search.js';
import { execCommand } from './commands/exec.js';
import { graphCommand } from './commands/graph.js';
import { jobsCommand } from './commands/jobs.js';
import { runCommand } from './commands/run.js';
import { searchCommand } from './commands/search.js';
import { serveCommand } from './commands/serve.js';
import { toolsCommand } from './commands/tools.js';
import { workerCommand } from './commands/worker.js';

const COMMANDS: readonly CliCommand[] = [
  runCommand,
  execCommand,
  searchCommand,
  toolsCommand,
  graphCommand,
  serveCommand,
  evalSearchCommand,
  workerCommand,
  jobsCommand,
  configCommand,
];

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

function help(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'codecall: tool search and sandboxed code execution in front of your MCP servers.',
    '',
    'Usage: codecall <command> [options]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `codecall <command> --help` for the options of one command.',
    'Configuration: codecall.json or .mcp.json in the working directory, or --config <path>.',
    'A configuration found in the working directory starts its servers only with your consent:',
    'codecall asks once per file and content in a terminal; elsewhere pass --trust (or set',
    'CODECALL_TRUST=1) after reviewing it. --config <path> counts as consent.',
    '',
  ].join('\n');
}

function closest(name: string): string | undefined {
  return closestName(
    name,
    COMMANDS.map((c) => c.name),
  );
}

/**
 * Exit status of a command stopped by a signal: 128 + the signal number, as shells report a
 * process killed by it (SIGINT 130, SIGTERM 143, SIGHUP 129).
 */
export const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;

/** The signals the CLI stops on. */
export type CliSignal = keyof typeof SIGNAL_EXIT_CODES;

/** Commands for which a signal is the normal way to stop (they exit 0 after a clean shutdown). */
const STOPPED_BY_SIGNAL = new Set(['serve', 'worker']);

/**
 * A second signal within this many milliseconds of the first is the same interrupt (Ctrl-C
 * reaches both the launcher, which forwards it, and this process); a later one exits at once.
 */
const REPEATED_SIGNAL_WINDOW_MS = 1_000;

/** The exit code and message of a command interrupted by a signal, or undefined. */
function interrupted(command: CliCommand, io: CliIo): number | undefined {
  const signal = interruptingSignal(io.signal);
  if (signal === undefined || STOPPED_BY_SIGNAL.has(command.name)) return undefined;
  io.stderr.write(
    `codecall ${command.name}: interrupted by ${signal}; stopped the run and closed the MCP servers and sandboxes.\n`,
  );
  return SIGNAL_EXIT_CODES[signal];
}

/** Runs the CLI with `argv` (without node and script) and resolves with the exit code. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(help());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(`${version()}\n`);
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    const suggestion = closest(name);
    io.stderr.write(
      `codecall: unknown command "${name}".${suggestion ? ` Did you mean "${suggestion}"?` : ''}\n` +
        'Run `codecall --help` to list the commands.\n',
    );
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout.write(`${command.usage.trimEnd()}\n`);
    return 0;
  }
  // --trust is accepted by every command: consent to start a discovered configuration's servers.
  const trust = rest.includes('--trust');
  try {
    const code = await command.run(
      rest.filter((arg) => arg !== '--trust'),
      trust ? { ...io, trust } : io,
    );
    return interrupted(command, io) ?? code;
  } catch (error) {
    const code = interrupted(command, io);
    if (code !== undefined) return code;
    if (error instanceof UsageError) {
      io.stderr.write(`codecall ${command.name}: ${error.message}\n\n${command.usage.trimEnd()}\n`);
      return 2;
    }
    if (isCodecallError(error)) {
      io.stderr.write(`codecall ${command.name}: ${error.message}\n`);
      return 2;
    }
    io.stderr.write(
      `codecall ${command.name}: unexpected error: ${(error as Error)?.stack ?? String(error)}\n`,
    );
    return 1;
  }
}

/**
 * Runs `codecall` as a process: `process.argv`, the terminal, SIGINT/SIGTERM/SIGHUP, and
 * `process.exit` with the command's code. Called by `bin/codecall.js`, or when this module is
 * the entry point.
 */
export async function runCli(): Promise<void> {
  const controller = new AbortController();
  let first: { signal: CliSignal; at: number } | undefined;
  const onSignal = (signal: CliSignal): void => {
    if (first === undefined) {
      first = { signal, at: performance.now() };
      controller.abort(new SignalInterrupt(signal));
      return;
    }
    if (performance.now() - first.at < REPEATED_SIGNAL_WINDOW_MS) return;
    process.stderr.write(`codecall: ${signal} again; exiting without waiting for servers to close.\n`);
    process.exit(SIGNAL_EXIT_CODES[first.signal]);
  };
  for (const signal of Object.keys(SIGNAL_EXIT_CODES) as CliSignal[]) process.on(signal, onSignal);
  const code = await main(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    cwd: process.cwd(),
    env: process.env,
    signal: controller.signal,
  });
  process.exitCode = code;
  // Child MCP servers and worker processes are closed by the commands; leave a bounded grace
  // period for streams to flush, then exit even if a handle keeps the loop alive.
  setTimeout(() => process.exit(code), 2_000).unref();
}

/** True when this file is the script node was started with (any path or symlink to it). */
function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) await runCli();
