/**
 * @module
 * Validates a tool call's arguments against the tool's `inputSchema` (ajv) before dispatch, with
 * messages that name the field and what was expected. Schemas come from servers and are
 * untrusted: one that does not compile disables validation for that tool (the server still
 * validates), it never breaks the pool.
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import { closestName } from '../config/json-path.js';
import { CodecallError } from '../errors.js';
import type { JsonSchema } from '../types.js';

/** Validation errors listed in one message; the rest are counted. */
export const MAX_REPORTED_INPUT_ERRORS = 5;

type FormatsPlugin = (ajv: Ajv | Ajv2020) => unknown;
const addFormats: FormatsPlugin =
  (formatsModule as unknown as { default?: FormatsPlugin }).default ??
  (formatsModule as unknown as FormatsPlugin);

const AJV_OPTIONS: Options = { strict: false, allErrors: true, logger: false, validateSchema: false };

let draft07: Ajv | undefined;
let draft2020: Ajv2020 | undefined;

function ajvFor(schema: JsonSchema): Ajv | Ajv2020 {
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (/2020-12|2019-09/.test(dialect)) {
    if (!draft2020) {
      draft2020 = new Ajv2020(AJV_OPTIONS);
      addFormats(draft2020);
    }
    return draft2020;
  }
  if (!draft07) {
    draft07 = new Ajv(AJV_OPTIONS);
    addFormats(draft07);
  }
  return draft07;
}

/** A compiled validator for one tool, or why there is none. */
export type InputValidator =
  | { ok: true; validate: (args: unknown) => void }
  | { ok: false; reason: string; validate: (args: unknown) => void };

/**
 * Compiles `schema` for the tool `toolName`. The returned `validate` throws a model-readable
 * `TOOL_INPUT_INVALID` error; when the schema does not compile it only checks that the
 * arguments are an object.
 */
export function compileInputValidator(toolName: string, schema: JsonSchema | undefined): InputValidator {
  const requireObject = (args: unknown): void => {
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      throw inputError(toolName, [`arguments must be an object, got ${describe(args)}`], args);
    }
  };
  if (schema === undefined || Object.keys(schema).length === 0) return { ok: true, validate: requireObject };
  let compiled: ValidateFunction;
  try {
    // A copy without `$schema` and `$id`: dialect is chosen above, and ids must not collide
    // across servers inside the shared ajv instance.
    const { $schema: _dialect, $id: _id, ...rest } = schema;
    compiled = ajvFor(schema).compile(rest);
  } catch (error) {
    return { ok: false, reason: (error as Error).message, validate: requireObject };
  }
  const properties =
    typeof schema.properties === 'object' && schema.properties !== null ? Object.keys(schema.properties) : [];
  return {
    ok: true,
    validate(args: unknown): void {
      requireObject(args);
      if (compiled(args)) return;
      const errors = compiled.errors ?? [];
      throw inputError(
        toolName,
        errors.map((e) => describeError(e, properties)),
        args,
      );
    },
  };
}

function inputError(toolName: string, problems: string[], _args: unknown): CodecallError {
  const unique = [...new Set(problems)];
  const shown = unique.slice(0, MAX_REPORTED_INPUT_ERRORS);
  const more = unique.length > shown.length ? `; and ${unique.length - shown.length} more` : '';
  return new CodecallError(
    'TOOL_INPUT_INVALID',
    `Invalid arguments for ${toolName}: ${shown.join('; ')}${more}. Check the tool's declaration and fix the arguments.`,
    { details: { tool: toolName, problems: unique } },
  );
}

function fieldPath(instancePath: string): string {
  if (instancePath === '') return '';
  return instancePath
    .split('/')
    .slice(1)
    .map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((out, part) => {
      if (/^\d+$/.test(part)) return `${out}[${part}]`;
      if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(part)) return out === '' ? part : `${out}.${part}`;
      return `${out}[${JSON.stringify(part)}]`;
    }, '');
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value) ?? String(value);
  return `${typeof value} ${text.length > 40 ? `${text.slice(0, 40)}…` : text}`;
}

function describeError(error: ErrorObject, rootProperties: string[]): string {
  const field = fieldPath(error.instancePath);
  const at = field === '' ? 'arguments' : `"${field}"`;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': {
      const missing = String(params.missingProperty);
      const full = field === '' ? missing : `${field}.${missing}`;
      return `missing required field "${full}"`;
    }
    case 'additionalProperties': {
      const extra = String(params.additionalProperty);
      const suggestion = field === '' ? closestName(extra, rootProperties) : undefined;
      return `unknown field "${field === '' ? extra : `${field}.${extra}`}"${suggestion ? ` (did you mean "${suggestion}"?)` : ''}`;
    }
    case 'type':
      return `${at} must be ${String(params.type)}`;
    case 'enum':
      return `${at} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `${at} must be ${JSON.stringify(params.allowedValue)}`;
    default:
      return `${at} ${error.message ?? 'is invalid'}`;
  }
}
