/**
 * @module
 * The side channel for large tool results in process mode: a pipe from the host to a sandbox
 * worker (one end of a socket pair given to the worker at spawn) carrying length-prefixed frames
 * of raw UTF-8. Over Node's IPC channel a 10 MB string is serialised into a message buffer, read
 * in 64 KB chunks, concatenated and deserialised: four copies. Here the host encodes the string
 * once, the worker reads each frame straight into one buffer (`net.Socket`'s `onread`, no chunks
 * to join) and decodes it once.
 *
 * A frame is a 4-byte little-endian byte count, then that many bytes. The IPC message that
 * needs a frame's text says so (see {@link SIDE_PAYLOAD}) and is sent after the frame is
 * written; frames arrive in the order they were written, so the worker pairs them in order.
 */

/** Bytes of a frame's header (its byte count, little-endian u32). */
export const FRAME_HEADER_BYTES = 4;

/**
 * Answers whose payload has at least this many characters travel on the side channel; smaller
 * ones go inside the IPC message (one write, no pairing). Around this size, JSON-escaping the
 * text into the (JSON-serialised) message and unescaping it costs about what a second write
 * and read cost.
 */
export const SIDE_CHANNEL_MIN_CHARS = 16 * 1024;

/**
 * The payload slot of an answer whose text travels as the next frame on the side channel (the
 * slot holds this marker, a number no real payload can be).
 */
export const SIDE_PAYLOAD = -1;

/** Frames up to this size are made in Node's shared buffer pool (`Buffer.poolSize` is 8 KiB). */
const POOLED_FRAME_BYTES = 4 * 1024;

/**
 * Buffers at least this large come from a {@link KeptBuffer} (the side channel's frames, on
 * both ends); smaller ones are fresh.
 */
export const KEPT_BUFFER_MIN_BYTES = 1024 * 1024;

/** A {@link KeptBuffer} lets its memory go this long after it was last given back. */
export const KEPT_BUFFER_IDLE_MS = 5_000;

/**
 * One large buffer, kept for the next large frame while large frames keep coming. A fresh
 * buffer of 10 MB costs more than the copy into it: every page faults on first touch (about
 * 7 ms per 10 MB on the bench machine, against 1.5 ms for the copy into pages already there),
 * and on the host each one counts as external memory, so a few of them start a major collection
 * of the whole host heap whose steps stall the event loop (and the socket writes it drives) for
 * milliseconds at a time. Lent to one frame at a time: a frame that needs a buffer while the
 * kept one is out gets a fresh one. Let go {@link KEPT_BUFFER_IDLE_MS} after it was last given
 * back, so a process keeps no large buffer once large results stop.
 */
export class KeptBuffer {
  readonly #idleMs: number;
  #buffer: Buffer | undefined;
  #lent = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(idleMs = KEPT_BUFFER_IDLE_MS) {
    this.#idleMs = idleMs;
  }

  /** Bytes held (kept or lent), for tests and diagnostics. */
  get heldBytes(): number {
    return this.#buffer?.length ?? 0;
  }

  /**
   * A buffer of `bytes` bytes: the kept one when it is not lent (replaced by a larger one when
   * it is too small), a fresh one otherwise. Give it back with {@link KeptBuffer.giveBack}.
   */
  take(bytes: number): Buffer {
    if (this.#lent) return Buffer.allocUnsafeSlow(bytes);
    if (this.#buffer === undefined || this.#buffer.length < bytes) {
      this.#buffer = undefined; // the old one can go before the new one is made
      this.#buffer = Buffer.allocUnsafeSlow(bytes);
    }
    this.#lent = true;
    return this.#buffer.subarray(0, bytes);
  }

  /** `buffer` (from {@link KeptBuffer.take}, or a view of it) is no longer used. */
  giveBack(buffer: Buffer): void {
    if (!this.#lent || this.#buffer === undefined || buffer.buffer !== this.#buffer.buffer) return;
    this.#lent = false;
    if (this.#timer === undefined) {
      this.#timer = setTimeout(() => this.#idle(), this.#idleMs);
      this.#timer.unref();
    } else this.#timer.refresh();
  }

  #idle(): void {
    this.#timer = undefined;
    // Lent: let go at the next give back's timer instead.
    if (!this.#lent) this.#buffer = undefined;
  }
}

/**
 * The bytes to write for one frame: its header and its UTF-8 text, in one buffer. The text is
 * encoded straight into it (`buffer.write`, several times faster than `Buffer.from(text)` for a
 * 10 MB string), sized for the worst case of three bytes per UTF-16 unit: only the pages written
 * are ever touched. A frame of {@link KEPT_BUFFER_MIN_BYTES} or more is made in `kept` when one
 * is given: give it back once written.
 */
export function encodeFrame(text: string, kept?: KeptBuffer): Buffer {
  // A small frame (an answer on the settle channel) takes a slice of Node's shared pool.
  const size = FRAME_HEADER_BYTES + text.length * 3;
  const frame =
    size <= POOLED_FRAME_BYTES
      ? Buffer.allocUnsafe(size)
      : kept !== undefined && size >= KEPT_BUFFER_MIN_BYTES
        ? kept.take(size)
        : Buffer.allocUnsafeSlow(size);
  const bytes = frame.write(text, FRAME_HEADER_BYTES, 'utf8');
  if (bytes > 0xffff_ffff) {
    kept?.giveBack(frame);
    throw new RangeError(`A frame of ${bytes} bytes is over 4 GiB.`);
  }
  frame.writeUInt32LE(bytes, 0);
  return frame.subarray(0, FRAME_HEADER_BYTES + bytes);
}

/**
 * Reads frames from a stream whose reads go straight into the buffer it offers
 * ({@link FrameReader.buffer}, then {@link FrameReader.advance} with the bytes read): a frame's
 * bytes land in one buffer, read for read, and each complete frame's text is handed on in order.
 * A frame larger than `maxFrameBytes` is refused before any of it is read.
 */
export class FrameReader {
  /** Bytes a frame may have; a larger one is refused. */
  maxFrameBytes: number;
  readonly #onFrame: (text: string) => void;
  /** Where bodies of {@link KEPT_BUFFER_MIN_BYTES} or more are read (each is decoded, then given back). */
  readonly #kept = new KeptBuffer();
  readonly #header = Buffer.alloc(FRAME_HEADER_BYTES);
  #headerFilled = 0;
  /** The frame being read (after its header), and how much of it has arrived. */
  #body: Buffer | undefined;
  #bodyFilled = 0;
  #failed: Error | undefined;

  constructor(maxFrameBytes: number, onFrame: (text: string) => void) {
    this.maxFrameBytes = maxFrameBytes;
    this.#onFrame = onFrame;
  }

  /** Where the next read should put its bytes (never past the end of the current frame). */
  buffer(): Buffer {
    if (this.#body !== undefined) return this.#body.subarray(this.#bodyFilled);
    return this.#header.subarray(this.#headerFilled);
  }

  /**
   * `bytes` were read into the last {@link FrameReader.buffer}. Throws (and keeps failing) on a
   * frame over the bound: the stream is out of step and must be closed.
   */
  advance(bytes: number): void {
    if (this.#failed) throw this.#failed;
    if (this.#body !== undefined) {
      this.#bodyFilled += bytes;
      if (this.#bodyFilled === this.#body.length) this.#complete();
      return;
    }
    this.#headerFilled += bytes;
    if (this.#headerFilled < FRAME_HEADER_BYTES) return;
    this.#headerFilled = 0;
    const size = this.#header.readUInt32LE(0);
    if (size > this.maxFrameBytes) {
      this.#failed = new RangeError(
        `A sandbox payload frame of ${size} bytes is over the bound of ${this.maxFrameBytes} bytes (the largest maxToolResultBytes of the worker's runs); the channel is out of step and is closed.`,
      );
      throw this.#failed;
    }
    this.#body = size >= KEPT_BUFFER_MIN_BYTES ? this.#kept.take(size) : Buffer.allocUnsafe(size);
    this.#bodyFilled = 0;
    if (size === 0) this.#complete();
  }

  #complete(): void {
    const body = this.#body!;
    this.#body = undefined;
    const text = body.toString('utf8');
    this.#kept.giveBack(body);
    this.#onFrame(text);
  }
}
