/**
 * @module
 * `codecall serve`: codecall as an MCP server in front of every configured server. stdio by
 * default (clients spawn it); `--http` serves Streamable HTTP at `/mcp`. Logs go to stderr
 * only (in stdio mode stdout is the protocol). On SIGINT/SIGTERM, or when the stdio client
 * closes stdin, in-flight runs are cancelled, child MCP servers exit and usage history is
 * flushed; then the command resolves with 0.
 */
import type { Readable, Writable } from 'node:stream';
import { loadConfig, type ServeConfig } from '../../config/index.js';
import { isCodecallError } from '../../errors.js';
import { CodecallRuntime } from '../../execute/index.js';
import type { JobBackend, JobDashboardRoutes } from '../../jobs/index.js';
// The modules the stdio server needs, not the server barrel: `--http` loads the HTTP server, the
// jobs routes and the agent they run on demand, so a stdio client's `initialize` waits for none of it.
import type { ExecuteCodeEvent } from '../../server/create-codecall-server.js';
import { startHeapPolicy } from '../../server/heap-policy.js';
import { assertSafeBinding, isLoopbackHost } from '../../server/http-security.js';
import { loadTracingApi } from '../../server/request-tracing.js';
import { RunLimiter } from '../../server/run-limiter.js';
import { startStdioServer } from '../../server/start-stdio-server.js';
import type { HttpRoutes } from '../../server/start-http-server.js';
import type { JobStateStore } from '../../store/job-state.js';
import { parseCommandArgs, UsageError, type CliCommand, type CliIo } from '../command.js';
import { configNoticeWriter } from '../config-notices.js';
import { neutralizeControls } from '../terminal-text.js';
import { canPrompt, ensureConfigTrusted } from '../trust.js';
import { setLongTimeout, type LongTimeout } from '../../util/long-timeout.js';
import { traceStartup } from '../../util/startup-trace.js';
import { serveHelp, SERVE_TOKEN_ENV } from './serve.help.js';
export { SERVE_TOKEN_ENV } from './serve.help.js';

/**
 * Parsed arguments of `codecall serve`: what the command line (and, for the token,
 * `$CODECALL_SERVE_TOKEN`) says. Unset fields fall back to the configuration's `serve` section,
 * then to the defaults ({@link resolveServeSettings}).
 */
export interface ServeArgs {
  config?: string;
  http: boolean;
  host?: string;
  port?: number;
  token?: string;
  /** `--allow-origin` values; when any is given they replace `serve.allowedOrigins`. */
  allowedOrigins: string[];
  maxConcurrentRuns?: number;
  passThrough: boolean;
  /** `--redis`: jobs go to BullMQ on this Redis. */
  redis?: string;
  /** `--dashboard`: mount the BullMQ dashboard at /admin/queues (default: `jobs.dashboard`). */
  dashboard?: boolean;
  /** `--legacy-sse`: also serve the legacy HTTP+SSE transport at /sse and /messages. */
  legacySse?: boolean;
  /**
   * `--mcp-2026` / `--mcp-2026=false` (`--no-mcp-2026`): answer MCP 2026-07-28 clients too, or
   * not (default: `serve.mcp2026`, on; see docs/mcp-2026.md).
   */
  mcp2026?: boolean;
}

/** Settings of one `codecall serve`, every source merged: flag > environment > config > default. */
export interface ServeSettings {
  http: boolean;
  host: string;
  port: number;
  token?: string;
  allowedOrigins: string[];
  maxConcurrentRuns: number;
  passThrough: boolean;
}

function positiveInteger(flag: string, value: string, allowZero: boolean): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || (!allowZero && n === 0))
    throw new UsageError(
      `${flag} needs ${allowZero ? 'a number ≥ 0' : 'a positive number'}; got "${value}".`,
    );
  return n;
}

/**
 * Whether the 2026-07-28 legs' optional package resolves (without loading it: the stdio leg loads
 * it on a 2026 opening only).
 */
function modernPackageInstalled(): boolean {
  try {
    import.meta.resolve('@modelcontextprotocol/server');
    return true;
  } catch {
    return false;
  }
}

/** Parses the arguments of `codecall serve` (`env` supplies the token default). */
export function parseServeArgs(argv: string[], env: NodeJS.ProcessEnv = {}): ServeArgs {
  // `--mcp-2026=false` turns the 2026 era off (it is on by default); parseArgs takes no value
  // after a boolean flag, so the value is read here.
  let mcp2026: boolean | undefined;
  argv = argv.filter((arg) => {
    const match = /^--mcp-2026=(.*)$/s.exec(arg);
    if (match === null) return true;
    if (match[1] !== 'true' && match[1] !== 'false')
      throw new UsageError(
        `--mcp-2026 takes true or false (or nothing, meaning true); got "${match[1]!.slice(0, 40)}".`,
      );
    mcp2026 = match[1] === 'true';
    return false;
  });
  const { values } = parseCommandArgs({
    args: argv,
    options: {
      config: { type: 'string' },
      http: { type: 'boolean' },
      host: { type: 'string' },
      port: { type: 'string' },
      token: { type: 'string' },
      'allow-origin': { type: 'string', multiple: true },
      'max-concurrent-runs': { type: 'string' },
      'no-pass-through': { type: 'boolean' },
      redis: { type: 'string' },
      dashboard: { type: 'boolean' },
      'legacy-sse': { type: 'boolean' },
      'mcp-2026': { type: 'boolean' },
      'no-mcp-2026': { type: 'boolean' },
    },
    allowPositionals: false,
  });
  const args: ServeArgs = {
    http: values.http === true,
    allowedOrigins: values['allow-origin'] ?? [],
    passThrough: values['no-pass-through'] !== true,
  };
  if (values.dashboard === true) args.dashboard = true;
  if (values['legacy-sse'] === true) args.legacySse = true;
  if (values['mcp-2026'] === true) mcp2026 = true;
  if (values['no-mcp-2026'] === true) {
    if (mcp2026 === true)
      throw new UsageError('--mcp-2026 and --no-mcp-2026 contradict each other: give one.');
    mcp2026 = false;
  }
  if (mcp2026 !== undefined) args.mcp2026 = mcp2026;
  if (values.config !== undefined) args.config = values.config;
  if (values.host !== undefined) args.host = values.host;
  if (values.port !== undefined) {
    args.port = positiveInteger('--port', values.port, true);
    if (args.port > 65_535) throw new UsageError(`--port must be at most 65535; got ${args.port}.`);
  }
  if (values['max-concurrent-runs'] !== undefined)
    args.maxConcurrentRuns = positiveInteger('--max-concurrent-runs', values['max-concurrent-runs'], false);
  if (values.redis !== undefined) args.redis = values.redis;
  let token = values.token;
  if (
    !args.http &&
    (args.host !== undefined ||
      args.port !== undefined ||
      token !== undefined ||
      args.allowedOrigins.length > 0 ||
      args.dashboard === true)
  )
    throw new UsageError('--host, --port, --token, --allow-origin and --dashboard apply to --http only.');
  if (args.legacySse === true && !args.http) throw new UsageError('--legacy-sse applies to --http only.');
  token ??= env[SERVE_TOKEN_ENV] === '' ? undefined : env[SERVE_TOKEN_ENV];
  if (args.http && token !== undefined) args.token = token;
  return args;
}

/**
 * Merges the command line (flags, then `$CODECALL_SERVE_TOKEN`, both in `args`) over the
 * configuration's `serve` section, over the defaults.
 */
export function resolveServeSettings(args: ServeArgs, config: ServeConfig): ServeSettings {
  const token = args.token ?? (args.http ? config.token : undefined);
  return {
    http: args.http,
    host: args.host ?? config.host,
    port: args.port ?? config.port,
    ...(token !== undefined ? { token } : {}),
    allowedOrigins: args.allowedOrigins.length > 0 ? [...args.allowedOrigins] : [...config.allowedOrigins],
    maxConcurrentRuns: args.maxConcurrentRuns ?? config.maxConcurrentRuns,
    passThrough: args.passThrough,
  };
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

async function run(argv: string[], io: CliIo): Promise<number> {
  traceStartup('serve: loaded');
  const parsed = parseServeArgs(argv, io.env);
  // Over stdio, stdin is the MCP channel: never prompt there.
  await ensureConfigTrusted(io, { config: parsed.config, interactive: parsed.http && canPrompt(io) });
  const config = await loadConfig({
    ...(parsed.config !== undefined ? { path: parsed.config } : {}),
    cwd: io.cwd,
    env: io.env,
    onNotice: configNoticeWriter(io),
  });
  const args = resolveServeSettings(parsed, config.serve);
  // The 2026-07-28 legs: on unless --mcp-2026=false or serve.mcp2026: false (the flag wins).
  const mcp2026 = parsed.mcp2026 ?? config.serve.mcp2026;
  // Before any MCP server is spawned: an unsafe binding never starts anything.
  if (args.http) assertSafeBinding(args.host, args.token);
  // serve.telemetry without its package fails here, naming the setting, not on the first call.
  if (config.serve.telemetry) await loadTracingApi();
  const log = (line: string): void => {
    io.stderr.write(`codecall serve: ${line}\n`);
  };
  // Servers connect in the background: the client gets its answer to initialize at once, and
  // notifications/tools/list_changed as servers join (serve.waitForServersMs waits up to a bound).
  const runtime = await CodecallRuntime.open({
    config,
    // Over stdio the sandbox starts once the client is initialized (below): a worker's start
    // would otherwise hold the answer to `initialize`, which clients give a few seconds.
    parts: { sandbox: args.http ? 'eager' : 'lazy' },
    tools: {
      background: true,
      // The whole message: a start error's stderr tail, environment names and hints are the
      // developer's only clue (a child that hangs behind a custom CA says nothing else).
      onServerError: (event) =>
        log(`${event.server}: ${neutralizeControls(event.error.message).replaceAll('\n', '\n  ')}`),
    },
    onHistoryError: (error) => log(`usage history: ${(error as Error)?.message ?? String(error)}`),
  });
  traceStartup('serve: runtime open');
  const waitMs = config.serve.waitForServersMs;
  if (waitMs > 0) {
    let timer: LongTimeout | undefined;
    await Promise.race([
      runtime.tools.started(),
      new Promise<void>((resolve) => (timer = setLongTimeout(resolve, waitMs))),
      aborted(io.signal),
    ]);
    timer?.cancel();
  }
  const unsubscribe = runtime.tools.onCatalogChange((catalog) => {
    const connected = runtime.tools.serverStatus().filter((s) => s.state === 'connected').length;
    log(`${catalog.length} tools from ${connected} connected servers`);
  });
  const onExecute = ({ result }: ExecuteCodeEvent): void => {
    const calls = result.toolCalls.length;
    log(
      `execute_code ${result.status === 'ok' ? 'ok' : `error (${result.error?.code ?? 'unknown'})`} in ` +
        `${Math.round(result.stats.wallMs)} ms, ${calls} tool call${calls === 1 ? '' : 's'}`,
    );
  };
  const serverOptions = {
    runtime,
    onExecute,
    onError: (error: unknown) => log(`unexpected error: ${(error as Error)?.stack ?? String(error)}`),
    passThrough: args.passThrough,
    runLimiter: new RunLimiter({ maxConcurrent: args.maxConcurrentRuns }),
    learning: config.serve.learning,
    originalNames: config.serve.originalNames,
    maxSubscriptions: config.serve.maxSubscriptionsPerSession,
    searchWaitForServersMs: config.serve.searchWaitForServersMs,
    // Each client its own store (an HTTP session's, stdio's one client's), unless "shared".
    ...(config.store.scope === 'shared' ? { store: 'runtime' as const } : {}),
  };
  const tools = runtime.catalog();
  const servers = new Set(tools.map((t) => t.server)).size;
  const starting = runtime.tools.serverStatus().filter((s) => s.state === 'connecting').length;
  const more = starting > 0 ? `; ${starting} more starting` : '';
  // A long-running server: a bounded young generation, and memory given back when idle.
  const heap = startHeapPolicy({
    youngGenerationMaxMb: config.serve.youngGenerationMaxMb,
    idleCollectMs: config.serve.idleCollectMs,
  });
  let close: (() => Promise<void>) | undefined;
  let jobs: JobBackend | undefined;
  let dashboard: JobDashboardRoutes | undefined;
  let approvalsPage: HttpRoutes | undefined;
  let legacySse: (HttpRoutes & { close(): Promise<void> }) | undefined;
  // Issue 28: journals of 2026-07-28 runs paused on an approval, shared when the jobs backend is.
  let journals: JobStateStore | undefined;
  let vendor: { close(): Promise<void> } | undefined;
  try {
    if (args.http) {
      const [{ startHttpServer }, { createJobRoutes, openJobBackend, openJobDashboard, RuntimeRegistry }] =
        await Promise.all([import('../../server/start-http-server.js'), import('../../jobs/index.js')]);
      if (parsed.legacySse === true) {
        const { createLegacySseRoutes } = await import('../../server/legacy-sse-routes.js');
        legacySse = createLegacySseRoutes(serverOptions);
      }
      const jobsConfig = {
        ...config.jobs,
        ...(parsed.redis !== undefined ? { backend: 'bullmq' as const, connection: parsed.redis } : {}),
      };
      jobs = await openJobBackend({
        jobs: jobsConfig,
        runtimes: new RuntimeRegistry({ configs: {}, borrowed: { default: runtime } }),
        env: io.env,
      });
      log(
        `jobs at /v1/jobs (${jobs.kind === 'local' ? 'run in this process' : jobs.kind === 'postgres' ? 'on PostgreSQL for codecall worker' : 'on BullMQ for codecall worker'})`,
      );
      if (parsed.dashboard ?? jobsConfig.dashboard) {
        if (jobs.kind !== 'bullmq' || jobsConfig.connection === undefined)
          throw new UsageError(
            'the dashboard (--dashboard, jobs.dashboard) shows a BullMQ queue: add --redis <url> or set jobs.connection.',
          );
        dashboard = await openJobDashboard({ connection: jobsConfig.connection, queue: jobsConfig.queue });
        const { createJobApprovalsPage, JOB_APPROVALS_PAGE_PATH } =
          await import('../../jobs/job-approvals-page.js');
        approvalsPage = createJobApprovalsPage(jobs, { dashboardPath: '/admin/queues' });
        log(
          `dashboard at /admin/queues, approvals at ${JOB_APPROVALS_PAGE_PATH}` +
            (args.token !== undefined ? ' (open /admin/queues?token=<token> once in a browser)' : ''),
        );
      }
      if (jobsConfig.connection !== undefined && jobsConfig.backend === 'bullmq') {
        const { RedisJobStateStore } = await import('../../store/job-state-redis.js');
        journals = await RedisJobStateStore.open({
          redis: jobsConfig.connection,
          prefix: 'codecall:mcp-2026:',
        });
      } else if (jobsConfig.connection !== undefined && jobsConfig.backend === 'postgres') {
        const { PostgresJobStateStore } = await import('../../store/job-state-postgres.js');
        journals = await PostgresJobStateStore.open({ connection: jobsConfig.connection, scope: 'mcp-2026' });
      }
      const { openVendorRoutes } = await import('../vendor-mount.js');
      const vendorRoutes = await openVendorRoutes(runtime, config, io.env, jobsConfig);
      vendor = vendorRoutes;
      log(
        `Anthropic Messages at /v1/messages, OpenAI Responses at /v1/responses (paused scripts ${vendorRoutes.pausedWhere}; docs/vendor-endpoints.md)`,
      );
      const http = await startHttpServer({
        ...serverOptions,
        mcp2026,
        // Issue 28: what lets any node resume a 2026-07-28 run paused on an approval.
        ...(io.env.CODECALL_REQUEST_STATE_KEY !== undefined
          ? { requestStateKey: io.env.CODECALL_REQUEST_STATE_KEY }
          : {}),
        ...(journals !== undefined ? { journals } : {}),
        // Issue 28: 2026-07-28 clients that declare the Tasks extension get execute_code as a task on these jobs.
        tasks: {
          backend: jobs,
          ttlMs: config.serve.taskTtlMs,
          pollIntervalMs: config.serve.taskPollIntervalMs,
          maxPerClient: config.serve.maxTasksPerClient,
        },
        routes: [
          vendorRoutes,
          createJobRoutes(jobs),
          ...(dashboard ? [dashboard] : []),
          ...(approvalsPage ? [approvalsPage] : []),
          ...(legacySse ? [legacySse] : []),
        ],
        host: args.host,
        port: args.port,
        allowedOrigins: args.allowedOrigins,
        maxSessions: config.serve.maxSessions,
        maxSessionsPerClient: config.serve.maxSessionsPerClient,
        sessionIdleMs: config.serve.sessionIdleMs,
        ...(args.token !== undefined ? { token: args.token } : {}),
      });
      close = http.close;
      log(`listening on ${http.url} (${tools.length} tools from ${servers} servers${more})`);
      log(
        http.protocolRevisions.length > 1
          ? `MCP ${http.protocolRevisions.join(' and ')} (the latter stateless; --mcp-2026=false turns it off)`
          : mcp2026
            ? 'MCP 2025-11-25; for 2026-07-28 clients (stateless, input_required): npm install @modelcontextprotocol/server'
            : 'MCP 2025-11-25 (2026-07-28 off: --mcp-2026=false or serve.mcp2026: false)',
      );
      log(
        isLoopbackHost(args.host)
          ? `loopback only${args.token !== undefined ? '; bearer token required' : ''}; Origin and Host are checked`
          : `bound to ${args.host}, reachable from other machines: every request needs "Authorization: Bearer <token>"`,
      );
      await aborted(io.signal);
    } else {
      // Issue 28: a legacy client's execute_code with params.task runs on the jobs backend, opened
      // at the first task (a stdio client's initialize waits for none of it).
      const { createLegacyTasks } = await import('../../server/legacy-tasks.js');
      const legacyTasks = createLegacyTasks({
        backend: async () => {
          const { openJobBackend, RuntimeRegistry } = await import('../../jobs/index.js');
          jobs = await openJobBackend({
            jobs: config.jobs,
            runtimes: new RuntimeRegistry({ configs: {}, borrowed: { default: runtime } }),
            env: io.env,
          });
          return jobs;
        },
        ttlMs: config.serve.taskTtlMs,
        pollIntervalMs: config.serve.taskPollIntervalMs,
        maxPerClient: config.serve.maxTasksPerClient,
        approvalTimeoutMs: config.jobs.approvalTimeoutMs,
      });
      const stdio = await startStdioServer({
        ...serverOptions,
        legacyTasks,
        mcp2026,
        stdin: io.stdin as Readable,
        stdout: io.stdout as Writable,
        // A failed start is told here and again by the first run, which tries again.
        onInitialized: () => {
          traceStartup('serve: client initialized');
          void runtime.startSandbox().catch((error: unknown) => {
            // Closed while starting: shutting down, nothing to tell.
            if (isCodecallError(error) && error.code === 'CLOSED') return;
            log(`sandbox: ${neutralizeControls((error as Error)?.message ?? String(error))}`);
          });
        },
      });
      traceStartup('serve: stdio server started');
      close = stdio.close;
      log(`serving over stdio (${tools.length} tools from ${servers} servers${more})`);
      log(
        !mcp2026
          ? 'MCP 2025-11-25 (2026-07-28 off: --mcp-2026=false or serve.mcp2026: false)'
          : modernPackageInstalled()
            ? 'MCP 2025-11-25 and 2026-07-28 (the opening message picks the era; --mcp-2026=false turns 2026 off)'
            : 'MCP 2025-11-25; for 2026-07-28 clients: npm install @modelcontextprotocol/server',
      );
      await Promise.race([stdio.closed, aborted(io.signal)]);
    }
    log('shutting down');
    return 0;
  } finally {
    heap.close();
    unsubscribe();
    await close?.();
    await dashboard?.close();
    await legacySse?.close();
    await jobs?.close();
    await journals?.close();
    await vendor?.close();
    await runtime.close();
  }
}

/** `codecall serve`. */
export const serveCommand: CliCommand = {
  ...serveHelp,
  run,
};
