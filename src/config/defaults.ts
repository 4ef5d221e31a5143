/**
 * @module
 * Every bound codecall applies, as a named default with its unit in the name. Configuration
 * and options override them; nothing else hard-codes a limit.
 */
import { availableParallelism } from 'node:os';

import type { SandboxLimits } from '../types.js';

/** Wall time of one script run, including time spent awaiting tools. */
export const DEFAULT_WALL_TIME_MS = 120_000;
/** CPU time of one script run inside the isolate. */
export const DEFAULT_CPU_TIME_MS = 30_000;
/** Heap limit of one isolate. */
export const DEFAULT_MEMORY_MB = 256;
/**
 * Largest semi-space of a sandbox isolate's young generation (V8 `--max-semi-space-size`, set
 * once per process after isolated-vm loads: src/isolate/young-generation.ts). With isolated-vm's
 * own (4 MB of young generation at 256 MB of heap) a script parsing a 10 MB tool result used
 * 1.7× the CPU of a host `JSON.parse` of it; 1.45× with 16 MB.
 */
export const DEFAULT_SANDBOX_SEMI_SPACE_MB = 16;
/**
 * Smallest semi-space of a sandbox isolate's young generation (V8 `--min-semi-space-size`, set
 * with {@link DEFAULT_SANDBOX_SEMI_SPACE_MB}). From V8's 1 MB start, a script parsing a 10 MB
 * result first pays a scavenge at each doubling (1, 2, 4, 8 MB), each copying every object made
 * so far. Starting at 8 MB, a fresh isolate's parse took 1.10–1.24× the host's `JSON.parse`,
 * against 1.28–1.39× (medians of 11 on the bench machine, docs/sandbox.md). The pages are
 * reserved, mostly untouched: an idle isolate's resident memory grows by about 0.23 MB (the
 * sandbox bench's memory per idle sandbox: 1.55 → 1.78 MB, target ≤ 2).
 */
export const DEFAULT_SANDBOX_MIN_SEMI_SPACE_MB = 8;
/** Tool calls one script run may make. */
export const DEFAULT_MAX_TOOL_CALLS = 1_000;
/**
 * Tool calls of one run that may be in flight at once. A slow server is protected by its own
 * `maxConcurrentCalls` ({@link DEFAULT_SERVER_MAX_CONCURRENT_CALLS}, across all runs), and a
 * run's host memory by `maxPendingToolArgsBytes` and `maxToolCalls`; this per-run cap only has
 * to stop one run from queueing unbounded work, so it lets a script's `Promise.all` over
 * hundreds of calls to fast tools (or to several servers) proceed at once. It was 16, which
 * made 1,000 parallel 1 ms calls take 5× a bare bridge (63 waves), then 256 (4 waves, 2.1–2.6×);
 * at {@link DEFAULT_MAX_TOOL_CALLS} every call a run may make can be in flight at once.
 */
export const DEFAULT_MAX_CONCURRENT_TOOL_CALLS = 1_000;
/** Serialized bytes of one tool call's arguments. */
export const DEFAULT_MAX_TOOL_ARGS_BYTES = 1_048_576;
/** Serialized bytes of one tool result delivered to a script. */
export const DEFAULT_MAX_TOOL_RESULT_BYTES = 32 * 1_048_576;
/**
 * Bytes of one JSON-RPC message read from a stdio MCP server (the SDK's read buffer; its own
 * default is 10 MB). Twice {@link DEFAULT_MAX_TOOL_RESULT_BYTES}: servers such as
 * `@modelcontextprotocol/server-filesystem` send a result's text twice (`content` and
 * `structuredContent`).
 */
export const DEFAULT_SERVER_MAX_MESSAGE_BYTES = 2 * DEFAULT_MAX_TOOL_RESULT_BYTES;
/**
 * Bytes waiting to be written to one stdio MCP server's stdin (the server is not reading): a
 * message that would queue past it fails its call at once instead of growing host memory.
 */
export const DEFAULT_STDIO_MAX_QUEUED_WRITE_BYTES = 64 * 1_048_576;
/** Serialized bytes of all tool results of one run. */
export const DEFAULT_MAX_TOTAL_TOOL_RESULT_BYTES = 256 * 1_048_576;
/**
 * Bytes of tool-call arguments of one run waiting for an answer (queued on the host, in flight,
 * or in the worker's IPC backlog while the script runs without yielding); a call that would
 * cross it rejects with `TOOL_ARGS_LIMIT`.
 */
export const DEFAULT_MAX_PENDING_TOOL_ARGS_BYTES = 64 * 1_048_576;
/**
 * Characters of a tool name a script may call (names of the run's tools longer than this are
 * still callable); a longer name rejects as an unknown tool without crossing to the host.
 */
export const DEFAULT_MAX_TOOL_NAME_CHARS = 256;
/** Values the sandbox's console formatter visits for one console call before it cuts the output. */
export const DEFAULT_MAX_FORMATTED_VALUES = 20_000;
/** Bytes of stdout returned to the model (truncated past this, with a marker). */
export const DEFAULT_MAX_STDOUT_BYTES = 32_768;
/** Bytes of stderr returned to the model (truncated past this, with a marker). */
export const DEFAULT_MAX_STDERR_BYTES = 16_384;
/** Bytes of model code accepted for one run. */
export const DEFAULT_MAX_CODE_BYTES = 262_144;
/**
 * Compiled scripts kept per process, keyed by their source (a job queue or a client that runs the
 * same script again skips esbuild, ~3 ms of CPU each); least recently used go first.
 */
export const DEFAULT_COMPILE_CACHE_ENTRIES = 128;
/** Bytes of source plus compiled code the compile cache holds at most. */
export const DEFAULT_COMPILE_CACHE_MAX_BYTES = 8_388_608;
/** Worker processes the sandbox pool keeps (process isolation mode), even when idle. */
export const DEFAULT_SANDBOX_MIN_WORKERS = 1;
/**
 * Worker processes the sandbox pool may grow to when runs wait for one: the CPU cores Node may
 * use (`os.availableParallelism()`), since each worker runs one script at a time on one core.
 */
export const DEFAULT_SANDBOX_MAX_WORKERS = availableParallelism();
/**
 * Microseconds a sandbox worker may keep its core busy after sending a tool call, reading for
 * the answer instead of sleeping until it arrives (0: never). Only while the run's answers come
 * within this window, and only while busy workers leave a core for the host (see
 * `SandboxPoolOptions.workerSpinUs`). A sleeping worker woken by each answer pays the wake-up
 * of an idle core on every call.
 */
export const DEFAULT_SANDBOX_WORKER_SPIN_US = 200;
/** Time a sandbox worker above the minimum may stay idle before it is shut down. */
export const DEFAULT_SANDBOX_WORKER_IDLE_MS = 30_000;
/**
 * Catalog versions whose tool list a sandbox worker process keeps (most recently used first):
 * a list crosses to a worker once per version, and a script reads it only when it enumerates
 * `tools`.
 */
export const DEFAULT_SANDBOX_WORKER_KEPT_CATALOGS = 4;
/** Time to connect to one MCP server and list its tools. */
export const DEFAULT_SERVER_CONNECT_TIMEOUT_MS = 30_000;
/** Time one MCP tool call may take. */
export const DEFAULT_TOOL_CALL_TIMEOUT_MS = 60_000;
/** Tool calls one MCP server may have in flight at once (across all runs). */
export const DEFAULT_SERVER_MAX_CONCURRENT_CALLS = 16;
/** Bytes of a stdio server's stderr kept for error reports (the tail). */
export const DEFAULT_SERVER_STDERR_TAIL_BYTES = 4_096;
/** First delay before reconnecting to a server that dropped; doubles on each failed attempt. */
export const DEFAULT_RECONNECT_INITIAL_DELAY_MS = 250;
/** Largest delay between two reconnect attempts. */
export const DEFAULT_RECONNECT_MAX_DELAY_MS = 10_000;
/** Reconnect attempts before a dropped server is marked failed. */
export const DEFAULT_RECONNECT_MAX_ATTEMPTS = 10;
/** Pages of `tools/list` read from one server (bounds a server that paginates forever). */
export const DEFAULT_TOOL_LIST_MAX_PAGES = 100;

/**
 * Bounds of polling an upstream tool that runs as a task (`execution.taskSupport: "required"`,
 * MCP 2025-11-25): the server's `pollInterval` is clamped to [min, max] ms (a hostile 0 cannot
 * spin, a huge one cannot stall the call past its timeout), and `tasks/cancel` on abort waits at
 * most the cancel timeout.
 */
export const DEFAULT_UPSTREAM_TASK_MIN_POLL_MS = 50;
export const DEFAULT_UPSTREAM_TASK_MAX_POLL_MS = 5_000;
export const DEFAULT_UPSTREAM_TASK_CANCEL_TIMEOUT_MS = 5_000;
/**
 * How long a task-capable call to a 2026-07-28 upstream that is aborted while its `tools/call` is in
 * flight still waits for that call's answer: the server may have created the task already, and an
 * answer that arrives (within this, and the call's own timeout) with a task gets `tasks/cancel`
 * instead of leaving the task running with nobody to follow it. The caller is answered at once.
 */
export const DEFAULT_UPSTREAM_TASK_ABORT_GRACE_MS = 10_000;
/**
 * Characters of a task id a 2026-07-28 upstream may send (the Tasks extension, SEP-2663); a longer
 * one fails the call: codecall echoes it in `tasks/get` and signs it into a relayed task's id.
 */
export const DEFAULT_UPSTREAM_TASK_ID_MAX_CHARS = 256;
/** Characters of an upstream task's `statusMessage` or failed task's error message kept. */
export const DEFAULT_UPSTREAM_TASK_MESSAGE_MAX_CHARS = 1_000;
/**
 * The MCP revision codecall speaks to an upstream server unless `mcpServers.<name>.protocol` says
 * otherwise: the 2025-11-25 `initialize` handshake. Not `auto`: on stdio the SDK v2 probe waits
 * its whole timeout for a legacy server that ignores unknown requests before it falls back, and
 * a server that exits on one cannot be probed in place (SDK `docs/protocol-versions.md`,
 * § Understand the probe); `auto` also needs the optional `@modelcontextprotocol/client`.
 */
export const DEFAULT_UPSTREAM_PROTOCOL = '2025-11-25';
/**
 * A 2026-07-28 upstream's tool list is reused for its `ttlMs` (SEP-2549), clamped to
 * [{@link DEFAULT_UPSTREAM_LIST_MIN_TTL_MS}, {@link DEFAULT_UPSTREAM_LIST_MAX_TTL_MS}]: a hostile
 * `ttlMs: 1` cannot make every catalog read a round trip, a `ttlMs` of days cannot freeze the
 * catalog. A list without `ttlMs` (or `0`, "immediately stale") is re-read on demand, at most
 * once per minimum TTL.
 */
export const DEFAULT_UPSTREAM_LIST_MIN_TTL_MS = 1_000;
export const DEFAULT_UPSTREAM_LIST_MAX_TTL_MS = 3_600_000;
/**
 * Rounds of `input_required` (2026-07-28 multi round-trip requests) codecall answers for one
 * upstream tool call before it fails the call (the SDK v2 client's own default is 10).
 */
export const DEFAULT_UPSTREAM_INPUT_REQUIRED_MAX_ROUNDS = 8;
/** Bytes of one upstream `requestState` codecall echoes back; a longer one fails the call. */
export const DEFAULT_UPSTREAM_REQUEST_STATE_MAX_BYTES = 65_536;
/** Input requests accepted in one `input_required` round; more fail the call. */
export const DEFAULT_UPSTREAM_INPUT_REQUESTS_MAX = 16;
/**
 * SEP-2243 `x-mcp-header` scan of a 2026-07-28 upstream tool's `inputSchema`: schema nodes visited
 * (depth-first, properties and the subschemas that may not carry an annotation) before the scan
 * gives up and excludes the tool as unreadable, and `Mcp-Param-*` headers one tool may declare.
 */
export const DEFAULT_UPSTREAM_PARAM_HEADER_SCAN_MAX_NODES = 10_000;
export const DEFAULT_UPSTREAM_PARAM_HEADERS_MAX = 64;
/**
 * OAuth for upstream servers (`mcpServers.<name>.oauth`): the loopback redirect of an
 * `authorization_code` login (port 0: a free port at login, RFC 8252 § 7.3), how long
 * `codecall auth login` waits for the browser's redirect, and the largest token file read back
 * (a bigger one is treated as absent: log in again).
 */
export const DEFAULT_UPSTREAM_OAUTH_REDIRECT_URL = 'http://127.0.0.1:0/callback';
export const DEFAULT_UPSTREAM_OAUTH_LOGIN_TIMEOUT_MS = 300_000;
export const DEFAULT_UPSTREAM_OAUTH_TOKEN_FILE_MAX_BYTES = 262_144;
/** Tools accepted from one server; the rest are dropped with a report. */
export const DEFAULT_SERVER_MAX_TOOLS = 5_000;
/** Bytes of a server's error text kept in the error a script sees. */
export const DEFAULT_TOOL_ERROR_MESSAGE_BYTES = 4_096;
/** Time to close one MCP server (then the transport is dropped). */
export const DEFAULT_SERVER_CLOSE_TIMEOUT_MS = 5_000;
/** Nesting depth of JSON Schema rendered as TypeScript; deeper parts become `unknown`. */
export const DEFAULT_DECLARATION_MAX_DEPTH = 16;
/** Where usage history is stored, relative to the configuration file's directory. */
export const DEFAULT_HISTORY_PATH = '.codecall/history.sqlite';
/**
 * Runs kept in the usage history; older runs are pruned and their transitions subtracted, so
 * the graph counts always equal the retained runs'.
 */
export const DEFAULT_HISTORY_MAX_RUNS = 10_000;
/** Runs waiting to be written to the usage history; appends beyond it fail (and are reported). */
export const DEFAULT_HISTORY_MAX_QUEUED_RUNS = 1_000;
/**
 * Writes the SQLite history store commits in one transaction at most (group commit: the writes
 * that queued while the previous commit was syncing share the next one, and its fsync).
 */
export const DEFAULT_HISTORY_MAX_BATCH_WRITES = 256;
/** How scripts are isolated: `process` (isolates in worker processes) or `in-process`. */
export const DEFAULT_SANDBOX_MODE: 'process' | 'in-process' = 'process';
/** Time a sandbox worker process may take to start and warm its first isolate. */
export const DEFAULT_SANDBOX_START_TIMEOUT_MS = 10_000;
/** Interval of the heartbeat the host sends a busy sandbox worker. */
export const DEFAULT_SANDBOX_HEARTBEAT_MS = 250;
/** Time a sandbox worker may stay unresponsive past a run's CPU budget (or take to confirm a cancel) before it is killed. */
export const DEFAULT_SANDBOX_KILL_GRACE_MS = 2_000;
/**
 * Runs of one owner (a client of `codecall serve`, a queue's jobs) one isolate serves, each in a
 * fresh context, before it is disposed: creating and disposing an isolate per run was the largest
 * part of a small job's CPU (`npm run bench -- jobs`, docs/jobs.md). Runs of different owners
 * never share an isolate, and a run that ends by a limit, a cancel or a crash, or leaves a quarter
 * of its heap limit in use, disposes its isolate. `1`: an isolate per run.
 */
export const DEFAULT_SANDBOX_ISOLATE_RUNS = 64;
/** Time an `execute_code` session may stay unused before its context is dropped (and its next run fails with `SESSION_EXPIRED`). */
export const DEFAULT_SANDBOX_SESSION_TTL_MS = 10 * 60_000;
/** Sessions (kept sandbox contexts) of one sandbox pool; opening one more evicts the least recently used idle one. */
export const DEFAULT_SANDBOX_MAX_SESSIONS = 16;
/** Characters of a session name (`execute_code`'s `session`). */
export const DEFAULT_SANDBOX_MAX_SESSION_NAME_CHARS = 64;
/** Ended sessions remembered per pool so their next run fails with `SESSION_EXPIRED` instead of starting empty. */
export const DEFAULT_SANDBOX_MAX_ENDED_SESSIONS = 1_024;
/** Retries of one model request after a transient provider failure (429, 5xx, overload, timeout). */
export const DEFAULT_PROVIDER_MAX_RETRIES = 4;
/** Time one model request (one attempt) may take before it is abandoned and retried. */
export const DEFAULT_PROVIDER_TIMEOUT_MS = 300_000;
/** First backoff delay between provider retries; doubles per attempt, with jitter. */
export const DEFAULT_PROVIDER_INITIAL_RETRY_DELAY_MS = 500;
/** Longest backoff delay between provider retries, including a server's `retry-after`. */
export const DEFAULT_PROVIDER_MAX_RETRY_DELAY_MS = 30_000;
/** Output tokens one model response may use when the request does not say. */
export const DEFAULT_PROVIDER_MAX_OUTPUT_TOKENS = 8_192;
/** Characters of one tool description rendered into declarations (the rest is cut with "…"). */
export const DEFAULT_DECLARATION_DESCRIPTION_MAX_CHARS = 2_000;
/** Interface `codecall serve --http` binds to unless told otherwise (loopback only). */
export const DEFAULT_SERVE_HOST = '127.0.0.1';
/** Port of `codecall serve --http` unless told otherwise. */
export const DEFAULT_SERVE_PORT = 3737;
/** Bytes of one HTTP request body (or one stdio message) `codecall serve` accepts; larger is refused (413). */
export const DEFAULT_SERVE_MAX_BODY_BYTES = 4 * 1_048_576;
/** `execute_code` runs of one `codecall serve` process in flight at once (across sessions). */
export const DEFAULT_SERVE_MAX_CONCURRENT_RUNS = 4;
/** `execute_code` runs waiting for a slot; past this a run is refused with a "busy" result. */
export const DEFAULT_SERVE_MAX_QUEUED_RUNS = 32;
/** Open Streamable HTTP sessions of one `codecall serve --http` process. */
export const DEFAULT_SERVE_MAX_SESSIONS = 64;
/** Time an HTTP session may stay idle (no request, none in flight) before it is closed. */
export const DEFAULT_SERVE_SESSION_IDLE_MS = 5 * 60_000;
/**
 * Open Streamable HTTP sessions of one client (remote address + bearer token). A client that
 * opens more gets its own least recently used session closed, never another client's.
 */
export const DEFAULT_SERVE_MAX_SESSIONS_PER_CLIENT = 8;
/**
 * Longest pause between two direct (pass-through) calls of one `codecall serve` session for the
 * pair to count as a sequence in usage history (the tool graph).
 */
export const DEFAULT_SERVE_SEQUENCE_GAP_MS = 5 * 60_000;
/** Interval of the progress notifications of a running `execute_code` when the client asks for them. */
export const DEFAULT_SERVE_PROGRESS_INTERVAL_MS = 1_000;
/**
 * Milliseconds `codecall serve` waits for its MCP servers before it answers a client (`serve.waitForServersMs`).
 * 0: answer at once; servers join in the background and clients get `notifications/tools/list_changed`.
 */
export const DEFAULT_SERVE_WAIT_FOR_SERVERS_MS = 0;
/**
 * Milliseconds a `search_tools` call of `codecall serve` waits for MCP servers still starting
 * before it ranks (`serve.searchWaitForServersMs`; 0: ranks at once), so a client that searches
 * right after connecting finds their tools. A server slower than this is named in the result's
 * note. A call that names a starting server's tool waits for that server instead, up to its
 * `connectTimeoutMs`.
 */
export const DEFAULT_SERVE_SEARCH_WAIT_FOR_SERVERS_MS = 10_000;
/**
 * Largest young generation (V8 new space, both semi-spaces) of a `codecall serve` process, in MB
 * (`serve.youngGenerationMaxMb`; 0: V8's default, up to 128 MB). Without it V8 grows the space
 * to its maximum under a stream of runs and keeps it, and resident memory swings with it.
 */
export const DEFAULT_SERVE_YOUNG_GENERATION_MAX_MB = 64;
/**
 * Milliseconds of an idle event loop after which `codecall serve` runs one full garbage
 * collection (`serve.idleCollectMs`; 0: never), giving back what its last runs left for the
 * collector (V8 collects on allocation, which an idle server does not do).
 */
export const DEFAULT_SERVE_IDLE_COLLECT_MS = 5_000;
/** Resource subscriptions one `codecall serve` session may hold (`serve.maxSubscriptionsPerSession`). */
export const DEFAULT_SERVE_MAX_SUBSCRIPTIONS_PER_SESSION = 1_000;
/**
 * Bytes of notifications (log messages, progress, resource updates) waiting to go out to one
 * `codecall serve` session's client; past it new ones are dropped and counted. Bounds the memory a
 * client that does not read its stream costs.
 */
export const DEFAULT_SERVE_MAX_QUEUED_NOTIFICATION_BYTES = 1_048_576;
/**
 * Age past which a `requestState` codecall minted for a 2026-07-28 client (a run paused on an
 * approval through `input_required`) is refused: the time a person has to decide. Issue 28.
 */
export const DEFAULT_SERVE_REQUEST_STATE_TTL_MS = 10 * 60_000;
/** Bytes of a `requestState` a 2026-07-28 client sends back; a longer one is refused unread. Issue 28. */
export const DEFAULT_SERVE_REQUEST_STATE_MAX_BYTES = 4_096;
/**
 * Rounds of `input_required` one `execute_code` run of a 2026-07-28 client may have for its
 * upstream servers' input requests (each pause is one request); past it the call that asks fails.
 * Bounds an upstream that asks something new on every replay. Issue 28.
 */
export const DEFAULT_SERVE_INPUT_ROUNDS_MAX = 16;
/** Bytes of one upstream input request (its JSON) passed on to a 2026-07-28 client; a larger one fails the call. Issue 28. */
export const DEFAULT_SERVE_INPUT_REQUEST_MAX_BYTES = 65_536;
/**
 * Bytes of an upstream 2026-07-28 server's `requestState` codecall relays to its own client inside
 * its signed state (a pass-through call's `input_required`); a longer one fails the call. Leaves
 * room for the wrapping within {@link DEFAULT_SERVE_REQUEST_STATE_MAX_BYTES}. Issue 28.
 */
export const DEFAULT_SERVE_RELAYED_REQUEST_STATE_MAX_BYTES = 2_048;
/**
 * `subscriptions/listen` streams of 2026-07-28 clients one `codecall serve` process keeps open
 * (HTTP: per process; stdio: per connection); a new one past it is refused with `-32603`
 * ("Subscription limit reached") before its acknowledgement. Each holds an SSE response and one
 * listener. Issue 28.
 */
export const DEFAULT_SERVE_MAX_LISTEN_SUBSCRIPTIONS = 1_024;
/**
 * Time-to-live of an MCP task (the Tasks extension, `io.modelcontextprotocol/tasks`) a 2026-07-28
 * client gets for `execute_code`: its `ttlMs`, and the deadline of the job that runs it (a task
 * still running then ends `failed`). Issue 28.
 */
export const DEFAULT_SERVE_TASK_TTL_MS = 60 * 60_000;
/** The `pollIntervalMs` codecall suggests to a client polling a task with `tasks/get`. Issue 28. */
export const DEFAULT_SERVE_TASK_POLL_INTERVAL_MS = 1_000;
/**
 * Tasks of one client (one bearer token) not yet finished; past it `execute_code` answers a tool
 * error instead of a new task. Issue 28.
 */
export const DEFAULT_SERVE_TASKS_PER_CLIENT = 16;
/**
 * Characters of a task id a 2026-07-28 client may send in `tasks/get` / `tasks/update` /
 * `tasks/cancel`; a longer one is refused before its signature is checked. Issue 28.
 */
export const DEFAULT_SERVE_TASK_ID_MAX_CHARS = 1_024;
/**
 * Age past which a relayed task's id (a pass-through tool's upstream task, signed by codecall) is
 * no longer honoured, whatever the upstream's `ttlMs` says. Issue 28.
 */
export const DEFAULT_SERVE_RELAYED_TASK_MAX_AGE_MS = 24 * 60 * 60_000;

/**
 * Whether `codecall serve` also answers MCP 2026-07-28 clients (stateless over HTTP, the era
 * chosen per connection over stdio) when `@modelcontextprotocol/server` is installed
 * (`serve.mcp2026`, `--mcp-2026=false` turns it off). Issue 28.
 */
export const DEFAULT_SERVE_MCP_2026 = true;
/** Model requests (steps) one agent run may make before it stops with `MAX_STEPS_EXCEEDED`. */
export const DEFAULT_AGENT_MAX_STEPS = 20;
/** Wall time of one agent run (model requests, scripts and tool calls); past it the run stops with `RUN_TIMEOUT`. */
export const DEFAULT_AGENT_MAX_RUN_TIME_MS = 600_000;
/** Tool calls of one model step that the agent runs at once (the rest wait their turn). */
export const DEFAULT_AGENT_MAX_CONCURRENT_TOOL_CALLS = 8;
/** Bytes of one direct tool result (or search result) put in the model's context; longer text is cut with a marker. */
export const DEFAULT_AGENT_MAX_TOOL_RESULT_BYTES = 262_144;

/** Every sandbox limit at its default: what a run gets when neither config nor options set one. */
export const DEFAULT_SANDBOX_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  wallTimeMs: DEFAULT_WALL_TIME_MS,
  cpuTimeMs: DEFAULT_CPU_TIME_MS,
  memoryMb: DEFAULT_MEMORY_MB,
  maxToolCalls: DEFAULT_MAX_TOOL_CALLS,
  maxConcurrentToolCalls: DEFAULT_MAX_CONCURRENT_TOOL_CALLS,
  maxToolArgsBytes: DEFAULT_MAX_TOOL_ARGS_BYTES,
  maxToolResultBytes: DEFAULT_MAX_TOOL_RESULT_BYTES,
  maxTotalToolResultBytes: DEFAULT_MAX_TOTAL_TOOL_RESULT_BYTES,
  maxStdoutBytes: DEFAULT_MAX_STDOUT_BYTES,
  maxStderrBytes: DEFAULT_MAX_STDERR_BYTES,
  maxPendingToolArgsBytes: DEFAULT_MAX_PENDING_TOOL_ARGS_BYTES,
  maxToolNameChars: DEFAULT_MAX_TOOL_NAME_CHARS,
  maxFormattedValues: DEFAULT_MAX_FORMATTED_VALUES,
});

/**
 * Size of one compiled outside regex (a search pattern, a schema `pattern`) on the linear-time
 * engine (RE2's program size, about one instruction per character or repetition); larger ones
 * are refused. Allows `[\w\s]{500}` and every common schema pattern (emails, UUIDs, slugs), and
 * keeps one test of 1 MiB of input near 100 ms.
 */
export const DEFAULT_REGEX_MAX_PROGRAM_SIZE = 1_000;
/**
 * Compiled input-schema validators kept per MCP server (least recently used dropped past it);
 * the cache and its ajv instances are dropped whenever that server's tool list changes.
 */
export const DEFAULT_INPUT_VALIDATOR_CACHE_MAX_ENTRIES = 1_000;
/**
 * Characters of type text one declaration rendering may produce (all tools together); past it,
 * types render as `unknown` and the text says it was cut. Bounds hostile schemas whose `$ref`s
 * or `anyOf`s would expand exponentially.
 */
export const DEFAULT_DECLARATION_MAX_BYTES = 262_144;
/** Queue name of `codecall worker` and the job client unless told otherwise. */
export const DEFAULT_JOBS_QUEUE = 'codecall';
/** Name of the configuration a job runs with when it names none (the worker's `--config`). */
export const DEFAULT_JOBS_CONFIG_NAME = 'default';
/** Attempts of a job before it fails: the first try plus retries after infrastructure faults. */
export const DEFAULT_JOBS_ATTEMPTS = 3;
/** Most attempts a job may ask for. */
export const DEFAULT_JOBS_MAX_ATTEMPTS = 10;
/** First backoff delay before a retry after an infrastructure fault; doubles per attempt. */
export const DEFAULT_JOBS_BACKOFF_MS = 1_000;
/** Jobs one `codecall worker` process runs at once. */
export const DEFAULT_JOBS_WORKER_CONCURRENCY = 2;
/** Time a worker holds a job's lock before renewing it; a worker that dies loses the lock after this. */
export const DEFAULT_JOBS_LOCK_DURATION_MS = 30_000;
/** Interval at which workers look for stalled jobs (lock expired: the worker died) and put them back. */
export const DEFAULT_JOBS_STALLED_INTERVAL_MS = 30_000;
/** Times a job may stall (its worker died) before it fails instead of being retried. */
export const DEFAULT_JOBS_MAX_STALLED_COUNT = 2;
/** Time `codecall worker` lets in-flight jobs finish after SIGTERM before it hands them back to the queue. */
export const DEFAULT_JOBS_SHUTDOWN_GRACE_MS = 30_000;
/** Completed jobs kept (results and logs); older ones are removed. */
export const DEFAULT_JOBS_KEEP_COMPLETED = 1_000;
/** Failed jobs kept; older ones are removed. */
export const DEFAULT_JOBS_KEEP_FAILED = 5_000;
/** Age after which a finished job is removed, whatever the counts above. */
export const DEFAULT_JOBS_KEEP_AGE_MS = 7 * 24 * 3_600_000;
/** Log lines kept per job (the most recent). */
export const DEFAULT_JOBS_MAX_LOG_LINES = 1_000;
/** Bytes of one job log line (longer lines are cut with a marker). */
export const DEFAULT_JOBS_MAX_LOG_LINE_BYTES = 2_048;
/** Bytes of a `run` job's prompt. */
export const DEFAULT_JOBS_MAX_PROMPT_BYTES = 262_144;
/** Jobs `list` returns unless told otherwise. */
export const DEFAULT_JOBS_LIST_LIMIT = 50;
/** Most jobs one `list` returns. */
export const DEFAULT_JOBS_MAX_LIST_LIMIT = 1_000;
/** Jobs the embedded (in-process) backend of `codecall serve --http` runs at once. */
export const DEFAULT_JOBS_LOCAL_CONCURRENCY = 2;
/** Jobs the embedded backend keeps in memory (waiting, running and finished); past this the oldest finished go. */
export const DEFAULT_JOBS_LOCAL_MAX_JOBS = 1_000;
/** Jobs waiting in the embedded backend; past this `submit` is refused. */
export const DEFAULT_JOBS_LOCAL_MAX_WAITING = 10_000;
/**
 * Jobs of the embedded backend parked waiting for an approval (no slot held, their run journal
 * kept); past this `submit` is refused, and a job that asks past it ends `failed`.
 */
export const DEFAULT_JOBS_LOCAL_MAX_PARKED = 100;
/** Events the embedded backend keeps per job for late subscribers. */
export const DEFAULT_JOBS_LOCAL_MAX_EVENTS = 200;
/** Interval of the SSE keep-alive comment on `GET /v1/jobs/:id/events`. */
export const DEFAULT_JOBS_SSE_KEEPALIVE_MS = 15_000;
/** Server-sent event streams open at once on one `codecall serve --http`. */
export const DEFAULT_JOBS_MAX_EVENT_STREAMS = 64;
/** Time to connect to the jobs' Redis before giving up with `JOBS_BACKEND_UNAVAILABLE`. */
export const DEFAULT_JOBS_CONNECT_TIMEOUT_MS = 10_000;
/** Time `POST /v1/jobs` waits for Redis to take a job before answering 503 `JOBS_BACKEND_UNAVAILABLE`. */
export const DEFAULT_JOBS_ENQUEUE_TIMEOUT_MS = 5_000;
/** `Retry-After` (seconds) of the jobs API's 503 answers (queue full, Redis unreachable, too many streams). */
export const DEFAULT_JOBS_RETRY_AFTER_S = 5;
/** Time a job's call waits for `codecall jobs approve` before the job ends (`APPROVAL_TIMEOUT`): one day. */
export const DEFAULT_JOBS_APPROVAL_TIMEOUT_MS = 24 * 3_600_000;
/** Transitions a Redis usage-history store loads at most (the most used tool graphs stay far below). */
export const DEFAULT_JOBS_HISTORY_MAX_TRANSITIONS = 1_000_000;
/** Connections one PostgreSQL usage-history store (one configuration of one worker) opens at most. */
export const DEFAULT_JOBS_HISTORY_PG_POOL_SIZE = 2;
/** Bytes of a run journal file read back for a replay (`codecall exec --resume`); a larger file is refused. */
export const DEFAULT_MAX_RUN_JOURNAL_BYTES = 256 * 1_048_576;
/**
 * Tries to take a run journal's lock file (`<journal>.lock`) while other processes create and
 * remove it at the same moment; past this the journal is reported in use.
 */
export const DEFAULT_RUN_JOURNAL_LOCK_ATTEMPTS = 8;
/**
 * Time a tool call that needs approval (`requireApproval`) waits for an answer before it fails
 * with `APPROVAL_TIMEOUT`. The wait counts against the script's wall time (`sandbox.wallTimeMs`).
 */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 60_000;
/** Values one `requireApproval` rule may list. */
export const DEFAULT_APPROVAL_RULE_MAX_VALUES = 1_000;
/** Characters of the JSON pointer of one `requireApproval` rule. */
export const DEFAULT_APPROVAL_RULE_MAX_POINTER_CHARS = 1_024;
/** Top-level fields of a call's arguments an approval prompt shows with their values; the rest it names. */
export const DEFAULT_APPROVAL_PROMPT_MAX_FIELDS = 20;
/** Characters of one argument value's JSON an approval prompt shows; a longer value is cut, and the prompt says so. */
export const DEFAULT_APPROVAL_PROMPT_MAX_VALUE_CHARS = 160;
/** Characters of one field name an approval prompt shows; a longer name is cut, and the prompt says so. */
export const DEFAULT_APPROVAL_PROMPT_MAX_NAME_CHARS = 64;
/** Names an approval prompt lists of the fields past `DEFAULT_APPROVAL_PROMPT_MAX_FIELDS` ("and N more fields: a, b"). */
export const DEFAULT_APPROVAL_PROMPT_MAX_NAMED_FIELDS = 200;
/**
 * Fields of an upstream server's elicitation form `codecall exec` / `run` asks at the terminal; a
 * larger form is refused (the call fails, saying so). Issue 28.
 */
export const DEFAULT_CLI_INPUT_MAX_FIELDS = 20;
/** Characters of an upstream form's message shown at the terminal; a longer one is cut, saying so. Issue 28. */
export const DEFAULT_CLI_INPUT_MAX_TEXT_CHARS = 2_000;
/** Choices of one enum field of an upstream form the terminal lists; a field with more is refused. Issue 28. */
export const DEFAULT_CLI_INPUT_MAX_OPTIONS = 50;
/** Answers the terminal takes for one field of an upstream form before it cancels the form. Issue 28. */
export const DEFAULT_CLI_INPUT_MAX_ATTEMPTS = 3;
/** Approval decisions `codecall approvals` lists unless told otherwise. */
export const DEFAULT_APPROVALS_LIST_LIMIT = 50;
/** Approval decisions the history store keeps (older ones are pruned). */
export const DEFAULT_APPROVALS_MAX_KEPT = 10_000;
/** Uses of search (a query and the tools the run then called) a usage history store keeps: the newest. */
export const DEFAULT_STORE_MAX_USAGES = 10_000;
/** Bytes (UTF-8 JSON) of one value a script keeps with `store.set` (`store.maxValueBytes`). */
export const DEFAULT_STORE_MAX_VALUE_BYTES = 65_536;
/** Bytes (UTF-8 JSON of values plus keys) one store namespace may hold (`store.maxNamespaceBytes`). */
export const DEFAULT_STORE_MAX_NAMESPACE_BYTES = 1_048_576;
/** Characters of one `store` key. */
export const DEFAULT_STORE_MAX_KEY_CHARS = 256;
/** Characters of a store namespace (`store.namespace`). */
export const DEFAULT_STORE_MAX_NAMESPACE_CHARS = 1_024;
/**
 * Whose `store` the scripts of a `codecall serve` client use (`store.scope`): `client`, that
 * client's own (over HTTP each MCP session's, in memory; over stdio, one client, the
 * configuration's); `shared`, the configuration's, for every client.
 */
export const DEFAULT_STORE_SCOPE: 'client' | 'shared' = 'client';
/** Bytes (UTF-8 JSON) of the conversation a `run` job may carry in `messages`. */
export const DEFAULT_JOBS_MAX_MESSAGES_BYTES = 1_048_576;
/** Messages a `run` job may carry. */
export const DEFAULT_JOBS_MAX_MESSAGES = 1_000;
/** Interval at which the Postgres job backend re-reads a job's row (events, wait, a running job's cancel). */
export const DEFAULT_JOBS_PG_POLL_MS = 500;
/**
 * Seconds a Postgres job worker's slot waits before it asks pg-boss for the next job (pg-boss's
 * `pollingIntervalSeconds`; 0.5 is its minimum, its default of 2 s capped a slot at 0.5 jobs/s).
 */
export const DEFAULT_JOBS_PG_WORKER_POLL_S = 0.5;
/** Heartbeat of a Postgres job's worker, in seconds: a job whose worker died goes back to the queue after it. */
export const DEFAULT_JOBS_PG_HEARTBEAT_S = 30;
/**
 * Connections a Postgres job state (run journals, approvals, logs) opens at most when none is
 * given; a worker opens its concurrency + 1 (one per running job, one for decisions).
 */
export const DEFAULT_JOBS_STATE_PG_POOL_SIZE = 4;
/** Connections the job state of a Postgres jobs client (`codecall jobs`, `serve`) opens at most: it reads and decides. */
export const DEFAULT_JOBS_STATE_CLIENT_PG_POOL_SIZE = 2;
/** Lifetime of the cookie the jobs dashboard (`/admin/queues`) sets after `?token=`, in seconds (12 h). */
export const DEFAULT_JOBS_DASHBOARD_COOKIE_MAX_AGE_S = 43_200;
/** Operations one OpenAPI document may turn into tools (`openApiTools`; narrow with `include`). */
export const DEFAULT_OPENAPI_MAX_TOOLS = 200;
/** Characters of a tool name made from an OpenAPI `operationId`. */
export const DEFAULT_OPENAPI_MAX_TOOL_NAME_CHARS = 64;
/** Characters of a tool description made from an operation's summary and description. */
export const DEFAULT_OPENAPI_MAX_DESCRIPTION_CHARS = 2_000;
/** Schema nodes (objects) in one OpenAPI tool's input schema, after `$ref`s are expanded. */
export const DEFAULT_OPENAPI_MAX_SCHEMA_NODES = 5_000;
/** Serialized bytes of an OpenAPI document given to `openApiTools`. */
export const DEFAULT_OPENAPI_MAX_SPEC_BYTES = 10 * 1_048_576;
/** Bytes of one HTTP response body an OpenAPI tool reads. */
export const DEFAULT_OPENAPI_MAX_RESPONSE_BYTES = 8 * 1_048_576;
/** Characters of a non-2xx response body quoted in an OpenAPI tool's error. */
export const DEFAULT_OPENAPI_ERROR_EXCERPT_CHARS = 500;

/**
 * Catalog size from which `CodecallRuntime.findTools` answers on the worker thread by default
 * (below it, one query costs the event loop well under a tenth of a millisecond).
 */
export const DEFAULT_SEARCH_WORKER_MIN_TOOLS = 200;
/**
 * Unknown names of one run that get a "did you mean" lookup; later ones are refused without one
 * (a script that calls hundreds of made-up names would otherwise buy host time with each).
 */
export const DEFAULT_MAX_SUGGESTION_LOOKUPS_PER_RUN = 5;

/**
 * Milliseconds between two progress lines `codecall exec` writes on a terminal; calls that finish
 * in between are counted into the next line, so a script of thousands of calls stays readable.
 */
export const DEFAULT_EXEC_PROGRESS_INTERVAL_MS = 250;

/**
 * Time one request of `codecall jobs --url` (the jobs HTTP API of a running `codecall serve`)
 * may take, from connecting to the last byte of the answer (to the headers, for an event
 * stream), before it fails with `JOBS_BACKEND_UNAVAILABLE`.
 */
export const DEFAULT_JOBS_HTTP_TIMEOUT_MS = 10_000;
/** Bytes of one answer (or one server-sent event) the jobs HTTP client reads. */
export const DEFAULT_JOBS_HTTP_MAX_RESPONSE_BYTES = 16 * 1_048_576;
/**
 * Jobs the approvals page (`/admin/approvals`) lists at once; past it the page says that more
 * wait (decide some and reload). Each listed call is shown whole, arguments uncut.
 */
export const DEFAULT_JOBS_APPROVALS_PAGE_MAX_JOBS = 100;

/**
 * Bytes of a configuration file read at most; a larger file is refused before it is read (a
 * configuration path may name any file, a log or a device).
 */
export const DEFAULT_CONFIG_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Characters of one tool name shown as a node's label in `codecall graph --format dot` and `svg`;
 * a longer one is cut with "…" (a name comes from an MCP server: a picture stays a picture).
 */
export const DEFAULT_GRAPH_LABEL_MAX_CHARS = 200;
/**
 * Edges up to which `codecall graph --format dot` and `svg` leave Graphviz its full layout
 * (crossing minimisation to convergence, curved edges); a larger graph asks for bounded passes
 * and straight edges, whose time grows about linearly instead of steeply (docs/search.md).
 */
export const DEFAULT_GRAPH_DETAILED_LAYOUT_MAX_EDGES = 150;

// Search. The ranking defaults were chosen by cross-validation (docs/search.md); the search
// library re-exports them, and `config/` resolves the `search` section with them.

/** Lexical hits that seed the graph walk, and paths kept per step of the beam search. */
export const DEFAULT_BEAM_WIDTH = 5;

/** Steps the beam search walks from each seed (successors; predecessors go one step). */
export const DEFAULT_BEAM_DEPTH = 2;

/**
 * Weight of graph evidence against lexical evidence (lexical scores are normalised to 0–1;
 * a tool reached from the best lexical hit over an edge of effective weight 1 gains this much).
 */
export const DEFAULT_GRAPH_WEIGHT = 0.6;

/**
 * Top lexical hits that RM3 pseudo-relevance feedback reads to expand the query (0 = off). RM3
 * stands in for learned evidence: it shapes queries without learned feedback, and only those
 * whose first pass is not flat (`expansionWhen`); with usage it lowered UltraTool's graph ranking
 * (docs/search.md). 3 / 10 / 0.2 were the best of 8 settings tried on 5-fold cross-validation.
 */
export const DEFAULT_EXPANSION_DOCS = 3;

/**
 * Share of the best first-pass score from which a first pass is flat under `'selective'`: when
 * the {@link DEFAULT_EXPANSION_FLAT_RANK}th hit scores at least this share of the best, a page
 * of tools matches about as well as the top three, which are then no evidence of what the query
 * is about, and feeding their terms back drifts the query. Chosen on one development set and
 * checked on the other (leave-one-dataset-out; docs/search.md).
 */
export const DEFAULT_EXPANSION_FLAT_SHARE = 0.5;

/**
 * Best first-pass hits RM3's expanded query re-scores (a rerank: the long postings of expansion
 * terms are never walked, which keeps a query under 1 ms at 50,000 tools).
 */
export const DEFAULT_EXPANSION_RERANK_DOCS = 100;

/** Expansion terms RM3 adds (the most probable in the top hits). */
export const DEFAULT_EXPANSION_TERMS = 10;

/** Weight of the expansion terms against the original query in RM3 (1 − λ). */
export const DEFAULT_EXPANSION_WEIGHT = 0.2;

/** Texts sent to `embed` in one call. */
export const DEFAULT_EMBEDDING_BATCH_SIZE = 64;

/** Time one `embed` call may take before search gives up on embeddings for that query. */
export const DEFAULT_EMBEDDING_TIMEOUT_MS = 30_000;

/** Vectors kept in one cache file (the least recently written are evicted beyond it). */
export const DEFAULT_EMBEDDING_CACHE_MAX_ENTRIES = 100_000;

/** Where the vector cache lives, relative to the configuration's folder, when not set. */
export const DEFAULT_EMBEDDING_CACHE_PATH = '.codecall/embeddings.sqlite';

/** Tokens of one text a local (ONNX) embedding model reads; longer texts are cut (sentence-transformers' MiniLM default). */
export const DEFAULT_ONNX_EMBEDDING_MAX_TOKENS = 256;
/** Largest `maxTokens` accepted for a local embedding model (positions beyond a model's own limit fail in the model). */
export const DEFAULT_ONNX_EMBEDDING_MAX_TOKENS_LIMIT = 8_192;
/** Texts one run of a local embedding model takes (padding grows with the batch's longest text). */
export const DEFAULT_ONNX_EMBEDDING_BATCH_SIZE = 16;
/** Threads one local embedding model's run may use (the host shares its cores with scripts and clients). */
export const DEFAULT_ONNX_EMBEDDING_THREADS = 1;
/** The tokenizer file looked for beside the model when none is named. */
export const DEFAULT_ONNX_TOKENIZER_FILE = 'tokenizer.json';
/** Bytes of a local embedding model file that are loaded (2 GiB: ONNX's single-file protobuf limit). */
export const DEFAULT_ONNX_MODEL_MAX_BYTES = 2 * 1024 * 1024 * 1024;
/** Bytes of a `tokenizer.json` that are read. */
export const DEFAULT_ONNX_TOKENIZER_MAX_BYTES = 64 * 1024 * 1024;
/** Tested default of `search.stemming`: the light stemmer. */
export const DEFAULT_STEMMING: 'light' | 'porter' | 'none' = 'light';
/** Default of `search.verbNormalization` (verb classes mapped onto one verb): off. */
export const DEFAULT_VERB_NORMALIZATION = false;
/** Tested default of `search.expansionWhen` (see `ExpansionPolicy` in the search module). */
export const DEFAULT_EXPANSION_WHEN: 'selective' | 'cold-start' | 'no-feedback' | 'always' = 'selective';
/**
 * Weight of the embedding ranking in the fusion with the lexical + graph ranking (chosen with
 * {@link DEFAULT_EMBEDDING_GUARD} and {@link DEFAULT_EMBEDDING_FLAT_SHARE} leaving one data set out:
 * docs/search.md, "Fused against lexical, per fold").
 */
export const DEFAULT_EMBEDDING_WEIGHT = 0.1;
/** Example arguments read per tool for the search field `examples` (of `inputExamples`, and of each JSON Schema `examples` array). */
export const DEFAULT_SEARCH_MAX_EXAMPLES_PER_TOOL = 10;
/** Values, arrays and objects of one tool's examples visited for search (one huge or deep example stays cheap). */
export const DEFAULT_SEARCH_EXAMPLE_MAX_NODES = 500;
/** Nesting depth of an example argument read for search. */
export const DEFAULT_SEARCH_EXAMPLE_MAX_DEPTH = 6;
/** Characters of one tool's example text indexed by search. */
export const DEFAULT_SEARCH_EXAMPLE_MAX_CHARS = 2_000;
/** Hits of the default ranking that keep their places when embeddings are fused (`search.embeddings.guard`). */
export const DEFAULT_EMBEDDING_GUARD = 7;
/**
 * `search.embeddings.flatShare`: embeddings are fused into a query's ranking only when it has no
 * head, i.e. its 10th hit scores at least this share of its best (the statistic RM3's
 * `'selective'` rule reads); a ranking with a head keeps its order, and the embedding only adds
 * hits after its last when it has fewer than the page asks. 0 fuses every query.
 */
export const DEFAULT_EMBEDDING_FLAT_SHARE = 0.75;
/** Largest `search.embeddings.guard` accepted (the fusion reads at most this many hits of each list). */
export const DEFAULT_MAX_EMBEDDING_GUARD = 50;
/** The `store.namespace` of a configuration built in memory (no file to name it after). */
export const IN_MEMORY_STORE_NAMESPACE = '(configuration built in memory)';

/**
 * Term–tool pairs query feedback keeps in memory (the forgetting rule of docs/search.md: past
 * this bound by a tenth, the pairs with the smallest decayed counts are forgotten down to it).
 */
export const DEFAULT_MAX_FEEDBACK_PAIRS = 100_000;
/**
 * Tools with feedback evidence that one query reads into the ranking, the strongest first (the
 * rest could not reach the results: their learned share is a fraction of the strongest ones').
 */
export const DEFAULT_FEEDBACK_CANDIDATES = 32;
/**
 * Tools (each in each direction) whose strongest graph neighbours search keeps between queries
 * (the walk reads the same hubs for many queries); the whole cache is dropped when a run is
 * recorded, the catalog changes, or it holds this many.
 */
export const DEFAULT_GRAPH_NEIGHBOUR_CACHE_ENTRIES = 20_000;
/**
 * Distinct field texts (servers, descriptions, parameter lists) a catalog build remembers the terms
 * of, so identical texts are tokenised once; the memo is cleared when it holds this many, and
 * dropped when the build ends.
 */
export const DEFAULT_BUILD_MEMO_TEXTS = 50_000;
/**
 * The search index's postings are immutable typed arrays built in one pass over the documents;
 * documents added after that go to a small delta segment, merged into a rebuild of the postings
 * once its postings exceed this share of the main segment's (or {@link DEFAULT_BM25_DELTA_MIN_POSTINGS}).
 */
export const DEFAULT_BM25_DELTA_SHARE = 0.25;
/** Postings the delta segment may hold before a merge, however small the main segment is. */
export const DEFAULT_BM25_DELTA_MIN_POSTINGS = 4_096;
/**
 * Share of the live postings that removed documents may still occupy in the postings and the
 * forward index before the next query rebuilds them without those documents (and forgets terms
 * no document holds any more).
 */
export const DEFAULT_BM25_DEAD_SHARE = 0.5;

// Result handles (issue 29, docs/data.md): a large tool result stays on the host.
/** Bytes of a tool result from which the script gets a handle instead of a copy (smaller results are copied as always). */
export const DEFAULT_RESULT_HANDLE_MIN_BYTES = 16 * 1_048_576;
/** Bytes of a held result from which it is written to the run's temp file instead of kept in memory. */
export const DEFAULT_RESULT_HANDLE_SPILL_BYTES = 128 * 1_048_576;
/** Bytes of rows one step of a handle's iteration (`for await`, `slice`) brings into the sandbox at most. */
export const DEFAULT_RESULT_HANDLE_CHUNK_BYTES = 1_048_576;
/** Bytes a handle's `value()`, `pick()` or `filter()` may copy into the sandbox at once. */
export const DEFAULT_RESULT_HANDLE_READ_MAX_BYTES = 8 * 1_048_576;
/** Results one run may hold as handles (its temp file's results count too). */
export const DEFAULT_RESULT_HANDLE_MAX_PER_RUN = 64;
/** Bytes of held results one run keeps in memory; past it a new one is spilled whatever its size. */
export const DEFAULT_RESULT_HANDLE_MAX_MEMORY_BYTES = 512 * 1_048_576;
/** Groups `groupBy` returns at most; more is refused with a hint to group by a field with fewer values. */
export const DEFAULT_RESULT_HANDLE_MAX_GROUPS = 10_000;
/** Depth of a tool's arguments searched for handles to substitute. */
export const DEFAULT_RESULT_HANDLE_MAX_ARGS_DEPTH = 64;
/** Rows a reduction walks before it yields the host's event loop once. */
export const DEFAULT_RESULT_HANDLE_YIELD_ROWS = 20_000;

// Learned result shapes (issue 29, docs/data.md): the output type of a tool without `outputSchema`.
/** Nesting of a learned result shape; deeper values are declared by their type only (`object`, `unknown[]`). */
export const DEFAULT_RESULT_SHAPE_MAX_DEPTH = 6;
/** Keys of one object in a learned shape (the most often seen are kept; the rest become an index signature). */
export const DEFAULT_RESULT_SHAPE_MAX_KEYS = 40;
/** Distinct strings a field may take and still be declared a string-literal union (more: `string`). */
export const DEFAULT_RESULT_SHAPE_MAX_LITERALS = 8;
/** Characters of a string kept as a literal of a learned shape (longer: `string`, never kept). */
export const DEFAULT_RESULT_SHAPE_MAX_LITERAL_CHARS = 24;
/** Times each literal of a union must have been seen before the union is declared (a value seen once is never shown). */
export const DEFAULT_RESULT_SHAPE_LITERAL_MIN_COUNT = 2;
/** Bytes of one learned shape's JSON; past it literals, then the deepest levels, are dropped. */
export const DEFAULT_RESULT_SHAPE_MAX_BYTES = 16 * 1024;
/** Values one shape inference visits at most (a 100 MB result is sampled, never walked whole). */
export const DEFAULT_RESULT_SHAPE_MAX_NODES = 2_000;
/** Items of one array a shape inference samples (spread evenly over the array). */
export const DEFAULT_RESULT_SHAPE_SAMPLE_ITEMS = 20;
/** Bytes of JSON text results one run parses after it ends to learn their shapes (the rest are not learned; a result held as a handle is learned from the value the host parsed to hold it). */
export const DEFAULT_RESULT_SHAPE_PARSE_MAX_BYTES = 4 * 1_048_576;
/** Results of one tool a run learns from (a `pages()` loop of 500 pages learns from the first few). */
export const DEFAULT_RESULT_SHAPE_SAMPLES_PER_RUN = 4;
/** Tools a usage history keeps learned shapes of; past it new tools are not learned. */
export const DEFAULT_RESULT_SHAPE_MAX_TOOLS = 10_000;
/** Attempts of one shape merge against writers elsewhere in a fleet (compare-and-set) before it gives up. */
export const DEFAULT_RESULT_SHAPE_MERGE_ATTEMPTS = 8;

/** Tools (client tools plus server tools) one vendor-endpoint request may declare. */
export const DEFAULT_VENDOR_MAX_TOOLS = 256;
/** Messages (Anthropic) or input items (OpenAI) one vendor-endpoint request may carry. */
export const DEFAULT_VENDOR_MAX_MESSAGES = 1_000;
/** Model turns one vendor-endpoint request may take before it answers (`stop_reason: "max_tokens"`-free cut: `pause_turn`). */
export const DEFAULT_VENDOR_MAX_MODEL_TURNS = 16;
/** Scripts paused on client tool calls that one process keeps in memory (the oldest is dropped past it). */
export const DEFAULT_VENDOR_MAX_PAUSED_RUNS = 256;
/** Milliseconds a paused script's container stays valid (its `expires_at`). */
export const DEFAULT_VENDOR_CONTAINER_TTL_MS = 30 * 60_000;
/** Milliseconds between two reads of `serve.vendorJournalDir` that remove expired paused journals (amortised over requests, never one per request). */
export const DEFAULT_VENDOR_PAUSED_SWEEP_MS = 60_000;
/** Files of `serve.vendorJournalDir` one sweep reads at most (the folder holds about `DEFAULT_VENDOR_MAX_PAUSED_RUNS`). */
export const DEFAULT_VENDOR_PAUSED_SWEEP_MAX_FILES = 4 * 1_024;
/** Milliseconds one serve process holds a paused run of Redis or PostgreSQL while it runs a turn of it (another process's request waits for it, then is refused); a process that died frees it after this. */
export const DEFAULT_VENDOR_PAUSED_LEASE_MS = 5 * 60_000;
/** Milliseconds a script that called a client tool may go on making client calls before it pauses (collects `Promise.all` calls). */
export const DEFAULT_VENDOR_PAUSE_SETTLE_MS = 25;
/** Characters of a container id (a signed journal cursor) accepted from a client. */
export const DEFAULT_VENDOR_MAX_CONTAINER_ID_CHARS = 512;
/** Tools one vendor tool search returns at most (`tool_reference` blocks, or tools of a `tool_search_output`); Anthropic's returns 3–5. */
export const DEFAULT_VENDOR_TOOL_SEARCH_MAX_RESULTS = 5;
/** Characters of a BM25 tool search query from the model (a regex pattern is bounded by `DEFAULT_MAX_REGEX_PATTERN_CHARS`, 200). */
export const DEFAULT_VENDOR_TOOL_SEARCH_MAX_QUERY_CHARS = 1_000;
