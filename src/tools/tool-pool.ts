/**
 * @module
 * The pool of configured MCP servers and the catalog of their tools. Opens every server
 * concurrently (one failing does not stop the others), follows `tools/list_changed`, reconnects
 * dropped servers, and checks every call on the host: caller policy, input schema, approval,
 * timeout, cancellation; results are normalized into plain values.
 *
 * This file keeps the class and orchestrates; each concern lives beside it: the catalog
 * (`tool-catalog.ts`), the call gate of policy, validation and approval (`call-gate.ts`), the
 * upstream registry of connections, status and origins (`upstream-registry.ts`), and the public
 * shapes (`tool-pool-types.ts`).
 */
import { z } from 'zod';
import type { CodecallConfig, ServerMap } from '../config/types.js';
import {
  DEFAULT_APPROVAL_TIMEOUT_MS,
  DEFAULT_INPUT_VALIDATOR_CACHE_MAX_ENTRIES,
} from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import type { Approver } from './approval.js';
import { CallGate } from './call-gate.js';
import {
  normalizeToolResult,
  normalizeToolResultText,
  toolErrorText,
  type RawToolResult,
} from './normalize-result.js';
import type { ServerErrorEvent } from './server-connection.js';
import type { RelayedInputRequired, RelayedInputRound } from './modern-connection.js';
import { ToolCatalog } from './tool-catalog.js';
import type {
  CatalogListener,
  CatalogTool,
  ServerStatus,
  ToolCallOptions,
  ToolPoolOptions,
  UpstreamNotificationListener,
  UpstreamRequestOptions,
  UpstreamServer,
  UpstreamToolResult,
} from './tool-pool-types.js';
import { createConnections, UpstreamRegistry } from './upstream-registry.js';

export { diffCatalogs, READ_RESOURCE_TOOL } from './tool-catalog.js';
export type {
  CatalogChange,
  CatalogListener,
  CatalogTool,
  ServerStatus,
  ToolCallOptions,
  ToolPoolOptions,
  UpstreamAsker,
  UpstreamAskContext,
  UpstreamNotificationListener,
  UpstreamRequestOptions,
  UpstreamServer,
  UpstreamToolResult,
} from './tool-pool-types.js';

const ReadResourcePageSchema = z.looseObject({ contents: z.array(z.unknown()) });

function isCodecallConfig(value: CodecallConfig | ServerMap): value is CodecallConfig {
  return (
    typeof (value as CodecallConfig).mcpServers === 'object' &&
    typeof (value as CodecallConfig).sandbox === 'object' &&
    'configDir' in value
  );
}

function closedError(what: string): CodecallError<'CLOSED'> {
  return new CodecallError('CLOSED', `Cannot call ${what}: the tool pool is closed.`);
}

/**
 * The configured MCP servers, their tools, and host-side checked tool calls.
 *
 * @example
 * ```ts
 * await using pool = await ToolPool.open(await loadConfig({ path: 'examples/codecall.json' }));
 * const members = await pool.call('expenses.get_team_members', {}, { caller: 'code_execution' });
 * ```
 */
export class ToolPool {
  readonly #upstream: UpstreamRegistry;
  readonly #catalog: ToolCatalog;
  readonly #gate: CallGate;
  #closed = false;
  #closing: Promise<void> | undefined;
  #startup: Promise<void> = Promise.resolve();

  private constructor(upstream: UpstreamRegistry, catalog: ToolCatalog, gate: CallGate) {
    this.#upstream = upstream;
    this.#catalog = catalog;
    this.#gate = gate;
  }

  /**
   * Connects to every server concurrently, each within its connect timeout, and lists tools.
   * Servers that fail are reported (`onServerError`, `serverStatus()`), not thrown, unless
   * `requireAll` is set. With `background`, resolves at once and servers join as they connect.
   */
  static async open(config: CodecallConfig | ServerMap, options: ToolPoolOptions = {}): Promise<ToolPool> {
    if (options.background && options.requireAll)
      throw new CodecallError(
        'INVALID_ARGUMENT',
        'ToolPool.open: "background" and "requireAll" exclude each other (a background pool resolves before any server started). Fix: pass one of them.',
        { details: { field: 'background' } },
      );
    const approvals = isCodecallConfig(config) ? config.approvals : undefined;
    const holder: { pool?: ToolPool } = {};
    const onError = (event: ServerErrorEvent): void => {
      try {
        options.onServerError?.(event);
      } catch {
        // A listener's failure must not break the pool.
      }
    };
    const connections = createConnections(isCodecallConfig(config) ? config.mcpServers : config, options, {
      onToolsChanged: () => {
        if (holder.pool) holder.pool.#rebuild(true);
      },
      onNotification: (server, notification) => {
        if (holder.pool) holder.pool.#upstream.notify(server, notification);
      },
      onRequest: (server, request, signal) => holder.pool!.#upstream.askFor(server, request, signal),
      onError,
    });
    const pool = new ToolPool(
      new UpstreamRegistry(connections, new Set(Object.keys(options.transports ?? {}))),
      new ToolCatalog(approvals?.requireForDestructive ?? true),
      new CallGate(
        {
          approver: options.approver,
          timeoutMs: options.approvalTimeoutMs ?? approvals?.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS,
          onDecision: options.onApprovalDecision,
        },
        options.validatorCacheMaxEntries ?? DEFAULT_INPUT_VALIDATOR_CACHE_MAX_ENTRIES,
      ),
    );
    holder.pool = pool;
    if (options.background) {
      pool.#startup = pool.#upstream.startInBackground(
        () => pool.#rebuild(true),
        (connection) => onError({ server: connection.name, phase: 'connect', error: connection.lastError! }),
      );
      return pool;
    }
    const results = await Promise.allSettled(connections.map((c) => c.start()));
    const failures: CodecallError[] = [];
    const failed: string[] = [];
    results.forEach((result, index) => {
      if (result.status === 'fulfilled') return;
      const error = connections[index]!.lastError!;
      failures.push(error);
      failed.push(connections[index]!.name);
      onError({ server: connections[index]!.name, phase: 'connect', error });
    });
    if (options.requireAll && failures.length > 0) {
      await pool.close();
      throw new CodecallError(
        'SERVER_START_FAILED',
        failures.length === 1 ? failures[0]!.message : failures.map((f) => f.message).join('\n\n'),
        { details: { servers: failed }, cause: failures[0] },
      );
    }
    pool.#rebuild(false);
    return pool;
  }

  /** The pool's approver (`ToolPoolOptions.approver`), if any. */
  get approver(): Approver | undefined {
    return this.#gate.approver;
  }

  /** Rebuilds the catalog from every server's tool list (see {@link ToolCatalog.rebuild}). */
  #rebuild(notify: boolean): void {
    if (this.#closed) return;
    this.#gate.forgetStale(this.#upstream.connections);
    this.#catalog.rebuild(this.#upstream.connections, notify);
  }

  /**
   * Settles when every server's first connection attempt has (at once unless the pool was opened
   * with `background`). Never rejects: failed servers are in {@link ToolPool.serverStatus}.
   */
  started(): Promise<void> {
    return this.#startup;
  }

  /**
   * True while `server`'s first connection attempt runs (a pool opened with `background`): its
   * tools are not in the catalog yet, and may be once it settles.
   */
  isStarting(server: string): boolean {
    return this.#upstream.isStarting(server);
  }

  /**
   * Settles when `server`'s first connection attempt has, and the catalog has taken its tools in
   * (at once when it is not starting); or when `signal` aborts. Bounded by the attempt's own
   * bound, the server's `connectTimeoutMs`. Never rejects: a server that failed is in
   * {@link ToolPool.serverStatus}.
   */
  whenStarted(server: string, signal?: AbortSignal): Promise<void> {
    return this.#upstream.whenStarted(server, signal);
  }

  /**
   * Why `server` failed, in words safe to show a client (its `publicReason` in
   * {@link ToolPool.serverStatus}); undefined unless it is `failed`.
   */
  failureOf(server: string): string | undefined {
    return this.#upstream.failureOf(server);
  }

  /**
   * The configured server that a tool name points at by its prefix (`server.` of a qualified
   * name, `namespace.` of a sandbox one; the longest when several do), whatever its state;
   * undefined when none does. For a name the catalog lacks: is its server starting, or failed?
   */
  serverOfTool(name: string): string | undefined {
    return this.#upstream.serverOfTool(name);
  }

  /**
   * Every tool of every connected server (a frozen snapshot; replaced when the catalog changes).
   * A 2026-07-28 server's list whose `ttlMs` ran out is re-read in the background (the next
   * snapshot has it; see {@link ToolPool.refreshStaleTools}).
   */
  catalog(): readonly CatalogTool[] {
    this.#upstream.refreshStaleInBackground();
    return this.#catalog.tools();
  }

  /**
   * Re-lists the tools of every 2026-07-28 server whose list's `ttlMs` has run out (clamped to
   * `DEFAULT_UPSTREAM_LIST_MIN_TTL_MS`…`DEFAULT_UPSTREAM_LIST_MAX_TTL_MS`); a fresh list makes no
   * request, and a 2025-11-25 server's list is kept until it says `list_changed`. Resolves with
   * the servers it asked.
   */
  refreshStaleTools(): Promise<string[]> {
    return this.#upstream.refreshStaleTools();
  }

  /** One tool by qualified (`server.tool`) or sandbox (`namespace.member`) name. */
  get(name: string): CatalogTool | undefined {
    return this.#catalog.entry(name)?.tool;
  }

  /** Calls `listener` with the new catalog whenever it changes; returns the unsubscribe function. */
  onCatalogChange(listener: CatalogListener): () => void {
    return this.#catalog.onChange(listener);
  }

  /** The state of every server. */
  serverStatus(): ServerStatus[] {
    return this.#upstream.serverStatus();
  }

  /**
   * Calls a tool after checking, on the host, that `caller` may call it and that `args` match
   * its input schema. Resolves with the normalized result; rejects with a `CodecallError`
   * whose message is written for the model (`TOOL_NOT_FOUND`, `TOOL_NOT_ALLOWED`,
   * `TOOL_INPUT_INVALID`, `APPROVAL_DENIED` / `APPROVAL_TIMEOUT` for a call that needs
   * approval (`requireApproval`) and did not get it, `TOOL_CALL_FAILED` for `isError` results,
   * `TOOL_TIMEOUT`, `SERVER_UNAVAILABLE`, `ABORTED`).
   */
  async call(name: string, args: unknown, options: ToolCallOptions): Promise<unknown> {
    const { tool, raw } = await this.#dispatch(name, args, options);
    if (raw.isError === true) {
      throw new CodecallError('TOOL_CALL_FAILED', `${tool.name} returned an error: ${toolErrorText(raw)}`, {
        details: { tool: tool.name, server: tool.server },
      });
    }
    return options.jsonText === true ? normalizeToolResultText(raw) : normalizeToolResult(raw);
  }

  /**
   * Calls a tool with the same host checks as {@link ToolPool.call} (caller policy, input
   * schema, timeout, cancellation) and resolves with the server's result as it came: every
   * content block (images, audio, embedded resources), `structuredContent`, `_meta` and
   * `isError` (an `isError` result resolves; it is the server's answer). For a direct
   * pass-through to an MCP client; scripts get {@link ToolPool.call}'s plain values.
   */
  async callResult(name: string, args: unknown, options: ToolCallOptions): Promise<UpstreamToolResult> {
    const { raw } = await this.#dispatch(name, args, options);
    return raw as UpstreamToolResult;
  }

  /** Checks a call at the gate and sends it to the server, tracked under its origin. */
  async #dispatch(
    name: string,
    args: unknown,
    options: ToolCallOptions,
  ): Promise<{ tool: CatalogTool; raw: RawToolResult }> {
    if (this.#closed) throw closedError(name);
    const entry = this.#catalog.entry(name);
    if (!entry) throw this.#catalog.notFound(name, (server) => this.#upstream.find(server));
    const { tool, connection } = entry;
    const input = await this.#gate.admit(tool, connection, args, options);
    const origin = options.origin ?? this.#upstream.originOfRun(options.runId);
    const release = options.asker
      ? this.#upstream.lendAsker(connection.name, options.asker, origin)
      : undefined;
    const untrack = this.#upstream.track(connection.name, origin);
    try {
      if (this.#closed) throw closedError(name);
      const timeoutMs = options.timeoutMs ?? tool.timeoutMs;
      if (entry.synthetic === 'read_resource') {
        const read = await connection.request(
          { method: 'resources/read', params: { uri: (input as { uri: string }).uri } },
          ReadResourcePageSchema,
          { signal: options.signal, timeoutMs, qualifiedName: tool.name },
        );
        const value = { contents: read.contents };
        return { tool, raw: { content: [], structuredContent: value } as RawToolResult };
      }
      const traced = options.trace?.startCall({ tool: tool.name, server: connection.name });
      let raw: RawToolResult;
      try {
        raw = await connection.call(tool.tool, input, {
          signal: options.signal,
          timeoutMs,
          qualifiedName: tool.name,
          onProgress: options.onProgress,
          trace: traced?.meta,
          // A 2026-07-28 server's input_required round belongs to this call: its own asker answers.
          asker: options.asker,
          upstreamTask: options.upstreamTask,
          relay: options.relay,
        });
      } catch (error) {
        traced?.end(error);
        throw error;
      }
      traced?.end(raw.isError === true ? new Error(toolErrorText(raw)) : undefined);
      return { tool, raw };
    } finally {
      untrack();
      release?.();
    }
  }

  /** Compiled input validators held for `server` (for tests and diagnostics). */
  validatorCount(server: string): number {
    const connection = this.#upstream.find(server);
    return connection ? this.#gate.validatorCount(connection) : 0;
  }

  /** Every configured server with its state and declared capabilities (for the gateway). */
  upstreams(): UpstreamServer[] {
    return this.#upstream.upstreams();
  }

  /**
   * Sends a request other than `tools/call` (`resources/*`, `prompts/*`, `completion/complete`,
   * `logging/setLevel`) to one server, within its tool timeout, and resolves with its result
   * checked against `resultSchema`. Rejects with a `CodecallError` (`SERVER_UNAVAILABLE`,
   * `TOOL_TIMEOUT`, `ABORTED`, `TOOL_CALL_FAILED` carrying the server's `mcpCode`).
   */
  async requestUpstream<T>(
    server: string,
    request: { method: string; params?: Record<string, unknown> },
    resultSchema: z.ZodType<T>,
    options: UpstreamRequestOptions = {},
  ): Promise<T> {
    return this.#request(server, request, resultSchema, options, undefined) as Promise<T>;
  }

  /**
   * {@link requestUpstream} for a gateway relaying a `prompts/get` or `resources/read` of its own
   * 2026-07-28 client: a 2026-07-28 server's `input_required` answer resolves as the round
   * (`resultType: "input_required"`), not answered; `relay` carries the client's capabilities,
   * answers and the upstream's state of the previous round. A 2025-11-25 server gets the request
   * as {@link requestUpstream} sends it.
   */
  async relayUpstream<T>(
    server: string,
    request: { method: string; params?: Record<string, unknown> },
    resultSchema: z.ZodType<T>,
    relay: RelayedInputRound,
    options: UpstreamRequestOptions = {},
  ): Promise<T | RelayedInputRequired> {
    return this.#request(server, request, resultSchema, options, relay);
  }

  async #request<T>(
    server: string,
    request: { method: string; params?: Record<string, unknown> },
    resultSchema: z.ZodType<T>,
    options: UpstreamRequestOptions,
    relay: RelayedInputRound | undefined,
  ): Promise<T | RelayedInputRequired> {
    if (this.#closed)
      throw new CodecallError('CLOSED', `No MCP server "${server}" (the tool pool is closed).`, {
        details: { server },
      });
    const connection = this.#upstream.find(server);
    if (!connection)
      throw new CodecallError('SERVER_UNAVAILABLE', `No MCP server "${server}".`, { details: { server } });
    const untrack = this.#upstream.track(server, options.origin);
    try {
      return await connection.request(request, resultSchema, {
        signal: options.signal,
        timeoutMs: options.timeoutMs ?? connection.config.toolTimeoutMs,
        qualifiedName: `${request.method} on MCP server "${server}"`,
        onProgress: options.onProgress,
        relay,
      });
    } finally {
      untrack();
    }
  }

  /**
   * Gives the calls of run `runId` (`ToolCallOptions.runId`, as a script's calls carry it) the
   * origin `origin`, until the returned function is called.
   */
  attributeRun(runId: string, origin: string): () => void {
    return this.#upstream.attributeRun(runId, origin);
  }

  /**
   * The origin of every call and request in flight to `server`, when they all have the same one;
   * undefined when none is in flight, when origins differ, or when one has none. What the server
   * sends meanwhile is that origin's: servers are shared, so nothing else tells whose it is.
   */
  soleOrigin(server: string): string | undefined {
    return this.#upstream.soleOrigin(server);
  }

  /** Calls `listener` with what upstream servers notify (resources, prompts, log messages). */
  onUpstreamNotification(listener: UpstreamNotificationListener): () => void {
    return this.#upstream.onNotification(listener);
  }

  /** Closes every server (children exit). Idempotent. */
  close(): Promise<void> {
    if (this.#closing) return this.#closing;
    this.#closed = true;
    this.#catalog.clearListeners();
    this.#gate.clear();
    this.#closing = this.#upstream.close();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
