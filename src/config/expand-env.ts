/**
 * @module
 * `${VAR}` and `${VAR:-default}` expansion in configuration strings, as Claude Code does it:
 * `${VAR}` must be set; `${VAR:-default}` uses `default` when `VAR` is unset or empty. A default
 * may itself hold expansions (`${A:-${B:-x}}`, evaluated only when used). `$${` writes a
 * literal `${`. Anything else after `${` (an unclosed brace, `${1}`, `${A:=x}`) is an error that
 * names the fix, never a silently half-expanded string. In VS Code's files, `${input:id}` is read
 * from `CODECALL_INPUT_<ID>` and `${env:NAME}` is `${NAME}`.
 */
import { CodecallError } from '../errors.js';
import { inputEnvName } from './client-formats.js';
import { formatJsonPath, type JsonPath } from './json-path.js';

const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
/** The id of a VS Code `${input:id}` or `${env:NAME}`. */
const CLIENT_ID = /[A-Za-z0-9_.-]+/y;

/** Where the text being expanded came from, for the error message. */
export interface ExpandEnvOptions {
  env: NodeJS.ProcessEnv;
  /** The configuration file (or a label for an in-memory config). */
  file: string;
  /** JSON path of the string inside the file. */
  path: JsonPath;
  /**
   * VS Code inputs declared in the file, by id. `${input:id}` is read from the environment
   * variable `inputEnvName(id)`; `${env:NAME}` is `${NAME}`. Unset: both are syntax errors.
   */
  inputs?: ReadonlyMap<string, { description?: string }>;
}

/** Expands VS Code's `${input:id}` / `${env:NAME}` starting at the id; returns the value and the end. */
function expandClientVariable(
  text: string,
  at: number,
  kind: 'input' | 'env',
  evaluate: boolean,
  options: ExpandEnvOptions & { inputs: ReadonlyMap<string, { description?: string }> },
): { value: string; end: number } {
  const start = at + 2 + kind.length + 1;
  CLIENT_ID.lastIndex = start;
  const id = CLIENT_ID.exec(text)?.[0];
  if (id === undefined || text[start + id.length] !== '}')
    throw syntaxError(text, at, `"\${${kind}:" is not followed by an id and "}"`, options);
  const variable = kind === 'env' ? id : inputEnvName(id);
  const value = options.env[variable];
  if (evaluate && value === undefined) {
    const where = formatJsonPath(options.path);
    const input = options.inputs.get(id);
    const what =
      kind === 'env'
        ? `the environment variable ${variable} is not set`
        : `codecall does not prompt for VS Code inputs${input ? '' : ` (and "inputs" declares no id ${JSON.stringify(id)})`}` +
          `${input?.description ? ` (${JSON.stringify(input.description)})` : ''}`;
    throw new CodecallError(
      'CONFIG_ENV_MISSING',
      `${options.file}: ${where} uses \${${kind}:${id}}, but ${what}. Fix: set ${variable} in the environment.`,
      { details: { file: options.file, path: where, variable } },
    );
  }
  return { value: value ?? '', end: start + id.length + 1 };
}

function syntaxError(text: string, at: number, problem: string, options: ExpandEnvOptions): CodecallError {
  const where = formatJsonPath(options.path);
  return new CodecallError(
    'CONFIG_INVALID',
    `Invalid configuration in ${options.file}:\n  - ${where}: ${problem} at character ${at + 1} of ${JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}...` : text)}. ` +
      'Fix: write ${NAME} or ${NAME:-default}; write $${ for a literal ${.',
    { details: { file: options.file, issues: [{ path: where, message: problem }] } },
  );
}

/**
 * Expands from `start` until the end of `text` or, inside a default, the `}` that closes it.
 * With `evaluate` false (a default that is not used) the text is only checked.
 */
function expandFrom(
  text: string,
  start: number,
  nested: boolean,
  evaluate: boolean,
  options: ExpandEnvOptions,
): { value: string; end: number } {
  let out = '';
  let at = start;
  while (at < text.length) {
    if (text.startsWith('$${', at)) {
      out += '${';
      at += 3;
      continue;
    }
    if (text.startsWith('${', at)) {
      NAME.lastIndex = at + 2;
      const name = NAME.exec(text)?.[0];
      if (name === undefined) throw syntaxError(text, at, '"${" is not followed by a variable name', options);
      let next = at + 2 + name.length;
      if (
        options.inputs &&
        (name === 'input' || name === 'env') &&
        text[next] === ':' &&
        text[next + 1] !== '-'
      ) {
        const client = expandClientVariable(text, at, name, evaluate, { ...options, inputs: options.inputs });
        out += client.value;
        at = client.end;
        continue;
      }
      let value: string | undefined;
      const set = options.env[name];
      if (text[next] === '}') {
        if (evaluate && set === undefined) {
          const where = formatJsonPath(options.path);
          throw new CodecallError(
            'CONFIG_ENV_MISSING',
            `${options.file}: ${where} uses \${${name}}, but the environment variable ${name} is not set. ` +
              `Fix: set ${name} in the environment, or write \${${name}:-default} to give it a default.`,
            { details: { file: options.file, path: where, variable: name } },
          );
        }
        value = set ?? '';
        next += 1;
      } else if (text.startsWith(':-', next)) {
        const useDefault = set === undefined || set === '';
        const fallback = expandFrom(text, next + 2, true, evaluate && useDefault, options);
        value = useDefault ? fallback.value : set;
        next = fallback.end + 1;
      } else if (next >= text.length) {
        throw syntaxError(text, at, `"\${${name}" is not closed with "}"`, options);
      } else {
        throw syntaxError(
          text,
          next,
          `"\${${name}${text[next]}" is not supported (only \${${name}} and \${${name}:-default})`,
          options,
        );
      }
      out += value;
      at = next;
      continue;
    }
    if (nested && text[at] === '}') return { value: out, end: at };
    out += text[at];
    at++;
  }
  if (nested) throw syntaxError(text, start, 'a "${NAME:-" default is not closed with "}"', options);
  return { value: out, end: at };
}

/**
 * Expands `${VAR}` / `${VAR:-default}` (defaults may nest) and `$${` (a literal `${`) in one string.
 *
 * @throws CodecallError `CONFIG_ENV_MISSING` when a `${VAR}` that is used has no default and
 * `VAR` is unset; `CONFIG_INVALID` for malformed `${…}`.
 */
export function expandEnvString(text: string, options: ExpandEnvOptions): string {
  if (!text.includes('${')) return text;
  return expandFrom(text, 0, false, true, options).value;
}

/**
 * Expands every string value (not keys) of a parsed JSON document, except under `skip` paths
 * (matched by key name, e.g. `inputExamples`, whose contents are data for the model). Objects
 * keep every key, `__proto__` included (as own data properties), so later checks can name it.
 */
export function expandEnvDeep(
  value: unknown,
  options: Omit<ExpandEnvOptions, 'path'> & { skipKeys?: ReadonlySet<string> },
  path: JsonPath = [],
): unknown {
  if (typeof value === 'string') return expandEnvString(value, { ...options, path });
  if (Array.isArray(value)) return value.map((item, index) => expandEnvDeep(item, options, [...path, index]));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      Object.defineProperty(out, key, {
        value: options.skipKeys?.has(key) ? item : expandEnvDeep(item, options, [...path, key]),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}
