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
  /** Aborted on SIGINT/SIGTERM. */
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
