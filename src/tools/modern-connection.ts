/**
 * @module
 * The SDK v2 client (`@modelcontextprotocol/client`, an optional peer loaded on first use) for an
 * upstream server whose `mcpServers.<name>.protocol` is `2026-07-28` or `auto`: version
 * negotiation by `server/discover` (no `initialize` on a 2026 server; `auto` falls back to it),
 * raw paged `tools/list` whose `ttlMs` / `cacheScope` the caller caches by, and `tools/call` that
 * answers `input_required` rounds (multi round-trip requests) through the asker of the call.
 * Internal to `tools/`; {@link ServerConnection} keeps its guards (timeouts, concurrency, tool
 * sanitising) around it exactly as for the 1.x client.
 *
 * SDK docs: `docs/protocol-versions.md` (eras, pin, probe), `docs/clients/caching.md` (`ttlMs`,
 * `cacheScope`), `docs/clients/server-requests.md` (§ Cap or disable automatic fulfilment).
 */
import type * as ClientPackage from '@modelcontextprotocol/client';
import type { Transport as V1Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import {
  DEFAULT_UPSTREAM_INPUT_REQUESTS_MAX,
  DEFAULT_UPSTREAM_INPUT_REQUIRED_MAX_ROUNDS,
  DEFAULT_UPSTREAM_REQUEST_STATE_MAX_BYTES,
} from '../config/defaults.js';
import type { ServerConfig, UpstreamProtocol } from '../config/types.js';
import { CodecallError } from '../errors.js';
import { importOptional } from '../util/optional-package.js';
import { UpstreamOAuthProvider } from './oauth/oauth-provider.js';
import type { RawToolResult } from './normalize-result.js';
import {
  sendKeepingTask,
  settleUpstreamTask,
  UpstreamTasks,
  type UpstreamTaskMode,
} from './upstream-tasks-2026.js';

type ClientModule = typeof ClientPackage;
type V2Client = InstanceType<ClientModule['Client']>;
type V2Transport = Parameters<V2Client['connect']>[0];

/** What a 2026 upstream's `input_required` asks of codecall's client, one request at a time. */
export interface ModernInputRequest {
  method: 'elicitation/create' | 'sampling/createMessage';
  params: Record<string, unknown>;
}

/**
 * One `tools/call` a gateway relays for its own 2026-07-28 client: an `input_required` answer is
 * returned (not answered), and this call carries the client's answers to the previous one.
 */
export interface RelayedInputRound {
  /** The client's answers to the previous round (bare response objects), as it sent them. */
  inputResponses: Record<string, unknown> | undefined;
  /** The upstream's `requestState` of the previous round, byte-exact. */
  requestState: string | undefined;
  /**
   * What the client declared it can answer (`elicitation`, `sampling`, `roots`): the upstream is
   * told these, not codecall's own, so it asks only what the client can give (SEP-2322).
   */
  clientCapabilities: Record<string, unknown>;
}

/** An upstream's `input_required` answer, checked, for the gateway to relay to its client. */
export interface RelayedInputRequired extends RawToolResult {
  resultType: 'input_required';
  inputRequests: Record<string, { method: string; params: Record<string, unknown> }>;
  requestState: string | undefined;
}

/** The `_meta` key of the client capabilities in a 2026-07-28 request's envelope. */
const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';

/** The input requests a relayed round may carry (the 2026-07-28 embedded requests). */
const RELAYED_METHODS = new Set(['elicitation/create', 'sampling/createMessage', 'roots/list']);

/** Answers one embedded input request; rejects to fail the call. */
export type ModernAsker = (
  request: ModernInputRequest,
  signal: AbortSignal,
) => Promise<Record<string, unknown>>;

/** One page of `tools/list`, untrusted: tools are sanitised by the caller. */
export interface ModernToolsPage {
  tools: unknown[];
  nextCursor: string | undefined;
  /** The page's freshness hint (SEP-2549), as sent; undefined when absent or not a number. */
  ttlMs: number | undefined;
  cacheScope: 'public' | 'private' | undefined;
}

const FEATURE = 'Connecting an MCP server on the 2026-07-28 revision (mcpServers.<name>.protocol)';

const ToolsPageSchema = z.looseObject({
  tools: z.array(z.unknown()),
  nextCursor: z.string().optional(),
  ttlMs: z.unknown().optional(),
  cacheScope: z.unknown().optional(),
});

/** A `tools/call` answer: a result, or an `input_required` round (checked field by field below). */
const CallAnswerSchema = z.looseObject({ resultType: z.unknown().optional() });

/** The input requests codecall answers itself (through the asker of the call). */
const ANSWERED_METHODS: ReadonlySet<string> = new Set(['elicitation/create', 'sampling/createMessage']);

let clientModule: Promise<ClientModule> | undefined;

/** Loads `@modelcontextprotocol/client` once; `PACKAGE_MISSING` names the install command. */
export function loadClientModule(): Promise<ClientModule> {
  clientModule ??= importOptional<ClientModule>('@modelcontextprotocol/client', FEATURE);
  clientModule.catch(() => {
    clientModule = undefined;
  });
  return clientModule;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Options of {@link ModernClient.connect}. */
export interface ModernConnectOptions {
  config: ServerConfig;
  protocol: Exclude<UpstreamProtocol, '2025-11-25'>;
  /** The transport to use (a stdio one built by the caller); undefined: Streamable HTTP to `config.url`. */
  transport: V1Transport | undefined;
  /** Declare `elicitation` and `sampling` (someone can answer them). */
  canAsk: boolean;
  signal: AbortSignal;
  timeoutMs: number;
  /** Registers the era-independent handlers (notifications, server→client requests of a legacy fallback). */
  setup?: ((client: V2Client) => void) | undefined;
}

/**
 * One SDK v2 client connection. `era` is where negotiation landed: `modern` (2026-07-28, no
 * `initialize` was sent) or `legacy` (`auto` fell back to `initialize`).
 */
export class ModernClient {
  private constructor(
    readonly client: V2Client,
    readonly transport: V2Transport,
    private readonly serverName: string,
    private readonly tasks: UpstreamTasks,
  ) {}

  /** Negotiates the era and connects, within `timeoutMs`. */
  static async connect(options: ModernConnectOptions): Promise<ModernClient> {
    const sdk = await loadClientModule();
    const { config } = options;
    const plain = options.canAsk ? { sampling: {}, elicitation: { form: {} } } : {};
    const client = new sdk.Client(
      { name: 'codecall', version: '0.1.0' },
      {
        // The Tasks extension too (SEP-2663): a task answer is awaited, or relayed (upstream-tasks-2026.ts).
        capabilities: UpstreamTasks.capabilities(plain),
        versionNegotiation: {
          mode: options.protocol === 'auto' ? 'auto' : { pin: '2026-07-28' },
          probe: { timeoutMs: options.timeoutMs },
        },
        // codecall drives the rounds itself: each one goes to the asker of the call in flight.
        inputRequired: { autoFulfill: false },
      },
    );
    options.setup?.(client);
    let transport: V2Transport;
    if (options.transport) transport = options.transport as unknown as V2Transport;
    else if (config.transport === 'http')
      transport = new sdk.StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: config.headers },
        // The same provider as the 1.x path: the v2 interface is a superset with optional extras.
        ...(config.oauth
          ? { authProvider: new UpstreamOAuthProvider(config.name, config.oauth) as never }
          : {}),
      });
    else {
      const message = `"protocol": "${options.protocol}" needs a Streamable HTTP or stdio server (the 2026-07-28 revision has no SSE transport). Fix: set "type": "http", or remove "protocol".`;
      throw new CodecallError('CONFIG_INVALID', `mcpServers.${config.name}.protocol: ${message}`, {
        details: { issues: [{ path: `mcpServers.${config.name}.protocol`, message }] },
      });
    }
    await client.connect(transport, { signal: options.signal, timeout: options.timeoutMs });
    return new ModernClient(client, transport, config.name, UpstreamTasks.tap(transport, plain));
  }

  /** `modern` (2026-07-28) or `legacy` (`auto` fell back to `initialize`). */
  get era(): 'modern' | 'legacy' {
    return this.client.getProtocolEra() === 'modern' ? 'modern' : 'legacy';
  }

  /** What the server declared (`server/discover` or `initialize`). */
  get capabilities(): ServerCapabilities | undefined {
    return this.client.getServerCapabilities() as ServerCapabilities | undefined;
  }

  set onclose(listener: () => void) {
    this.client.onclose = listener;
  }

  /** One raw page of `tools/list` (not the SDK's cached `listTools()`: codecall sanitises each tool). */
  async listToolsPage(
    cursor: string | undefined,
    options: { signal: AbortSignal; timeout: number },
  ): Promise<ModernToolsPage> {
    const page = await this.client.request(
      { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
      ToolsPageSchema,
      options,
    );
    const ttl = page.ttlMs;
    const scope = page.cacheScope;
    return {
      tools: page.tools,
      nextCursor: page.nextCursor,
      ttlMs: typeof ttl === 'number' && Number.isFinite(ttl) ? ttl : undefined,
      cacheScope: scope === 'public' || scope === 'private' ? scope : undefined,
    };
  }

  /** Any other request, as `Client.request` of the 1.x SDK takes it (schema, signal, timeout). */
  request<T>(
    request: { method: string; params?: Record<string, unknown> | undefined },
    schema: z.ZodType<T>,
    options: { signal: AbortSignal; timeout: number },
  ): Promise<T> {
    return this.client.request(request as never, schema, options) as Promise<T>;
  }

  /**
   * A `prompts/get` or `resources/read` a gateway relays for its own 2026-07-28 client (the other
   * requests that may answer `input_required`, spec 2026-07-28 `basic/patterns/mrtr.mdx` §
   * Supported Requests): sent with the client's capabilities, answers and the upstream's state, as
   * {@link relayToolCall} sends a call; an `input_required` answer comes back checked against the
   * same bounds, any other is checked against `schema`.
   */
  async relayRequest<T>(
    request: { method: string; params?: Record<string, unknown> | undefined },
    schema: z.ZodType<T>,
    options: { signal: AbortSignal; timeout: number; qualifiedName: string; relay: RelayedInputRound },
  ): Promise<T | RelayedInputRequired> {
    const { relay } = options;
    const params: Record<string, unknown> = {
      ...request.params,
      _meta: {
        ...(request.params?._meta as Record<string, unknown> | undefined),
        [CLIENT_CAPABILITIES_KEY]: relay.clientCapabilities,
      },
      ...(relay.inputResponses !== undefined ? { inputResponses: relay.inputResponses } : {}),
      ...(relay.requestState !== undefined ? { requestState: relay.requestState } : {}),
    };
    const answer = await this.client.request({ method: request.method, params } as never, CallAnswerSchema, {
      signal: options.signal,
      timeout: options.timeout,
      allowInputRequired: true,
    });
    if (answer.resultType !== 'input_required') return schema.parse(answer);
    const { requests, requestState } = this.readRound(answer, options.qualifiedName, RELAYED_METHODS);
    return {
      resultType: 'input_required',
      inputRequests: Object.fromEntries(
        requests.map(([key, r]) => [key, { method: r.method, params: r.params }]),
      ),
      requestState,
    } as RelayedInputRequired;
  }

  /**
   * Calls a tool. An `input_required` answer (2026-07-28) is a round: each embedded request goes
   * to `asker`, and the call is made again with `inputResponses` and the byte-exact
   * `requestState`, at most {@link DEFAULT_UPSTREAM_INPUT_REQUIRED_MAX_ROUNDS} times. Without an
   * asker, or past the bounds, the call fails with a message saying why.
   */
  async callTool(
    name: string,
    args: unknown,
    options: {
      qualifiedName: string;
      meta: Record<string, unknown> | undefined;
      /** SEP-2243 `Mcp-Param-*` headers of this call (the transport sends them on every round). */
      headers: Record<string, string> | undefined;
      signal: AbortSignal;
      deadline: number;
      asker: ModernAsker | undefined;
      /** @defaultValue `await` */
      upstreamTask?: UpstreamTaskMode | undefined;
      /** Relay the round to the gateway's client instead of answering it (see {@link RelayedInputRound}). */
      relay?: RelayedInputRound | undefined;
    },
  ): Promise<RawToolResult | RelayedInputRequired> {
    const mode = options.upstreamTask ?? 'await';
    if (options.relay) return this.relayToolCall(name, args, { ...options, mode, relay: options.relay });
    const meta = { ...options.meta, ...this.tasks.metaFor(mode) };
    const base: Record<string, unknown> = {
      name,
      arguments: args as Record<string, unknown>,
      ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}),
    };
    let params = base;
    for (let round = 0; ; round++) {
      const answer = await this.sendToolCall(params, mode, options);
      const task = this.tasks.taskOf(answer);
      if (task !== undefined)
        return await settleUpstreamTask(task, {
          ...options,
          mode,
          serverName: this.serverName,
          request: (method, params, schema, legOptions) =>
            this.client.request({ method, params } as never, schema, legOptions) as never,
        });
      if (answer.resultType !== 'input_required') return answer as RawToolResult;
      if (round >= DEFAULT_UPSTREAM_INPUT_REQUIRED_MAX_ROUNDS)
        throw this.failure(
          options.qualifiedName,
          `it asked for input more than ${DEFAULT_UPSTREAM_INPUT_REQUIRED_MAX_ROUNDS} times in one call (DEFAULT_UPSTREAM_INPUT_REQUIRED_MAX_ROUNDS)`,
        );
      const { requests, requestState } = this.readRound(answer, options.qualifiedName);
      if (requests.length > 0 && !options.asker)
        throw this.failure(
          options.qualifiedName,
          `it asked for input (${requests.map(([, r]) => r.method).join(', ')}), and nobody who started this call can answer it here`,
        );
      const inputResponses: Record<string, unknown> = {};
      for (const [key, request] of requests) {
        options.signal.throwIfAborted();
        // Only ANSWERED_METHODS pass readRound here.
        inputResponses[key] = await options.asker!(request as ModernInputRequest, options.signal);
      }
      params = {
        ...base,
        ...(requests.length > 0 ? { inputResponses } : {}),
        ...(requestState !== undefined ? { requestState } : {}),
      };
    }
  }

  /**
   * One `tools/call` of a relayed round: the client's capabilities in the request's envelope (the
   * SDK lets a caller's `_meta` keys override the ones it attaches), its answers and the upstream's
   * state echoed; an `input_required` answer comes back checked against the same bounds.
   */
  private async relayToolCall(
    name: string,
    args: unknown,
    options: {
      qualifiedName: string;
      meta: Record<string, unknown> | undefined;
      signal: AbortSignal;
      /** SEP-2243 `Mcp-Param-*` headers of this call. */
      headers: Record<string, string> | undefined;
      deadline: number;
      mode: UpstreamTaskMode;
      relay: RelayedInputRound;
    },
  ): Promise<RawToolResult | RelayedInputRequired> {
    const { relay } = options;
    const params: Record<string, unknown> = {
      name,
      arguments: args as Record<string, unknown>,
      _meta: { ...options.meta, [CLIENT_CAPABILITIES_KEY]: relay.clientCapabilities },
      ...(relay.inputResponses !== undefined ? { inputResponses: relay.inputResponses } : {}),
      ...(relay.requestState !== undefined ? { requestState: relay.requestState } : {}),
    };
    const answer = await this.sendToolCall(params, options.mode, options);
    // The relayed client's capabilities say whether it takes a task (they carry the extension or not).
    const task = this.tasks.taskOf(answer);
    if (task !== undefined)
      return await settleUpstreamTask(task, {
        ...options,
        asker: undefined,
        serverName: this.serverName,
        request: (method, params, schema, legOptions) =>
          this.client.request({ method, params } as never, schema, legOptions) as never,
      });
    if (answer.resultType !== 'input_required') return answer as RawToolResult;
    const { requests, requestState } = this.readRound(answer, options.qualifiedName, RELAYED_METHODS);
    return {
      resultType: 'input_required',
      inputRequests: Object.fromEntries(
        requests.map(([key, r]) => [key, { method: r.method, params: r.params }]),
      ),
      requestState,
    };
  }

  /**
   * One `tools/call` request. Where the server may answer with a task (the call declares the Tasks
   * extension), an abort does not drop the answer: see {@link sendKeepingTask}.
   */
  private sendToolCall(
    params: Record<string, unknown>,
    mode: UpstreamTaskMode,
    options: { signal: AbortSignal; deadline: number; headers: Record<string, string> | undefined },
  ): Promise<Record<string, unknown>> {
    const send = (signal: AbortSignal): Promise<Record<string, unknown>> =>
      this.client.request({ method: 'tools/call', params } as never, CallAnswerSchema, {
        signal,
        timeout: Math.max(1, options.deadline - Date.now()),
        allowInputRequired: true,
        ...(options.headers ? { headers: options.headers } : {}),
      }) as Promise<Record<string, unknown>>;
    if (mode === 'undeclared') return send(options.signal);
    return sendKeepingTask(send, {
      signal: options.signal,
      tasks: this.tasks,
      request: (method, taskParams, schema, legOptions) =>
        this.client.request({ method, params: taskParams } as never, schema, legOptions) as never,
    });
  }

  /** The embedded requests and state of one `input_required` answer, checked against the bounds. */
  private readRound(
    answer: Record<string, unknown>,
    qualifiedName: string,
    methods: ReadonlySet<string> = ANSWERED_METHODS,
  ): {
    requests: [string, { method: string; params: Record<string, unknown> }][];
    requestState: string | undefined;
  } {
    const state = answer.requestState;
    if (state !== undefined && typeof state !== 'string')
      throw this.failure(qualifiedName, 'its input_required answer has a requestState that is not a string');
    if (typeof state === 'string' && Buffer.byteLength(state) > DEFAULT_UPSTREAM_REQUEST_STATE_MAX_BYTES)
      throw this.failure(
        qualifiedName,
        `its requestState is larger than ${DEFAULT_UPSTREAM_REQUEST_STATE_MAX_BYTES} bytes (DEFAULT_UPSTREAM_REQUEST_STATE_MAX_BYTES)`,
      );
    const raw = answer.inputRequests ?? {};
    if (!isObject(raw)) throw this.failure(qualifiedName, 'its inputRequests is not an object');
    const entries = Object.entries(raw);
    if (entries.length > DEFAULT_UPSTREAM_INPUT_REQUESTS_MAX)
      throw this.failure(
        qualifiedName,
        `it asked for ${entries.length} inputs in one round, more than ${DEFAULT_UPSTREAM_INPUT_REQUESTS_MAX} (DEFAULT_UPSTREAM_INPUT_REQUESTS_MAX)`,
      );
    if (entries.length === 0 && state === undefined)
      throw this.failure(
        qualifiedName,
        'its input_required answer has neither inputRequests nor requestState',
      );
    const requests: [string, { method: string; params: Record<string, unknown> }][] = [];
    for (const [key, entry] of entries) {
      // `roots/list` has no required params.
      const params = isObject(entry)
        ? entry.method === 'roots/list'
          ? (entry.params ?? {})
          : entry.params
        : undefined;
      if (
        !isObject(entry) ||
        typeof entry.method !== 'string' ||
        !methods.has(entry.method) ||
        !isObject(params)
      )
        throw this.failure(
          qualifiedName,
          `its input request ${JSON.stringify(key.slice(0, 80))} is not one of ${[...methods].join(', ')}`,
        );
      requests.push([key, { method: entry.method, params }]);
    }
    return { requests, requestState: state };
  }

  private failure(qualifiedName: string, why: string): CodecallError {
    return new CodecallError(
      'TOOL_CALL_FAILED',
      `${qualifiedName} failed: MCP server "${this.serverName}" ${why}.`,
      { details: { server: this.serverName, tool: qualifiedName } },
    );
  }

  /** Closes the client and its transport (idempotent). */
  async close(): Promise<void> {
    try {
      await this.client.close();
    } catch {
      // Never started, or already closed.
    }
  }
}
