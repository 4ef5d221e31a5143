/**
 * @module
 * The `codecall` command line. The only place that calls `process.exit` and owns the terminal.
 */
import { readFileSync } from 'node:fs';
import { isCodecallError } from '../errors.js';
import { closestName } from '../util/edit-distance.js';
import { UsageError, type CliCommand, type CliIo } from './command.js';
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
    '',
  ].join('\n');
}

function closest(name: string): string | undefined {
  return closestName(
    name,
    COMMANDS.map((c) => c.name),
  );
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
  try {
    return await command.run(rest, io);
  } catch (error) {
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

const isEntry =
  process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isEntry) {
  const controller = new AbortController();
  let interrupted = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    interrupted++;
    if (interrupted > 1) process.exit(130);
    controller.abort(new Error(`received ${signal}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
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
