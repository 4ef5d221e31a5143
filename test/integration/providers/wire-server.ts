/**
 * @module
 * A loopback HTTP server (node:http on 127.0.0.1, port 0) that speaks the Anthropic Messages and
 * OpenAI Chat Completions wire formats (or, with `http2`, cleartext HTTP/2 for the AWS SDK,
 * whose Bedrock client speaks only that), so the real SDK clients can be tested end to end. It
 * records every request and answers from a queue of scripted replies; bodies are shaped like
 * the real services' responses and errors.
 */
import { expect } from 'vitest';
import { isCodecallError } from '../../../src/errors.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttp2Server, type Http2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
// The codec the AWS SDK decodes event streams with (a dependency of @aws-sdk/client-bedrock-runtime).
import { EventStreamCodec } from '@smithy/core/event-streams';

/** A request the server received. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

/** One scripted reply. */
export interface WireReply {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Wait before answering (to provoke client timeouts); the wait ends if the client leaves. */
  delayMs?: number;
  /**
   * Answer as server-sent events instead of `body`: each entry is written as `event: <event>`
   * (when given) and `data: <JSON, or the string as is>`, then a blank line, one write each.
   */
  sse?: { event?: string; data: unknown }[];
  /**
   * Answer as AWS's binary event stream (`application/vnd.amazon.eventstream`, what Bedrock's
   * `ConverseStream` sends): each frame written on its own (see {@link bedrockEventFrames}).
   */
  frames?: Uint8Array[];
  /** With `sse` or `frames`: after them, keep the connection open without writing (a stalled stream). */
  stall?: boolean;
}

/** Anthropic's server-sent events: `event: <type>` and the event as `data`. */
export function anthropicEvents(events: Record<string, unknown>[]): { event: string; data: unknown }[] {
  return events.map((event) => ({ event: String(event['type']), data: event }));
}

/**
 * Bedrock `ConverseStream` events as AWS event-stream frames (`:event-type` the event's name,
 * JSON payload), encoded with the Smithy codec the AWS SDK decodes them with. An entry with
 * `exception` is sent as an exception frame (`:message-type: exception`).
 */
export function bedrockEventFrames(
  events: (
    { event: string; data: Record<string, unknown> } | { exception: string; data: Record<string, unknown> }
  )[],
): Uint8Array[] {
  const codec = new EventStreamCodec(
    (bytes) => new TextDecoder().decode(bytes),
    (text) => new TextEncoder().encode(text),
  );
  return events.map((entry) => {
    const string = (value: string) => ({ type: 'string' as const, value });
    const headers =
      'event' in entry
        ? { ':event-type': string(entry.event), ':message-type': string('event') }
        : { ':exception-type': string(entry.exception), ':message-type': string('exception') };
    return codec.encode({
      headers: { ...headers, ':content-type': string('application/json') },
      body: new TextEncoder().encode(JSON.stringify(entry.data)),
    });
  });
}

/** OpenAI's server-sent chunks: `data: <chunk>` each, then `data: [DONE]`. */
export function openaiChunks(chunks: Record<string, unknown>[]): { data: unknown }[] {
  return [...chunks.map((chunk) => ({ data: chunk })), { data: '[DONE]' }];
}

/** A loopback server with a reply queue per path. */
export class WireServer {
  readonly requests: RecordedRequest[] = [];
  readonly #server: Server | ReturnType<typeof createHttp2Server>;
  readonly #sessions = new Set<Http2Session>();
  readonly #queues = new Map<string, WireReply[]>();
  #origin = '';
  #closed = false;

  private constructor(server: Server | ReturnType<typeof createHttp2Server>) {
    this.#server = server;
  }

  /** Starts listening on 127.0.0.1 with an OS-chosen port (HTTP/1.1, or h2c with `http2`). */
  static async open(options: { http2?: boolean } = {}): Promise<WireServer> {
    const holder: { instance?: WireServer } = {};
    const handler = (request: IncomingMessage, response: ServerResponse): void => {
      void holder.instance!.#handle(request, response);
    };
    const server =
      options.http2 === true
        ? // The compatibility API's request and response have the methods used here.
          createHttp2Server(handler as never)
        : createServer(handler);
    const instance = new WireServer(server);
    if (options.http2 === true) {
      server.on('session', (session: Http2Session) => {
        instance.#sessions.add(session);
        session.once('close', () => instance.#sessions.delete(session));
      });
    }
    holder.instance = instance;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    instance.#origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return instance;
  }

  /** `http://127.0.0.1:<port>` */
  get origin(): string {
    return this.#origin;
  }

  /** Queues replies for `path`; each request consumes one. */
  enqueue(path: string, ...replies: WireReply[]): void {
    const queue = this.#queues.get(path) ?? [];
    queue.push(...replies);
    this.#queues.set(path, queue);
  }

  requestsTo(path: string): RecordedRequest[] {
    return this.requests.filter((request) => request.path === path);
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const path = (request.url ?? '/').split('?')[0]!;
    this.requests.push({
      method: request.method ?? 'GET',
      path,
      headers: request.headers,
      body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
    });
    const reply = this.#queues.get(path)?.shift() ?? {
      status: 500,
      body: { error: { message: `wire server: no reply queued for ${path}` } },
    };
    if (reply.delayMs !== undefined) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, reply.delayMs);
        response.once('close', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (response.destroyed || response.writableEnded) return;
    }
    if (reply.sse !== undefined) {
      response.writeHead(reply.status ?? 200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        ...reply.headers,
      });
      for (const { event, data } of reply.sse) {
        const text = typeof data === 'string' ? data : JSON.stringify(data);
        response.write(`${event === undefined ? '' : `event: ${event}\n`}data: ${text}\n\n`);
      }
      if (reply.stall !== true) response.end();
      return;
    }
    if (reply.frames !== undefined) {
      response.writeHead(reply.status ?? 200, {
        'content-type': 'application/vnd.amazon.eventstream',
        ...reply.headers,
      });
      for (const frame of reply.frames) response.write(frame);
      if (reply.stall !== true) response.end();
      return;
    }
    response.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
    response.end(JSON.stringify(reply.body ?? {}));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if ('closeAllConnections' in this.#server) this.#server.closeAllConnections();
    for (const session of this.#sessions) session.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** A Messages API response body as Anthropic sends it. */
export function anthropicMessage(options: {
  content: unknown[];
  stopReason: string;
  usage?: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number };
  model?: string;
}): Record<string, unknown> {
  return {
    id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
    type: 'message',
    role: 'assistant',
    model: options.model ?? 'claude-sonnet-4-5-20250929',
    content: options.content,
    stop_reason: options.stopReason,
    stop_sequence: null,
    usage: {
      input_tokens: options.usage?.input ?? 12,
      cache_creation_input_tokens: options.usage?.cacheWrite ?? 0,
      cache_read_input_tokens: options.usage?.cacheRead ?? 0,
      cache_creation: {
        ephemeral_5m_input_tokens: options.usage?.cacheWrite ?? 0,
        ephemeral_1h_input_tokens: 0,
      },
      output_tokens: options.usage?.output ?? 6,
      service_tier: 'standard',
    },
  };
}

/** An Anthropic error reply: `{type:'error', error:{type, message}}` with a `request-id` header. */
export function anthropicError(
  status: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
): WireReply {
  return {
    status,
    headers: { 'request-id': 'req_011CSHoEeqs5C35K2UUqR7Fy', ...headers },
    body: { type: 'error', error: { type, message }, request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy' },
  };
}

/** A Chat Completions response body as OpenAI sends it. */
export function openaiCompletion(options: {
  content: string | null;
  toolCalls?: { id: string; name: string; arguments: string }[];
  finishReason: string;
  usage?: { prompt?: number; completion?: number; cached?: number } | null;
  model?: string;
}): Record<string, unknown> {
  return {
    id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
    object: 'chat.completion',
    created: 1741570283,
    model: options.model ?? 'gpt-4.1-2025-04-14',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: options.content,
          refusal: null,
          annotations: [],
          ...(options.toolCalls === undefined
            ? {}
            : {
                tool_calls: options.toolCalls.map((call) => ({
                  id: call.id,
                  type: 'function',
                  function: { name: call.name, arguments: call.arguments },
                })),
              }),
        },
        logprobs: null,
        finish_reason: options.finishReason,
      },
    ],
    ...(options.usage === null
      ? {}
      : {
          usage: {
            prompt_tokens: options.usage?.prompt ?? 20,
            completion_tokens: options.usage?.completion ?? 7,
            total_tokens: (options.usage?.prompt ?? 20) + (options.usage?.completion ?? 7),
            prompt_tokens_details: { cached_tokens: options.usage?.cached ?? 0, audio_tokens: 0 },
            completion_tokens_details: {
              reasoning_tokens: 0,
              audio_tokens: 0,
              accepted_prediction_tokens: 0,
              rejected_prediction_tokens: 0,
            },
          },
        }),
    service_tier: 'default',
    system_fingerprint: 'fp_51e1070cf2',
  };
}

/** An OpenAI error reply: `{error:{message, type, param, code}}`. */
export function openaiError(
  status: number,
  type: string,
  code: string | null,
  message: string,
  headers: Record<string, string> = {},
): WireReply {
  return {
    status,
    headers: { 'x-request-id': 'req_6f1c6ae5c1b94e4f8a1b2d3c4e5f6a7b', ...headers },
    body: { error: { message, type, param: null, code } },
  };
}

/** Awaits a promise that must reject with a codecall error, and returns that error. */
export async function rejection(
  promise: Promise<unknown>,
): Promise<Record<string, unknown> & { code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    expect(isCodecallError(error)).toBe(true);
    return error as never;
  }
  throw new Error('expected a rejection');
}
