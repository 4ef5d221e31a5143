/**
 * @module
 * `store.get(key)` / `store.set(key, value)` inside the sandbox: JSON values a script keeps
 * across runs and sessions, in the usage history store (one namespace per configuration, so
 * scripts of another configuration never see them). The sandbox calls them like tools, under
 * names no MCP tool can have (`codecall:store.get`, `codecall:store.set`): the host answers them
 * here, before the tool pool, under the same per-run limits as tool calls (count, argument
 * bytes). Every bound is a named default that `store.*` in the configuration can change, and
 * every refusal names it.
 */
import {
  DEFAULT_STORE_MAX_KEY_CHARS,
  DEFAULT_STORE_MAX_NAMESPACE_BYTES,
  DEFAULT_STORE_MAX_VALUE_BYTES,
} from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import type { ScriptValueStore } from '../store/index.js';
import type { SandboxToolBinding } from '../types.js';

/** The call `store.get(key)` makes (the sandbox's prelude uses the same name). */
export const STORE_GET_CALL = 'codecall:store.get';
/** The call `store.set(key, value)` makes (the sandbox's prelude uses the same name). */
export const STORE_SET_CALL = 'codecall:store.set';

/** The bindings that give a run `store` (the prelude installs them as `store`, not under `tools`). */
export const STORE_BINDINGS: readonly SandboxToolBinding[] = [
  { name: STORE_GET_CALL, namespace: 'codecall_store', member: 'get' },
  { name: STORE_SET_CALL, namespace: 'codecall_store', member: 'set' },
];

/** True for the names of the store's calls. */
export function isStoreCall(name: string): boolean {
  return name === STORE_GET_CALL || name === STORE_SET_CALL;
}

/** Options of {@link createScriptStore}. */
export interface ScriptStoreOptions {
  /** Where the values live (a usage history store keeps them, or any {@link ScriptValueStore}). */
  history: ScriptValueStore;
  /** Whose values these are: scripts of another namespace never see them. */
  namespace: string;
  /** @defaultValue {@link DEFAULT_STORE_MAX_VALUE_BYTES} */
  maxValueBytes?: number | undefined;
  /** @defaultValue {@link DEFAULT_STORE_MAX_NAMESPACE_BYTES} */
  maxNamespaceBytes?: number | undefined;
}

/** Answers the store calls of scripts. */
export interface ScriptStore {
  /** Answers one call of `store.get` / `store.set` with the arguments the script passed. */
  answer(name: string, args: unknown): Promise<unknown>;
}

function badKey(key: unknown): CodecallError<'INVALID_ARGUMENT'> | undefined {
  if (typeof key !== 'string' || key === '')
    return new CodecallError(
      'INVALID_ARGUMENT',
      'store.get and store.set take a key: a non-empty string, e.g. store.set("members", members).',
      { details: { field: 'key' } },
    );
  if (key.length > DEFAULT_STORE_MAX_KEY_CHARS)
    return new CodecallError(
      'INVALID_ARGUMENT',
      `A store key is at most ${DEFAULT_STORE_MAX_KEY_CHARS} characters; this one has ${key.length}. Use a shorter key.`,
      { details: { field: 'key', limit: DEFAULT_STORE_MAX_KEY_CHARS } },
    );
  return undefined;
}

/** A store over `options.history` for one namespace. */
export function createScriptStore(options: ScriptStoreOptions): ScriptStore {
  const { history, namespace } = options;
  const maxValueBytes = options.maxValueBytes ?? DEFAULT_STORE_MAX_VALUE_BYTES;
  const maxNamespaceBytes = options.maxNamespaceBytes ?? DEFAULT_STORE_MAX_NAMESPACE_BYTES;
  return {
    async answer(name, args) {
      const input = (typeof args === 'object' && args !== null ? args : {}) as Record<string, unknown>;
      const key = input.key;
      const invalid = badKey(key);
      if (invalid) throw invalid;
      const checkedKey = key as string;
      if (name === STORE_GET_CALL) {
        const json = await history.getValue(namespace, checkedKey);
        return json === undefined ? undefined : (JSON.parse(json) as unknown);
      }
      const value = input.value;
      if (value === undefined) {
        await history.setValue(namespace, checkedKey, undefined, { maxNamespaceBytes });
        return undefined;
      }
      // The value arrived as JSON from the sandbox: it stringifies back.
      const json = JSON.stringify(value);
      const bytes = Buffer.byteLength(json);
      if (bytes > maxValueBytes)
        throw new CodecallError(
          'STORE_LIMIT',
          `store.set("${checkedKey.slice(0, 80)}") refused: the value is ${bytes} bytes of JSON; the limit is ${maxValueBytes} bytes per value (store.maxValueBytes). Keep a summary, or split it over several keys.`,
          { details: { key: checkedKey, limit: maxValueBytes, configKey: 'store.maxValueBytes' } },
        );
      await history.setValue(namespace, checkedKey, json, { maxNamespaceBytes });
      return undefined;
    },
  };
}
