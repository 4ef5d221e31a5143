/**
 * @module
 * The shape of one CLI command. Commands never call `process.exit`; they return an exit code
 * (0 success, 1 the job failed, 2 usage or configuration error) and write only to `io`.
 */

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
}

/** The abort reason of {@link CliIo.signal} when the process received a signal. */
export class SignalInterrupt extends Error {
  readonly signal: 'SIGINT' | 'SIGTERM' | 'SIGHUP';
  constructor(signal: 'SIGINT' | 'SIGTERM' | 'SIGHUP') {
    super(`received ${signal}`);
    this.name = 'SignalInterrupt';
    this.signal = signal;
  }
}

/** The signal that aborted `signal`, if a signal did. */
export function interruptingSignal(signal: AbortSignal): SignalInterrupt['signal'] | undefined {
  const reason: unknown = signal.reason;
  return signal.aborted && reason instanceof SignalInterrupt ? reason.signal : undefined;
}

/** The stderr line for a usage-history write that failed (the run itself is unaffected). */
export function describeHistoryError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return `usage history not saved (the run itself is unaffected): ${message.split('\n')[0]}`;
}

/** What `codecall --help` and `codecall <name> --help` show, kept apart from the implementation. */
export type CommandHelp = Pick<CliCommand, 'name' | 'summary' | 'usage'>;
