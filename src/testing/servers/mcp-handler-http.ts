/**
 * @module
 * An SDK v2 web-standard MCP handler (`createMcpHandler(...).fetch`) behind `node:http`, for the
 * 2026-07-28 fixtures and tests: one request's body read (bounded), shown to the caller's tap
 * parsed, handed on, and the handler's answer streamed back (SSE included).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';

/** Bytes of one request body read. */
export const MCP_HANDLER_MAX_BODY_BYTES = 1_048_576;

/** What {@link answerWithMcpHandler} needs of `createMcpHandler`'s result. */
export interface FetchMcpHandler {
  fetch(request: Request, options?: { parsedBody?: unknown }): Promise<Response>;
}

async function readText(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MCP_HANDLER_MAX_BODY_BYTES)
      throw new Error(
        `request body larger than ${MCP_HANDLER_MAX_BODY_BYTES} bytes (MCP_HANDLER_MAX_BODY_BYTES)`,
      );
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Answers one HTTP request with `handler`. `onMessage` sees the body parsed when it is a JSON
 * object (a JSON-RPC message) before the handler gets it; a body that is not JSON goes to the
 * handler as it is, which answers it.
 */
export async function answerWithMcpHandler(
  handler: FetchMcpHandler,
  request: IncomingMessage,
  response: ServerResponse,
  onMessage?: (message: Record<string, unknown>) => void,
): Promise<void> {
  const text = await readText(request);
  let parsed: Record<string, unknown> | undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      parsed = value as Record<string, unknown>;
  } catch {
    // Not JSON: the handler answers it.
  }
  if (parsed !== undefined) onMessage?.(parsed);
  const headers = new Headers();
  for (const [key, value] of Object.entries(request.headers))
    if (typeof value === 'string') headers.set(key, value);
    else if (Array.isArray(value)) headers.set(key, value.join(', '));
  const method = request.method ?? 'GET';
  const answer = await handler.fetch(
    new Request(`http://127.0.0.1${request.url ?? '/'}`, {
      method,
      headers,
      ...(method === 'GET' || method === 'HEAD' ? {} : { body: text }),
    }),
  );
  const out: Record<string, string> = {};
  answer.headers.forEach((value, key) => {
    out[key] = value;
  });
  response.writeHead(answer.status, out);
  if (answer.body === null) response.end();
  else Readable.fromWeb(answer.body as NodeReadableStream<Uint8Array>).pipe(response);
}
