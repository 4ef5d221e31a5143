/**
 * @module
 * What a job is: a `run` (an agent task) or an `exec` (a script), the name of a configuration the
 * workers have, and how it is scheduled (idempotency key, priority, deadline, attempts). A job
 * spec is untrusted input (it arrives over HTTP or from any queue client): it is parsed with a
 * strict schema, bounded, and never carries secrets or URLs the worker would send them to; the
 * `${VAR}` references of the named configuration are resolved on the worker.
 */
import { z } from 'zod';
import {
  DEFAULT_JOBS_CONFIG_NAME,
  DEFAULT_JOBS_MAX_ATTEMPTS,
  DEFAULT_JOBS_MAX_MESSAGES,
  DEFAULT_JOBS_MAX_MESSAGES_BYTES,
  DEFAULT_JOBS_MAX_PROMPT_BYTES,
  DEFAULT_MAX_CODE_BYTES,
} from '../config/defaults.js';
import { sandboxSchema } from '../config/schema.js';
import { CodecallError } from '../errors.js';

/** Largest BullMQ priority (1 is the highest; unset runs in arrival order before prioritised jobs). */
export const MAX_JOB_PRIORITY = 2_097_152;
/** Labels one job may carry. */
export const MAX_JOB_LABELS = 32;
/** Characters of an idempotency key (it becomes the job id). */
export const MAX_IDEMPOTENCY_KEY_CHARS = 128;

const positiveInt = z.number().int().positive();
const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/**
 * Sandbox limits a job may set; the worker keeps the smaller of these and its configuration's.
 * Derived from the configuration's `sandbox` section (every limit, not the mode, pool size or
 * code size), so a limit added there is a limit a job may lower.
 */
const jobLimitsSchema = sandboxSchema.omit({
  mode: true,
  workers: true,
  maxCodeBytes: true,
  sessionTtlMs: true,
  maxSessions: true,
});

const commonFields = {
  config: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'is a configuration name: 1-64 letters, digits, "_", "." or "-"')
    .optional(),
  idempotencyKey: z
    .string()
    .regex(
      new RegExp(`^[A-Za-z0-9_.-]{1,${MAX_IDEMPOTENCY_KEY_CHARS}}$`),
      `is 1-${MAX_IDEMPOTENCY_KEY_CHARS} letters, digits, "_", "." or "-"`,
    )
    .refine((key) => !/^\d+$/.test(key), 'cannot be only digits (add a prefix, e.g. "report-42")')
    .optional(),
  priority: z.number().int().min(1).max(MAX_JOB_PRIORITY).optional(),
  deadline: z.union([z.iso.datetime({ offset: true }), z.number().int().positive()]).optional(),
  attempts: z.number().int().min(1).max(DEFAULT_JOBS_MAX_ATTEMPTS).optional(),
  /** Labels shown by `list` (not secret: they are stored with the job). */
  labels: z
    .record(z.string().max(64), z.string().max(256))
    .refine(
      (labels) => Object.keys(labels).length <= MAX_JOB_LABELS,
      `has more than ${MAX_JOB_LABELS} labels`,
    )
    .optional(),
};

const execSpecSchema = z.strictObject({
  kind: z.literal('exec'),
  code: z
    .string()
    .min(1)
    .refine(
      (code) => bytes(code) <= DEFAULT_MAX_CODE_BYTES,
      `is larger than ${DEFAULT_MAX_CODE_BYTES} bytes`,
    ),
  limits: jobLimitsSchema.optional(),
  ...commonFields,
});

/**
 * One message of a conversation, as an agent run's `result.messages` returns them (user text,
 * assistant text and tool calls, tool results).
 */
const messageSchema = z.discriminatedUnion('role', [
  z.strictObject({ role: z.literal('user'), content: z.string() }),
  z.strictObject({
    role: z.literal('assistant'),
    content: z.array(
      z.discriminatedUnion('type', [
        z.strictObject({ type: z.literal('text'), text: z.string() }),
        z.strictObject({
          type: z.literal('tool_call'),
          id: z.string().min(1).max(256),
          name: z.string().min(1).max(256),
          input: z.unknown(),
        }),
      ]),
    ),
  }),
  z.strictObject({
    role: z.literal('tool'),
    results: z.array(
      z.strictObject({
        toolCallId: z.string().min(1).max(256),
        content: z.string(),
        isError: z.boolean().optional(),
      }),
    ),
  }),
]);

const runSpecSchema = z
  .strictObject({
    kind: z.literal('run'),
    prompt: z
      .string()
      .min(1)
      .refine(
        (prompt) => bytes(prompt) <= DEFAULT_JOBS_MAX_PROMPT_BYTES,
        `is larger than ${DEFAULT_JOBS_MAX_PROMPT_BYTES} bytes`,
      )
      .optional(),
    /** A conversation to continue (a previous run's `result.messages` plus the user's next message). */
    messages: z
      .array(messageSchema)
      .min(1)
      .max(DEFAULT_JOBS_MAX_MESSAGES)
      .refine((messages) => messages.at(-1)?.role === 'user', {
        message: 'must end with the user\'s message ({"role": "user", "content": "..."})',
      })
      .refine(
        (messages) => bytes(JSON.stringify(messages)) <= DEFAULT_JOBS_MAX_MESSAGES_BYTES,
        `is larger than ${DEFAULT_JOBS_MAX_MESSAGES_BYTES} bytes of JSON`,
      )
      .optional(),
    model: z.string().min(1).max(200).optional(),
    mode: z.enum(['code', 'direct']).optional(),
    maxSteps: positiveInt.max(1_000).optional(),
    maxRunTimeMs: positiveInt.optional(),
    ...commonFields,
  })
  .refine((spec) => (spec.prompt === undefined) !== (spec.messages === undefined), {
    message: 'a run job has either "prompt" (a task) or "messages" (a conversation to continue), not both',
    path: ['prompt'],
  });

/** The schema of a job spec as submitted. */
export const jobSpecSchema = z.discriminatedUnion('kind', [execSpecSchema, runSpecSchema]);

/** A job as submitted: `exec` (a script) or `run` (an agent task). */
export type JobSpecInput = z.input<typeof jobSpecSchema>;

/** Sandbox limits an `exec` job may lower. */
export type JobLimits = z.infer<typeof jobLimitsSchema>;

/** Fields every parsed job has. */
interface JobSpecBase {
  /** Name of the worker's configuration to run with. */
  config: string;
  idempotencyKey?: string;
  priority?: number;
  /** Epoch milliseconds after which the job is not started, and a running job is stopped. */
  deadline?: number;
  attempts?: number;
  labels?: Record<string, string>;
}

/** A script job. */
export interface ExecJobSpec extends JobSpecBase {
  kind: 'exec';
  code: string;
  limits?: JobLimits;
}

/** One message of a `run` job's conversation (the shape of an agent run's `result.messages`). */
export type JobMessage = z.infer<typeof messageSchema>;

/** An agent task: a `prompt`, or `messages` (a conversation to continue); exactly one of the two. */
export interface RunJobSpec extends JobSpecBase {
  kind: 'run';
  prompt?: string;
  /** A conversation ending with the user's message; `prompt` is then absent. */
  messages?: JobMessage[];
  /** `provider:model` or `demo`; default: the configuration's `agent.model`, else `$CODECALL_MODEL` on the worker. */
  model?: string;
  mode?: 'code' | 'direct';
  maxSteps?: number;
  maxRunTimeMs?: number;
}

/** A parsed, validated job spec. */
export type JobSpec = ExecJobSpec | RunJobSpec;

function definedOnly<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/**
 * Validates an untrusted job spec. Throws `INVALID_ARGUMENT` naming each bad field and the fix.
 *
 * @example
 * ```ts
 * const spec = parseJobSpec({ kind: 'exec', code: 'console.log(1)' });
 * ```
 */
export function parseJobSpec(input: unknown): JobSpec {
  const parsed = jobSpecSchema.safeParse(input);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const field = issue.path.length > 0 ? issue.path.join('.') : 'the job';
      return `${field}: ${issue.message}`;
    });
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `Invalid job: ${problems.join('; ')}. A job is {"kind": "exec", "code": "..."} or ` +
        '{"kind": "run", "prompt": "..."} (or "messages": [...] instead of "prompt"), with optional config, idempotencyKey, priority, deadline, attempts.',
      { details: { field: 'job', problems } },
    );
  }
  const { deadline, config, ...rest } = parsed.data;
  const spec = definedOnly({
    ...rest,
    config: config ?? DEFAULT_JOBS_CONFIG_NAME,
    deadline: typeof deadline === 'string' ? Date.parse(deadline) : deadline,
  }) as JobSpec;
  return spec;
}
