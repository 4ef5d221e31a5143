/**
 * @module
 * The HTTP routes of the vendor endpoints, mounted by `codecall serve --http` beside `/mcp`
 * (same Host/Origin checks and body bound). They check the serve token themselves so the
 * official clients' own headers work: `Authorization: Bearer <token>` (both SDKs' bearer
 * options, OpenAI's `apiKey`) or `x-api-key: <token>` (Anthropic's `apiKey`).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DEFAULT_MAX_TOOL_RESULT_BYTES } from '../config/defaults.js';
import type { CodecallRuntime } from '../execute/index.js';
import type { LanguageModel } from '../providers/language-model.js';
import { createMessage, type AnthropicMessage, type VendorContext } from './anthropic-messages.js';
import { createResponse, responseEvents } from './openai-responses.js';
import { ContainerSigner } from './container-token.js';
import { FilePausedRuns, MemoryPausedRuns } from './paused-runs.js';
import { VendorError } from './vendor-error.js';
import type { PausedRunStore } from '../store/index.js';
import type { Approver } from '../tools/index.js';

/** Path of the Messages endpoint. */
export const MESSAGES_PATH = '/v1/messages';
/** Path of the Responses endpoint. */
export const RESPONSES_PATH = '/v1/responses';

/** Options of {@link createVendorRoutes}. */
export interface VendorRoutesOptions {
  runtime: CodecallRuntime;
  /** The codecall model of a request's `model` name (`demo`, the `serve.models` table). */
  model(name: string): LanguageModel | undefined;
  modelNames(): string[];
  /** Signs container ids; another process with the same secret resumes them. @defaultValue a random key */
  secret?: string | undefined;
  /** Folder of paused scripts' journals (durable, shared). @defaultValue in memory */
  journalDir?: string | undefined;
  /**
   * Where paused scripts live (Redis, PostgreSQL: `store/paused-run-store-*.ts`); wins over
   * `journalDir`. Closed by the routes' `close()`. @defaultValue `journalDir`'s folder, else memory
   */
  paused?: PausedRunStore | undefined;
  /** @defaultValue `DEFAULT_VENDOR_CONTAINER_TTL_MS` */
  containerTtlMs?: number | undefined;
  /**
   * Decides scripts' calls of configured tools that need approval (`requireApproval`,
   * destructive tools). @defaultValue the runtime's `onApproval`; without one such calls are
   * refused, the script's error naming the tool and the setting ({@link refuseWithoutApprover})
   */
  onApproval?: Approver | undefined;
}

/**
 * The approver of the vendor endpoints when nobody can approve: the wires have no message that
 * asks the client for an approval, so a call that needs one is refused, never run unapproved.
 */
export const refuseWithoutApprover: Approver = () => ({
  approved: false,
  decidedBy: 'policy',
  reason:
    'the vendor endpoints (/v1/messages, /v1/responses) cannot ask anyone to approve a call: approve such calls through the jobs API or an MCP client of codecall serve, or lift the requirement in the configuration',
});

/** Routes shaped like the HTTP server's `HttpRoutes`. */
export interface VendorRoutes {
  readonly ownAuth: true;
  matches(pathname: string): boolean;
  /** Closes the store of paused scripts (idempotent). */
  close(): Promise<void>;
  handle(
    request: IncomingMessage,
    response: ServerResponse,
    context: { maxBodyBytes: number; token?: string },
  ): Promise<void>;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function authorized(request: IncomingMessage, token: string | undefined): boolean {
  if (token === undefined) return true;
  const bearer = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1];
  const key = request.headers['x-api-key'];
  const given = bearer ?? (typeof key === 'string' ? key : undefined);
  return given !== undefined && timingSafeEqual(digest(given), digest(token));
}

async function readBody(request: IncomingMessage, maxBytes: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes)
      throw new VendorError(
        'request_too_large',
        `The request body is larger than ${maxBytes} bytes (serve's body bound); send fewer or smaller messages.`,
      );
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new VendorError('invalid_request_error', 'body: the request body is not JSON.');
  }
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

/** The server-sent events of a finished message, in the order the Messages stream sends them. */
export function messageEvents(message: AnthropicMessage): { event: string; data: unknown }[] {
  const events: { event: string; data: unknown }[] = [];
  const { content, stop_reason, container, usage, ...rest } = message;
  events.push({
    event: 'message_start',
    data: {
      type: 'message_start',
      message: {
        ...rest,
        content: [],
        stop_reason: null,
        container: null,
        usage: { ...usage, output_tokens: 0 },
      },
    },
  });
  content.forEach((block, index) => {
    if (block.type === 'text') {
      events.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index, content_block: { ...block, text: '' } },
      });
      events.push({
        event: 'content_block_delta',
        data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } },
      });
    } else if (block.type === 'tool_use' || block.type === 'server_tool_use') {
      events.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index, content_block: { ...block, input: {} } },
      });
      events.push({
        event: 'content_block_delta',
        data: {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
        },
      });
    } else {
      events.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index, content_block: block },
      });
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  events.push({
    event: 'message_delta',
    data: { type: 'message_delta', delta: { stop_reason, stop_sequence: null, container }, usage },
  });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return events;
}

/** The vendor endpoints as routes for `startHttpServer({ routes })`. */
export function createVendorRoutes(options: VendorRoutesOptions): VendorRoutes {
  const context: VendorContext = {
    runtime: options.runtime,
    model: options.model,
    modelNames: options.modelNames,
    signer: new ContainerSigner(options.secret),
    paused:
      options.paused ??
      (options.journalDir !== undefined
        ? new FilePausedRuns(options.journalDir, {
            ...(options.containerTtlMs !== undefined ? { ttlMs: options.containerTtlMs } : {}),
          })
        : new MemoryPausedRuns()),
    ...(options.containerTtlMs !== undefined ? { containerTtlMs: options.containerTtlMs } : {}),
    maxToolResultBytes: DEFAULT_MAX_TOOL_RESULT_BYTES,
    approver:
      options.onApproval ??
      (options.runtime.tools.approver === undefined ? refuseWithoutApprover : undefined),
  };
  return {
    ownAuth: true,
    matches: (pathname) => pathname === MESSAGES_PATH || pathname === RESPONSES_PATH,
    close: () => context.paused.close(),
    async handle(request, response, { maxBodyBytes, token }) {
      const openai = new URL(request.url ?? '/', 'http://localhost').pathname === RESPONSES_PATH;
      const errorBody = (error: VendorError): unknown =>
        openai ? error.openaiBody() : error.anthropicBody();
      const controller = new AbortController();
      response.on('close', () => {
        if (!response.writableFinished) controller.abort(new Error('The client closed the connection.'));
      });
      let streaming = false;
      try {
        if (!authorized(request, token))
          throw new VendorError(
            'authentication_error',
            'Send the serve token as "Authorization: Bearer <token>" or "x-api-key: <token>".',
          );
        if (request.method !== 'POST')
          throw new VendorError('not_found_error', 'This endpoint answers POST only.');
        const body = await readBody(request, maxBodyBytes);
        streaming =
          typeof body === 'object' && body !== null && (body as { stream?: unknown }).stream === true;
        if (streaming) {
          response.writeHead(200, {
            'content-type': 'text/event-stream',
            'cache-control': 'no-cache',
            connection: 'keep-alive',
          });
          response.flushHeaders();
        }
        const answer = openai
          ? await createResponse(body, context, controller.signal)
          : await createMessage(body, context, controller.signal);
        if (!streaming) {
          sendJson(response, 200, answer);
          return;
        }
        const events = 'object' in answer ? responseEvents(answer) : messageEvents(answer);
        for (const { event, data } of events)
          response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
        response.end();
      } catch (error) {
        const vendor =
          error instanceof VendorError
            ? error
            : new VendorError(
                'api_error',
                `codecall failed to answer: ${(error as Error)?.message ?? String(error)}`,
              );
        if (streaming && response.headersSent) {
          const { message, param, code } = vendor.openaiBody().error;
          const event = openai
            ? { type: 'error', sequence_number: 0, message, param, code: code ?? vendor.type }
            : vendor.anthropicBody();
          response.end(`event: error\ndata: ${JSON.stringify(event)}\n\n`);
          return;
        }
        if (!response.headersSent) sendJson(response, vendor.status, errorBody(vendor));
        else response.end();
      }
    },
  };
}
