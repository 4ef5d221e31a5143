/**
 * @module
 * `codecall run "<task>"`: runs a task with a model over the configured MCP servers (the agent
 * loop). Progress goes to stderr (one line per step: what the model called, how many tool calls,
 * elapsed time), the answer to stdout, then a one-line usage and savings summary on stderr.
 * `--json` prints the full run result instead. Ctrl-C cancels the run cleanly.
 */
import { createOrchestrator, type AgentMode, type AgentStep, type RunResult } from '../../agent/index.js';
import { isCodecallError, type CodecallError } from '../../errors.js';
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
import { neutralizeControls } from '../terminal-text.js';
import { canPrompt, ensureConfigTrusted } from '../trust.js';
import { runHelp } from './run.help.js';

interface RunArgs {
  task: string;
  model?: string;
  baseURL?: string;
  maxSteps?: number;
  maxOutputTokens?: number;
  mode: AgentMode;
  config?: string;
  json: boolean;
  /** `--approve` values: tools approved without asking, or `all`. */
  approve: string[];
}

/** Errors that end a run without an answer (exit 1); anything else is the developer's to fix (exit 2). */
const RUN_FAILURES = new Set(['MAX_STEPS_EXCEEDED', 'RUN_TIMEOUT', 'ABORTED', 'PROVIDER_REQUEST_FAILED']);
/** Characters of an error shown on a progress line. */
const MAX_PROGRESS_ERROR_CHARS = 160;

/** The positive integer a flag names, `undefined` when absent; a `UsageError` otherwise. */
function positiveFlag(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < 1)
    throw new UsageError(`${flag} needs a positive integer, not "${text}".`);
  return value;
}

/** Parses the arguments of `codecall run`. */
export function parseRunArgs(argv: string[]): RunArgs {
  const { values, positionals } = parseCommandArgs({
    args: argv,
    options: {
      json: { type: 'boolean' },
      model: { type: 'string' },
      'base-url': { type: 'string' },
      config: { type: 'string' },
      approve: { type: 'string', multiple: true },
      mode: { type: 'string' },
      'max-steps': { type: 'string' },
      'max-output-tokens': { type: 'string' },
    },
    allowPositionals: true,
  });
  const out: Omit<RunArgs, 'task'> = {
    mode: 'code',
    json: values.json === true,
    approve: (values.approve ?? []).map(checkApproveFlag),
  };
  if (values.model !== undefined) out.model = values.model;
  if (values['base-url'] !== undefined) out.baseURL = values['base-url'];
  if (values.config !== undefined) out.config = values.config;
  if (values.mode !== undefined) {
    if (values.mode !== 'code' && values.mode !== 'direct')
      throw new UsageError(`--mode is code or direct, not "${values.mode}".`);
    out.mode = values.mode;
  }
  const steps = positiveFlag('--max-steps', values['max-steps']);
  if (steps !== undefined) out.maxSteps = steps;
  const outputTokens = positiveFlag('--max-output-tokens', values['max-output-tokens']);
  if (outputTokens !== undefined) out.maxOutputTokens = outputTokens;
  const task = positionals.join(' ').trim();
  if (task === '')
    throw new UsageError(
      'give the task, e.g. codecall run "Which team members exceeded their Q3 travel budget?".',
    );
  return { ...out, task };
}

const number = (value: number): string => Math.round(value).toLocaleString('en-US');
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

function firstLine(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > MAX_PROGRESS_ERROR_CHARS ? `${line.slice(0, MAX_PROGRESS_ERROR_CHARS)}…` : line;
}

/** One progress line for a finished step, plus a line per failed call. */
export function formatStep(step: AgentStep, elapsedMs: number): string {
  if (step.toolCalls.length === 0) return `step ${step.index} · answer · ${seconds(elapsedMs)}\n`;
  const counts = new Map<string, number>();
  for (const call of step.toolCalls) counts.set(call.name, (counts.get(call.name) ?? 0) + 1);
  const names = [...counts].map(([name, n]) => (n > 1 ? `${name} ×${n}` : name)).join(', ');
  let toolCalls = step.toolCalls.filter((c) => c.kind === 'direct').length;
  for (const execution of step.executions) toolCalls += execution.result.toolCalls.length;
  const parts = [`step ${step.index}`, names];
  if (toolCalls > 0) parts.push(`${toolCalls} tool call${toolCalls === 1 ? '' : 's'}`);
  parts.push(seconds(elapsedMs));
  const lines = [parts.join(' · ')];
  for (const call of step.toolCalls) {
    if (!call.isError) continue;
    const execution = step.executions.find((e) => e.toolCallId === call.id);
    const error = execution?.result.error;
    lines.push(`  ! ${call.name}: ${firstLine(error ? `${error.code}: ${error.message}` : call.content)}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The one-line usage and savings summary of a run: tokens that entered the context and, in code
 * mode, what the scripts kept out of it (tool results, counted as direct calls would have shown
 * them) and the tool definitions search deferred. Never a "vs direct" figure: one run cannot
 * know what a direct run would have read (`compareRuns` compares two measured runs).
 */
export function formatRunSummary(result: RunResult): string {
  const { savings, usage } = result;
  const steps = `${result.steps.length} step${result.steps.length === 1 ? '' : 's'}`;
  const parts: string[] = [];
  if (result.mode === 'code') {
    parts.push(
      `tokens: ${number(savings.contextTokens)} in context; kept out: ${number(savings.toolResultTokensKeptOut)} of tool results (${number(savings.toolResultBytesKeptOut)} bytes), ${number(savings.toolDefinitionTokensDeferred)} of tool definitions`,
    );
  } else {
    parts.push(`tokens: ${number(savings.contextTokens)} in context (direct tool calling)`);
  }
  // Without js-tiktoken the counts are a length estimate: say so where they are shown.
  if (savings.tokenizer === 'estimate')
    parts[0] = `${parts[0]} (estimated: npm install js-tiktoken to count)`;
  parts.push(steps, seconds(result.durationMs));
  if (usage.inputTokens + usage.outputTokens > 0) {
    const cached = usage.cacheReadTokens > 0 ? ` (${number(usage.cacheReadTokens)} cached)` : '';
    parts.push(`provider: ${number(usage.inputTokens)} in${cached}, ${number(usage.outputTokens)} out`);
  }
  return parts.join(' · ');
}

function partialResult(error: CodecallError): RunResult | undefined {
  const result = error.details.result;
  return typeof result === 'object' && result !== null ? (result as RunResult) : undefined;
}

async function run(argv: string[], io: CliIo): Promise<number> {
  const args = parseRunArgs(argv);
  await ensureConfigTrusted(io, { config: args.config, interactive: canPrompt(io) });
  const agent = await createOrchestrator({
    ...(args.model !== undefined ? { model: args.model } : {}),
    modelOptions: { env: io.env, ...(args.baseURL !== undefined ? { baseURL: args.baseURL } : {}) },
    load: {
      ...(args.config !== undefined ? { path: args.config } : {}),
      cwd: io.cwd,
      env: io.env,
      onNotice: configNoticeWriter(io),
    },
    runtimeOptions: {
      tools: {
        onServerError: (event) =>
          // The whole message: a start error's stderr tail, environment names and hints.
          io.stderr.write(
            `codecall run: ${neutralizeControls(event.error.message).replaceAll('\n', '\n  ')}\n`,
          ),
      },
      onHistoryError: (error) => io.stderr.write(`codecall run: ${describeHistoryError(error)}\n`),
      // Calls that need approval (requireApproval): --approve, else a prompt on a terminal, else deny.
      onApproval: createCliApprover({ io, command: 'run', approve: args.approve }),
      // What an upstream server asks during a call (elicitation): a form at a terminal, else a clear error.
      onUpstreamRequest: createCliAsker({ io, command: 'run' }),
      signal: io.signal,
    },
    mode: args.mode,
    ...(args.maxSteps !== undefined ? { maxSteps: args.maxSteps } : {}),
    ...(args.maxOutputTokens !== undefined ? { maxOutputTokens: args.maxOutputTokens } : {}),
  });
  const started = performance.now();
  try {
    let result: RunResult | undefined;
    let failure: CodecallError | undefined;
    for await (const event of agent.stream(args.task, { signal: io.signal, streamText: false })) {
      switch (event.type) {
        case 'run-start':
          io.stderr.write(
            `codecall run · ${event.model} · ${event.mode} mode · ${event.tools.length} tools offered\n`,
          );
          break;
        case 'step-end':
          io.stderr.write(neutralizeControls(formatStep(event.step, performance.now() - started)));
          break;
        case 'done':
          result = event.result;
          break;
        case 'error':
          failure = event.error;
          result = event.result;
          break;
        default:
          break;
      }
    }
    if (failure !== undefined) {
      if (!RUN_FAILURES.has(failure.code)) throw failure;
      const stopped = io.signal.aborted && failure.code === 'ABORTED' ? 'cancelled.' : failure.message;
      if (args.json) {
        io.stdout.write(
          `${JSON.stringify({ error: { code: failure.code, message: failure.message }, result: result ?? partialResult(failure) })}\n`,
        );
      }
      io.stderr.write(`codecall run: ${neutralizeControls(stopped)}\n`);
      if (result) io.stderr.write(`${formatRunSummary(result)}\n`);
      return 1;
    }
    if (result === undefined) throw new Error('the run ended without a result');
    if (args.json) io.stdout.write(`${JSON.stringify(result)}\n`);
    // The answer is the model's text, which may echo what tools returned: no raw control sequences.
    else io.stdout.write(`${neutralizeControls(result.answer.trimEnd())}\n`);
    io.stderr.write(`${formatRunSummary(result)}\n`);
    return 0;
  } catch (error) {
    if (isCodecallError(error) && RUN_FAILURES.has(error.code)) {
      io.stderr.write(`codecall run: ${neutralizeControls(error.message)}\n`);
      return 1;
    }
    throw error;
  } finally {
    await agent.close();
  }
}

/** `codecall run`. */
export const runCommand: CliCommand = {
  ...runHelp,
  run,
};
