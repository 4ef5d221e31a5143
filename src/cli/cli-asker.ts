/**
 * @module
 * Where `codecall run` and `codecall exec` get the answers an upstream MCP server asks for while
 * a call is in flight (an `elicitation/create`: a 2026-07-28 server's `input_required` round, or a
 * 2025-11-25 server's request): a form prompt on stderr when stdin and stderr are a terminal (one
 * form at a time, one line per field), otherwise a refusal that names what to do. Sampling and
 * URL-mode elicitation are refused (the CLI has no model to sample with, and opens no browser).
 *
 * The form comes from the server, so it is untrusted: its texts are shown with control and
 * invisible characters neutralised and cut to {@link DEFAULT_CLI_INPUT_MAX_TEXT_CHARS}, and a form
 * with more than {@link DEFAULT_CLI_INPUT_MAX_FIELDS} fields is refused.
 */
import { createInterface, type Interface } from 'node:readline';
import {
  DEFAULT_CLI_INPUT_MAX_ATTEMPTS,
  DEFAULT_CLI_INPUT_MAX_FIELDS,
  DEFAULT_CLI_INPUT_MAX_OPTIONS,
  DEFAULT_CLI_INPUT_MAX_TEXT_CHARS,
} from '../config/defaults.js';
import type { UpstreamAsker, UpstreamRequest } from '../tools/index.js';
import { escapeInvisible } from '../tools/approval-text.js';
import type { CliIo } from './command.js';
import { neutralizeControls } from './terminal-text.js';
import { canPrompt } from './trust.js';

/** Options of {@link createCliAsker}. */
export interface CliAskerOptions {
  io: CliIo;
  /** The command, for the prompt and messages (`exec`, `run`). */
  command: string;
}

/** One field of a form, as the prompt reads it. */
interface FormField {
  name: string;
  label: string;
  type: 'string' | 'number' | 'integer' | 'boolean';
  options: string[] | undefined;
  fallback: unknown;
  required: boolean;
}

/** `text` safe for the terminal: controls and invisible characters shown, cut to `max` characters. */
function shown(text: unknown, max = DEFAULT_CLI_INPUT_MAX_TEXT_CHARS): string {
  const value = typeof text === 'string' ? text : '';
  const cut = value.length > max ? `${value.slice(0, max)}… (${value.length} characters)` : value;
  return neutralizeControls(escapeInvisible(cut));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The enum values of a string property (`enum`, or `oneOf`/`anyOf` of `const`s). */
function optionsOf(property: Record<string, unknown>): string[] | undefined {
  if (Array.isArray(property.enum)) return property.enum.filter((v): v is string => typeof v === 'string');
  const choices = Array.isArray(property.oneOf) ? property.oneOf : property.anyOf;
  if (!Array.isArray(choices)) return undefined;
  const values = choices.flatMap((c) => (isObject(c) && typeof c.const === 'string' ? [c.const] : []));
  return values.length > 0 ? values : undefined;
}

/** The fields of a form's `requestedSchema`, or a reason why the terminal cannot show it. */
function fieldsOf(schema: unknown): FormField[] | string {
  if (!isObject(schema) || !isObject(schema.properties)) return 'its form has no properties';
  const entries = Object.entries(schema.properties);
  if (entries.length > DEFAULT_CLI_INPUT_MAX_FIELDS)
    return `its form has ${entries.length} fields, more than ${DEFAULT_CLI_INPUT_MAX_FIELDS} (DEFAULT_CLI_INPUT_MAX_FIELDS)`;
  const required = new Set(
    Array.isArray(schema.required) ? schema.required.filter((v): v is string => typeof v === 'string') : [],
  );
  const fields: FormField[] = [];
  for (const [name, property] of entries) {
    if (!isObject(property)) return `its field ${shown(name, 80)} has no schema`;
    const type = property.type;
    const options = optionsOf(property);
    if (options !== undefined && options.length > DEFAULT_CLI_INPUT_MAX_OPTIONS)
      return `its field ${shown(name, 80)} has ${options.length} choices, more than ${DEFAULT_CLI_INPUT_MAX_OPTIONS} (DEFAULT_CLI_INPUT_MAX_OPTIONS)`;
    if (
      type !== 'string' &&
      type !== 'number' &&
      type !== 'integer' &&
      type !== 'boolean' &&
      options === undefined
    )
      return `its field ${shown(name, 80)} is of a type the terminal cannot ask (${shown(JSON.stringify(type ?? null), 40)})`;
    const title = typeof property.title === 'string' ? property.title : name;
    const description =
      typeof property.description === 'string' ? ` — ${shown(property.description, 200)}` : '';
    fields.push({
      name,
      label: `${shown(title, 200)}${description}`,
      type: type === 'number' || type === 'integer' || type === 'boolean' ? type : 'string',
      options,
      fallback: property.default,
      required: required.has(name),
    });
  }
  return fields;
}

/** The value `line` gives `field`, `undefined` for an empty line, or an error text. */
function parseField(field: FormField, line: string): { value: unknown } | { error: string } | undefined {
  const text = line.trim();
  if (text === '') return undefined;
  if (field.options !== undefined) {
    const index = /^\d+$/.test(text) ? Number(text) - 1 : -1;
    const value = field.options[index] ?? field.options.find((option) => option === text);
    return value === undefined
      ? { error: 'choose one of the listed values (its number or its text)' }
      : { value };
  }
  if (field.type === 'boolean') {
    if (/^(y|yes|true)$/i.test(text)) return { value: true };
    if (/^(n|no|false)$/i.test(text)) return { value: false };
    return { error: 'answer y or n' };
  }
  if (field.type === 'number' || field.type === 'integer') {
    const value = Number(text);
    if (!Number.isFinite(value) || (field.type === 'integer' && !Number.isInteger(value)))
      return { error: `enter ${field.type === 'integer' ? 'a whole number' : 'a number'}` };
    return { value };
  }
  return { value: text };
}

/** How a field is asked: its label, its type or choices, and its default. */
function promptOf(field: FormField): string {
  const kind =
    field.options !== undefined
      ? `one of: ${field.options.map((option, i) => `${i + 1}) ${shown(option, 80)}`).join(', ')}`
      : field.type === 'boolean'
        ? 'y/n'
        : field.type;
  const fallback =
    field.fallback !== undefined ? ` [default: ${shown(JSON.stringify(field.fallback), 80)}]` : '';
  return `  ${field.label} (${kind}${field.required ? ', required' : ''})${fallback}: `;
}

/** Reads lines one by one; `undefined` once input closes or `signal` aborts. */
function lineReader(io: CliIo, signal: AbortSignal): { next(): Promise<string | undefined>; close(): void } {
  const lines: Interface = createInterface({ input: io.stdin, output: io.stderr, terminal: false });
  const buffered: string[] = [];
  const waiting: ((line: string | undefined) => void)[] = [];
  let closed = false;
  const end = (): void => {
    if (closed) return;
    closed = true;
    for (const resolve of waiting.splice(0)) resolve(undefined);
    lines.close();
  };
  lines.on('line', (line) => {
    const resolve = waiting.shift();
    if (resolve) resolve(line);
    else buffered.push(line);
  });
  lines.once('close', end);
  signal.addEventListener('abort', end, { once: true });
  return {
    next: () =>
      buffered.length > 0
        ? Promise.resolve(buffered.shift())
        : closed
          ? Promise.resolve(undefined)
          : new Promise((resolve) => waiting.push(resolve)),
    close: () => {
      signal.removeEventListener('abort', end);
      end();
    },
  };
}

/** The error a call gets when its server's request cannot be answered here. */
function cannotAnswer(command: string, request: UpstreamRequest, why: string): Error {
  return new Error(`codecall ${command} cannot answer this ${request.method} request: ${why}.`);
}

/** Asks the form of `request` at the terminal; resolves with the elicitation result. */
async function askForm(
  options: CliAskerOptions,
  request: UpstreamRequest,
  fields: FormField[],
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const { io, command } = options;
  const reader = lineReader(io, signal);
  const write = (text: string): void => void io.stderr.write(text);
  try {
    write(
      `codecall ${command}: an MCP server asks: ${shown(request.params.message)}\n` +
        `  [a]nswer, [d]ecline or [c]ancel? `,
    );
    const choice = await reader.next();
    signal.throwIfAborted();
    if (choice === undefined) return { action: 'cancel' };
    if (/^\s*d(ecline)?\s*$/i.test(choice)) return { action: 'decline' };
    if (!/^\s*a(nswer)?\s*$/i.test(choice)) return { action: 'cancel' };
    const content: Record<string, unknown> = {};
    for (const field of fields) {
      let attempts = 0;
      for (;;) {
        write(promptOf(field));
        const line = await reader.next();
        signal.throwIfAborted();
        if (line === undefined) return { action: 'cancel' };
        const parsed = parseField(field, line);
        if (parsed !== undefined && 'value' in parsed) {
          content[field.name] = parsed.value;
          break;
        }
        if (parsed === undefined && field.fallback !== undefined) {
          content[field.name] = field.fallback;
          break;
        }
        if (parsed === undefined && !field.required) break;
        if (++attempts >= DEFAULT_CLI_INPUT_MAX_ATTEMPTS) {
          write(`  no valid answer after ${attempts} tries: the form is cancelled.\n`);
          return { action: 'cancel' };
        }
        write(`  ${parsed === undefined ? 'this field is required' : parsed.error}.\n`);
      }
    }
    return { action: 'accept', content };
  } finally {
    reader.close();
  }
}

/** The asker of a CLI command; see the module comment. */
export function createCliAsker(options: CliAskerOptions): UpstreamAsker {
  const { io, command } = options;
  let queue: Promise<unknown> = Promise.resolve();
  return (request, signal) => {
    if (request.method !== 'elicitation/create')
      return Promise.reject(
        cannotAnswer(
          command,
          request,
          'the command line has no model to sample with; call this tool from an MCP client that supports sampling',
        ),
      );
    if (request.params.mode === 'url')
      return Promise.reject(
        cannotAnswer(
          command,
          request,
          'it asks to open a URL, which the command line does not do; call this tool from an MCP client that supports URL elicitation',
        ),
      );
    if (!canPrompt(io))
      return Promise.reject(
        cannotAnswer(
          command,
          request,
          `the server asks "${shown(request.params.message, 200)}" and there is no terminal to ask (stdin is not a TTY); run codecall ${command} in a terminal to answer its form, or call this tool from an MCP client that supports elicitation (codecall serve)`,
        ),
      );
    const fields = fieldsOf(request.params.requestedSchema);
    if (typeof fields === 'string') return Promise.reject(cannotAnswer(command, request, fields));
    // One form at a time: requests of calls in flight together wait their turn at the terminal.
    const turn = queue.then(() => askForm(options, request, fields, signal));
    queue = turn.catch(() => undefined);
    return turn;
  };
}
