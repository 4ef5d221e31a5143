/**
 * @module
 * The shape of one CLI command. Commands never call `process.exit`; they return an exit code
 * (0 success, 1 the job failed, 2 usage or configuration error) and write only to `io`.
 * Every command reads its arguments with {@link parseCommandArgs} (`node:util` `parseArgs`).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { isErrorLike } from '../errors.js';
import { closestName } from '../util/edit-distance.js';

/** Streams and environment a command may use. */
export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Aborted on SIGINT/SIGTERM/SIGHUP (the reason is a {@link SignalInterrupt}). */
  signal: AbortSignal;
  /**
   * `--trust` was given: start the servers of a configuration found in the working directory
   * without asking (see `ensureConfigTrusted`).
   */
  trust?: boolean;
}

/** One `codecall <name>` command. */
export interface CliCommand {
  name: string;
  /** One line for `codecall --help`. */
  summary: string;
  /** Full `codecall <name> --help` text. */
  usage: string;
  run(argv: string[], io: CliIo): Promise<number>;
}

/** Thrown by commands for bad usage; main prints the message and the usage, exits 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }

  /** True when `value` is a usage error (by `name`: also one of another copy of this module). */
  static isInstance(value: unknown): value is UsageError {
    return isErrorLike(value) && value.name === 'UsageError';
  }
}

/** The abort reason of {@link CliIo.signal} when the process received a signal. */
export class SignalInterrupt extends Error {
  readonly signal: 'SIGINT' | 'SIGTERM' | 'SIGHUP';
  constructor(signal: 'SIGINT' | 'SIGTERM' | 'SIGHUP') {
    super(`received ${signal}`);
    this.name = 'SignalInterrupt';
    this.signal = signal;
  }

  /** True when `value` is a signal interrupt (by `name` and `signal`, not by class identity). */
  static isInstance(value: unknown): value is SignalInterrupt {
    return (
      isErrorLike(value) &&
      value.name === 'SignalInterrupt' &&
      typeof (value as { signal?: unknown }).signal === 'string'
    );
  }
}

/** The signal that aborted `signal`, if a signal did. */
export function interruptingSignal(signal: AbortSignal): SignalInterrupt['signal'] | undefined {
  const reason: unknown = signal.reason;
  return signal.aborted && SignalInterrupt.isInstance(reason) ? reason.signal : undefined;
}

/** The stderr line for a usage-history write that failed (the run itself is unaffected). */
export function describeHistoryError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return `usage history not saved (the run itself is unaffected): ${message.split('\n')[0]}`;
}

/** What `codecall --help` and `codecall <name> --help` show, kept apart from the implementation. */
export type CommandHelp = Pick<CliCommand, 'name' | 'summary' | 'usage'>;

/** The first quoted name in a `parseArgs` error message (`'--config <value>'` → `--config`). */
function quotedOption(message: string): string {
  return /'([^' ]+)/.exec(message)?.[1] ?? '';
}

/**
 * The one argument parser of the CLI: `node:util` `parseArgs`, strict (unknown options and
 * missing values are errors), with its errors turned into a {@link UsageError} that names the
 * flag and the fix: `unknown option "--confg". Did you mean --config?`, `--config needs a value:
 * --config <value>.`, `--json takes no value: give --json alone.`, `unknown argument "stray".`.
 */
export function parseCommandArgs<const T extends Omit<ParseArgsConfig, 'strict' | 'tokens'>>(
  config: T,
): ReturnType<typeof parseArgs<T & { strict: true }>> {
  try {
    return parseArgs({ ...config, strict: true } as T & { strict: true });
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    const name = quotedOption(message);
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const known = Object.keys(config.options ?? {}).map((option) => `--${option}`);
      const meant = closestName(name, known);
      throw new UsageError(
        `unknown option "${name}".${meant !== undefined ? ` Did you mean ${meant}?` : ' The options are below.'}`,
      );
    }
    if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') throw new UsageError(`unknown argument "${name}".`);
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      if (/does not take an argument/.test(message))
        throw new UsageError(`${name} takes no value: give ${name} alone.`);
      throw new UsageError(`${name} needs a value: ${name} <value>.`);
    }
    throw new UsageError(message);
  }
}
