/**
 * @module
 * Validates a tool call's arguments against the tool's `inputSchema` (ajv) before dispatch, with
 * messages that name the field and what was expected. Schemas come from servers and are
 * untrusted, and the arguments from scripts, so validation is bounded:
 *
 * - `pattern` and `patternProperties` run on a linear-time engine (RE2 semantics, re2js), never
 *   on V8's backtracking one: `^(\w+\s?)*$` against a crafted string costs milliseconds. A
 *   pattern RE2 cannot run (lookaround, backreferences, too large) is skipped (that one keyword
 *   always passes; the server still validates) and named in the validator's `warnings`.
 * - A schema that does not compile disables validation for that tool (the server still
 *   validates); a schema that refers to itself without descending into the arguments
 *   (`{"$ref":"#"}`, `allOf` cycles) would recurse forever, so it is treated the same way, with
 *   the reason. Arguments nested too deeply to validate are refused with a clear message.
 * - Compiled validators live in one {@link InputValidatorCache} per server: at most
 *   `maxEntries` of them, and the cache (with its ajv instances, which never forget a compiled
 *   schema) is dropped whenever that server's tool list changes.
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import { closestName } from '../config/json-path.js';
import {
  DEFAULT_INPUT_VALIDATOR_CACHE_MAX_ENTRIES,
  DEFAULT_REGEX_MAX_PROGRAM_SIZE,
} from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import type { JsonSchema } from '../types.js';
import { compileLinearRegex, LinearRegexError, type LinearRegex } from '../util/linear-regex.js';

/** Validation errors listed in one message; the rest are counted. */
export const MAX_REPORTED_INPUT_ERRORS = 5;
/** Schema nodes visited when looking for a `$ref` cycle that never descends into the arguments. */
const MAX_REF_SCAN_NODES = 100_000;
/** Warnings kept per validator. */
const MAX_VALIDATOR_WARNINGS = 20;

type FormatsPlugin = (ajv: Ajv | Ajv2020) => unknown;
const addFormats: FormatsPlugin =
  (formatsModule as unknown as { default?: FormatsPlugin }).default ??
  (formatsModule as unknown as FormatsPlugin);

/** A compiled validator for one tool, or why there is none. */
export type InputValidator =
  | { ok: true; validate: (args: unknown) => void; warnings: string[] }
  | { ok: false; reason: string; validate: (args: unknown) => void; warnings: string[] };

/** Options of {@link InputValidatorCache}. */
export interface InputValidatorCacheOptions {
  /**
   * Compiled validators kept; past this the least recently used is dropped, and past twice this
   * many compiles the ajv instances are replaced (they keep every schema they compiled).
   * @defaultValue {@link DEFAULT_INPUT_VALIDATOR_CACHE_MAX_ENTRIES}
   */
  maxEntries?: number;
  /**
   * Largest compiled `pattern` accepted (RE2 program size); larger ones are skipped with a warning.
   * @defaultValue {@link DEFAULT_REGEX_MAX_PROGRAM_SIZE}
   */
  maxPatternProgramSize?: number;
}

/** Collects what the regex engine skipped during one compile. */
interface CompileNotes {
  skipped: string[];
}

/**
 * A tool input schema with the keywords servers' schemas use most (types, enum, pattern, format,
 * bounds, arrays, required, additionalProperties): compiling it once runs most of ajv's code
 * generator, which a process otherwise compiles and warms at its first real validator.
 */
const WARM_UP_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', pattern: '^[a-z]+-\\d+$', minLength: 1, maxLength: 64 },
    kind: { type: 'string', enum: ['a', 'b'] },
    at: { type: 'string', format: 'date-time' },
    count: { type: 'integer', minimum: 0, maximum: 1000 },
    ratio: { type: 'number' },
    on: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' }, maxItems: 10 },
    filter: {
      type: 'object',
      properties: { name: { type: ['string', 'null'] } },
      additionalProperties: false,
    },
  },
  required: ['id'],
  additionalProperties: false,
};

/** The JSON Schema dialects {@link InputValidatorCache} compiles with (one ajv class each). */
const WARM_UP_DIALECTS = [
  'http://json-schema.org/draft-07/schema#',
  'https://json-schema.org/draft/2020-12/schema',
] as const;

/**
 * Compiles and runs a representative validator in a throwaway cache for `dialect` (both when
 * absent), so that the first real tool call of the process compiles its validator warm (a
 * process's first ajv compile costs several times a later one: ~30 ms for five small schemas
 * cold, under 10 ms warm). For a caller with idle time before its first call, e.g. while its MCP
 * servers start (`codecall exec`).
 */
export function warmInputValidation(dialect?: (typeof WARM_UP_DIALECTS)[number]): void {
  for (const $schema of dialect === undefined ? WARM_UP_DIALECTS : [dialect]) {
    new InputValidatorCache({ maxEntries: 1 })
      .get('warm-up', { ...WARM_UP_SCHEMA, $schema })
      .validate({ id: 'a-1', kind: 'a', count: 1, tags: ['x'], filter: { name: null } });
  }
}

/** The dialects {@link warmInputValidation} takes, in the order worth warming them. */
export const INPUT_VALIDATION_DIALECTS: readonly (typeof WARM_UP_DIALECTS)[number][] = WARM_UP_DIALECTS;

/**
 * The compiled input validators of one server's tools, bounded, with ajv instances of its own.
 * `clear()` drops everything (call it when the server's tool list changes).
 *
 * @example
 * ```ts
 * const cache = new InputValidatorCache();
 * cache.get('s.t', { type: 'object', properties: { id: { type: 'string', pattern: '^[a-z]+$' } } }).validate({ id: 'abc' });
 * ```
 */
export class InputValidatorCache {
  readonly #maxEntries: number;
  readonly #maxProgramSize: number;
  #entries = new Map<string, { schema: JsonSchema | undefined; validator: InputValidator }>();
  #draft07: Ajv | undefined;
  #draft2020: Ajv2020 | undefined;
  #compiles = 0;
  #notes: CompileNotes | undefined;

  constructor(options: InputValidatorCacheOptions = {}) {
    this.#maxEntries = Math.max(1, options.maxEntries ?? DEFAULT_INPUT_VALIDATOR_CACHE_MAX_ENTRIES);
    this.#maxProgramSize = options.maxPatternProgramSize ?? DEFAULT_REGEX_MAX_PROGRAM_SIZE;
  }

  /** Validators held now. */
  get size(): number {
    return this.#entries.size;
  }

  /** The validator of `toolName` for `schema` (compiled on first use, or when the schema object changed). */
  get(toolName: string, schema: JsonSchema | undefined): InputValidator {
    const cached = this.#entries.get(toolName);
    if (cached && cached.schema === schema) {
      // Most recently used last.
      this.#entries.delete(toolName);
      this.#entries.set(toolName, cached);
      return cached.validator;
    }
    const validator = this.compile(toolName, schema);
    this.#entries.delete(toolName);
    this.#entries.set(toolName, { schema, validator });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
    return validator;
  }

  /** Drops every validator and the ajv instances. */
  clear(): void {
    this.#entries = new Map();
    this.#draft07 = undefined;
    this.#draft2020 = undefined;
    this.#compiles = 0;
  }

  /** Compiles `schema` without caching the validator (its ajv instance still counts the compile). */
  compile(toolName: string, schema: JsonSchema | undefined): InputValidator {
    const requireObject = (args: unknown): void => {
      if (typeof args !== 'object' || args === null || Array.isArray(args)) {
        throw inputError(toolName, [`arguments must be an object, got ${describe(args)}`], args);
      }
    };
    if (schema === undefined || Object.keys(schema).length === 0)
      return { ok: true, validate: requireObject, warnings: [] };
    const cycle = findInPlaceRefCycle(schema);
    if (cycle !== undefined) {
      return {
        ok: false,
        reason: `the schema refers to itself without descending into the arguments (${cycle}), so validating would never end; the host does not validate this tool's arguments (the server still does)`,
        validate: requireObject,
        warnings: [],
      };
    }
    if (++this.#compiles > 2 * this.#maxEntries) {
      // ajv keeps every compiled schema and pattern in its instance: start new ones.
      this.#draft07 = undefined;
      this.#draft2020 = undefined;
      this.#compiles = 1;
    }
    let compiled: ValidateFunction;
    const notes: CompileNotes = { skipped: [] };
    this.#notes = notes;
    try {
      // A copy without `$schema` and `$id`: dialect is chosen above, and ids must not collide
      // across tools inside the shared ajv instance.
      const { $schema: _dialect, $id: _id, ...rest } = schema;
      compiled = this.#ajvFor(schema).compile(rest);
    } catch (error) {
      const message =
        error instanceof RangeError ? 'it nests or refers to itself too deeply' : (error as Error).message;
      return { ok: false, reason: message, validate: requireObject, warnings: notes.skipped };
    } finally {
      this.#notes = undefined;
    }
    const properties =
      typeof schema.properties === 'object' && schema.properties !== null
        ? Object.keys(schema.properties)
        : [];
    return {
      ok: true,
      warnings: notes.skipped,
      validate(args: unknown): void {
        requireObject(args);
        let valid: boolean;
        try {
          valid = compiled(args) as boolean;
        } catch (error) {
          if (error instanceof RangeError) {
            throw inputError(
              toolName,
              ["arguments nest too deeply to validate against the tool's schema; pass flatter data"],
              args,
            );
          }
          throw error;
        }
        if (valid) return;
        const errors = compiled.errors ?? [];
        throw inputError(
          toolName,
          errors.map((e) => describeError(e, properties)),
          args,
        );
      },
    };
  }

  #ajvFor(schema: JsonSchema): Ajv | Ajv2020 {
    const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
    if (/2020-12|2019-09/.test(dialect)) {
      if (!this.#draft2020) {
        this.#draft2020 = new Ajv2020(this.#ajvOptions());
        addFormats(this.#draft2020);
      }
      return this.#draft2020;
    }
    if (!this.#draft07) {
      this.#draft07 = new Ajv(this.#ajvOptions());
      addFormats(this.#draft07);
    }
    return this.#draft07;
  }

  #ajvOptions(): Options {
    const maxProgramSize = this.#maxProgramSize;
    const engine = (pattern: string): LinearRegex => {
      try {
        return compileLinearRegex(pattern, { dialect: 'ecma', maxProgramSize });
      } catch (error) {
        if (!(error instanceof LinearRegexError)) throw error;
        const notes = this.#notes;
        if (notes && notes.skipped.length < MAX_VALIDATOR_WARNINGS) {
          notes.skipped.push(
            `pattern ${JSON.stringify(pattern.length > 80 ? `${pattern.slice(0, 80)}…` : pattern)} is not checked on the host: ${error.problem}`,
          );
        }
        const text = `/${pattern}/ (skipped)`;
        return { source: pattern, test: () => true, toString: () => text };
      }
    };
    // `code` names the engine in standalone code, which codecall never generates.
    const regExp = Object.assign(engine, { code: 'codecall.linearRegExp' });
    return {
      strict: false,
      allErrors: true,
      logger: false,
      validateSchema: false,
      code: { regExp: regExp as unknown as RegExpEngine },
    };
  }
}

/**
 * Compiles `schema` for the tool `toolName` on a cache of its own. The returned `validate`
 * throws a model-readable `TOOL_INPUT_INVALID` error; when the schema does not compile it only
 * checks that the arguments are an object. Prefer one {@link InputValidatorCache} per server.
 */
export function compileInputValidator(toolName: string, schema: JsonSchema | undefined): InputValidator {
  return new InputValidatorCache({ maxEntries: 1 }).compile(toolName, schema);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keywords whose subschemas apply to the same value (no descent into the arguments). */
const IN_PLACE_SINGLE = ['not', 'if', 'then', 'else'] as const;
const IN_PLACE_LISTS = ['allOf', 'anyOf', 'oneOf'] as const;

function resolveLocal(root: unknown, pointer: string): unknown {
  if (pointer === '#' || pointer === '') return root;
  if (!pointer.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of pointer.slice(2).split('/')) {
    let part: string;
    try {
      part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    if (Array.isArray(node)) node = node[Number(part)];
    else if (isRecord(node) && Object.hasOwn(node, part)) node = node[part];
    else return undefined;
  }
  return node;
}

/**
 * A local `$ref` cycle reachable from the root that never passes a keyword descending into the
 * data (`properties`, `items`…), such as `{"$ref":"#"}` or `a: {allOf:[{$ref:b}]}, b: {$ref:a}`:
 * ajv compiles it, and every validation recurses until the stack overflows. Returns the cycle
 * as text, or undefined. Bounded by {@link MAX_REF_SCAN_NODES}.
 */
function findInPlaceRefCycle(root: JsonSchema): string | undefined {
  let budget = MAX_REF_SCAN_NODES;
  const refsOf = new Map<string, string[]>();
  const inPlaceRefs = (pointer: string): string[] => {
    const known = refsOf.get(pointer);
    if (known) return known;
    const refs: string[] = [];
    refsOf.set(pointer, refs);
    const stack: unknown[] = [resolveLocal(root, pointer)];
    while (stack.length > 0 && budget-- > 0) {
      const node = stack.pop();
      if (!isRecord(node)) continue;
      if (typeof node.$ref === 'string' && node.$ref.startsWith('#')) refs.push(node.$ref);
      for (const key of IN_PLACE_SINGLE) if (isRecord(node[key])) stack.push(node[key]);
      for (const key of IN_PLACE_LISTS) {
        const list = node[key];
        if (Array.isArray(list)) for (const item of list) stack.push(item);
      }
    }
    return refs;
  };
  // Iterative depth-first search over pointers; grey = on the current path.
  const state = new Map<string, 'grey' | 'black'>();
  const visit = (start: string): string | undefined => {
    const path: string[] = [start];
    const pending: string[][] = [[...inPlaceRefs(start)]];
    state.set(start, 'grey');
    while (path.length > 0 && budget > 0) {
      const next = pending[pending.length - 1]!.pop();
      if (next === undefined) {
        state.set(path.pop()!, 'black');
        pending.pop();
        continue;
      }
      const seen = state.get(next);
      if (seen === 'grey') return [...path.slice(path.indexOf(next)), next].join(' → ');
      if (seen === undefined) {
        state.set(next, 'grey');
        path.push(next);
        pending.push([...inPlaceRefs(next)]);
      }
    }
    return undefined;
  };
  // Every local pointer a $ref names could be entered from the data; start from the root and
  // from each referenced pointer.
  const starts = ['#'];
  const scan: unknown[] = [root];
  let scanned = 0;
  while (scan.length > 0 && scanned++ < MAX_REF_SCAN_NODES) {
    const node = scan.pop();
    if (Array.isArray(node)) scan.push(...node);
    else if (isRecord(node)) {
      if (typeof node.$ref === 'string' && node.$ref.startsWith('#')) starts.push(node.$ref);
      for (const value of Object.values(node))
        if (typeof value === 'object' && value !== null) scan.push(value);
    }
  }
  for (const start of starts) {
    if (state.has(start)) continue;
    const found = visit(start);
    if (found) return found;
  }
  return undefined;
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
