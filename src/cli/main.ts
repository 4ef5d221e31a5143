/**
 * @module
 * The `codecall` command line. The only place that calls `process.exit` and owns the terminal.
 */
import { startupTraceEnabled, traceStartup } from '../util/startup-trace.js';
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isCodecallError } from '../errors.js';
import { closestName } from '../util/edit-distance.js';
import {
  interruptingSignal,
  SignalInterrupt,
  UsageError,
  type CliCommand,
  type CliIo,
  type CommandHelp,
} from './command.js';
import { configHelp } from './commands/config.help.js';
import { demoHelp } from './commands/demo.help.js';
import { approvalsHelp } from './commands/approvals.help.js';
import { execHelp } from './commands/exec.help.js';
import { graphHelp } from './commands/graph.help.js';
import { jobsHelp } from './commands/jobs.help.js';
import { runHelp } from './commands/run.help.js';
import { searchHelp } from './commands/search.help.js';
import { serveHelp } from './commands/serve.help.js';
import { toolsHelp } from './commands/tools.help.js';
import { authHelp } from './commands/auth.help.js';
import { workerHelp } from './commands/worker.help.js';

/**
 * One command in the table: its help text, and its implementation imported only when it runs,
 * so `codecall --help` and `codecall exec` never load what other commands use (provider SDKs,
 * the MCP server stack, BullMQ, the agent).
 */
interface CommandEntry extends CommandHelp {
  load(): Promise<CliCommand>;
}

const COMMANDS: readonly CommandEntry[] = [
  { ...runHelp, load: async () => (await import('./commands/run.js')).runCommand },
  { ...execHelp, load: async () => (await import('./commands/exec.js')).execCommand },
  { ...searchHelp, load: async () => (await import('./commands/search.js')).searchCommand },
  { ...toolsHelp, load: async () => (await import('./commands/tools.js')).toolsCommand },
  { ...graphHelp, load: async () => (await import('./commands/graph.js')).graphCommand },
  { ...serveHelp, load: async () => (await import('./commands/serve.js')).serveCommand },
  { ...workerHelp, load: async () => (await import('./commands/worker.js')).workerCommand },
  { ...jobsHelp, load: async () => (await import('./commands/jobs.js')).jobsCommand },
  { ...configHelp, load: async () => (await import('./commands/config.js')).configCommand },
  { ...approvalsHelp, load: async () => (await import('./commands/approvals.js')).approvalsCommand },
  { ...authHelp, load: async () => (await import('./commands/auth.js')).authCommand },
  { ...demoHelp, load: async () => (await import('./commands/demo.js')).demoCommand },
];

/** Commands that left the user CLI, and where each went. */
const MOVED_COMMANDS: Readonly<Record<string, string>> = {
  'eval-search':
    'a developer tool now, run from a checkout of the codecall repository: `npm run eval-search -- <flags>` (see docs/search.md).',
};

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
function interrupted(command: CommandHelp, io: CliIo): number | undefined {
  const signal = interruptingSignal(io.signal);
  if (signal === undefined || STOPPED_BY_SIGNAL.has(command.name)) return undefined;
  io.stderr.write(
    `codecall ${command.name}: interrupted by ${signal}; stopped the run and closed the MCP servers and sandboxes.\n`,
  );
  return SIGNAL_EXIT_CODES[signal];
}

/**
 * True when `argv` asks only for help or the version (`codecall`, `--help`, `--version`,
 * `<command> --help`): answered from the help texts, with no isolate, so the launcher
 * (bin/codecall.js) runs it in its own process instead of re-executing Node with
 * `--no-node-snapshot`.
 */
export function answersWithoutIsolate(argv: readonly string[]): boolean {
  const [name, ...rest] = argv;
  if (name === undefined || ['--help', '-h', 'help', '--version', '-v'].includes(name)) return true;
  return COMMANDS.some((c) => c.name === name) && (rest.includes('--help') || rest.includes('-h'));
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
  const entry = COMMANDS.find((c) => c.name === name);
  const moved = Object.hasOwn(MOVED_COMMANDS, name) ? MOVED_COMMANDS[name] : undefined;
  if (!entry && moved !== undefined) {
    io.stderr.write(`codecall: "${name}" is no longer a codecall command: ${moved}\n`);
    return 2;
  }
  if (!entry) {
    const suggestion = closest(name);
    io.stderr.write(
      `codecall: unknown command "${name}".${suggestion ? ` Did you mean "${suggestion}"?` : ''}\n` +
        'Run `codecall --help` to list the commands.\n',
    );
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout.write(`${entry.usage.trimEnd()}\n`);
    return 0;
  }
  const command = await entry.load();
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
    if (UsageError.isInstance(error)) {
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
  traceStartup('cli started');
  const code = await main(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    cwd: process.cwd(),
    env: process.env,
    signal: controller.signal,
  });
  process.exitCode = code;
  traceStartup('command done');
  if (startupTraceEnabled()) process.on('exit', () => traceStartup('exit'));
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
