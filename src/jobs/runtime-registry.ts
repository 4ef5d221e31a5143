/**
 * @module
 * The named configurations a worker has, each opened once into a {@link CodecallRuntime} (MCP
 * pool, sandbox pool, search, usage history) the first time a job names it, and shared by every
 * job that names it after. Every configured MCP server must start (`requireAll`): a job that
 * would run with a server missing fails its attempt instead, and is retried. A job carries only the name: secrets stay in the worker's files and
 * environment. A configuration that fails to open is opened again by the next job that needs it.
 */
import type { CodecallConfig, LoadConfigOptions } from '../config/index.js';
import { CodecallError } from '../errors.js';
import { CodecallRuntime, type CodecallRuntimeOptions } from '../execute/index.js';
import type { UsageHistoryStore } from '../store/index.js';

/** Where one named configuration comes from: a file path, load options, or a resolved configuration. */
export type NamedConfigSource = string | LoadConfigOptions | CodecallConfig;

/** Options of {@link RuntimeRegistry}. */
export interface RuntimeRegistryOptions {
  /** Configurations by name (`default` is what a job that names none gets). */
  configs: Record<string, NamedConfigSource>;
  /** Environment used to expand `${VAR}` in the files. @defaultValue `process.env` */
  env?: NodeJS.ProcessEnv;
  /** Working directory for relative paths. @defaultValue `process.cwd()` */
  cwd?: string;
  /** Options of every runtime opened (history store, sandbox, server error hook…). */
  runtimeOptions?: Omit<CodecallRuntimeOptions, 'config' | 'load'>;
  /**
   * The usage-history store of each configuration (e.g. one shared by the fleet in Redis).
   * @defaultValue each configuration's own `history` setting (the local SQLite store)
   */
  history?: (name: string) => Promise<UsageHistoryStore>;
  /** Open runtimes handed in (e.g. `codecall serve`'s own); borrowed, never closed here. */
  borrowed?: Record<string, CodecallRuntime>;
}

function isResolved(source: NamedConfigSource): source is CodecallConfig {
  return typeof source === 'object' && 'mcpServers' in source && 'sandbox' in source && 'configDir' in source;
}

/** Named configurations, opened lazily, closed together. */
export class RuntimeRegistry {
  readonly #options: RuntimeRegistryOptions;
  readonly #opening = new Map<string, Promise<CodecallRuntime>>();
  #closing: Promise<void> | undefined;

  constructor(options: RuntimeRegistryOptions) {
    this.#options = options;
  }

  /** Names a job may use. */
  names(): string[] {
    return [
      ...new Set([...Object.keys(this.#options.borrowed ?? {}), ...Object.keys(this.#options.configs)]),
    ];
  }

  /** True when `name` is a configuration of this registry. */
  has(name: string): boolean {
    return Object.hasOwn(this.#options.borrowed ?? {}, name) || Object.hasOwn(this.#options.configs, name);
  }

  /**
   * The runtime of `name`, opening it on first use. Throws `JOB_CONFIG_UNKNOWN` for a name this
   * worker does not have, and whatever opening throws (`CONFIG_*`, `SERVER_START_FAILED`…).
   */
  async get(name: string): Promise<CodecallRuntime> {
    if (this.#closing) throw new CodecallError('CLOSED', 'The worker is shutting down.');
    const borrowed = this.#options.borrowed?.[name];
    if (borrowed && Object.hasOwn(this.#options.borrowed!, name)) return borrowed;
    if (!Object.hasOwn(this.#options.configs, name)) {
      throw new CodecallError(
        'JOB_CONFIG_UNKNOWN',
        `No configuration named "${name}" on this worker; it has: ${this.names().join(', ') || '(none)'}. ` +
          `Submit the job with one of those as "config", or start the worker with --config ${name}=<path>.`,
        { details: { config: name, available: this.names() } },
      );
    }
    let opening = this.#opening.get(name);
    if (!opening) {
      opening = this.#open(name, this.#options.configs[name]!);
      this.#opening.set(name, opening);
      opening.catch(() => this.#opening.delete(name));
    }
    return opening;
  }

  async #open(name: string, source: NamedConfigSource): Promise<CodecallRuntime> {
    const env = this.#options.env ?? process.env;
    const cwd = this.#options.cwd ?? process.cwd();
    // A job never runs with a server missing: that is an infrastructure fault, retried.
    const given = this.#options.runtimeOptions ?? {};
    const history = this.#options.history ? await this.#options.history(name) : undefined;
    const base = { ...given, tools: { requireAll: true, ...given.tools }, ...(history ? { history } : {}) };
    try {
      if (typeof source === 'string')
        return await CodecallRuntime.open({ ...base, load: { path: source, cwd, env } });
      if (isResolved(source)) return await CodecallRuntime.open({ ...base, config: source });
      return await CodecallRuntime.open({ ...base, load: { cwd, env, ...source } });
    } catch (error) {
      await history?.close().catch(() => {});
      throw error;
    }
  }

  /** Closes every runtime this registry opened (borrowed ones stay open). Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const opened = await Promise.allSettled([...this.#opening.values()]);
      await Promise.allSettled(
        opened.flatMap((result) => (result.status === 'fulfilled' ? [result.value.close()] : [])),
      );
    })();
    return this.#closing;
  }
}
