/**
 * @module
 * The stdio transport codecall uses for MCP servers: the SDK's `StdioClientTransport` (spawn,
 * stderr, close escalation) with a read buffer of our own. The SDK's buffer concatenates every
 * chunk onto what it holds and searches all of it for a newline again, so reading one message of
 * n bytes costs O(n²) (a 30 MB result took 10 s of host CPU). {@link LineReader} keeps the chunks
 * in a list, scans each byte once, and joins a message's chunks once: linear. Messages are
 * checked with the SDK's own `JSONRPCMessageSchema` (`deserializeMessage`).
 *
 * It also knows how much of an unfinished message has arrived, so a call that times out while
 * its result is still being read can say "too large / too slow to read" instead of "did not
 * answer".
 */
import { StdioClientTransport, type StdioServerParameters } from '@modelcontextprotocol/sdk/client/stdio.js';
import { deserializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { ChildProcess } from 'node:child_process';
import type { PassThrough, Writable } from 'node:stream';
import { DEFAULT_STDIO_MAX_QUEUED_WRITE_BYTES } from '../config/defaults.js';
import type { PrespawnedServer } from './prespawn.js';

const NEWLINE = 0x0a;

/** The SDK transport's fields that {@link LinearStdioClientTransport.start} sets like the SDK's own `start`. */
interface SdkStdioInternals {
  _process?: ChildProcess | undefined;
  _readBuffer: { append(chunk: Buffer): void };
  _stderrStream: PassThrough | null;
  processReadBuffer(): void;
}

/**
 * Splits a byte stream into newline-delimited JSON-RPC messages in linear time, holding at most
 * `maxBufferSize` bytes. Same contract as the SDK's `ReadBuffer` (and the same error text when
 * the limit is crossed, which the connection recognises).
 */
export class LineReader {
  readonly #maxBufferSize: number;
  #chunks: Buffer[] = [];
  #size = 0;
  /** Chunks (and bytes of the first unscanned one) already searched for a newline. */
  #scannedChunks = 0;
  #scannedOffset = 0;
  #partialSince: number | undefined;

  constructor(maxBufferSize: number) {
    this.#maxBufferSize = maxBufferSize;
  }

  /** Bytes held that do not yet form a whole message. */
  get pendingBytes(): number {
    return this.#size;
  }

  /** When the first byte of the unfinished message arrived (`performance.now()`), if any. */
  get partialSince(): number | undefined {
    return this.#partialSince;
  }

  append(chunk: Buffer): void {
    if (this.#size + chunk.length > this.#maxBufferSize) {
      this.clear();
      throw new Error(`ReadBuffer exceeded maximum size of ${this.#maxBufferSize} bytes`);
    }
    if (chunk.length === 0) return;
    this.#partialSince ??= performance.now();
    this.#chunks.push(chunk);
    this.#size += chunk.length;
  }

  /** The next whole message, or null. Throws for a line that is not a JSON-RPC message. */
  readMessage(): JSONRPCMessage | null {
    while (this.#scannedChunks < this.#chunks.length) {
      const chunk = this.#chunks[this.#scannedChunks]!;
      const index = chunk.indexOf(NEWLINE, this.#scannedOffset);
      if (index === -1) {
        this.#scannedChunks++;
        this.#scannedOffset = 0;
        continue;
      }
      const parts = this.#chunks.slice(0, this.#scannedChunks);
      parts.push(chunk.subarray(0, index));
      const rest = chunk.subarray(index + 1);
      this.#chunks =
        rest.length > 0
          ? [rest, ...this.#chunks.slice(this.#scannedChunks + 1)]
          : this.#chunks.slice(this.#scannedChunks + 1);
      this.#size = this.#chunks.reduce((sum, c) => sum + c.length, 0);
      this.#scannedChunks = 0;
      this.#scannedOffset = 0;
      this.#partialSince = this.#size > 0 ? performance.now() : undefined;
      const line = (parts.length === 1 ? parts[0]! : Buffer.concat(parts))
        .toString('utf8')
        .replace(/\r$/, '');
      return deserializeMessage(line);
    }
    return null;
  }

  clear(): void {
    this.#chunks = [];
    this.#size = 0;
    this.#scannedChunks = 0;
    this.#scannedOffset = 0;
    this.#partialSince = undefined;
  }
}

/**
 * `StdioClientTransport` reading through a {@link LineReader}.
 *
 * @example
 * ```ts
 * const transport = new LinearStdioClientTransport({ command: 'node', args: ['server.js'], maxBufferSize: 64 * 1_048_576 });
 * ```
 */
export class LinearStdioClientTransport extends StdioClientTransport {
  readonly reader: LineReader;
  readonly #maxQueuedWriteBytes: number;
  #prespawned: PrespawnedServer | undefined;
  #closing: Promise<void> | undefined;

  constructor(
    server: StdioServerParameters & {
      maxBufferSize?: number;
      maxQueuedWriteBytes?: number;
      /** A process already started with these parameters ({@link prespawnStdioServers}): adopted by `start`. */
      prespawned?: PrespawnedServer;
    },
  ) {
    super(server);
    this.#prespawned = server.prespawned;
    this.reader = new LineReader(server.maxBufferSize ?? 10 * 1_048_576);
    this.#maxQueuedWriteBytes = server.maxQueuedWriteBytes ?? DEFAULT_STDIO_MAX_QUEUED_WRITE_BYTES;
    const self = this as unknown as { _readBuffer?: unknown };
    // The SDK reads every stdout chunk through `_readBuffer.append` / `readMessage` / `clear`.
    if (self._readBuffer === undefined) {
      throw new Error(
        'LinearStdioClientTransport: the MCP SDK no longer has _readBuffer; update stdio-transport.ts',
      );
    }
    self._readBuffer = this.reader;
  }

  /**
   * Starts the server like the SDK, or adopts the process started ahead of time: the same
   * listeners the SDK's `start` sets (messages, errors, close, stderr), on that process.
   */
  override async start(): Promise<void> {
    const prespawned = this.#prespawned;
    this.#prespawned = undefined;
    const adopted = prespawned?.adopt();
    if (!prespawned || !adopted) return super.start();
    const { child, stderr } = adopted;
    const self = this as unknown as SdkStdioInternals;
    if (self._process) throw new Error('LinearStdioClientTransport already started');
    self._process = child;
    child.on('error', (error) => this.onerror?.(error));
    const closed = (): void => {
      self._process = undefined;
      this.onclose?.();
    };
    child.once('close', closed);
    child.stdin?.on('error', (error) => this.onerror?.(error));
    child.stdout?.on('data', (chunk: Buffer) => {
      try {
        self._readBuffer.append(chunk);
        self.processReadBuffer();
      } catch (error) {
        this.onerror?.(error as Error);
        this.close().catch(() => {});
      }
    });
    child.stdout?.on('error', (error) => this.onerror?.(error));
    if (self._stderrStream && child.stderr) {
      for (const chunk of stderr) self._stderrStream.write(chunk);
      child.stderr.pipe(self._stderrStream);
    }
    try {
      await prespawned.started();
    } catch (error) {
      // It never ran (e.g. `spawn x ENOENT`): there is no process to close.
      self._process = undefined;
      this.onerror?.(error as Error);
      throw error;
    }
    // It exited before it was adopted: its 'close' has come and gone.
    if (prespawned.closed) queueMicrotask(closed);
  }

  /**
   * Closes like the SDK (stdin end, then SIGTERM, then SIGKILL), once: every caller waits for
   * the same close, until the process has exited. The SDK forgets the process as its close
   * begins, so a second `close()` (the client's, after the SDK's own on a failed connect)
   * returned at once, and a pool closed then left the process running.
   */
  override close(): Promise<void> {
    this.#closing ??= super.close();
    return this.#closing;
  }

  /**
   * Sends like the SDK, but refuses a message that would queue more than `maxQueuedWriteBytes`
   * behind a server that stopped reading its stdin (the SDK would buffer without bound).
   */
  override send(message: JSONRPCMessage): Promise<void> {
    const stdin = (this as unknown as { _process?: { stdin?: Writable | null } })._process?.stdin;
    const queued = stdin?.writableLength ?? 0;
    if (queued > 0) {
      const bytes = Buffer.byteLength(JSON.stringify(message)) + 1;
      if (queued + bytes > this.#maxQueuedWriteBytes) {
        return Promise.reject(
          new Error(
            `The MCP server is not reading its input: ${queued} bytes already wait to be written to it, and this message (${bytes} bytes) would pass the limit of ${this.#maxQueuedWriteBytes} queued bytes. The server may be stuck or overloaded; retry later.`,
          ),
        );
      }
    }
    return super.send(message);
  }
}
