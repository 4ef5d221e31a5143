/**
 * @module
 * Serves codecall over stdio (newline-delimited JSON-RPC on stdin/stdout), the way MCP clients
 * spawn local servers. stdout carries only the protocol; anything else belongs on stderr. The
 * server stops when the client closes stdin or when {@link StdioServerHandle.close} is called;
 * the runtime stays open (its owner closes it).
 *
 * Both MCP eras: the connection's first message decides. A 2025-era opening (`initialize`, or any
 * message without the 2026 `_meta` envelope claim) is served by the SDK 1.x server as before; a
 * 2026-07-28 opening (`server/discover`, or a request carrying
 * `io.modelcontextprotocol/protocolVersion` in `_meta`) by the SDK v2 `serveStdio` entry with
 * the same tools as the stateless HTTP leg (modern-http.ts), pinned to the modern era.
 */
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { DEFAULT_SERVE_MAX_BODY_BYTES } from '../config/defaults.js';
import { isCodecallError } from '../errors.js';
import { explainImportError } from '../util/optional-package.js';
import { createCodecallServer, type CodecallServerOptions } from './create-codecall-server.js';
import type * as ModernStdio from './modern-stdio.js';

/** The `_meta` key a 2026-07-28 request claims its revision with (the SDK's `PROTOCOL_VERSION_META_KEY`). */
const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';

/**
 * The 2026-07-28 stdio leg, or `undefined` when its optional package (`@modelcontextprotocol/server`)
 * is not installed: the connection is then served the 2025 way, where a 2026 client in `auto`
 * mode gets method-not-found for `server/discover` and falls back to `initialize`.
 */
async function loadModernStdio(): Promise<typeof ModernStdio | undefined> {
  try {
    return await import('./modern-stdio.js');
  } catch (error) {
    const explained = explainImportError(error, '@modelcontextprotocol/server', 'MCP 2026-07-28 over stdio');
    if (isCodecallError(explained) && explained.code === 'PACKAGE_MISSING') return undefined;
    throw explained;
  }
}

/** Options of {@link startStdioServer}. */
export interface StdioServerOptions extends CodecallServerOptions {
  /**
   * Whose `store` the client's scripts use (see {@link CodecallServerOptions.store}). A stdio
   * server has one client, so by default its scripts use the runtime's store, which outlives
   * the process.
   * @defaultValue `"runtime"`
   */
  store?: 'session' | 'runtime';
  /**
   * Also answer MCP 2026-07-28 clients (the opening message decides the era; a 2025 `initialize`
   * after a `server/discover` probe still gets the 2025 server). Off by default for library
   * callers; `codecall serve` turns it on (`serve.mcp2026`, docs/mcp-2026.md).
   * @defaultValue false
   */
  mcp2026?: boolean;
  /** @defaultValue `process.stdin` */
  stdin?: Readable;
  /** @defaultValue `process.stdout` */
  stdout?: Writable;
  /**
   * Bytes of one incoming message; a larger one is an error and closes the connection.
   * @defaultValue {@link DEFAULT_SERVE_MAX_BODY_BYTES}
   */
  maxMessageBytes?: number;
  /**
   * Told once the client has finished the handshake (its `notifications/initialized`, sent
   * after the answer to `initialize`): the moment for work the answer must not wait for.
   */
  onInitialized?: () => void;
}

/** A running stdio server. */
export interface StdioServerHandle {
  /** Resolves when the connection is over (stdin ended, the transport failed, or `close()`). */
  readonly closed: Promise<void>;
  /** Cancels in-flight runs and stops serving. Idempotent; leaves the runtime open. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Serves `options.runtime` over stdio until stdin ends or `close()` is called.
 *
 * @example
 * ```ts
 * await using runtime = await CodecallRuntime.open({ load: { path: 'codecall.json' } });
 * const handle = await startStdioServer({ runtime });
 * await handle.closed;
 * ```
 */
export async function startStdioServer(options: StdioServerOptions): Promise<StdioServerHandle> {
  const {
    stdin = process.stdin,
    stdout = process.stdout,
    maxMessageBytes,
    onInitialized,
    mcp2026,
    ...serverOptions
  } = options;
  const maxBufferSize = maxMessageBytes ?? DEFAULT_SERVE_MAX_BODY_BYTES;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  let inner: StdioServerHandle | undefined;
  let stopped = false;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      stopped = true;
      await inner?.close();
      resolveClosed();
    })();
    return closing;
  };
  // The era is decided by the first message, which may come much later: serve from here on.
  void peekFirstLine(stdin, maxBufferSize)
    .then(async (first) => {
      if (stopped) return;
      const modern =
        mcp2026 === true && first.line !== undefined && isModernOpening(first.line)
          ? await loadModernStdio()
          : undefined;
      inner = modern
        ? modern.serveModernStdio(serverOptions, first.stream, stdout, maxBufferSize, onInitialized)
        : await serveLegacyStdio(serverOptions, first.stream, stdout, maxBufferSize, onInitialized);
      if (stopped) await inner.close();
      else void inner.closed.then(close);
    })
    .catch((error: unknown) => {
      serverOptions.onError?.(error);
      void close();
    });
  return { closed, close, [Symbol.asyncDispose]: close };
}

/** Serves a 2025-era stdio connection with the SDK 1.x server, as before. */
async function serveLegacyStdio(
  serverOptions: CodecallServerOptions,
  input: Readable,
  stdout: Writable,
  maxBufferSize: number,
  onInitialized: (() => void) | undefined,
): Promise<StdioServerHandle> {
  const server = createCodecallServer({ store: 'runtime', ...serverOptions });
  if (onInitialized !== undefined) server.oninitialized = onInitialized;
  const transport = new StdioServerTransport(input, stdout, { maxBufferSize });
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      input.off('end', onEnd);
      input.off('close', onEnd);
      await server.close().catch(() => {});
      resolveClosed();
    })();
    return closing;
  };
  const onEnd = (): void => void close();
  input.once('end', onEnd);
  input.once('close', onEnd);
  await server.connect(transport);
  // The transport closes itself on a malformed stream or an oversized message.
  const previous = server.onclose;
  server.onclose = () => {
    previous?.();
    void close();
  };
  return { closed, close, [Symbol.asyncDispose]: close };
}

/**
 * Reads `stdin` up to its first newline (at most `maxBytes`), and a stream that gives what was
 * read again, then the rest of stdin. `line` is undefined when stdin ends first or the first line
 * is longer than `maxBytes` (the transport then refuses it as it would).
 */
async function peekFirstLine(
  stdin: Readable,
  maxBytes: number,
): Promise<{ line: string | undefined; stream: Readable }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let ended = false;
  const line = await new Promise<string | undefined>((resolve) => {
    const finish = (value: string | undefined): void => {
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      stdin.off('close', onEnd);
      stdin.off('error', onEnd);
      stdin.pause();
      resolve(value);
    };
    const onData = (chunk: Buffer | string): void => {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      chunks.push(buffer);
      size += buffer.length;
      // Only the new chunk is searched, and the line joined once it is found: a first line sent in
      // many small chunks costs one pass, not a concatenation per chunk.
      const at = buffer.indexOf(0x0a);
      if (at >= 0) {
        const newline = size - buffer.length + at;
        finish(Buffer.concat(chunks, size).subarray(0, newline).toString('utf8'));
      } else if (size > maxBytes) finish(undefined);
    };
    const onEnd = (): void => {
      ended = true;
      finish(undefined);
    };
    stdin.on('data', onData);
    stdin.once('end', onEnd);
    stdin.once('close', onEnd);
    stdin.once('error', onEnd);
  });
  // A stream paused by hand does not flow again when a transport adds its 'data' listener: hand
  // the transports a fresh stream that replays what was read, then the rest of stdin.
  const replay = new PassThrough();
  if (chunks.length > 0) replay.write(Buffer.concat(chunks));
  if (ended) replay.end();
  else stdin.pipe(replay);
  return { line, stream: replay };
}

/** True when `line` opens a 2026-07-28 connection: `server/discover`, or the `_meta` envelope claim. */
function isModernOpening(line: string): boolean {
  let message: unknown;
  try {
    message = JSON.parse(line);
  } catch {
    return false;
  }
  if (typeof message !== 'object' || message === null) return false;
  const { method, params } = message as { method?: unknown; params?: { _meta?: Record<string, unknown> } };
  if (method === 'server/discover') return true;
  const meta = typeof params === 'object' && params !== null ? params._meta : undefined;
  return typeof meta === 'object' && meta !== null && typeof meta[PROTOCOL_VERSION_META_KEY] === 'string';
}
