/**
 * @module
 * `codecall jobs submit|status|wait|logs|cancel|approve|list`: submits jobs and follows them on
 * any backend: a running `codecall serve --http` through its jobs HTTP API (`--url`, `--token`;
 * its embedded backend or whatever queue it uses), a BullMQ queue on Redis (`--redis`), or a
 * pg-boss queue on PostgreSQL (`--postgres`); see jobs-target.ts for how one is chosen. `wait`
 * prints progress on stderr and the job's output on stdout (an `exec` job's stdout, a `run`
 * job's answer); `--json` prints the job record instead.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { DEFAULT_CLI_INPUT_MAX_TEXT_CHARS, DEFAULT_JOBS_QUEUE } from '../../config/defaults.js';
import { loadConfig } from '../../config/index.js';
import { isCodecallError } from '../../errors.js';
import { escapeInvisible, renderApprovalArguments } from '../../tools/approval-text.js';
import type { JobBackend, JobProgress, JobRecord, JobMessage, JobSpecInput } from '../../jobs/index.js';
import { parseCommandArgs, UsageError, type CliCommand, type CliIo } from '../command.js';
import { jobsHelp, REDIS_URL_ENV } from './jobs.help.js';
export { REDIS_URL_ENV } from './jobs.help.js';
import { configNoticeWriter } from '../config-notices.js';
import { setLongTimeout } from '../../util/long-timeout.js';
import { openJobTarget, resolveJobTarget, withTargetHint } from './jobs-target.js';

/** Parses a positive integer option; `undefined` when absent. */
export function positiveOption(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`${flag} needs a positive integer; got "${value}".`);
  return n;
}

/**
 * Where a Redis queue is, from flags, then `$CODECALL_REDIS_URL`, then the configuration's `jobs`
 * section (what `codecall worker` uses; `codecall jobs` chooses among every backend with
 * `resolveJobTarget`).
 */
export async function resolveJobConnection(
  options: { redis?: string; queue?: string; config?: string },
  io: CliIo,
): Promise<{ url: string; queue: string; display: string }> {
  let url = options.redis ?? (io.env[REDIS_URL_ENV] || undefined);
  let queue = options.queue;
  if (url === undefined || queue === undefined) {
    let jobs: { connection: string | undefined; queue: string | undefined } = {
      connection: undefined,
      queue: undefined,
    };
    try {
      jobs = (
        await loadConfig({
          ...(options.config !== undefined ? { path: options.config } : {}),
          cwd: io.cwd,
          env: io.env,
          onNotice: configNoticeWriter(io),
        })
      ).jobs;
    } catch (error) {
      if (options.config !== undefined || !(isCodecallError(error) && error.code === 'CONFIG_NOT_FOUND'))
        throw error;
    }
    url ??= jobs.connection;
    queue ??= jobs.queue;
  }
  if (url === undefined)
    throw new UsageError(
      `no Redis to reach: pass --redis redis://127.0.0.1:6379, set $${REDIS_URL_ENV}, or set "jobs": {"connection": "redis://…"} in the configuration.`,
    );
  let display = url;
  try {
    const parsed = new URL(url);
    display = `${parsed.protocol}//${parsed.host}`;
  } catch {
    // The backend reports a bad URL.
  }
  return { url, queue: queue ?? DEFAULT_JOBS_QUEUE, display };
}

/** One line for a progress event. */
export function formatProgress(progress: JobProgress): string {
  switch (progress.type) {
    case 'started':
      return `attempt ${progress.attempt} started on ${progress.worker}`;
    case 'tool-call':
      return `${progress.ok ? '✓' : '✗'} ${progress.tool}`;
    case 'execution':
      return `script ${progress.status}, ${progress.toolCalls} tool call(s), ${progress.wallMs} ms`;
    case 'step':
      return `step ${progress.step} · ${progress.calls.join(', ') || 'answer'} · ${progress.toolCalls} tool call(s)`;
  }
}

/**
 * What a job waiting for an upstream's input request waits for: the request, its call and its
 * timeout, the upstream's text escaped and cut at {@link DEFAULT_CLI_INPUT_MAX_TEXT_CHARS}.
 */
function describeInputWait(pending: NonNullable<JobRecord['approval']>): string {
  const input = pending.input!;
  const message = input.params.message;
  const text =
    typeof message === 'string'
      ? ` "${escapeInvisible(message.slice(0, DEFAULT_CLI_INPUT_MAX_TEXT_CHARS))}${message.length > DEFAULT_CLI_INPUT_MAX_TEXT_CHARS ? '…' : ''}"`
      : '';
  return (
    `waits for the answer to ${input.method}${text} from ${escapeInvisible(pending.tool)} (call ${pending.callIndex})` +
    ` until ${new Date(pending.expiresAt).toISOString()}`
  );
}

/** A short human summary of a job. */
export function formatRecord(record: JobRecord): string {
  const parts = [`${record.id}`, record.kind, record.state];
  if (record.result)
    parts.push(record.result.status + (record.result.error ? ` (${record.result.error.code})` : ''));
  if (record.failedReason) parts.push(`failed: ${record.failedReason.split('\n')[0]}`);
  parts.push(`attempts ${record.attemptsMade}/${record.attempts}`);
  if (record.cancelRequested && record.state !== 'completed') parts.push('cancel requested');
  if (record.approval?.input && record.state === 'waiting-approval') {
    parts.push(`${describeInputWait(record.approval)}: the MCP client of its task answers it (tasks/update)`);
  } else if (record.approval && record.state === 'waiting-approval') {
    const args = renderApprovalArguments(record.approval.args);
    parts.push(
      `waits for approval of ${escapeInvisible(record.approval.tool)} (call ${record.approval.callIndex}) ${args.text}${args.note}` +
        ` until ${new Date(record.approval.expiresAt).toISOString()}: codecall jobs approve ${record.id} [--deny]`,
    );
  }
  return parts.join(' · ');
}

const OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  redis: { type: 'string' },
  postgres: { type: 'string' },
  queue: { type: 'string' },
  config: { type: 'string' },
  'config-name': { type: 'string' },
  key: { type: 'string' },
  priority: { type: 'string' },
  deadline: { type: 'string' },
  attempts: { type: 'string' },
  model: { type: 'string' },
  messages: { type: 'string' },
  mode: { type: 'string' },
  'max-steps': { type: 'string' },
  wait: { type: 'boolean' },
  json: { type: 'boolean' },
  'timeout-ms': { type: 'string' },
  state: { type: 'string', multiple: true },
  limit: { type: 'string' },
  deny: { type: 'boolean' },
  reason: { type: 'string' },
} as const;

type Values = ReturnType<
  typeof parseCommandArgs<{ options: typeof OPTIONS; allowPositionals: true }>
>['values'];

async function readSource(file: string, io: CliIo): Promise<string> {
  if (file === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of io.stdin)
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
    return Buffer.concat(chunks).toString('utf8');
  }
  try {
    return await readFile(resolve(io.cwd, file), 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
}

async function buildSpec(words: string[], values: Values, io: CliIo): Promise<JobSpecInput> {
  const [kind, ...rest] = words;
  const common = {
    ...(values['config-name'] !== undefined ? { config: values['config-name'] } : {}),
    ...(values.key !== undefined ? { idempotencyKey: values.key } : {}),
    ...(values.deadline !== undefined ? { deadline: values.deadline } : {}),
  };
  const priority = positiveOption('--priority', values.priority);
  const attempts = positiveOption('--attempts', values.attempts);
  const numbers = {
    ...(priority !== undefined ? { priority } : {}),
    ...(attempts !== undefined ? { attempts } : {}),
  };
  if (kind === 'exec') {
    if (rest.length !== 1) throw new UsageError('submit exec takes one script file, or - for stdin.');
    return { kind: 'exec', code: await readSource(rest[0]!, io), ...common, ...numbers };
  }
  if (kind === 'run') {
    const prompt = rest.join(' ').trim();
    let messages: unknown[] | undefined;
    if (values.messages !== undefined) {
      const text = await readSource(values.messages, io);
      try {
        messages = JSON.parse(text) as unknown[];
      } catch {
        throw new UsageError(`--messages ${values.messages} is not JSON; give a JSON array of messages.`);
      }
      if (!Array.isArray(messages))
        throw new UsageError(`--messages ${values.messages} must hold a JSON array of messages.`);
      // The task words, when given, are the user's next message.
      if (prompt !== '') messages = [...messages, { role: 'user', content: prompt }];
    } else if (prompt === '')
      throw new UsageError('submit run needs the task, e.g. codecall jobs submit run "Summarise Q3 travel".');
    const mode = values.mode;
    if (mode !== undefined && mode !== 'code' && mode !== 'direct')
      throw new UsageError(`--mode is code or direct, not "${mode}".`);
    const maxSteps = positiveOption('--max-steps', values['max-steps']);
    return {
      kind: 'run',
      ...(messages !== undefined ? { messages: messages as JobMessage[] } : { prompt }),
      ...(values.model !== undefined ? { model: values.model } : {}),
      ...(mode !== undefined ? { mode } : {}),
      ...(maxSteps !== undefined ? { maxSteps } : {}),
      ...common,
      ...numbers,
    };
  }
  throw new UsageError('submit what? codecall jobs submit exec <file> | codecall jobs submit run "<task>".');
}

async function waitFor(client: JobBackend, id: string, values: Values, io: CliIo): Promise<number> {
  const timeoutMs = positiveOption('--timeout-ms', values['timeout-ms']);
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  io.signal.addEventListener('abort', onAbort, { once: true });
  const timer = timeoutMs === undefined ? undefined : setLongTimeout(() => stop.abort(), timeoutMs);
  let record: JobRecord | undefined;
  try {
    for await (const event of client.events(id, { signal: stop.signal })) {
      if (event.type === 'state')
        io.stderr.write(
          `codecall jobs: ${id} ${event.state}${
            event.approval?.input
              ? ` (${describeInputWait(event.approval)})`
              : event.approval
                ? ` (${escapeInvisible(event.approval.tool)}, call ${event.approval.callIndex}: codecall jobs approve ${id} [--deny])`
                : ''
          }\n`,
        );
      else if (event.type === 'progress')
        io.stderr.write(`codecall jobs: ${formatProgress(event.progress)}\n`);
      else record = event.job;
    }
  } finally {
    timer?.cancel();
    io.signal.removeEventListener('abort', onAbort);
  }
  if (!record) {
    io.stderr.write(`codecall jobs: stopped waiting for ${id}; it goes on.\n`);
    return 1;
  }
  if (values.json) io.stdout.write(`${JSON.stringify(record)}\n`);
  else {
    const result = record.result;
    if (result?.exec) {
      io.stdout.write(result.exec.stdout);
      io.stderr.write(result.exec.stderr);
    }
    if (result?.run?.answer) io.stdout.write(`${result.run.answer.trimEnd()}\n`);
    io.stderr.write(`codecall jobs: ${formatRecord(record)}\n`);
    if (result?.error) io.stderr.write(`codecall jobs: ${result.error.code}: ${result.error.message}\n`);
  }
  return record.state === 'completed' && record.result?.status === 'ok' ? 0 : 1;
}

async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  const [command, ...words] = positionals;
  if (command === undefined)
    throw new UsageError('give a command: submit, status, wait, logs, cancel, approve or list.');
  const known = ['submit', 'status', 'wait', 'logs', 'cancel', 'approve', 'list'];
  if (!known.includes(command))
    throw new UsageError(`unknown jobs command "${command}"; one of ${known.join(', ')}.`);
  const id = words[0];
  if (
    ['status', 'wait', 'logs', 'cancel', 'approve'].includes(command) &&
    (id === undefined || words.length !== 1)
  )
    throw new UsageError(`jobs ${command} takes one job id.`);
  const spec = command === 'submit' ? await buildSpec(words, values, io) : undefined;
  const limit = positiveOption('--limit', values.limit);
  const target = await resolveJobTarget(
    {
      url: values.url,
      token: values.token,
      redis: values.redis,
      postgres: values.postgres,
      queue: values.queue,
      config: values.config,
    },
    io,
  );
  let client: JobBackend;
  try {
    client = await openJobTarget(target);
  } catch (error) {
    throw withTargetHint(error, target);
  }
  try {
    switch (command) {
      case 'submit': {
        const submission = await client.submit(spec!);
        if (values.json && !values.wait) io.stdout.write(`${JSON.stringify(submission)}\n`);
        else if (!values.wait) io.stdout.write(`${submission.id}\n`);
        if (submission.deduplicated)
          io.stderr.write(`codecall jobs: ${submission.id} already existed; nothing new queued.\n`);
        return values.wait ? await waitFor(client, submission.id, values, io) : 0;
      }
      case 'status': {
        const record = await client.get(id!);
        if (!record) {
          io.stderr.write(`codecall jobs: no job "${id}".\n`);
          return 1;
        }
        io.stdout.write(values.json ? `${JSON.stringify(record)}\n` : `${formatRecord(record)}\n`);
        return 0;
      }
      case 'wait':
        return await waitFor(client, id!, values, io);
      case 'logs': {
        const lines = await client.logs(id!);
        io.stdout.write(
          values.json ? `${JSON.stringify(lines)}\n` : lines.map((line) => `${line}\n`).join(''),
        );
        return 0;
      }
      case 'cancel': {
        const cancelled = await client.cancel(id!);
        io.stderr.write(
          `codecall jobs: ${cancelled ? `cancel requested for ${id}` : `${id} is unknown or already finished`}\n`,
        );
        return cancelled ? 0 : 1;
      }
      case 'approve': {
        const decision = await client.approve(id!, {
          approved: values.deny !== true,
          ...(values.reason !== undefined ? { reason: values.reason } : {}),
        });
        if (values.json) io.stdout.write(`${JSON.stringify({ id, decision })}\n`);
        io.stderr.write(
          `codecall jobs: ${decision.approved ? 'approved' : 'denied'} ${decision.tool} (call ${decision.callIndex}) of ${id}; the job resumes.\n`,
        );
        return 0;
      }
      default: {
        const states = values.state as JobRecord['state'][] | undefined;
        const records = await client.list({
          ...(states ? { states } : {}),
          ...(limit !== undefined ? { limit } : {}),
        });
        io.stdout.write(
          values.json ? `${JSON.stringify(records)}\n` : records.map((r) => `${formatRecord(r)}\n`).join(''),
        );
        return 0;
      }
    }
  } catch (error) {
    throw withTargetHint(error, target);
  } finally {
    await client.close();
  }
}

/** `codecall jobs`. */
export const jobsCommand: CliCommand = {
  ...jobsHelp,
  run,
};
