/**
 * @module
 * The zod 4 schema of a configuration file as written on disk: the `mcpServers` map that MCP
 * clients (Claude Code, Claude Desktop, Cursor, Windsurf, Cline; VS Code's `servers`) already use,
 * plus codecall's own keys. Every object is strict, so a typo is an error that names the key; keys
 * of other clients are removed before validation (`client-formats.ts`) and reported in a notice.
 * The resolved, fully-defaulted form is in `types.ts`.
 */
import { z } from 'zod';
import {
  DEFAULT_APPROVAL_RULE_MAX_POINTER_CHARS,
  DEFAULT_APPROVAL_RULE_MAX_VALUES,
  DEFAULT_MAX_EMBEDDING_GUARD,
  DEFAULT_ONNX_EMBEDDING_MAX_TOKENS_LIMIT,
} from './defaults.js';
import {
  DEFAULT_RESULT_HANDLE_MIN_BYTES,
  DEFAULT_RESULT_HANDLE_SPILL_BYTES,
  DEFAULT_STORE_MAX_NAMESPACE_CHARS,
} from './defaults.js';
import { MAX_TIMER_DELAY_MS } from '../util/long-timeout.js';

const positiveInt = z.number().int().positive();
/**
 * A duration handed to a timer codecall does not own (the MCP SDK's request timeout, provider
 * SDKs', `AbortSignal.timeout`, isolated-vm's), which would fire a longer one after 1 ms.
 */
const timerMs = positiveInt.max(MAX_TIMER_DELAY_MS);

/** `"direct"` (the model calls the tool itself) or `"code_execution"` (a script calls it). */
export const toolCallerSchema = z.enum(['direct', 'code_execution']);

const allowedCallersSchema = z.array(toolCallerSchema).refine((v) => new Set(v).size === v.length, {
  message: 'lists a caller twice',
});

/**
 * `requireApproval`: `true`, `false`, or a rule: approval is needed when the value at the JSON
 * pointer (RFC 6901) of the call's arguments equals one of `values`.
 */
export const requireApprovalSchema = z.union(
  [
    z.boolean(),
    z.strictObject({
      pointer: z
        .string()
        .max(DEFAULT_APPROVAL_RULE_MAX_POINTER_CHARS)
        .regex(/^(\/.*)?$/, {
          message: 'must be a JSON pointer: "" (the whole arguments) or "/field/…", e.g. "/path"',
        }),
      values: z.array(z.unknown()).min(1).max(DEFAULT_APPROVAL_RULE_MAX_VALUES),
    }),
  ],
  {
    error:
      'must be true, false, or a rule { "pointer": "/field", "values": [ … ] } (approval is needed when the argument at pointer equals one of values). Fix: write one of these',
  },
);

/** Per-tool policy: `mcpServers.<server>.tools.<tool>`. */
export const toolPolicySchema = z.strictObject({
  allowedCallers: allowedCallersSchema.optional(),
  requireApproval: requireApprovalSchema.optional(),
  deferLoading: z.boolean().optional(),
  inputExamples: z.array(z.record(z.string(), z.unknown())).max(20).optional(),
  timeoutMs: timerMs.optional(),
});

/**
 * Transport spellings clients write: `streamable-http` (several clients) and `streamableHttp`
 * (Cline) mean `http`.
 */
export const serverTypeSchema = z.enum(['stdio', 'http', 'streamable-http', 'streamableHttp', 'sse']);

/**
 * The MCP revision codecall speaks to one upstream server: `2025-11-25` (the `initialize`
 * handshake, SDK 1.x), `2026-07-28` (`server/discover`, no `initialize`, SDK v2 pinned) or `auto`
 * (probe with `server/discover`, fall back to `initialize`).
 */
export const upstreamProtocolSchema = z.enum(['2025-11-25', 'auto', '2026-07-28']);

/** `mcpServers.<name>.oauth`: how codecall obtains an access token for a remote server. */
export const upstreamOAuthSchema = z.strictObject({
  grant: z.enum(['authorization_code', 'client_credentials']).optional(),
  clientId: z.string().min(1).optional(),
  clientSecret: z.string().min(1).optional(),
  clientMetadataUrl: z.string().min(1).optional(),
  scope: z.string().min(1).optional(),
  redirectUrl: z.string().min(1).optional(),
});

/** One entry of `mcpServers` (or VS Code's `servers`). */
export const serverSchema = z.strictObject({
  // Client keys (Claude Code / Claude Desktop / Cursor / VS Code / Windsurf / Cline).
  type: serverTypeSchema.optional(),
  /** Cline's older spelling of `type`. */
  transportType: serverTypeSchema.optional(),
  command: z.string().min(1).optional(),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().min(1).optional(),
  url: z.string().min(1).optional(),
  /** Windsurf's spelling of `url`. */
  serverUrl: z.string().min(1).optional(),
  headers: z.record(z.string(), z.string()).optional(),
  disabled: z.boolean().optional(),
  // codecall keys.
  allowedCallers: allowedCallersSchema.optional(),
  requireApproval: requireApprovalSchema.optional(),
  deferLoading: z.boolean().optional(),
  connectTimeoutMs: timerMs.optional(),
  toolTimeoutMs: timerMs.optional(),
  maxConcurrentCalls: positiveInt.optional(),
  maxMessageBytes: positiveInt.optional(),
  protocol: upstreamProtocolSchema.optional(),
  oauth: upstreamOAuthSchema.optional(),
  tools: z.record(z.string(), toolPolicySchema).optional(),
});

/** `sandbox`: isolation mode, workers, and the limits of one script run. */
export const sandboxSchema = z.strictObject({
  mode: z.enum(['process', 'in-process']).optional(),
  workers: positiveInt.optional(),
  minWorkers: positiveInt.optional(),
  maxWorkers: positiveInt.optional(),
  workerIdleMs: timerMs.optional(),
  workerSpinUs: z.number().int().min(0).max(1_000_000).optional(),
  isolateRuns: z.number().int().min(1).max(1_000_000).optional(),
  wallTimeMs: timerMs.optional(),
  cpuTimeMs: timerMs.optional(),
  memoryMb: positiveInt.optional(),
  maxToolCalls: positiveInt.optional(),
  maxConcurrentToolCalls: positiveInt.optional(),
  maxToolArgsBytes: positiveInt.optional(),
  maxToolResultBytes: positiveInt.optional(),
  maxTotalToolResultBytes: positiveInt.optional(),
  maxStdoutBytes: positiveInt.optional(),
  maxStderrBytes: positiveInt.optional(),
  maxPendingToolArgsBytes: positiveInt.optional(),
  maxToolNameChars: positiveInt.optional(),
  maxFormattedValues: positiveInt.optional(),
  maxCodeBytes: positiveInt.optional(),
  sessionTtlMs: timerMs.optional(),
  maxSessions: positiveInt.optional(),
});

/** `history`: the usage-history store that teaches tool search. */
export const historySchema = z.strictObject({
  enabled: z.boolean().optional(),
  path: z.string().min(1).optional(),
  maxRuns: positiveInt.optional(),
});

/** `search`: tool-search tuning (resolved by the search module). */
export const searchSchema = z.strictObject({
  limit: positiveInt.optional(),
  beamWidth: positiveInt.optional(),
  beamDepth: z.number().int().nonnegative().optional(),
  graphWeight: z.number().min(0).max(1).optional(),
  stemming: z.enum(['light', 'porter', 'none']).optional(),
  verbNormalization: z.boolean().optional(),
  expansionDocs: z.number().int().min(0).max(100).optional(),
  expansionTerms: z.number().int().min(1).max(100).optional(),
  expansionWhen: z.enum(['selective', 'cold-start', 'no-feedback', 'always']).optional(),
  expansionFlatShare: z.number().min(0).max(1).optional(),
  expansionRerankDocs: z.number().int().min(1).max(100_000).optional(),
  expansionWeight: z.number().min(0).max(1).optional(),
  embeddings: z
    .strictObject({
      baseUrl: z.url({ protocol: /^https?$/ }).optional(),
      model: z.string().min(1).optional(),
      apiKey: z.string().optional(),
      dimensions: positiveInt.optional(),
      onnx: z
        .strictObject({
          model: z.string().min(1),
          tokenizer: z.string().min(1).optional(),
          pooling: z.enum(['mean', 'cls']).optional(),
          normalize: z.boolean().optional(),
          maxTokens: z.number().int().min(3).max(DEFAULT_ONNX_EMBEDDING_MAX_TOKENS_LIMIT).optional(),
          output: z.string().min(1).optional(),
          threads: positiveInt.max(256).optional(),
        })
        .optional(),
      cache: z.union([z.string().min(1), z.literal(false)]).optional(),
      maxCacheEntries: positiveInt.optional(),
      batchSize: positiveInt.optional(),
      timeoutMs: timerMs.optional(),
      weight: z.number().min(0).max(100).optional(),
      guard: z.number().int().min(0).max(DEFAULT_MAX_EMBEDDING_GUARD).optional(),
      flatShare: z
        .number()
        .min(0, "flatShare is a share of the best hit's score, from 0 (fuse every query) to 1.")
        .max(1, "flatShare is a share of the best hit's score, from 0 (fuse every query) to 1.")
        .optional(),
    })
    .superRefine((value, context) => {
      const api = value.baseUrl !== undefined;
      if (api && value.onnx !== undefined) {
        context.addIssue({
          code: 'custom',
          path: ['onnx'],
          message:
            'search.embeddings takes either baseUrl + model (an embeddings API) or onnx (a model on disk), not both: remove one.',
        });
      } else if (!api && value.onnx === undefined) {
        context.addIssue({
          code: 'custom',
          path: [],
          message:
            'search.embeddings needs baseUrl + model (an embeddings API, e.g. "baseUrl": "http://localhost:11434/v1", "model": "nomic-embed-text") or onnx (a model on disk, e.g. "onnx": { "model": "models/all-MiniLM-L6-v2/model.onnx" }).',
        });
      } else if (api && value.model === undefined) {
        context.addIssue({
          code: 'custom',
          path: ['model'],
          message:
            'search.embeddings.model is required with baseUrl: name the embedding model (e.g. "nomic-embed-text").',
        });
      } else if (!api) {
        for (const key of ['model', 'apiKey', 'dimensions'] as const) {
          if (value[key] !== undefined)
            context.addIssue({
              code: 'custom',
              path: [key],
              message: `search.embeddings.${key} belongs to the API form (with baseUrl); with onnx, name the file in onnx.model and remove ${key}.`,
            });
        }
      }
    })
    .optional(),
});

/** `agent`: the model loop (resolved by the agent module). */
export const agentSchema = z.strictObject({
  model: z.string().min(1).optional(),
  maxSteps: positiveInt.optional(),
  maxOutputTokens: positiveInt.optional(),
});

/** `serve`: settings of `codecall serve --http` (command-line flags and the environment win). */
export const serveSchema = z.strictObject({
  host: z.string().min(1).optional(),
  port: z.number().int().min(0).max(65_535).optional(),
  token: z.string().optional(),
  allowedOrigins: z.array(z.string().min(1)).optional(),
  maxConcurrentRuns: positiveInt.optional(),
  maxSessions: positiveInt.optional(),
  maxSessionsPerClient: positiveInt.optional(),
  sessionIdleMs: positiveInt.optional(),
  learning: z.enum(['shared', 'off']).optional(),
  waitForServersMs: z.number().int().min(0).optional(),
  searchWaitForServersMs: z.number().int().min(0).optional(),
  originalNames: z.boolean().optional(),
  maxSubscriptionsPerSession: positiveInt.optional(),
  youngGenerationMaxMb: z.number().int().min(0).optional(),
  idleCollectMs: z.number().int().min(0).optional(),
  models: z.record(z.string().min(1), z.string().min(1)).optional(),
  vendorSecret: z.string().min(16).optional(),
  vendorJournalDir: z.string().min(1).optional(),
  vendorContainerTtlMs: positiveInt.optional(),
  telemetry: z.boolean().optional(),
  taskTtlMs: positiveInt.optional(),
  taskPollIntervalMs: positiveInt.optional(),
  maxTasksPerClient: positiveInt.optional(),
  mcp2026: z.boolean().optional(),
});

/** `jobs`: where `codecall serve --http` and the job client keep jobs (local, or BullMQ on Redis). */
export const jobsSchema = z.strictObject({
  backend: z.enum(['local', 'bullmq', 'postgres']).optional(),
  connection: z.string().min(1).optional(),
  queue: z.string().min(1).max(128).optional(),
  concurrency: positiveInt.optional(),
  /** Mount the BullMQ dashboard at /admin/queues on `codecall serve --http` (BullMQ backend only). */
  dashboard: z.boolean().optional(),
  /** Time an exec job's call waits for `codecall jobs approve` before the job ends. */
  approvalTimeoutMs: positiveInt.optional(),
  /** Jobs the local backend keeps queued; past it `POST /v1/jobs` answers 503. */
  maxWaiting: positiveInt.optional(),
  /** Jobs the local backend keeps parked waiting for an approval; past it `POST /v1/jobs` answers 503. */
  maxParked: positiveInt.optional(),
});

/** `approvals`: how long a call that needs approval waits, and the default for destructive tools. */
export const approvalsSchema = z.strictObject({
  // Also an MCP elicitation's request timeout, and it counts against `sandbox.wallTimeMs`.
  timeoutMs: timerMs.optional(),
  requireForDestructive: z.boolean().optional(),
});

/** `store`: JSON values scripts keep across runs with `store.set` / `store.get`. */
export const storeSchema = z.strictObject({
  enabled: z.boolean().optional(),
  namespace: z.string().min(1).max(DEFAULT_STORE_MAX_NAMESPACE_CHARS).optional(),
  scope: z.enum(['client', 'shared']).optional(),
  maxValueBytes: positiveInt.optional(),
  maxNamespaceBytes: positiveInt.optional(),
});

/** `resultHandles`: when a tool result stays on the host as a handle, and when it is spilled to disk (docs/data.md). */
export const resultHandlesSchema = z
  .strictObject({
    minBytes: positiveInt.optional(),
    spillBytes: positiveInt.optional(),
    linkRoots: z.array(z.string().min(1)).max(64).optional(),
  })
  .superRefine((value, context) => {
    const minBytes = value.minBytes ?? DEFAULT_RESULT_HANDLE_MIN_BYTES;
    const spillBytes = value.spillBytes ?? DEFAULT_RESULT_HANDLE_SPILL_BYTES;
    if (spillBytes < minBytes)
      context.addIssue({
        code: 'custom',
        path: ['spillBytes'],
        message: `resultHandles.spillBytes (${spillBytes}) must be at least resultHandles.minBytes (${minBytes}): only a held result is spilled. Raise spillBytes or lower minBytes.`,
      });
  });

/**
 * Keys other MCP clients write that codecall does not use: dropped before validation and listed
 * in one notice. Any other unknown key is dropped the same way unless it is close to a codecall
 * key, which stays an error with "did you mean".
 */
export const FOREIGN_TOP_LEVEL_KEYS = ['globalShortcut', 'preferences'] as const;
/** Server keys of other clients (Cline, VS Code, Cursor, Windsurf) that codecall does not use. */
export const FOREIGN_SERVER_KEYS = [
  'alwaysAllow',
  'autoApprove',
  'timeout',
  'envFile',
  'description',
  'dev',
  'gallery',
  'version',
  'auth',
  'oauth',
  'networkTimeout',
  'disabledTools',
] as const;

/** The whole file. */
export const configFileSchema = z.strictObject({
  $schema: z.string().optional(),
  mcpServers: z.record(z.string(), serverSchema).optional(),
  /** VS Code's name for `mcpServers` (`.vscode/mcp.json`). */
  servers: z.record(z.string(), serverSchema).optional(),
  sandbox: sandboxSchema.optional(),
  history: historySchema.optional(),
  search: searchSchema.optional(),
  agent: agentSchema.optional(),
  serve: serveSchema.optional(),
  jobs: jobsSchema.optional(),
  approvals: approvalsSchema.optional(),
  store: storeSchema.optional(),
  resultHandles: resultHandlesSchema.optional(),
});

/** A configuration file as parsed (before defaults). */
export type ConfigFile = z.infer<typeof configFileSchema>;
/** One server entry as parsed (before defaults). */
export type ServerEntry = z.infer<typeof serverSchema>;
