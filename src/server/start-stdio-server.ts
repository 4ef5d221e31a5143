/**
 * @module
 * Serves codecall over stdio (newline-delimited JSON-RPC on stdin/stdout), the way MCP clients
 * spawn local servers. stdout carries only the protocol; anything else belongs on stderr. The
 * server stops when the client closes stdin or when {@link StdioServerHandle.close} is called;
 * the runtime stays open (its owner closes it).
 */
import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { DEFAULT_SERVE_MAX_BODY_BYTES } from '../config/defaults.js';
import { createCodecallServer, type CodecallServerOptions } from './create-codecall-server.js';

/** Options of {@link startStdioServer}. */
export interface StdioServerOptions extends CodecallServerOptions {
  /**
   * Whose `store` the client's scripts use (see {@link CodecallServerOptions.store}). A stdio
   * server has one client, so by default its scripts use the runtime's store, which outlives
   * the process.
   * @defaultValue `"runtime"`
   */
  store?: 'session' | 'runtime';
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
    ...serverOptions
  } = options;
  const server = createCodecallServer({ store: 'runtime', ...serverOptions });
  if (onInitialized !== undefined) server.oninitialized = onInitialized;
  const transport = new StdioServerTransport(stdin, stdout, {
    maxBufferSize: maxMessageBytes ?? DEFAULT_SERVE_MAX_BODY_BYTES,
  });
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      stdin.off('end', onEnd);
      stdin.off('close', onEnd);
      await server.close().catch(() => {});
      resolveClosed();
    })();
    return closing;
  };
  const onEnd = (): void => void close();
  stdin.once('end', onEnd);
  stdin.once('close', onEnd);
  await server.connect(transport);
  // The transport closes itself on a malformed stream or an oversized message.
  const previous = server.onclose;
  server.onclose = () => {
    previous?.();
    void close();
  };
  return { closed, close, [Symbol.asyncDispose]: close };
}
