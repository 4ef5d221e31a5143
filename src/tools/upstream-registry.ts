/**
 * @module
 * The upstream registry: the pool's server connections and what is known of each. It opens them
 * from the configuration (adopting prespawned processes), tracks first connection attempts, says
 * each server's status in words safe for a client, counts calls in flight by origin so that what
 * a shared server sends (log messages, sampling and elicitation requests) reaches only the client
 * it belongs to, and fans out upstream notifications.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { closestName } from '../config/json-path.js';
import {
  DEFAULT_SERVER_CONNECT_TIMEOUT_MS,
  DEFAULT_SERVER_MAX_CONCURRENT_CALLS,
  DEFAULT_UPSTREAM_PROTOCOL,
  DEFAULT_TOOL_CALL_TIMEOUT_MS,
} from '../config/defaults.js';
import type { ServerConfig, ServerMap } from '../config/types.js';
import { assignIdentifiers } from './names.js';
import {
  ServerConnection,
  type ServerErrorEvent,
  type UpstreamNotification,
  type UpstreamRequest,
} from './server-connection.js';
import { READ_RESOURCE_TOOL } from './tool-catalog.js';
import type {
  ServerStatus,
  ToolPoolOptions,
  UpstreamAsker,
  UpstreamNotificationListener,
  UpstreamServer,
} from './tool-pool-types.js';

/** What the pool hears from its connections. */
export interface ConnectionHooks {
  onToolsChanged: () => void;
  onNotification: (server: string, notification: UpstreamNotification) => void;
  onRequest: (
    server: string,
    request: UpstreamRequest,
    signal: AbortSignal,
  ) => Promise<Record<string, unknown>>;
  onError: (event: ServerErrorEvent) => void;
}

function placeholderConfig(name: string): ServerConfig {
  return {
    name,
    transport: 'http',
    url: 'memory:',
    headers: {},
    oauth: undefined,
    deferLoading: true,
    connectTimeoutMs: DEFAULT_SERVER_CONNECT_TIMEOUT_MS,
    toolTimeoutMs: DEFAULT_TOOL_CALL_TIMEOUT_MS,
    maxConcurrentCalls: DEFAULT_SERVER_MAX_CONCURRENT_CALLS,
    protocol: DEFAULT_UPSTREAM_PROTOCOL,
    tools: {},
    allowedCallers: undefined,
    requireApproval: undefined,
    clientRules: [],
  };
}

/**
 * One connection (not yet started) per configured server and per transport given in `options`;
 * a prespawned process of a server this pool does not run is stopped now.
 */
export function createConnections(
  servers: ServerMap,
  options: ToolPoolOptions,
  hooks: ConnectionHooks,
): ServerConnection[] {
  const transports = options.transports ?? {};
  const names = [...new Set([...Object.keys(servers), ...Object.keys(transports)])];
  const connections = names.map((name) => {
    // Own keys only: a server named like an Object.prototype member must not find that member.
    const serverConfig =
      (Object.hasOwn(servers, name) ? servers[name] : undefined) ?? placeholderConfig(name);
    const transport = Object.hasOwn(transports, name) ? transports[name] : undefined;
    const prespawned = transport ? undefined : options.prespawned?.get(name);
    return new ServerConnection({
      config: serverConfig,
      ...(transport ? { transport } : {}),
      ...(prespawned ? { prespawned } : {}),
      connectTimeoutMs: options.connectTimeoutMs ?? serverConfig.connectTimeoutMs,
      ...(options.reconnect ? { reconnect: options.reconnect } : {}),
      onToolsChanged: hooks.onToolsChanged,
      onError: hooks.onError,
      onNotification: (notification) => hooks.onNotification(name, notification),
      onRequest: hooks.onRequest,
    });
  });
  const served = new Set(connections.map((c) => c.name));
  for (const [name, prespawned] of options.prespawned ?? []) {
    if (!served.has(name) || Object.hasOwn(transports, name)) prespawned.stop();
  }
  return connections;
}

/** Why a server failed, without host data (command lines, paths, URLs, stderr). */
function publicReason(connection: ServerConnection): string {
  const error = connection.lastError!;
  const reason = typeof error.details.reason === 'string' ? error.details.reason : error.message;
  const timeout = /no answer within (\d+) ms/.exec(reason);
  if (timeout) return `it did not answer within ${timeout[1]} ms`;
  if (error.code === 'SERVER_UNAVAILABLE' || /did not come back/.test(error.message))
    return 'it dropped and did not come back';
  if (connection.config.transport === 'stdio') {
    if (/ENOENT/.test(reason)) return 'its command was not found';
    if (/EACCES/.test(reason)) return 'its command may not be run';
    if (/connection closed|exited/i.test(reason)) return 'it exited before it connected';
    return 'it failed to start';
  }
  if (/\b(401|403)\b/.test(reason)) return 'it refused the credentials';
  return 'it could not be reached';
}

/** An asker lent by a direct call in flight, and the origin of that call. */
interface LentAsker {
  asker: UpstreamAsker;
  origin: string | undefined;
}

/** The pool's servers: their connections, status, calls in flight and notifications. */
export class UpstreamRegistry {
  readonly connections: readonly ServerConnection[];
  /** Servers given as a transport (`ToolPoolOptions.transports`). */
  readonly #custom: ReadonlySet<string>;
  #closed = false;
  /** First connection attempts still running (background pools), each settling after its rebuild. */
  readonly #attempts = new Map<ServerConnection, Promise<void>>();
  /** Each server's namespace in the sandbox, by server name (the names never change). */
  #namespaceByServer: ReadonlyMap<string, string> | undefined;
  /** {@link UpstreamRegistry.configWarnings} by a server's tool list. */
  readonly #warningsByList = new WeakMap<object, readonly string[]>();
  readonly #listeners = new Set<UpstreamNotificationListener>();
  /** Who answers each server's sampling/elicitation requests: the direct calls in flight, in order. */
  readonly #askers = new Map<string, LentAsker[]>();
  /** Calls and requests in flight to each server, counted by origin (`undefined`: unattributed). */
  readonly #inFlight = new Map<string, Map<string | undefined, number>>();
  /** The origin of each run's calls (see {@link UpstreamRegistry.attributeRun}). */
  readonly #runOrigins = new Map<string, string>();

  constructor(connections: readonly ServerConnection[], custom: ReadonlySet<string>) {
    this.connections = connections;
    this.#custom = custom;
  }

  /** The connection of `server`, if it is configured. */
  find(server: string): ServerConnection | undefined {
    return this.connections.find((c) => c.name === server);
  }

  /**
   * Starts every connection without waiting: `onConnected` after each that connects, `onFailed`
   * for each that fails (unless the registry closed meanwhile). Settles when every attempt has.
   */
  startInBackground(
    onConnected: () => void,
    onFailed: (connection: ServerConnection) => void,
  ): Promise<void> {
    return Promise.all(
      this.connections.map((connection) => {
        const attempt = connection
          .start()
          .then(onConnected, () => {
            // Closing the pool stops the attempts in flight: not a server's failure.
            if (!this.#closed) onFailed(connection);
          })
          .finally(() => this.#attempts.delete(connection));
        this.#attempts.set(connection, attempt);
        return attempt;
      }),
    ).then(() => undefined);
  }

  /** True while `server`'s first connection attempt runs. */
  isStarting(server: string): boolean {
    for (const connection of this.#attempts.keys()) if (connection.name === server) return true;
    return false;
  }

  /** Settles when `server`'s first connection attempt has, or when `signal` aborts. Never rejects. */
  whenStarted(server: string, signal?: AbortSignal): Promise<void> {
    let attempt: Promise<void> | undefined;
    for (const [connection, running] of this.#attempts) if (connection.name === server) attempt = running;
    if (attempt === undefined || signal?.aborted) return Promise.resolve();
    if (signal === undefined) return attempt;
    return new Promise<void>((resolve) => {
      const done = (): void => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      signal.addEventListener('abort', done, { once: true });
      void attempt.then(done);
    });
  }

  /** Why `server` failed, in words safe to show a client; undefined unless it is `failed`. */
  failureOf(server: string): string | undefined {
    const connection = this.find(server);
    return connection?.state === 'failed' && connection.lastError ? publicReason(connection) : undefined;
  }

  /**
   * The configured server that a tool name points at by its prefix (`server.` of a qualified
   * name, `namespace.` of a sandbox one; the longest when several do), whatever its state.
   */
  serverOfTool(name: string): string | undefined {
    this.#namespaceByServer ??= assignIdentifiers(this.connections.map((c) => c.name));
    let found: { server: string; prefix: number } | undefined;
    for (const [server, namespace] of this.#namespaceByServer) {
      for (const prefix of [server, namespace]) {
        if (name.length > prefix.length + 1 && name.startsWith(prefix) && name[prefix.length] === '.') {
          if (found === undefined || prefix.length > found.prefix) found = { server, prefix: prefix.length };
        }
      }
    }
    return found?.server;
  }

  /** Starts {@link UpstreamRegistry.refreshStaleTools} for the stale lists only, without waiting. */
  refreshStaleInBackground(): void {
    if (this.#closed) return;
    for (const c of this.connections) if (c.toolListStale()) void c.refreshStaleTools();
  }

  /** Re-lists the servers whose 2026-07-28 list ran out of `ttlMs`; resolves with their names. */
  refreshStaleTools(): Promise<string[]> {
    if (this.#closed) return Promise.resolve([]);
    const asked = this.connections.map(async (c) => ((await c.refreshStaleTools()) ? c.name : undefined));
    return Promise.all(asked).then((names) => names.filter((name): name is string => name !== undefined));
  }

  /** Every server with its state and declared capabilities. */
  upstreams(): UpstreamServer[] {
    return this.connections.map((c) => ({ name: c.name, state: c.state, capabilities: c.capabilities }));
  }

  /** The state of every server. */
  serverStatus(): ServerStatus[] {
    return this.connections.map((c) => {
      const status: ServerStatus = {
        name: c.name,
        transport: this.#custom.has(c.name) ? 'custom' : c.config.transport,
        state: c.state,
        toolCount: c.tools.length,
        warnings: [...c.warnings],
      };
      if (c.state === 'connected') status.warnings.push(...this.#configWarnings(c));

      if (c.lastError) {
        status.error = c.lastError.message;
        status.publicReason = publicReason(c);
      }
      if (c.stderrTail.trim() !== '') status.stderrTail = c.stderrTail;
      if (c.pid !== undefined) status.pid = c.pid;
      const era = c.era;
      if (era !== undefined) status.era = era;
      if (era === 'modern' && c.freshness) {
        const { ttlMs, cacheScope, freshUntil } = c.freshness;
        status.toolList = { ttlMs, cacheScope, freshUntil };
      }
      return status;
    });
  }

  /**
   * Configured tool names that match no tool of a connected server, worked out once per tool
   * list (the list is replaced, never changed, when the server re-lists): `serverStatus()` is
   * asked on every `search_tools` and `execute_code` answer of `codecall serve`.
   */
  #configWarnings(c: ServerConnection): readonly string[] {
    const known = this.#warningsByList.get(c.tools);
    if (known !== undefined) return known;
    const listed = new Set(c.tools.map((t) => t.name));
    if (c.capabilities?.resources) listed.add(READ_RESOURCE_TOOL);
    const warnings: string[] = [];
    for (const configured of Object.keys(c.config.tools)) {
      if (listed.has(configured)) continue;
      const suggestion = closestName(configured, listed);
      warnings.push(
        `mcpServers.${c.name}.tools.${configured} matches no tool of this server${suggestion ? ` (did you mean "${suggestion}"?)` : ''}`,
      );
    }
    this.#warningsByList.set(c.tools, warnings);
    return warnings;
  }

  /** Counts one call or request in flight to `server` for `origin`; the returned function ends it. */
  track(server: string, origin: string | undefined): () => void {
    const origins = this.#inFlight.get(server) ?? new Map<string | undefined, number>();
    this.#inFlight.set(server, origins);
    origins.set(origin, (origins.get(origin) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = (origins.get(origin) ?? 1) - 1;
      if (left > 0) origins.set(origin, left);
      else origins.delete(origin);
      if (origins.size === 0 && this.#inFlight.get(server) === origins) this.#inFlight.delete(server);
    };
  }

  /** Gives the calls of run `runId` the origin `origin`, until the returned function is called. */
  attributeRun(runId: string, origin: string): () => void {
    this.#runOrigins.set(runId, origin);
    return () => {
      if (this.#runOrigins.get(runId) === origin) this.#runOrigins.delete(runId);
    };
  }

  /** The origin {@link UpstreamRegistry.attributeRun} gave `runId`. */
  originOfRun(runId: string | undefined): string | undefined {
    return runId === undefined ? undefined : this.#runOrigins.get(runId);
  }

  /**
   * The origin of every call and request in flight to `server`, when they all have the same one;
   * undefined when none is in flight, when origins differ, or when one has none.
   */
  soleOrigin(server: string): string | undefined {
    const origins = this.#inFlight.get(server);
    if (origins?.size !== 1) return undefined;
    return origins.keys().next().value;
  }

  /** Lets `asker` answer `server`'s requests while a call of `origin` is in flight; returns the release. */
  lendAsker(server: string, asker: UpstreamAsker, origin: string | undefined): () => void {
    const lent: LentAsker = { asker, origin };
    this.#askers.set(server, [...(this.#askers.get(server) ?? []), lent]);
    return () => {
      const left = (this.#askers.get(server) ?? []).filter((a) => a !== lent);
      if (left.length > 0) this.#askers.set(server, left);
      else this.#askers.delete(server);
    };
  }

  /**
   * Routes a server's sampling/elicitation request to the client of its latest direct call, when
   * every call in flight to the server has that call's origin: a server shared by several
   * clients does not say which call a request belongs to, and one client must never see another's.
   */
  askFor(server: string, request: UpstreamRequest, signal: AbortSignal): Promise<Record<string, unknown>> {
    const origins = this.#inFlight.get(server);
    const only = origins?.size === 1 ? { origin: origins.keys().next().value } : undefined;
    const lent = only ? this.#askers.get(server)?.findLast((a) => a.origin === only.origin) : undefined;
    if (!lent) {
      const what = request.method === 'sampling/createMessage' ? 'sampling' : 'elicitation';
      const why =
        (origins?.size ?? 0) > 1
          ? 'calls of more than one client are in flight to this server, so it cannot tell whose request this is.'
          : 'it forwards them only during a direct tool call from an MCP client, not from execute_code scripts or between calls.';
      const error = new McpError(
        ErrorCode.InvalidRequest,
        `codecall cannot forward this ${what} request (${request.method}): ${why}`,
      );
      error.message = error.message.replace(/^MCP error -?\d+: /, '');
      return Promise.reject(error);
    }
    return lent.asker(request, signal);
  }

  /** Calls `listener` with what upstream servers notify; returns the unsubscribe function. */
  onNotification(listener: UpstreamNotificationListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Tells every listener what `server` notified (nothing once closed). */
  notify(server: string, notification: UpstreamNotification): void {
    if (this.#closed) return;
    for (const listener of this.#listeners) {
      try {
        listener(server, notification);
      } catch {
        // A listener's failure must not break the pool.
      }
    }
  }

  /** Closes every connection (children exit); settles when all have. */
  close(): Promise<void> {
    this.#closed = true;
    this.#listeners.clear();
    return Promise.allSettled(this.connections.map((c) => c.close())).then(() => undefined);
  }
}
