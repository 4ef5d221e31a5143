/**
 * @module
 * The resolved configuration: every `${VAR}` expanded, every path absolute, every default filled
 * in. Produced by `loadConfig` / `parseConfig`; everything downstream reads only this form.
 *
 * Every field is required. A setting that may truly be absent (a token nobody set, a model the
 * environment picks, a policy that falls back to the tool's annotations) is typed `… | undefined`
 * and still present as a key, so a reader always handles the absence; no reader supplies a default.
 */
import type { SandboxLimits } from '../types.js';
import type { ToolCaller } from '../types.js';

/**
 * A `requireApproval` rule: a call needs approval when the value at `pointer` (a JSON pointer,
 * RFC 6901, into the call's arguments) equals one of `values`.
 */
export interface ApprovalRule {
  pointer: string;
  values: unknown[];
}

/** `requireApproval`: always, never, or when the arguments match a rule. */
export type RequireApproval = boolean | ApprovalRule;

/**
 * Per-tool policy from `mcpServers.<server>.tools.<tool>`, resolved against its server: a tool
 * the file does not list gets its server's values ({@link toolPolicyOf}).
 */
export interface ToolPolicyConfig {
  /**
   * Who may call the tool, when the tool itself says; `undefined`: the server's `allowedCallers`,
   * else the annotation default (kept apart so refusals can name the key that decided).
   */
  allowedCallers: ToolCaller[] | undefined;
  /**
   * Whether a call waits for a person's approval, when the tool itself says; `undefined`: the
   * server's `requireApproval`, else `true` for a tool annotated `destructiveHint: true` that code
   * may call (unless `approvals.requireForDestructive` is `false`), else `false`.
   */
  requireApproval: RequireApproval | undefined;
  /** Keep the tool out of the model's initial context (found through search): the tool's, else the server's. */
  deferLoading: boolean;
  /** Example argument objects, shown to the model as `@example`s (empty: none). */
  inputExamples: Record<string, unknown>[];
  /** Time one call of this tool may take: the tool's, else the server's `toolTimeoutMs`. */
  timeoutMs: number;
}

/**
 * A tool allow- or deny-list another MCP client wrote in the same file (Windsurf's
 * `disabledTools`, Gemini CLI's `includeTools`/`excludeTools`, Codex's `enabled_tools`/
 * `disabled_tools`, Claude Code's `permissions.deny`, …), kept as the user's policy: a tool it
 * switches off is never callable, from code included, whatever codecall's own keys say.
 */
export interface ClientToolRule {
  /** Where the user wrote it, named in refusals: `mcpServers.github.disabledTools`, `permissions.deny[0]`. */
  key: string;
  /** `deny`: tools matching `tools` are off; `allowOnly`: tools matching none of `tools` are off. */
  effect: 'deny' | 'allowOnly';
  /** Tool names as the server lists them; `*` matches any run of characters. */
  tools: string[];
}

/** One client setting and the codecall rule it became (shown by `codecall config check`). */
export interface ClientPolicyMapping {
  /** The client's key, as a path in the file: `mcpServers.fs.autoApprove[0]`. */
  from: string;
  /** The codecall rule: `fs.read_file: requireApproval false`, `fs: server disabled`, … */
  to: string;
}

/** The MCP revision spoken to an upstream server (`mcpServers.<name>.protocol`). */
export type UpstreamProtocol = '2025-11-25' | 'auto' | '2026-07-28';

/** Fields every server has, whatever its transport. */
interface ServerConfigBase {
  /** The key in `mcpServers`. */
  name: string;
  /** Who may call this server's tools, unless a tool says otherwise; `undefined`: the annotation default. */
  allowedCallers: ToolCaller[] | undefined;
  /** Whether this server's tools need approval, unless a tool says otherwise; `undefined`: the annotation default. */
  requireApproval: RequireApproval | undefined;
  /** Default `deferLoading` of this server's tools. */
  deferLoading: boolean;
  /** Time to connect and list tools. */
  connectTimeoutMs: number;
  /** Time one tool call may take (unless the tool sets `timeoutMs`). */
  toolTimeoutMs: number;
  /** Calls this server may have in flight at once. */
  maxConcurrentCalls: number;
  /**
   * The MCP revision spoken to this server: `2025-11-25` (`initialize`, the SDK 1.x client),
   * `2026-07-28` (`server/discover`, the SDK v2 client pinned) or `auto` (probe, fall back).
   * Default `DEFAULT_UPSTREAM_PROTOCOL` (`2025-11-25`).
   */
  protocol: UpstreamProtocol;
  /** Per-tool policy, keyed by the tool's MCP name. */
  tools: Record<string, ToolPolicyConfig>;
  /** Other clients' allow- and deny-lists for this server's tools (empty: none). */
  clientRules: ClientToolRule[];
}

/** A server started as a child process speaking MCP over stdin/stdout. */
export interface StdioServerConfig extends ServerConfigBase {
  transport: 'stdio';
  command: string;
  args: string[];
  /** Added to the SDK's safe default environment (PATH, HOME…). */
  env: Record<string, string>;
  /** Absolute working directory (default: the configuration file's directory). */
  cwd: string;
  /**
   * Bytes of one JSON-RPC message read from the server's stdout; a larger message resets the
   * connection and fails the calls in flight. Default: the larger of
   * `DEFAULT_SERVER_MAX_MESSAGE_BYTES` and twice `sandbox.maxToolResultBytes`.
   */
  maxMessageBytes: number;
}

/** How codecall obtains an OAuth access token for a remote server (`mcpServers.<name>.oauth`). */
export type UpstreamOAuthGrant = 'authorization_code' | 'client_credentials';

/** Resolved `mcpServers.<name>.oauth` (MCP authorization, 2025-11-25 and 2026-07-28). */
export interface UpstreamOAuthConfig {
  /**
   * `authorization_code` (a person logs in once with `codecall auth login <server>`; PKCE,
   * refresh tokens kept) or `client_credentials` (a machine, no person).
   */
  grant: UpstreamOAuthGrant;
  /** A pre-registered client id; undefined: a client ID metadata document or dynamic registration. */
  clientId: string | undefined;
  /** The client secret of a confidential client (write it as `${ENV_VAR}`); undefined: a public client. */
  clientSecret: string | undefined;
  /** An HTTPS URL of this client's metadata document (SEP-991), used when the server supports it. */
  clientMetadataUrl: string | undefined;
  /** Scope to ask for when the server names none; undefined: the server's `scopes_supported`. */
  scope: string | undefined;
  /**
   * The loopback redirect of `authorization_code` logins; port 0 picks a free port at login
   * (RFC 8252 § 7.3). Default `DEFAULT_UPSTREAM_OAUTH_REDIRECT_URL`.
   */
  redirectUrl: string;
  /** Where this server's tokens and client registration are kept (mode 0600), in the state folder. */
  tokenFile: string;
}

/** A remote server: Streamable HTTP (`http`) or legacy SSE (`sse`). */
export interface RemoteServerConfig extends ServerConfigBase {
  transport: 'http' | 'sse';
  url: string;
  headers: Record<string, string>;
  /** OAuth for this server; undefined: none (only the configured `headers` are sent). */
  oauth: UpstreamOAuthConfig | undefined;
}

/** One resolved MCP server. */
export type ServerConfig = StdioServerConfig | RemoteServerConfig;

/** Resolved servers, keyed by name (disabled servers are left out). */
export type ServerMap = Record<string, ServerConfig>;

/** Limits of one script run, every field set (the sandbox's `SandboxLimits`). */
export type SandboxLimitsConfig = SandboxLimits;

/** Resolved `sandbox` section. */
export interface SandboxConfig {
  /** `process`: isolates in worker processes (a crash cannot take the host down); `in-process`. */
  mode: 'process' | 'in-process';
  /** Worker processes `process` mode keeps even when idle. */
  minWorkers: number;
  /** Worker processes `process` mode may grow to while runs wait for one. */
  maxWorkers: number;
  /** Milliseconds a worker above `minWorkers` may stay idle before it is shut down. */
  workerIdleMs: number;
  /**
   * Microseconds a worker may keep its core busy reading for a fast tool answer after sending a
   * call, instead of sleeping (0: never). See `SandboxPoolOptions.workerSpinUs`.
   */
  workerSpinUs: number;
  /** Runs of one owner an isolate serves, each in a fresh context. See `SandboxPoolOptions.isolateRuns`. */
  isolateRuns: number;
  /** Bytes of model code accepted for one run. */
  maxCodeBytes: number;
  /** Milliseconds an `execute_code` session may stay unused before it is dropped. */
  sessionTtlMs: number;
  /** `execute_code` sessions kept at once (the least recently used idle one is evicted). */
  maxSessions: number;
  limits: SandboxLimitsConfig;
}

/** Resolved `history` section. */
export interface HistoryConfig {
  enabled: boolean;
  /** Absolute path of the store. */
  path: string;
  /**
   * Whose history `path` is: the configuration file's name when history is kept per
   * configuration (the default), `history.path` or `CODECALL_HISTORY_PATH` when one of them set it.
   */
  key: string;
  /**
   * The folder's shared store from before history was kept per configuration, copied once into a
   * new `path`; `undefined` when `path` is that store or was set explicitly.
   */
  migrateFrom: string | undefined;
  /** Runs kept (older ones are pruned). @defaultValue {@link DEFAULT_HISTORY_MAX_RUNS} */
  maxRuns: number;
}

/** Resolved `search.embeddings.onnx`: a sentence-embedding model on disk, run by onnxruntime-node. */
export interface SearchOnnxEmbeddingsConfig {
  /** Absolute path of the `.onnx` file (given relative to the configuration's folder). */
  model: string;
  /** Absolute path of its `tokenizer.json`; `undefined`: `tokenizer.json` beside the model, then in its parent folder. */
  tokenizer: string | undefined;
  /** @defaultValue `'mean'` */
  pooling: 'mean' | 'cls';
  /** @defaultValue true */
  normalize: boolean;
  /** @defaultValue {@link DEFAULT_ONNX_EMBEDDING_MAX_TOKENS} */
  maxTokens: number;
  /** The model output read; `undefined`: `last_hidden_state`, `token_embeddings` or `sentence_embedding`. */
  output: string | undefined;
  /** @defaultValue {@link DEFAULT_ONNX_EMBEDDING_THREADS} */
  threads: number;
}

/**
 * Resolved `search.embeddings`: an embedder fused with the lexical + graph ranking, either an
 * OpenAI-compatible API (`baseUrl` + `model`) or a model on disk (`onnx`); exactly one is set.
 */
export interface SearchEmbeddingsConfig {
  /** The API base up to `/v1` (OpenAI, Ollama, vLLM, LM Studio…); `undefined` with `onnx`. */
  baseUrl: string | undefined;
  /** The API's model name; `undefined` with `onnx`. */
  model: string | undefined;
  /** `undefined`: no key is sent (local servers). */
  apiKey: string | undefined;
  /** `undefined`: the model's own size. */
  dimensions: number | undefined;
  /** A model on disk; `undefined` with `baseUrl`. */
  onnx: SearchOnnxEmbeddingsConfig | undefined;
  /** Absolute path of the vector cache, `':memory:'`, or `false` for none. @defaultValue {@link DEFAULT_EMBEDDING_CACHE_PATH} in the configuration's folder */
  cache: string | false;
  /** Vectors the cache keeps. @defaultValue {@link DEFAULT_EMBEDDING_CACHE_MAX_ENTRIES} */
  maxCacheEntries: number;
  /** Texts per request (per run of an `onnx` model). @defaultValue {@link DEFAULT_EMBEDDING_BATCH_SIZE}; {@link DEFAULT_ONNX_EMBEDDING_BATCH_SIZE} with `onnx` */
  batchSize: number;
  /** Deadline of one request. @defaultValue {@link DEFAULT_EMBEDDING_TIMEOUT_MS} */
  timeoutMs: number;
  /** Weight of the embedding ranking in the fusion. @defaultValue {@link DEFAULT_EMBEDDING_WEIGHT} */
  weight: number;
  /** Hits of the default ranking that keep their places in the fusion. @defaultValue {@link DEFAULT_EMBEDDING_GUARD} */
  guard: number;
  /** A query is fused only when its 10th hit scores at least this share of its best (0: every query). @defaultValue {@link DEFAULT_EMBEDDING_FLAT_SHARE} */
  flatShare: number;
}

/** Resolved `search` section: the ranking every surface uses (docs/search.md explains each). */
export interface SearchConfig {
  /** Hits per query; `undefined`: each surface's own page (`search_tools` 8, `codecall search` 10). */
  limit: number | undefined;
  /** @defaultValue {@link DEFAULT_BEAM_WIDTH} */
  beamWidth: number;
  /** @defaultValue {@link DEFAULT_BEAM_DEPTH} */
  beamDepth: number;
  /** @defaultValue {@link DEFAULT_GRAPH_WEIGHT} */
  graphWeight: number;
  /** @defaultValue {@link DEFAULT_STEMMING} */
  stemming: 'light' | 'porter' | 'none';
  /** @defaultValue {@link DEFAULT_VERB_NORMALIZATION} */
  verbNormalization: boolean;
  /** @defaultValue {@link DEFAULT_EXPANSION_DOCS} */
  expansionDocs: number;
  /** @defaultValue {@link DEFAULT_EXPANSION_TERMS} */
  expansionTerms: number;
  /** @defaultValue {@link DEFAULT_EXPANSION_WHEN} */
  expansionWhen: 'selective' | 'cold-start' | 'no-feedback' | 'always';
  /** @defaultValue {@link DEFAULT_EXPANSION_FLAT_SHARE} */
  expansionFlatShare: number;
  /** @defaultValue {@link DEFAULT_EXPANSION_RERANK_DOCS} */
  expansionRerankDocs: number;
  /** @defaultValue {@link DEFAULT_EXPANSION_WEIGHT} */
  expansionWeight: number;
  /** `undefined`: lexical + graph ranking only. */
  embeddings: SearchEmbeddingsConfig | undefined;
}

/** Resolved `agent` section. */
export interface AgentConfig {
  /** `provider:model`; `undefined`: `--model`, then `$CODECALL_MODEL` decide. */
  model: string | undefined;
  /** @defaultValue {@link DEFAULT_AGENT_MAX_STEPS} */
  maxSteps: number;
  /** Tokens one model response may have (`max_tokens` on the wire). @defaultValue {@link DEFAULT_PROVIDER_MAX_OUTPUT_TOKENS} */
  maxOutputTokens: number;
}

/**
 * Resolved `serve` section of `codecall serve` (its flags and `$CODECALL_SERVE_TOKEN` win over
 * these). An empty `token` (e.g. `"${TOKEN:-}"`) is `undefined`.
 */
export interface ServeConfig {
  /** Interface `--http` binds to. @defaultValue {@link DEFAULT_SERVE_HOST} */
  host: string;
  /** Port of `--http` (0 picks a free one). @defaultValue {@link DEFAULT_SERVE_PORT} */
  port: number;
  /** Bearer token every HTTP request must carry; use `${VAR}`, not a literal secret. `undefined`: none set here. */
  token: string | undefined;
  /** Browser origins accepted besides loopback ones, exact (`https://app.example.com`). */
  allowedOrigins: string[];
  /** `execute_code` runs in flight at once. @defaultValue {@link DEFAULT_SERVE_MAX_CONCURRENT_RUNS} */
  maxConcurrentRuns: number;
  /** Open HTTP sessions of the process. @defaultValue {@link DEFAULT_SERVE_MAX_SESSIONS} */
  maxSessions: number;
  /** Open HTTP sessions of one client (remote address + token). @defaultValue {@link DEFAULT_SERVE_MAX_SESSIONS_PER_CLIENT} */
  maxSessionsPerClient: number;
  /** `ttlMs` of an `execute_code` task of a 2026-07-28 client (its job's deadline too). @defaultValue {@link DEFAULT_SERVE_TASK_TTL_MS} */
  taskTtlMs: number;
  /** `pollIntervalMs` suggested to clients polling a task. @defaultValue {@link DEFAULT_SERVE_TASK_POLL_INTERVAL_MS} */
  taskPollIntervalMs: number;
  /** Unfinished tasks of one client (bearer token). @defaultValue {@link DEFAULT_SERVE_TASKS_PER_CLIENT} */
  maxTasksPerClient: number;
  /** Milliseconds an HTTP session may stay idle before it is closed. @defaultValue {@link DEFAULT_SERVE_SESSION_IDLE_MS} */
  sessionIdleMs: number;
  /** Whether sessions teach the shared tool graph (`"shared"`) or not (`"off"`). @defaultValue `"shared"` */
  learning: ServeLearning;
  /** Milliseconds to wait for the MCP servers before answering clients (0: answer at once). @defaultValue {@link DEFAULT_SERVE_WAIT_FOR_SERVERS_MS} */
  waitForServersMs: number;
  /** Milliseconds a `search_tools` call waits for MCP servers still starting before it ranks (0: at once). @defaultValue {@link DEFAULT_SERVE_SEARCH_WAIT_FOR_SERVERS_MS} */
  searchWaitForServersMs: number;
  /**
   * Expose upstream tools under their original names when unique across servers (and prompts
   * and resource URIs when one server alone offers them); `false` namespaces them. @defaultValue false
   */
  originalNames: boolean;
  /** Resource subscriptions one session may hold. @defaultValue {@link DEFAULT_SERVE_MAX_SUBSCRIPTIONS_PER_SESSION} */
  maxSubscriptionsPerSession: number;
  /** Advanced: largest young generation of the server process in MB (0: V8's default). @defaultValue {@link DEFAULT_SERVE_YOUNG_GENERATION_MAX_MB} */
  youngGenerationMaxMb: number;
  /** Advanced: idle milliseconds after which the server process runs one full garbage collection (0: never). @defaultValue {@link DEFAULT_SERVE_IDLE_COLLECT_MS} */
  idleCollectMs: number;
  /**
   * Models of the vendor endpoints (`/v1/messages`, `/v1/responses`): the request's `model` name
   * to a codecall model spec (`"claude-sonnet-4-5": "anthropic:claude-sonnet-4-5"`). `demo` is
   * always there. See docs/vendor-endpoints.md. @defaultValue `{}`
   */
  models: Record<string, string>;
  /**
   * Key (16+ characters; use `${VAR}`) that signs vendor container ids, so another serve process
   * with the same key resumes a paused script. `undefined`: a random key per process.
   */
  vendorSecret: string | undefined;
  /**
   * Absolute folder of the journals of paused vendor scripts (durable; shared by serve processes;
   * written relative to the config file). `undefined`: in memory.
   */
  vendorJournalDir: string | undefined;
  /** Milliseconds a paused script's container stays valid. @defaultValue {@link DEFAULT_VENDOR_CONTAINER_TTL_MS} */
  vendorContainerTtlMs: number;
  /**
   * Make OpenTelemetry spans of the requests served and the upstream calls they make (loads
   * `@opentelemetry/api`; spans go to the global tracer provider an SDK registered). Off, a
   * client's `_meta` trace context still goes on to the upstream calls unchanged. See
   * docs/server.md. @defaultValue false
   */
  telemetry: boolean;
  /**
   * Also answer MCP 2026-07-28 clients when `@modelcontextprotocol/server` is installed (over
   * HTTP statelessly; over stdio the connection's opening picks the era); `false` answers
   * every client in the 2025-11-25 era. `--mcp-2026` / `--mcp-2026=false` win. See
   * docs/mcp-2026.md. @defaultValue {@link DEFAULT_SERVE_MCP_2026}
   */
  mcp2026: boolean;
}

/** Who learns from `codecall serve` sessions: all of them, into one shared graph, or nobody. */
export type ServeLearning = 'shared' | 'off';
/**
 * Resolved `jobs` section: where jobs live. `local` runs them inside `codecall serve --http`;
 * `bullmq` puts them on a Redis queue and `postgres` in PostgreSQL (pg-boss), which
 * `codecall worker` processes consume.
 */
export interface JobsConfig {
  /** @defaultValue `"local"` */
  backend: 'local' | 'bullmq' | 'postgres';
  /**
   * Redis URL (`redis://host:6379`), or for `postgres` a `postgres://` URL; use `${VAR}` for a
   * password. `undefined`: none in the file (`--redis` / `$CODECALL_REDIS_URL` may give one).
   */
  connection: string | undefined;
  /** Queue name. @defaultValue {@link DEFAULT_JOBS_QUEUE} */
  queue: string;
  /** Jobs run at once by the local backend. @defaultValue {@link DEFAULT_JOBS_LOCAL_CONCURRENCY} */
  concurrency: number;
  /** Mount the BullMQ dashboard (and the approvals page) on `codecall serve --http`. @defaultValue false */
  dashboard: boolean;
  /** Time an exec job's call waits for `codecall jobs approve` before the job ends. @defaultValue {@link DEFAULT_JOBS_APPROVAL_TIMEOUT_MS} */
  approvalTimeoutMs: number;
  /** Jobs the local backend keeps queued; past it `submit` is refused (503). @defaultValue {@link DEFAULT_JOBS_LOCAL_MAX_WAITING} */
  maxWaiting: number;
  /**
   * Jobs the local backend keeps parked waiting for an approval; past it `submit` is refused
   * (503) and a job that asks for one more ends `failed`. @defaultValue {@link DEFAULT_JOBS_LOCAL_MAX_PARKED}
   */
  maxParked: number;
}

/** Resolved `approvals` section. */
export interface ApprovalsConfig {
  /** Time a call that needs approval waits for an answer. @defaultValue {@link DEFAULT_APPROVAL_TIMEOUT_MS} */
  timeoutMs: number;
  /**
   * Whether tools annotated `destructiveHint: true` that code may call need approval unless
   * `requireApproval` says otherwise. @defaultValue true
   */
  requireForDestructive: boolean;
}

/** Whose `store` the scripts of a `codecall serve` client use (see {@link StoreConfig.scope}). */
export type StoreScope = 'client' | 'shared';

/** Resolved `store` section: JSON values scripts keep across runs (`store.set` / `store.get`). */
export interface StoreConfig {
  /** Whether scripts get `store`. @defaultValue true */
  enabled: boolean;
  /**
   * Whose values: scripts of configurations with another namespace never see them.
   * @defaultValue the configuration file's absolute path (`"(configuration built in memory)"` without a file)
   */
  namespace: string;
  /**
   * Whose values the scripts of a `codecall serve` client read: `client`, that client's own (over
   * HTTP each MCP session's, kept in memory while it lasts; over stdio, the one client's, in
   * `namespace`); `shared`, `namespace` for every client.
   * @defaultValue `"client"` (`DEFAULT_STORE_SCOPE`)
   */
  scope: StoreScope;
  /** Bytes of one value's JSON. @defaultValue {@link DEFAULT_STORE_MAX_VALUE_BYTES} */
  maxValueBytes: number;
  /** Bytes the namespace may hold (values' JSON plus keys). @defaultValue {@link DEFAULT_STORE_MAX_NAMESPACE_BYTES} */
  maxNamespaceBytes: number;
}

/** Resolved `resultHandles` section: the thresholds of results that stay on the host (docs/data.md). */
export interface ResultHandlesConfig {
  /** Bytes of a tool result from which the script gets a handle. @defaultValue {@link DEFAULT_RESULT_HANDLE_MIN_BYTES} */
  minBytes: number;
  /** Bytes of a held result from which it is written to the run's temp file. @defaultValue {@link DEFAULT_RESULT_HANDLE_SPILL_BYTES} */
  spillBytes: number;
  /**
   * Folders a tool result's `file://` `resource_link` may point into to be held as a handle read
   * from the file (absolute; relative ones in the file are read from its folder). See
   * docs/data.md. @defaultValue `[]` (no link is read)
   */
  linkRoots: string[];
}

/** A fully resolved codecall configuration. */
export interface CodecallConfig {
  /** Absolute path of the file it came from; `undefined` for an in-memory config. */
  configPath: string | undefined;
  /** Directory relative paths were resolved against. */
  configDir: string;
  mcpServers: ServerMap;
  /** Names of servers present but `"disabled": true`. */
  disabledServers: string[];
  sandbox: SandboxConfig;
  history: HistoryConfig;
  search: SearchConfig;
  agent: AgentConfig;
  serve: ServeConfig;
  jobs: JobsConfig;
  approvals: ApprovalsConfig;
  store: StoreConfig;
  resultHandles: ResultHandlesConfig;
  /**
   * JSON paths of keys that other clients write and codecall does not use (`alwaysAllow`,
   * `preferences`, …), removed before validation.
   */
  ignoredKeys: string[];
  /** Things to tell the user about the file (one line each, e.g. the ignored keys); the CLI prints them on stderr. */
  notices: string[];
  /**
   * The client that wrote the file's shape (`Zed`, `opencode`, `Codex`, `Goose`, `Continue`,
   * `Gemini CLI`); `undefined` for the `mcpServers` / `servers` map codecall reads natively.
   */
  clientFormat: string | undefined;
  /** Other clients' allow/deny lists and switches in the file, and the codecall rule each became (empty: none). */
  clientPolicy: ClientPolicyMapping[];
}
