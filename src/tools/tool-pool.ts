/**
 * @module
 * The pool of configured MCP servers and the catalog of their tools. Opens every server
 * concurrently (one failing does not stop the others), follows `tools/list_changed`, reconnects
 * dropped servers, and checks every call on the host: caller policy, input schema, approval,
 * timeout, cancellation; results are normalized into plain values.
 */
import {
  ErrorCode,
  McpError,
  type CallToolResult,
  type Progress,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { closestName } from '../config/json-path.js';
import type {
  CodecallConfig,
  RequireApproval,
  ServerConfig,
  ServerMap,
  ToolPolicyConfig,
} from '../config/types.js';
import {
  DEFAULT_APPROVAL_TIMEOUT_MS,
  DEFAULT_SERVER_CONNECT_TIMEOUT_MS,
  DEFAULT_SERVER_MAX_CONCURRENT_CALLS,
  DEFAULT_TOOL_CALL_TIMEOUT_MS,
  DEFAULT_INPUT_VALIDATOR_CACHE_MAX_ENTRIES,
} from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import { NameIndex } from '../util/edit-distance.js';
import type { JsonSchema, ToolCaller } from '../types.js';
import { assignIdentifiers, qualifiedName } from './names.js';
import {
  awaitApproval,
  needsApproval,
  resolveRequireApproval,
  type ApprovalRecord,
  type Approver,
  type RequireApprovalSource,
} from './approval.js';
import {
  normalizeToolResult,
  normalizeToolResultText,
  toolErrorText,
  type RawToolResult,
} from './normalize-result.js';
import {
  assertCallerAllowed,
  resolveAllowedCallers,
  type AllowedCallersSource,
  type ToolAnnotations,
} from './policy.js';
import {
  ServerConnection,
  type ReconnectOptions,
  type ServerErrorEvent,
  type ServerState,
  type TransportFactory,
  type UpstreamNotification,
  type UpstreamRequest,
  type ListedTool,
} from './server-connection.js';
import type { PrespawnedServer } from './prespawn.js';
import { InputValidatorCache, type InputValidator } from './validate-input.js';

/** Input-schema warnings (skipped patterns, schemas that cannot be checked) kept per server. */
const MAX_VALIDATOR_WARNINGS_PER_SERVER = 50;

/** One tool of the catalog. */
export interface CatalogTool {
  /** Qualified name `server.tool`: what the host dispatches on and `callTool` accepts. */
  name: string;
  /** The server's key in `mcpServers`. */
  server: string;
  /** The tool's original MCP name. */
  tool: string;
  /** Identifier-safe server name inside the sandbox: `tools.<namespace>.<member>`. */
  namespace: string;
  /** Identifier-safe tool name inside the sandbox. */
  member: string;
  title?: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations?: ToolAnnotations;
  /** Who may call it (enforced on every call). */
  allowedCallers: ToolCaller[];
  /** Where `allowedCallers` came from: tool config, server config, annotations or the default. */
  allowedCallersSource: AllowedCallersSource;
  /**
   * Whether a call waits for approval: always, never, or when its arguments match a rule.
   * Absent (a tool described by hand): never.
   */
  requireApproval?: RequireApproval;
  /** Where `requireApproval` came from: tool config, server config, annotations or the default. */
  requireApprovalSource?: RequireApprovalSource;
  /** Kept out of the model's initial context; found through search. */
  deferLoading: boolean;
  /** Argument examples from the configuration. */
  inputExamples?: Record<string, unknown>[];
  /** Time one call may take. */
  timeoutMs: number;
}

/** Options of {@link ToolPool.open}. */
export interface ToolPoolOptions {
  /** Told when a server fails to start, drops, or gives up reconnecting. */
  onServerError?: (event: ServerErrorEvent) => void;
  /**
   * Overrides every server's `connectTimeoutMs`.
   * @defaultValue each server's `connectTimeoutMs` ({@link DEFAULT_SERVER_CONNECT_TIMEOUT_MS})
   */
  connectTimeoutMs?: number;
  /**
   * Transports by server name, replacing the configured transport (in-memory servers in tests).
   * A name absent from the configuration adds a server with default policy.
   */
  transports?: Record<string, TransportFactory>;
  /**
   * Throw `SERVER_START_FAILED` (after closing the others) when any server fails to start.
   * @defaultValue false: failed servers are reported through `onServerError` and `serverStatus()`
   */
  requireAll?: boolean;
  /**
   * Resolve at once, before any server has connected: each server joins the catalog when it
   * connects (catalog listeners are told), and {@link ToolPool.started} settles when every first
   * attempt has. For `codecall serve`, which must answer its client at once. Not with `requireAll`.
   * @defaultValue false: `open` waits until every server connected or failed
   */
  background?: boolean;
  /** Reconnection bounds (defaults: `DEFAULT_RECONNECT_*`). */
  reconnect?: Partial<ReconnectOptions>;
  /**
   * Compiled input validators kept per server (dropped with the server's tools when its list changes).
   * @defaultValue {@link DEFAULT_INPUT_VALIDATOR_CACHE_MAX_ENTRIES}
   */
  validatorCacheMaxEntries?: number;
  /**
   * Decides calls that need approval (`requireApproval`), unless a call brings its own.
   * @defaultValue none: such calls are denied with a message saying how to allow them
   */
  approver?: Approver;
  /**
   * Time a call waits for approval.
   * @defaultValue the configuration's `approvals.timeoutMs`, else {@link DEFAULT_APPROVAL_TIMEOUT_MS}
   */
  approvalTimeoutMs?: number;
  /** Told every approval decision (the audit trail); errors it throws are ignored. */
  onApprovalDecision?: (record: ApprovalRecord) => void;
  /**
   * Processes of stdio servers started ahead of time, by server name (`prespawnStdioServers`,
   * `codecall exec`): each server's first connection adopts its process instead of spawning
   * one. The pool stops any it does not adopt.
   */
  prespawned?: ReadonlyMap<string, PrespawnedServer>;
}

/** Options of {@link ToolPool.call}. */
export interface ToolCallOptions {
  /** Who is calling; checked against the tool's `allowedCallers`. */
  caller: ToolCaller;
  /** Cancels the call (`notifications/cancelled` is sent to the server). */
  signal?: AbortSignal;
  /**
   * Time the call may take.
   * @defaultValue the tool's `timeoutMs`, else the server's `toolTimeoutMs`
   */
  timeoutMs?: number;
  /**
   * Decides this call if it needs approval.
   * @defaultValue the pool's `approver`
   */
  approver?: Approver | undefined;
  /** The run that made the call, for the approval request and the audit trail. */
  runId?: string | undefined;
  /** 0-based index of the call among its run's calls, for the approval request and the audit trail. */
  callIndex?: number | undefined;
  /** The script line (1-based) that made the call, for the approval request and the audit trail. */
  line?: number | undefined;
  /** Told of the server's progress notifications for this call (direct pass-through). */
  onProgress?: (progress: Progress) => void;
  /**
   * Answers the server's sampling and elicitation requests while this call is in flight (the
   * gateway's MCP client). Without one, such a request is refused with a message saying why.
   */
  asker?: UpstreamAsker;
  /**
   * Whom the call is for (one client of a gateway): what its server sends while it is in flight
   * (log messages, sampling and elicitation requests) is that origin's only when no call of
   * another origin is in flight to the server (see {@link ToolPool.soleOrigin}).
   * @defaultValue the origin {@link ToolPool.attributeRun} gave `runId`, else none (unattributed)
   */
  origin?: string | undefined;
  /**
   * Resolve a result that is one JSON-looking text block as a `JsonText` (unparsed), for a
   * caller that hands it to a sandbox which parses it itself; other results are values as usual.
   * @defaultValue false
   */
  jsonText?: boolean | undefined;
}

/** Answers an upstream server's `sampling/createMessage` or `elicitation/create` request. */
export type UpstreamAsker = (
  request: UpstreamRequest,
  signal: AbortSignal,
) => Promise<Record<string, unknown>>;

/** An upstream server as the gateway sees it. */
export interface UpstreamServer {
  /** The server's key in `mcpServers`. */
  name: string;
  state: ServerState;
  /** What it declared at initialization; undefined while it is not connected. */
  capabilities: ServerCapabilities | undefined;
}

/** Options of {@link ToolPool.requestUpstream}. */
export interface UpstreamRequestOptions {
  signal?: AbortSignal;
  /** @defaultValue the server's `toolTimeoutMs` */
  timeoutMs?: number;
  /** Told of the server's progress notifications for this request. */
  onProgress?: (progress: Progress) => void;
  /** Whom the request is for (see {@link ToolCallOptions.origin}). @defaultValue none (unattributed) */
  origin?: string;
}

/** Listener of {@link ToolPool.onUpstreamNotification}. */
export type UpstreamNotificationListener = (server: string, notification: UpstreamNotification) => void;

/** The state of one server, for `codecall tools` and error reports. */
export interface ServerStatus {
  name: string;
  transport: 'stdio' | 'http' | 'sse' | 'custom';
  state: ServerState;
  toolCount: number;
  /** Why it failed or dropped. */
  error?: string;
  /**
   * Why it failed, in words safe to show an MCP client: no command line, path, URL or stderr
   * (those are in `error` and `stderrTail`, for the host's log).
   */
  publicReason?: string;
  /** The last bytes of its stderr (stdio servers). */
  stderrTail?: string;
  pid?: number;
  /** Non-fatal problems: tools dropped from its list, config entries matching no tool. */
  warnings: string[];
}

/**
 * A tool's result as its MCP server sent it (`CallToolResult`): content blocks, `structuredContent`,
 * `_meta`, `isError`. What {@link ToolPool.callResult} resolves with.
 */
export type UpstreamToolResult = CallToolResult;

/**
 * What changed between two catalogs, computed once by the pool and handed to every listener.
 * A tool whose server listed it unchanged keeps its object, so `changed` holds only tools whose
 * listing (or name in the sandbox) changed.
 */
export interface CatalogChange {
  /** Tools whose qualified name is new. */
  added: CatalogTool[];
  /** Tools whose qualified name is gone. */
  removed: CatalogTool[];
  /** Tools present in both, as a new object: `before` and `after`. */
  changed: Array<{ before: CatalogTool; after: CatalogTool }>;
}

/** Listener of {@link ToolPool.onCatalogChange}: the new catalog, and what changed from the last. */
export type CatalogListener = (catalog: readonly CatalogTool[], change: CatalogChange) => void;

/**
 * What changed from `before` to `after` (tools matched by qualified name, compared by identity):
 * one pass over each.
 */
export function diffCatalogs(before: readonly CatalogTool[], after: readonly CatalogTool[]): CatalogChange {
  const left = new Map<string, CatalogTool>();
  for (const tool of before) left.set(tool.name, tool);
  const change: CatalogChange = { added: [], removed: [], changed: [] };
  for (const tool of after) {
    const previous = left.get(tool.name);
    if (previous === undefined) change.added.push(tool);
    else {
      left.delete(tool.name);
      if (previous !== tool) change.changed.push({ before: previous, after: tool });
    }
  }
  change.removed.push(...left.values());
  return change;
}

/** What the pool made of one server's tool list, kept so an unchanged listing keeps its tools. */
interface BuiltServer {
  listed: readonly ListedTool[];
  namespace: string;
  /** Whether the server offered resources (it then gets `read_resource`). */
  resources: boolean;
  entries: Entry[];
  /** Each listed tool by name: its listing, its JSON text (made on first compare), its entry. */
  byName: Map<string, { listed: ListedTool; json: string | undefined; entry: Entry }>;
}

/** JSON text of a listing, to tell a re-listed tool that did not change. */
function listingJson(listed: ListedTool): string {
  try {
    return JSON.stringify(listed);
  } catch {
    return '';
  }
}

interface Entry {
  tool: CatalogTool;
  connection: ServerConnection;
  /** A tool codecall adds, answered on the host rather than by `tools/call`. */
  synthetic?: 'read_resource';
}

/**
 * The tool codecall adds to every server that offers resources, so scripts can read them:
 * `await tools.<server>.read_resource({ uri })` sends `resources/read` under the same host checks
 * and limits as a tool call. Open to code only unless `tools.read_resource.allowedCallers` says
 * otherwise (MCP clients read resources through `resources/read`). Not added when the server has
 * a tool of that name. The server's `allowedCallers` applies to it as to its tools.
 */
export const READ_RESOURCE_TOOL = 'read_resource';

const READ_RESOURCE_INPUT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    uri: { type: 'string', description: 'The URI of the resource, as the server lists it (resources/list).' },
  },
  required: ['uri'],
  additionalProperties: false,
};

const ReadResourcePageSchema = z.looseObject({ contents: z.array(z.unknown()) });

function isCodecallConfig(value: CodecallConfig | ServerMap): value is CodecallConfig {
  return (
    typeof (value as CodecallConfig).mcpServers === 'object' &&
    typeof (value as CodecallConfig).sandbox === 'object' &&
    'configDir' in value
  );
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

function placeholderConfig(name: string): ServerConfig {
  return {
    name,
    transport: 'http',
    url: 'memory:',
    headers: {},
    deferLoading: true,
    connectTimeoutMs: DEFAULT_SERVER_CONNECT_TIMEOUT_MS,
    toolTimeoutMs: DEFAULT_TOOL_CALL_TIMEOUT_MS,
    maxConcurrentCalls: DEFAULT_SERVER_MAX_CONCURRENT_CALLS,
    tools: {},
  };
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
  private readonly connections: ServerConnection[];
  private readonly custom: ReadonlySet<string>;
  private readonly listeners = new Set<CatalogListener>();
  /** {@link ToolPool.configWarnings} by a server's tool list. */
  private readonly warningsByList = new WeakMap<object, readonly string[]>();
  private entries = new Map<string, Entry>();
  private tools: readonly CatalogTool[] = [];
  /** Each server's tools as last built (see {@link BuiltServer}). */
  private built = new Map<ServerConnection, BuiltServer>();
  /** Input validators per server, and the tool list they were compiled for. */
  private readonly validators = new Map<ServerConnection, { listed: unknown; cache: InputValidatorCache }>();
  private readonly validatorCacheMaxEntries: number;
  private readonly reported = new WeakSet<InputValidator>();
  /** "Did you mean" index of the current catalog, built on the first unknown name. */
  private nameIndex: NameIndex | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;
  private startup: Promise<void> = Promise.resolve();
  /** First connection attempts still running (background pools), each settling after its rebuild. */
  private readonly attempts = new Map<ServerConnection, Promise<void>>();
  /** Each server's namespace in the sandbox, by server name (the names never change). */
  private namespaceByServer: ReadonlyMap<string, string> | undefined;
  private readonly approval: {
    approver: Approver | undefined;
    timeoutMs: number;
    onDecision: ((record: ApprovalRecord) => void) | undefined;
    requireForDestructive: boolean;
  };
  private readonly upstreamListeners = new Set<UpstreamNotificationListener>();
  /** Who answers each server's sampling/elicitation requests: the direct calls in flight, in order. */
  private readonly askers = new Map<string, { asker: UpstreamAsker; origin: string | undefined }[]>();
  /** Calls and requests in flight to each server, counted by origin (`undefined`: unattributed). */
  private readonly inFlight = new Map<string, Map<string | undefined, number>>();
  /** The origin of each run's calls (see {@link ToolPool.attributeRun}). */
  private readonly runOrigins = new Map<string, string>();

  private constructor(
    connections: ServerConnection[],
    custom: ReadonlySet<string>,
    validatorCacheMaxEntries: number,
    approval: ToolPool['approval'],
  ) {
    this.connections = connections;
    this.custom = custom;
    this.validatorCacheMaxEntries = validatorCacheMaxEntries;
    this.approval = approval;
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
      );
    const servers = isCodecallConfig(config) ? config.mcpServers : config;
    const transports = options.transports ?? {};
    const names = [...new Set([...Object.keys(servers), ...Object.keys(transports)])];
    const holder: { pool?: ToolPool } = {};
    const onToolsChanged = (): void => holder.pool?.rebuild(true);
    const onNotification = (server: string) => (notification: UpstreamNotification) =>
      holder.pool?.notifyUpstream(server, notification);
    const onRequest = (server: string, request: UpstreamRequest, signal: AbortSignal) =>
      holder.pool!.askFor(server, request, signal);
    const onError = (event: ServerErrorEvent): void => {
      try {
        options.onServerError?.(event);
      } catch {
        // A listener's failure must not break the pool.
      }
    };
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
        onToolsChanged,
        onError,
        onNotification: onNotification(name),
        onRequest,
      });
    });
    // A process started for a server this pool does not run (not in the configuration, or
    // replaced by a transport) is stopped now.
    const served = new Set(connections.map((c) => c.name));
    for (const [name, prespawned] of options.prespawned ?? []) {
      if (!served.has(name) || Object.hasOwn(transports, name)) prespawned.stop();
    }
    const pool = new ToolPool(
      connections,
      new Set(Object.keys(transports)),
      options.validatorCacheMaxEntries ?? DEFAULT_INPUT_VALIDATOR_CACHE_MAX_ENTRIES,
      {
        approver: options.approver,
        timeoutMs:
          options.approvalTimeoutMs ??
          (isCodecallConfig(config) ? config.approvals?.timeoutMs : undefined) ??
          DEFAULT_APPROVAL_TIMEOUT_MS,
        onDecision: options.onApprovalDecision,
        requireForDestructive:
          (isCodecallConfig(config) ? config.approvals?.requireForDestructive : undefined) ?? true,
      },
    );
    holder.pool = pool;
    if (options.background) {
      pool.startup = Promise.all(
        connections.map((connection) => {
          const attempt = connection
            .start()
            .then(
              () => pool.rebuild(true),
              () => {
                // Closing the pool stops the attempts in flight: not a server's failure.
                if (!pool.closed)
                  onError({ server: connection.name, phase: 'connect', error: connection.lastError! });
              },
            )
            .finally(() => pool.attempts.delete(connection));
          pool.attempts.set(connection, attempt);
          return attempt;
        }),
      ).then(() => undefined);
      return pool;
    }
    const results = await Promise.allSettled(connections.map((c) => c.start()));
    const failures: CodecallError[] = [];
    results.forEach((result, index) => {
      if (result.status === 'fulfilled') return;
      const error = connections[index]!.lastError!;
      failures.push(error);
      onError({ server: connections[index]!.name, phase: 'connect', error });
    });
    if (options.requireAll && failures.length > 0) {
      await pool.close();
      throw new CodecallError(
        'SERVER_START_FAILED',
        failures.length === 1 ? failures[0]!.message : failures.map((f) => f.message).join('\n\n'),
        { details: { servers: failures.map((f) => f.details.server) }, cause: failures[0] },
      );
    }
    pool.rebuild(false);
    return pool;
  }

  /** The pool's approver (`ToolPoolOptions.approver`), if any. */
  get approver(): Approver | undefined {
    return this.approval.approver;
  }

  /**
   * Rebuilds the catalog from every server's tool list; notifies listeners when asked, with the
   * change computed once here. A server whose tool list is the same array (no re-list) keeps its
   * tools as they were; a re-listed tool whose listing is unchanged keeps its object.
   */
  private rebuild(notify: boolean): void {
    if (this.closed) return;
    const namespaces = assignIdentifiers(this.connections.map((c) => c.name));
    const entries = new Map<string, Entry>();
    const aliases = new Map<string, Entry>();
    const tools: CatalogTool[] = [];
    const built = new Map<ServerConnection, BuiltServer>();
    for (const connection of this.connections) {
      const validators = this.validators.get(connection);
      // A new tool list (list_changed, reconnect): drop its validators and their ajv instances.
      if (validators && validators.listed !== connection.tools) {
        validators.cache.clear();
        validators.listed = connection.tools;
      }
      const namespace = namespaces.get(connection.name)!;
      const previous = this.built.get(connection);
      const server =
        previous !== undefined &&
        previous.listed === connection.tools &&
        previous.namespace === namespace &&
        previous.resources === Boolean(connection.capabilities?.resources)
          ? previous
          : this.buildServer(connection, namespace, previous);
      built.set(connection, server);
      for (const entry of server.entries) {
        entries.set(entry.tool.name, entry);
        aliases.set(`${entry.tool.namespace}.${entry.tool.member}`, entry);
        tools.push(entry.tool);
      }
    }
    for (const [alias, entry] of aliases) if (!entries.has(alias)) entries.set(alias, entry);
    const before = this.tools;
    this.built = built;
    this.entries = entries;
    this.tools = Object.freeze(tools);
    this.nameIndex = undefined;
    if (!notify || this.listeners.size === 0) return;
    const change = diffCatalogs(before, this.tools);
    for (const listener of this.listeners) {
      try {
        listener(this.tools, change);
      } catch {
        // A listener's failure must not break the pool.
      }
    }
  }

  /** Builds one server's catalog tools, reusing those of `previous` whose listing is unchanged. */
  private buildServer(
    connection: ServerConnection,
    namespace: string,
    previous: BuiltServer | undefined,
  ): BuiltServer {
    const config = connection.config;
    const resources = Boolean(connection.capabilities?.resources);
    const server: BuiltServer = {
      listed: connection.tools,
      namespace,
      resources,
      entries: [],
      byName: new Map(),
    };
    const members = assignIdentifiers(connection.tools.map((t) => t.name));
    for (const listed of connection.tools) {
      const member = members.get(listed.name)!;
      const kept = previous?.namespace === namespace ? previous.byName.get(listed.name) : undefined;
      if (kept !== undefined && kept.entry.tool.member === member) {
        kept.json ??= listingJson(kept.listed);
        const json = kept.listed === listed ? kept.json : listingJson(listed);
        if (json === kept.json && json !== '') {
          server.entries.push(kept.entry);
          server.byName.set(listed.name, { listed, json, entry: kept.entry });
          continue;
        }
      }
      const policy: ToolPolicyConfig =
        (Object.hasOwn(config.tools, listed.name) ? config.tools[listed.name] : undefined) ?? {};
      const callers = resolveAllowedCallers({
        tool: policy.allowedCallers,
        server: config.allowedCallers,
        annotations: listed.annotations,
      });
      const approval = resolveRequireApproval({
        tool: policy.requireApproval,
        server: config.requireApproval,
        annotations: listed.annotations,
        requireForDestructive: this.approval.requireForDestructive,
      });
      const tool: CatalogTool = {
        name: qualifiedName(connection.name, listed.name),
        server: connection.name,
        tool: listed.name,
        namespace,
        member,
        description: listed.description,
        inputSchema: listed.inputSchema,
        allowedCallers: callers.allowedCallers,
        allowedCallersSource: callers.source,
        requireApproval: approval.requireApproval,
        requireApprovalSource: approval.source,
        deferLoading: policy.deferLoading ?? config.deferLoading,
        timeoutMs: policy.timeoutMs ?? config.toolTimeoutMs,
      };
      if (listed.title !== undefined) tool.title = listed.title;
      if (listed.outputSchema !== undefined) tool.outputSchema = listed.outputSchema;
      if (listed.annotations !== undefined) tool.annotations = listed.annotations;
      if (policy.inputExamples !== undefined) tool.inputExamples = policy.inputExamples;
      Object.freeze(tool);
      const entry: Entry = { tool, connection };
      server.entries.push(entry);
      server.byName.set(listed.name, { listed, json: undefined, entry });
    }
    const taken = new Set([...members.keys(), ...members.values()]);
    if (resources && !taken.has(READ_RESOURCE_TOOL)) {
      const kept = previous?.entries.find((entry) => entry.synthetic === 'read_resource');
      if (kept !== undefined && kept.tool.namespace === namespace) server.entries.push(kept);
      else {
        const policy: ToolPolicyConfig =
          (Object.hasOwn(config.tools, READ_RESOURCE_TOOL) ? config.tools[READ_RESOURCE_TOOL] : undefined) ??
          {};
        const tool: CatalogTool = Object.freeze({
          name: qualifiedName(connection.name, READ_RESOURCE_TOOL),
          server: connection.name,
          tool: READ_RESOURCE_TOOL,
          namespace,
          member: READ_RESOURCE_TOOL,
          description:
            `Reads a resource of MCP server "${connection.name}" by its URI (MCP resources/read). ` +
            'Returns { contents: [{ uri, mimeType, text } or { uri, mimeType, blob (base64) }] }.',
          inputSchema: READ_RESOURCE_INPUT_SCHEMA,
          allowedCallers: [
            ...(policy.allowedCallers ?? config.allowedCallers ?? (['code_execution'] as const)),
          ],
          allowedCallersSource: policy.allowedCallers ? 'tool' : config.allowedCallers ? 'server' : 'default',
          deferLoading: policy.deferLoading ?? config.deferLoading,
          timeoutMs: policy.timeoutMs ?? config.toolTimeoutMs,
        });
        server.entries.push({ tool, connection, synthetic: 'read_resource' });
      }
    }
    return server;
  }

  /**
   * Settles when every server's first connection attempt has (at once unless the pool was opened
   * with `background`). Never rejects: failed servers are in {@link ToolPool.serverStatus}.
   */
  started(): Promise<void> {
    return this.startup;
  }

  /**
   * True while `server`'s first connection attempt runs (a pool opened with `background`): its
   * tools are not in the catalog yet, and may be once it settles.
   */
  isStarting(server: string): boolean {
    for (const connection of this.attempts.keys()) if (connection.name === server) return true;
    return false;
  }

  /**
   * Settles when `server`'s first connection attempt has, and the catalog has taken its tools in
   * (at once when it is not starting); or when `signal` aborts. Bounded by the attempt's own
   * bound, the server's `connectTimeoutMs`. Never rejects: a server that failed is in
   * {@link ToolPool.serverStatus}.
   */
  whenStarted(server: string, signal?: AbortSignal): Promise<void> {
    let attempt: Promise<void> | undefined;
    for (const [connection, running] of this.attempts) if (connection.name === server) attempt = running;
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

  /**
   * Why `server` failed, in words safe to show a client (its `publicReason` in
   * {@link ToolPool.serverStatus}); undefined unless it is `failed`.
   */
  failureOf(server: string): string | undefined {
    const connection = this.connections.find((c) => c.name === server);
    return connection?.state === 'failed' && connection.lastError ? publicReason(connection) : undefined;
  }

  /**
   * The configured server that a tool name points at by its prefix (`server.` of a qualified
   * name, `namespace.` of a sandbox one; the longest when several do), whatever its state;
   * undefined when none does. For a name the catalog lacks: is its server starting, or failed?
   */
  serverOfTool(name: string): string | undefined {
    this.namespaceByServer ??= assignIdentifiers(this.connections.map((c) => c.name));
    let found: { server: string; prefix: number } | undefined;
    for (const [server, namespace] of this.namespaceByServer) {
      for (const prefix of [server, namespace]) {
        if (name.length > prefix.length + 1 && name.startsWith(prefix) && name[prefix.length] === '.') {
          if (found === undefined || prefix.length > found.prefix) found = { server, prefix: prefix.length };
        }
      }
    }
    return found?.server;
  }

  /** Every tool of every connected server (a frozen snapshot; replaced when the catalog changes). */
  catalog(): readonly CatalogTool[] {
    return this.tools;
  }

  /** One tool by qualified (`server.tool`) or sandbox (`namespace.member`) name. */
  get(name: string): CatalogTool | undefined {
    return this.entries.get(name)?.tool;
  }

  /** Calls `listener` with the new catalog whenever it changes; returns the unsubscribe function. */
  onCatalogChange(listener: CatalogListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The state of every server. */
  serverStatus(): ServerStatus[] {
    return this.connections.map((c) => {
      const status: ServerStatus = {
        name: c.name,
        transport: this.custom.has(c.name) ? 'custom' : c.config.transport,
        state: c.state,
        toolCount: c.tools.length,
        warnings: [...c.warnings],
      };
      if (c.state === 'connected') status.warnings.push(...this.configWarnings(c));

      if (c.lastError) {
        status.error = c.lastError.message;
        status.publicReason = publicReason(c);
      }
      if (c.stderrTail.trim() !== '') status.stderrTail = c.stderrTail;
      if (c.pid !== undefined) status.pid = c.pid;
      return status;
    });
  }

  /**
   * Configured tool names that match no tool of a connected server, worked out once per tool
   * list (the list is replaced, never changed, when the server re-lists): `serverStatus()` is
   * asked on every `search_tools` and `execute_code` answer of `codecall serve`.
   */
  private configWarnings(c: ServerConnection): readonly string[] {
    const known = this.warningsByList.get(c.tools);
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
    this.warningsByList.set(c.tools, warnings);
    return warnings;
  }

  private notFound(name: string): CodecallError {
    const dot = name.indexOf('.');
    const server = dot > 0 ? name.slice(0, dot) : undefined;
    const connection = this.connections.find((c) => c.name === server);
    if (connection && connection.state !== 'connected' && !this.entries.has(name)) {
      return new CodecallError(
        'SERVER_UNAVAILABLE',
        `Cannot call ${name}: MCP server "${connection.name}" is ${connection.state}` +
          `${connection.lastError ? ` (${connection.lastError.message.split('\n')[0]})` : ''}.`,
        { details: { tool: name, server: connection.name } },
      );
    }
    const suggestion = (this.nameIndex ??= new NameIndex(this.tools.map((t) => t.name))).closest(name, {
      limit: 1,
      maxDistance: Math.max(2, Math.floor(name.length / 3)),
    })[0];
    return new CodecallError(
      'TOOL_NOT_FOUND',
      `No tool "${name}".${suggestion ? ` Did you mean "${suggestion}"?` : ''} Tools are named "server.tool"; search for the right one.`,
      { details: { tool: name, ...(suggestion ? { suggestion } : {}) } },
    );
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
    const { tool, raw } = await this.dispatch(name, args, options);
    if (raw.isError === true) {
      throw new CodecallError('TOOL_CALL_FAILED', `${tool.name} returned an error: ${toolErrorText(raw)}`, {
        details: { tool: tool.name },
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
    const { raw } = await this.dispatch(name, args, options);
    return raw as UpstreamToolResult;
  }

  /** Checks a call on the host and sends it to the server. */
  private async dispatch(
    name: string,
    args: unknown,
    options: ToolCallOptions,
  ): Promise<{ tool: CatalogTool; raw: RawToolResult }> {
    if (this.closed) throw new CodecallError('CLOSED', `Cannot call ${name}: the tool pool is closed.`);
    const entry = this.entries.get(name);
    if (!entry) throw this.notFound(name);
    const tool = entry.tool;
    assertCallerAllowed(tool, options.caller);
    const input = args === undefined ? {} : args;
    const validator = this.validatorsOf(entry.connection).get(tool.name, tool.inputSchema);
    this.reportValidator(entry.connection, tool.name, validator);
    validator.validate(input);
    if (tool.requireApproval !== undefined && needsApproval({ requireApproval: tool.requireApproval }, input))
      await awaitApproval(
        {
          ...tool,
          requireApproval: tool.requireApproval,
          requireApprovalSource: tool.requireApprovalSource ?? 'default',
        },
        {
          args: input,
          caller: options.caller,
          approver: options.approver ?? this.approval.approver,
          timeoutMs: this.approval.timeoutMs,
          signal: options.signal,
          runId: options.runId,
          callIndex: options.callIndex,
          line: options.line,
          onDecision: this.approval.onDecision,
        },
      );
    const server = entry.connection.name;
    const origin =
      options.origin ?? (options.runId !== undefined ? this.runOrigins.get(options.runId) : undefined);
    const asker = options.asker ? { asker: options.asker, origin } : undefined;
    if (asker) this.askers.set(server, [...(this.askers.get(server) ?? []), asker]);
    const untrack = this.track(server, origin);
    try {
      if (this.closed) throw new CodecallError('CLOSED', `Cannot call ${name}: the tool pool is closed.`);
      if (entry.synthetic === 'read_resource') {
        const read = await entry.connection.request(
          { method: 'resources/read', params: { uri: (input as { uri: string }).uri } },
          ReadResourcePageSchema,
          {
            signal: options.signal,
            timeoutMs: options.timeoutMs ?? tool.timeoutMs,
            qualifiedName: tool.name,
          },
        );
        const value = { contents: read.contents };
        return { tool, raw: { content: [], structuredContent: value } as RawToolResult };
      }
      const raw = await entry.connection.call(tool.tool, input, {
        signal: options.signal,
        timeoutMs: options.timeoutMs ?? tool.timeoutMs,
        qualifiedName: tool.name,
        onProgress: options.onProgress,
      });
      return { tool, raw };
    } finally {
      untrack();
      if (asker) {
        const left = (this.askers.get(server) ?? []).filter((a) => a !== asker);
        if (left.length > 0) this.askers.set(server, left);
        else this.askers.delete(server);
      }
    }
  }

  /** The input validators of one server's current tool list. */
  private validatorsOf(connection: ServerConnection): InputValidatorCache {
    let validators = this.validators.get(connection);
    if (!validators) {
      validators = {
        listed: connection.tools,
        cache: new InputValidatorCache({ maxEntries: this.validatorCacheMaxEntries }),
      };
      this.validators.set(connection, validators);
    }
    return validators.cache;
  }

  /** Tells `serverStatus()` once why a tool's arguments are not (fully) checked on the host. */
  private reportValidator(connection: ServerConnection, toolName: string, validator: InputValidator): void {
    if (this.reported.has(validator)) return;
    this.reported.add(validator);
    const notes = validator.ok ? validator.warnings : [validator.reason, ...validator.warnings];
    for (const note of notes) {
      if (connection.warnings.length >= MAX_VALIDATOR_WARNINGS_PER_SERVER) break;
      connection.warnings.push(`${toolName}: input schema: ${note}`);
    }
  }

  /** Compiled input validators held for `server` (for tests and diagnostics). */
  validatorCount(server: string): number {
    const connection = this.connections.find((c) => c.name === server);
    return connection ? (this.validators.get(connection)?.cache.size ?? 0) : 0;
  }

  /** Every configured server with its state and declared capabilities (for the gateway). */
  upstreams(): UpstreamServer[] {
    return this.connections.map((c) => ({ name: c.name, state: c.state, capabilities: c.capabilities }));
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
    const connection = this.connections.find((c) => c.name === server);
    if (!connection || this.closed)
      throw new CodecallError(
        this.closed ? 'CLOSED' : 'SERVER_UNAVAILABLE',
        `No MCP server "${server}"${this.closed ? ' (the tool pool is closed)' : ''}.`,
        { details: { server } },
      );
    const untrack = this.track(server, options.origin);
    try {
      return await connection.request(request, resultSchema, {
        signal: options.signal,
        timeoutMs: options.timeoutMs ?? connection.config.toolTimeoutMs,
        qualifiedName: `${request.method} on MCP server "${server}"`,
        onProgress: options.onProgress,
      });
    } finally {
      untrack();
    }
  }

  /** Counts one call or request in flight to `server` for `origin`; the returned function ends it. */
  private track(server: string, origin: string | undefined): () => void {
    const origins = this.inFlight.get(server) ?? new Map<string | undefined, number>();
    this.inFlight.set(server, origins);
    origins.set(origin, (origins.get(origin) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = (origins.get(origin) ?? 1) - 1;
      if (left > 0) origins.set(origin, left);
      else origins.delete(origin);
      if (origins.size === 0 && this.inFlight.get(server) === origins) this.inFlight.delete(server);
    };
  }

  /**
   * Gives the calls of run `runId` (`ToolCallOptions.runId`, as a script's calls carry it) the
   * origin `origin`, until the returned function is called.
   */
  attributeRun(runId: string, origin: string): () => void {
    this.runOrigins.set(runId, origin);
    return () => {
      if (this.runOrigins.get(runId) === origin) this.runOrigins.delete(runId);
    };
  }

  /**
   * The origin of every call and request in flight to `server`, when they all have the same one;
   * undefined when none is in flight, when origins differ, or when one has none. What the server
   * sends meanwhile is that origin's: servers are shared, so nothing else tells whose it is.
   */
  soleOrigin(server: string): string | undefined {
    const origins = this.inFlight.get(server);
    if (origins?.size !== 1) return undefined;
    return origins.keys().next().value;
  }

  /** Calls `listener` with what upstream servers notify (resources, prompts, log messages). */
  onUpstreamNotification(listener: UpstreamNotificationListener): () => void {
    this.upstreamListeners.add(listener);
    return () => this.upstreamListeners.delete(listener);
  }

  private notifyUpstream(server: string, notification: UpstreamNotification): void {
    if (this.closed) return;
    for (const listener of this.upstreamListeners) {
      try {
        listener(server, notification);
      } catch {
        // A listener's failure must not break the pool.
      }
    }
  }

  /**
   * Routes a server's sampling/elicitation request to the client of its latest direct call, when
   * every call in flight to the server has that call's origin: a server shared by several
   * clients does not say which call a request belongs to, and one client must never see another's.
   */
  private askFor(
    server: string,
    request: UpstreamRequest,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const origins = this.inFlight.get(server);
    const only = origins?.size === 1 ? { origin: origins.keys().next().value } : undefined;
    const asker = only ? this.askers.get(server)?.findLast((a) => a.origin === only.origin) : undefined;
    if (!asker) {
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
    return asker.asker(request, signal);
  }

  /** Closes every server (children exit). Idempotent. */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.closed = true;
    this.listeners.clear();
    this.upstreamListeners.clear();
    this.validators.clear();
    this.closing = Promise.allSettled(this.connections.map((c) => c.close())).then(() => undefined);
    return this.closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
