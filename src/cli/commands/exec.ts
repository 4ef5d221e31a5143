/**
 * @module
 * `codecall exec <file|-> [--config path] [--json]`: runs a script (JavaScript or TypeScript)
 * against the configured MCP servers in the sandbox. Plain mode passes the script's stdout and
 * stderr through; `--json` prints exactly one JSON object with the result, every tool call, and
 * how many bytes of tool results the script consumed versus printed.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { warmCompiler } from '../../compile/index.js';
import { CodecallRuntime } from '../../execute/index.js';
import type { ExecutionResult } from '../../types.js';
import {
  describeHistoryError,
  parseCommandArgs,
  UsageError,
  type CliCommand,
  type CliIo,
} from '../command.js';
import { configNoticeWriter } from '../config-notices.js';
import { neutralizeControls } from '../terminal-text.js';
import { canPrompt, ensureConfigTrusted } from '../trust.js';
import { execHelp } from './exec.help.js';

/** Sandbox worker processes `codecall exec` starts: it runs one script. */
export const EXEC_SANDBOX_WORKERS = 1;

/** Bytes of script read from a file or stdin (compileScript enforces the configured limit). */
const MAX_SCRIPT_READ_BYTES = 16 * 1_048_576;

interface ExecArgs {
  file: string;
  config?: string;
  json: boolean;
}

/** Parses the arguments of `codecall exec`. */
export function parseExecArgs(argv: string[]): ExecArgs {
  const { values, positionals } = parseCommandArgs({
    args: argv,
    options: { config: { type: 'string' }, json: { type: 'boolean' } },
    allowPositionals: true,
  });
  const [file, extra] = positionals;
  if (file === undefined) throw new UsageError('give a script file, or - to read it from stdin.');
  if (extra !== undefined) throw new UsageError(`one script at a time; got "${file}" and "${extra}".`);
  return {
    file,
    json: values.json === true,
    ...(values.config !== undefined ? { config: values.config } : {}),
  };
}

async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buffer.length;
    if (size > MAX_SCRIPT_READ_BYTES)
      throw new UsageError(`the script on stdin is larger than ${MAX_SCRIPT_READ_BYTES} bytes.`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function readScript(file: string, io: CliIo): Promise<string> {
  if (file === '-') return readStdin(io.stdin);
  const path = resolve(io.cwd, file);
  try {
    const text = await readFile(path);
    if (text.length > MAX_SCRIPT_READ_BYTES)
      throw new UsageError(`${file} is larger than ${MAX_SCRIPT_READ_BYTES} bytes.`);
    return text.toString('utf8');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`cannot read the script ${path}: ${(error as Error).message}`);
  }
}

function toJson(result: ExecutionResult): Record<string, unknown> {
  const round = (ms: number): number => Math.round(ms * 100) / 100;
  return {
    status: result.status,
    stdout: result.stdout,
    stderr: result.stderr,
    ...(result.error ? { error: { code: result.error.code, message: result.error.message } } : {}),
    toolCalls: result.toolCalls.map((c) => ({
      tool: c.tool,
      ok: c.ok,
      durationMs: round(c.durationMs),
      argsBytes: c.argsBytes,
      resultBytes: c.resultBytes,
    })),
    stats: {
      wallMs: round(result.stats.wallMs),
      cpuMs: round(result.stats.cpuMs),
      toolResultBytes: result.stats.toolResultBytes,
      stdoutBytes: result.stats.stdoutBytes,
    },
  };
}

async function run(argv: string[], io: CliIo): Promise<number> {
  const args = parseExecArgs(argv);
  const source = await readScript(args.file, io);
  await ensureConfigTrusted(io, { config: args.config, interactive: args.file !== '-' && canPrompt(io) });
  // esbuild's service starts while the MCP servers and the sandbox worker do.
  warmCompiler();
  // The runtime, like the agent's: the calls each run makes are learned by the tool graph and
  // appended to the usage history (`codecall graph` shows them).
  const runtime = await CodecallRuntime.open({
    load: {
      ...(args.config !== undefined ? { path: args.config } : {}),
      cwd: io.cwd,
      env: io.env,
      onNotice: configNoticeWriter(io),
    },
    tools: {
      onServerError: (event) => {
        io.stderr.write(`codecall exec: ${neutralizeControls(event.error.message.split('\n')[0]!)}\n`);
      },
    },
    // One script runs: one sandbox worker (process mode), not a pool that boots beside the
    // MCP servers for nothing.
    sandbox: { workers: EXEC_SANDBOX_WORKERS },
    onHistoryError: (error) => {
      io.stderr.write(`codecall exec: ${describeHistoryError(error)}\n`);
    },
    signal: io.signal,
  });
  try {
    const result = await runtime.execute(source, { signal: io.signal });
    if (args.json) {
      io.stdout.write(`${JSON.stringify(toJson(result))}\n`);
    } else {
      // What the script prints is untrusted: show control sequences, never send them.
      io.stdout.write(neutralizeControls(result.stdout));
      io.stderr.write(neutralizeControls(result.stderr));
      // A run cancelled by a signal is reported once, by main, with the signal's exit code.
      if (result.error && !io.signal.aborted)
        io.stderr.write(`codecall exec: ${result.error.code}: ${neutralizeControls(result.error.message)}\n`);
    }
    return result.status === 'ok' ? 0 : 1;
  } finally {
    await runtime.close();
  }
}

/** `codecall exec`. */
export const execCommand: CliCommand = {
  ...execHelp,
  run,
};
