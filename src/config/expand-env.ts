/**
 * @module
 * `${VAR}` and `${VAR:-default}` expansion in configuration strings, as Claude Code does it:
 * `${VAR}` must be set; `${VAR:-default}` uses `default` when `VAR` is unset or empty.
 */
import { CodecallError } from '../errors.js';
import { formatJsonPath, type JsonPath } from './json-path.js';

const PATTERN = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Where the text being expanded came from, for the error message. */
export interface ExpandEnvOptions {
  env: NodeJS.ProcessEnv;
  /** The configuration file (or a label for an in-memory config). */
  file: string;
  /** JSON path of the string inside the file. */
  path: JsonPath;
}

/**
 * Expands `${VAR}` / `${VAR:-default}` in one string.
 *
 * @throws CodecallError `CONFIG_ENV_MISSING` when `${VAR}` has no default and `VAR` is unset.
 */
export function expandEnvString(text: string, options: ExpandEnvOptions): string {
  if (!text.includes('${')) return text;
  return text.replace(PATTERN, (_match, name: string, fallback: string | undefined) => {
    const value = options.env[name];
    if (fallback !== undefined) return value === undefined || value === '' ? fallback : value;
    if (value === undefined) {
      const where = formatJsonPath(options.path);
      throw new CodecallError(
        'CONFIG_ENV_MISSING',
        `${options.file}: ${where} uses \${${name}}, but the environment variable ${name} is not set. ` +
          `Fix: set ${name} in the environment, or write \${${name}:-default} to give it a default.`,
        { details: { file: options.file, path: where, variable: name } },
      );
    }
    return value;
  });
}

/**
 * Expands every string value (not keys) of a parsed JSON document, except under `skip` paths
 * (matched by key name, e.g. `inputExamples`, whose contents are data for the model).
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
      out[key] = options.skipKeys?.has(key) ? item : expandEnvDeep(item, options, [...path, key]);
    }
    return out;
  }
  return value;
}
