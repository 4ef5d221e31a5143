/**
 * @module
 * `codecall exec <file|-> [--config path] [--json] [--quiet] [--approve tool|all]`: runs a script
 * (JavaScript or TypeScript) against the configured MCP servers in the sandbox. Plain mode passes
 * the script's stdout and stderr through; `--json` prints exactly one JSON object with the result,
 * every tool call, and how many bytes of tool results the script consumed versus printed. On a
 * terminal, each finished tool call is reported on stderr while the script runs (`--quiet`: not).
 */
import { traceStartup } from '../../util/startup-trace.js';
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { loadConfig } from '../../config/index.js';
import { CodecallError } from '../../errors.js';
import { FileRunJournal } from '../../store/run-journal.js';
import { prespawnStdioServers, stopPrespawned } from '../../tools/prespawn.js';
import type { ExecutionResult } from '../../types.js';
import {
  describeHistoryError,
  parseCommandArgs,
  UsageError,
  type CliCommand,
  type CliIo,
} from '../command.js';
import { checkApproveFlag, createCliApprover } from '../cli-approver.js';
import { createCliAsker } from '../cli-asker.js';
import { configNoticeWriter } from '../config-notices.js';
import { ExecProgress } from '../exec-progress.js';
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
  /** No per-call progress on a terminal (`--quiet`). */
  quiet: boolean;
  /** Record the run's calls in this file (`--journal`). */
  journal?: string;
  /** Resume the run recorded in this file (`--resume`). */
  resume?: string;
  repeatInDoubt: boolean;
  /** `--approve` values: tools approved without asking, or `all`. */
  approve: string[];
}

/** Codes of a journal that cannot be written, replayed or taken: the run failed (exit 1), not a usage error. */
const JOURNAL_CODES = [
  'REPLAY_DIVERGED',
  'REPLAY_IN_DOUBT',
  'JOURNAL_WRITE_FAILED',
  'JOURNAL_LOCKED',
] as const;

/** Parses the arguments of `codecall exec`. */
export function parseExecArgs(argv: string[]): ExecArgs {
  const { values, positionals } = parseCommandArgs({
    args: argv,
    options: {
      config: { type: 'string' },
      json: { type: 'boolean' },
      quiet: { type: 'boolean' },
      approve: { type: 'string', multiple: true },
      journal: { type: 'string' },
      resume: { type: 'string' },
      'repeat-in-doubt': { type: 'boolean' },
    },
    allowPositionals: true,
  });
  const [file, extra] = positionals;
  if (file === undefined) throw new UsageError('give a script file, or - to read it from stdin.');
  if (extra !== undefined) throw new UsageError(`one script at a time; got "${file}" and "${extra}".`);
  const { journal, resume } = values;
  const repeatInDoubt = values['repeat-in-doubt'] === true;
  if (journal !== undefined && resume !== undefined)
    throw new UsageError('--journal starts a recorded run and --resume continues one: give one of them.');
  if (repeatInDoubt && resume === undefined) throw new UsageError('--repeat-in-doubt goes with --resume.');
  if (journal === '' || resume === '') throw new UsageError('--journal and --resume need a file.');
  return {
    file,
    json: values.json === true,
    quiet: values.quiet === true,
    approve: (values.approve ?? []).map(checkApproveFlag),
    repeatInDoubt,
    ...(values.config !== undefined ? { config: values.config } : {}),
    ...(journal !== undefined ? { journal } : {}),
    ...(resume !== undefined ? { resume } : {}),
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
    if (UsageError.isInstance(error)) throw error;
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

/**
 * The journal options of the run: the journal is opened (its lock taken, `JOURNAL_LOCKED` when
 * another process drives it), then checked (a new journal must not hold an earlier run). The
 * caller closes it.
 */
async function journalOptions(
  args: ExecArgs,
  io: CliIo,
): Promise<{ journal?: FileRunJournal; replay?: boolean; replayInDoubt?: 'repeat' }> {
  if (args.resume !== undefined) {
    const path = resolve(io.cwd, args.resume);
    const exists = await stat(path).then(
      (info) => info.isFile(),
      () => false,
    );
    if (!exists) throw new UsageError(`no run journal at ${path} to resume (--journal <file> records one).`);
    return {
      journal: await FileRunJournal.open(path),
      replay: true,
      ...(args.repeatInDoubt ? { replayInDoubt: 'repeat' as const } : {}),
    };
  }
  if (args.journal === undefined) return {};
  const path = resolve(io.cwd, args.journal);
  const journal = await FileRunJournal.open(path);
  // Checked under the lock: a run that held it until now has written its journal.
  const size = await stat(path).then(
    (info) => info.size,
    () => 0,
  );
  if (size > 0) {
    await journal.close();
    throw new UsageError(
      `${path} already holds a run journal: resume that run with --resume ${args.journal}, or give a new file.`,
    );
  }
  return { journal };
}

/** Reports a journal that cannot be taken, written or replayed (exit 1). */
function reportJournalError(error: CodecallError, args: ExecArgs, io: CliIo): number {
  if (args.json) {
    const failure = { status: 'error', error: { code: error.code, message: error.message } };
    io.stdout.write(`${JSON.stringify(failure)}\n`);
  } else io.stderr.write(`codecall exec: ${error.code}: ${neutralizeControls(error.message)}\n`);
  return 1;
}

async function run(argv: string[], io: CliIo): Promise<number> {
  traceStartup('exec command loaded');
  const args = parseExecArgs(argv);
  const source = await readScript(args.file, io);
  let journaling: Awaited<ReturnType<typeof journalOptions>>;
  try {
    journaling = await journalOptions(args, io);
  } catch (error) {
    if (!CodecallError.isInstance(error, JOURNAL_CODES)) throw error;
    return reportJournalError(error, args, io);
  }
  try {
    return await runScript(args, source, journaling, io);
  } finally {
    // Released only now: the run's last append is durable, and the journal is free to resume.
    await journaling.journal?.close();
  }
}

async function runScript(
  args: ExecArgs,
  source: string,
  journaling: Awaited<ReturnType<typeof journalOptions>>,
  io: CliIo,
): Promise<number> {
  await ensureConfigTrusted(io, { config: args.config, interactive: args.file !== '-' && canPrompt(io) });
  traceStartup('script read, configuration trusted');
  const config = await loadConfig({
    ...(args.config !== undefined ? { path: args.config } : {}),
    cwd: io.cwd,
    env: io.env,
    onNotice: configNoticeWriter(io),
  });
  traceStartup('configuration loaded');
  // The stdio servers' processes start now, before the MCP client, the sandbox and the compiler
  // load (dynamic imports below): their start-up, the run's longest wait, overlaps ours. The
  // tool pool adopts them (and stops any it does not use).
  const prespawned = prespawnStdioServers(config);
  traceStartup('servers spawned');
  let loaded;
  try {
    loaded = await Promise.all([
      import('../../execute/index.js'),
      import('../../compile/index.js'),
      import('../../tools/index.js'),
    ]);
  } catch (error) {
    stopPrespawned(prespawned);
    throw error;
  }
  const [{ CodecallRuntime }, { compileScriptAsync }, { INPUT_VALIDATION_DIALECTS, warmInputValidation }] =
    loaded;
  traceStartup('runtime loaded');
  // The runtime, like the agent's: the calls each run makes are learned by the tool graph and
  // appended to the usage history (`codecall graph` shows them), written on this thread (one
  // run is recorded, then the process exits: no writer thread to start).
  const opening = CodecallRuntime.open({
    config,
    historyWriter: 'inline',
    tools: {
      prespawned,
      onServerError: (event) => {
        // The whole message: a start error's stderr tail, environment names and hints.
        io.stderr.write(
          `codecall exec: ${neutralizeControls(event.error.message).replaceAll('\n', '\n  ')}\n`,
        );
      },
    },
    // One script runs: one sandbox worker (process mode), not a pool that boots beside the
    // MCP servers for nothing.
    sandbox: { workers: EXEC_SANDBOX_WORKERS },
    onHistoryError: (error) => {
      io.stderr.write(`codecall exec: ${describeHistoryError(error)}\n`);
    },
    // Calls that need approval (requireApproval): --approve, else a prompt on a terminal, else deny.
    onApproval: createCliApprover({ io, command: 'exec', approve: args.approve }),
    // What an upstream server asks during a call (elicitation): a form at a terminal, else a clear error.
    onUpstreamRequest: createCliAsker({ io, command: 'exec' }),
    signal: io.signal,
  });
  // The script compiles (in esbuild's service process) while the MCP servers and the sandbox
  // worker start, a turn after `open` began (its own spawns go first); the run finds it in the
  // compile cache. Its errors are the run's to report.
  const nextTurn = (): Promise<void> => new Promise<void>((resolveTurn) => setImmediate(resolveTurn));
  const compiling = nextTurn()
    .then(() => compileScriptAsync(source, { maxCodeBytes: config.sandbox.maxCodeBytes }))
    .then(() => traceStartup('script compiled'))
    .catch(() => undefined);
  // Meanwhile ajv's code generator warms up (one schema dialect a turn), so the validators of
  // the script's first tool calls compile warm: the host is idle until the servers answer.
  const warming = (async () => {
    for (const dialect of INPUT_VALIDATION_DIALECTS) {
      await nextTurn();
      warmInputValidation(dialect);
    }
    traceStartup('input validation warm');
  })().catch(() => undefined);
  const [runtime] = await Promise.all([opening, compiling, warming]).catch((error: unknown) => {
    // Opening stopped before the tool pool took the processes (e.g. cancelled).
    stopPrespawned(prespawned);
    throw error;
  });
  traceStartup('runtime open');
  // Per-call progress, as `jobs wait` shows it: only for a person watching a terminal.
  const progress =
    !args.quiet && (io.stderr as { isTTY?: boolean }).isTTY === true
      ? new ExecProgress({ write: (line) => io.stderr.write(line) })
      : undefined;
  try {
    let result: ExecutionResult;
    try {
      result = await runtime.execute(source, {
        signal: io.signal,
        ...journaling,
        ...(progress ? { onToolResult: (event) => progress.onCall(event) } : {}),
      });
    } catch (error) {
      if (!CodecallError.isInstance(error, JOURNAL_CODES)) throw error;
      return reportJournalError(error, args, io);
    } finally {
      progress?.flush();
    }
    traceStartup('script ran');
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
    traceStartup('runtime closed');
  }
}

/** `codecall exec`. */
export const execCommand: CliCommand = {
  ...execHelp,
  run,
};
