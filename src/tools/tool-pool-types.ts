/**
 * @module
 * The public shapes of the tool pool: a catalog tool, the options of opening a pool and of one
 * call, a server's status, what a catalog change carries, and the upstream (gateway) types.
 */
import type { CallToolResult, Progress, ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import type { RequireApproval } from '../config/types.js';
import type { CallTrace } from '../util/trace-context.js';
import type { JsonSchema, ToolCaller } from '../types.js';
import type { ApprovalRecord, Approver, RequireApprovalSource } from './approval.js';
import type { AllowedCallersSource, ToolAnnotations } from './policy.js';
import type { PrespawnedServer } from './prespawn.js';
import type { UpstreamTaskMode } from './upstream-tasks-2026.js';
import type { RelayedInputRound } from './modern-connection.js';
import type {
  ReconnectOptions,
  ServerErrorEvent,
  ServerState,
  TransportFactory,
  UpstreamNotification,
  UpstreamRequest,
} from './server-connection.js';

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
  /** The key of another client's allow/deny list that switched the tool off (`allowedCallers` is `[]`). */
  disabledBy?: string;
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
   * Relay a 2026-07-28 server's `input_required` round to the caller instead of answering it: the
   * call resolves with the round (`resultType: "input_required"`, see {@link RelayedInputRequired})
   * and carries the client's answers to the previous one. For a gateway's own 2026-07-28 client.
   * @defaultValue none: rounds go to `asker`
   */
  relay?: RelayedInputRound | undefined;
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
  /**
   * Traces the call: its request's `_meta` carries the trace context this gives (W3C
   * `traceparent`…), and its span ends when it settles. @defaultValue none
   */
  trace?: CallTrace | undefined;
  /**
   * What a 2026-07-28 server's task answer (the Tasks extension, SEP-2663) does: `await` it (a
   * script's call), `relay` it untouched ({@link upstreamTaskOf} of the result: a gateway whose
   * client declared the extension), or `undeclared` (the extension is not declared to the server:
   * a gateway whose client did not). @defaultValue `await`
   */
  upstreamTask?: UpstreamTaskMode | undefined;
}

/** Which call an upstream's request came during (told by a run's executor; see {@link UpstreamAsker}). */
export interface UpstreamAskContext {
  /** Qualified name of the call in flight, `server.tool`. */
  tool: string;
  /** Its arguments, as the script passed them. */
  args: unknown;
}

/**
 * Answers an upstream server's `sampling/createMessage` or `elicitation/create` request. A run's
 * executor passes `call`, the call the request came during (for a 2025-11-25 server, the run's
 * latest call in flight to that server: such a server does not say which call asks).
 */
export type UpstreamAsker = (
  request: UpstreamRequest,
  signal: AbortSignal,
  call?: UpstreamAskContext,
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
  /**
   * The era the connection speaks, when `protocol` is `2026-07-28` or `auto`: `modern`
   * (2026-07-28, `server/discover`) or `legacy` (`auto` fell back to `initialize`).
   */
  era?: 'modern' | 'legacy';
  /**
   * A 2026-07-28 server's tool-list freshness hint (SEP-2549) as it sent it, and when codecall
   * re-lists (its `ttlMs` clamped to `DEFAULT_UPSTREAM_LIST_MIN_TTL_MS`…`_MAX_TTL_MS`).
   */
  toolList?: { ttlMs: number | undefined; cacheScope: 'public' | 'private' | undefined; freshUntil: number };
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
