/**
 * @module
 * The MCP configuration files other clients write, read as they are: keys codecall does not use
 * (Cline's `alwaysAllow`, Claude Desktop's `preferences`, VS Code's `envFile`, …) are removed
 * before validation and listed in one notice; an unknown key close to one of codecall's own keys
 * stays in, so that validation reports it with "did you mean". VS Code's `inputs` are read here
 * and their `${input:id}` references resolved from the environment by `expand-env.ts`.
 */
import { closestName, formatJsonPath } from './json-path.js';
import type { ConfigIssue } from './load-config.js';
import { configFileSchema, FOREIGN_SERVER_KEYS, FOREIGN_TOP_LEVEL_KEYS, serverSchema } from './schema.js';

/** Ignored keys named in the notice; the full list is on the configuration (`ignoredKeys`). */
const NOTICE_LISTED_KEYS = 12;

/** One VS Code input (`{"type": "promptString", "id": "token", "description": "…", "password": true}`). */
export interface ClientInput {
  id: string;
  description?: string;
}

/** What {@link readClientFormat} made of a parsed file. */
export interface ClientFormat {
  /** The document without the ignored keys and without `inputs`. */
  json: Record<string, unknown>;
  /** JSON paths of the keys removed because codecall does not use them. */
  ignoredKeys: string[];
  /** VS Code inputs by id. */
  inputs: Map<string, ClientInput>;
  /** Problems in `inputs`. */
  issues: ConfigIssue[];
}

/** The environment variable a VS Code `${input:id}` is read from: `CODECALL_INPUT_` + the id in capitals. */
export function inputEnvName(id: string): string {
  return `CODECALL_INPUT_${id.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Copies `object` without the keys to ignore, recording their paths. */
function withoutForeignKeys(
  object: Record<string, unknown>,
  path: (string | number)[],
  known: readonly string[],
  foreign: ReadonlySet<string>,
  ignored: string[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) {
    const ours = known.includes(key);
    if (!ours && (foreign.has(key) || closestName(key, known) === undefined)) {
      ignored.push(formatJsonPath([...path, key]));
      continue;
    }
    // defineProperty: a "__proto__" key stays a plain own key, for later checks to name.
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function readInputs(value: unknown, inputs: Map<string, ClientInput>, issues: ConfigIssue[]): void {
  const example = '{"type": "promptString", "id": "api_key", "description": "API key", "password": true}';
  if (!Array.isArray(value)) {
    issues.push({
      path: 'inputs',
      message: `expected an array (VS Code's format). Fix: write [${example}].`,
    });
    return;
  }
  value.forEach((input, index) => {
    const id = isRecord(input) ? input.id : undefined;
    if (typeof id !== 'string' || id === '') {
      issues.push({
        path: formatJsonPath(['inputs', index, 'id']),
        message: `each input needs a non-empty string "id". Fix: write ${example}.`,
      });
      return;
    }
    const description =
      isRecord(input) && typeof input.description === 'string' ? input.description : undefined;
    inputs.set(id, description !== undefined ? { id, description } : { id });
  });
}

/**
 * Removes from a parsed configuration the keys codecall does not use and reads VS Code's
 * `inputs`. The sections codecall alone writes (`sandbox`, `history`, …) are left strict.
 */
export function readClientFormat(json: Record<string, unknown>): ClientFormat {
  const ignoredKeys: string[] = [];
  const inputs = new Map<string, ClientInput>();
  const issues: ConfigIssue[] = [];
  const topKnown = Object.keys(configFileSchema.shape);
  const serverKnown = Object.keys(serverSchema.shape);
  const { inputs: rawInputs, ...rest } = json;
  if (rawInputs !== undefined) readInputs(rawInputs, inputs, issues);
  const out = withoutForeignKeys(rest, [], topKnown, new Set(FOREIGN_TOP_LEVEL_KEYS), ignoredKeys);
  for (const key of ['mcpServers', 'servers'] as const) {
    const servers = out[key];
    if (!isRecord(servers)) continue;
    const copy: Record<string, unknown> = {};
    for (const [name, entry] of Object.entries(servers)) {
      const value = isRecord(entry)
        ? withoutForeignKeys(entry, [key, name], serverKnown, new Set(FOREIGN_SERVER_KEYS), ignoredKeys)
        : entry;
      Object.defineProperty(copy, name, { value, enumerable: true, writable: true, configurable: true });
    }
    out[key] = copy;
  }
  return { json: out, ignoredKeys, inputs, issues };
}

/** The one notice about ignored keys, or undefined when there are none. */
export function ignoredKeysNotice(ignoredKeys: readonly string[]): string | undefined {
  if (ignoredKeys.length === 0) return undefined;
  const listed = ignoredKeys.slice(0, NOTICE_LISTED_KEYS).join(', ');
  const more =
    ignoredKeys.length > NOTICE_LISTED_KEYS ? ` and ${ignoredKeys.length - NOTICE_LISTED_KEYS} more` : '';
  return (
    `ignored ${ignoredKeys.length} key${ignoredKeys.length === 1 ? '' : 's'} that codecall does not use ` +
    `(other clients' settings): ${listed}${more}.`
  );
}
