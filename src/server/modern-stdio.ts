/**
 * @module
 * The 2026-07-28 leg of `codecall serve` over stdio: the SDK v2 `serveStdio` entry with the same
 * tools as the stateless HTTP leg (modern-http.ts), pinned to the modern era. Loaded by
 * start-stdio-server.ts only when a connection opens the 2026 way and `@modelcontextprotocol/server`
 * (an optional peer) is installed.
 */
import type { Readable, Writable } from 'node:stream';
import {
  StdioServerTransport as ModernStdioServerTransport,
  serveStdio,
} from '@modelcontextprotocol/server/stdio';
import type { Server as ModernServer } from '@modelcontextprotocol/server';
import {
  CODECALL_SERVER_INSTRUCTIONS,
  createCodecallServer,
  packageVersion,
  type CodecallServerOptions,
} from './create-codecall-server.js';
import { DEFAULT_SERVE_MAX_LISTEN_SUBSCRIPTIONS } from '../config/defaults.js';
import { createModernServerFactory } from './modern-http.js';
import { notifyListChanges } from './modern-listen.js';
import { RunLimiter } from './run-limiter.js';
import type { StdioServerHandle } from './start-stdio-server.js';

/**
 * Serves a stdio connection that opened the 2026-07-28 way through the SDK v2 `serveStdio` entry;
 * a 2025 `initialize` after a `server/discover` probe moves it to the 2025-11-25 server.
 */
export function serveModernStdio(
  options: CodecallServerOptions,
  input: Readable,
  stdout: Writable,
  maxBufferSize: number,
  onInitialized: (() => void) | undefined,
): StdioServerHandle {
  const factory = createModernServerFactory({
    runtime: options.runtime,
    runLimiter: options.runLimiter ?? new RunLimiter(),
    serverInfo: options.serverInfo ?? { name: 'codecall', version: packageVersion() },
    instructions: CODECALL_SERVER_INSTRUCTIONS,
    passThrough: options.passThrough,
    originalNames: options.originalNames,
    learning: options.learning,
    searchWaitForServersMs: options.searchWaitForServersMs,
    maxBodyBytes: maxBufferSize,
    onError: options.onError,
    onExecute: options.onExecute,
  });
  const transport = new ModernStdioServerTransport(input, stdout, { maxBufferSize });
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  // A client in `auto` mode that probed with `server/discover` and then falls back to `initialize`
  // on the same connection (its probe timed out, or it wants the 2025 era) is served by codecall's
  // 2025-11-25 server: the SDK's entry discards the probe instance and asks the factory for a
  // `legacy` one (SDK `serveStdio`, `legacy: 'serve'`; spec 2026-07-28 `basic/lifecycle` §
  // Backward compatibility lets a server that speaks both eras answer the fallback). That server
  // is the SDK 1.x one every 2025 stdio connection gets; the entry only needs its
  // `connect(transport)` and `close()`, which it has.
  let stopListChanges: (() => void) | undefined;
  const eraFactory = ({ era }: { era: 'legacy' | 'modern' }): ModernServer => {
    if (era === 'modern') {
      const server = factory();
      // The entry's listen router turns the pinned instance's list_changed notifications into
      // notifications on the connection's open `subscriptions/listen` streams (modern-listen.ts).
      stopListChanges?.();
      stopListChanges = notifyListChanges({
        runtime: options.runtime,
        passThrough: options.passThrough ?? true,
        originalNames: options.originalNames ?? false,
        notify: {
          toolsChanged: () => void server.sendToolListChanged().catch(() => {}),
          promptsChanged: () => void server.sendPromptListChanged().catch(() => {}),
          resourcesChanged: () => void server.sendResourceListChanged().catch(() => {}),
        },
      });
      return server;
    }
    stopListChanges?.();
    stopListChanges = undefined;
    const legacy = createCodecallServer({ store: 'runtime', ...options });
    return legacy as unknown as ModernServer;
  };
  const handle = serveStdio(eraFactory, {
    legacy: 'serve',
    transport,
    maxSubscriptions: DEFAULT_SERVE_MAX_LISTEN_SUBSCRIPTIONS,
    onerror: (error) => options.onError?.(error),
  });
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      input.off('end', onEnd);
      input.off('close', onEnd);
      stopListChanges?.();
      await handle.close().catch(() => {});
      resolveClosed();
    })();
    return closing;
  };
  const onEnd = (): void => void close();
  input.once('end', onEnd);
  input.once('close', onEnd);
  // No `initialized` notification in this era: the opening request is the moment.
  onInitialized?.();
  return { closed, close, [Symbol.asyncDispose]: close };
}
