/**
 * @module
 * The side channel's framing ({@link FrameReader}), fed the way `net.Socket`'s `onread` feeds it:
 * each read copies at most as many bytes as the reader's buffer offers and at most what the
 * stream has. Frames split across reads at every size, several frames back to back, an empty
 * frame, a multi-byte character split between reads, and a frame over the bound refused. The
 * kept buffer large frames are made and read in: reused while not lent, never handed out twice,
 * let go once idle.
 */
import { describe, expect, it } from 'vitest';

import {
  encodeFrame,
  FrameReader,
  KEPT_BUFFER_MIN_BYTES,
  KeptBuffer,
} from '../../../src/isolate/payload-channel.js';

/** Feeds `stream` to `reader` in reads of at most `readBytes` bytes. */
function feed(reader: FrameReader, stream: Buffer, readBytes: number): void {
  let offset = 0;
  while (offset < stream.length) {
    const target = reader.buffer();
    const bytes = Math.min(target.length, readBytes, stream.length - offset);
    stream.copy(target, 0, offset, offset + bytes);
    offset += bytes;
    reader.advance(bytes);
  }
}

const texts = ['{"a":1}', '', 'é€😀 naïve', 'x'.repeat(70_000), '[1,2,3]'];
const stream = Buffer.concat(texts.map((text) => encodeFrame(text)));

describe('payload side channel framing', () => {
  it.each([
    ['ASCII', '{"a":[1,2,3]}'],
    ['three bytes per unit', '€'.repeat(1_000)],
    ['astral characters', '😀'.repeat(500)],
    ['lone surrogates', `a\ud800b\udc00c${'\ud83d'.repeat(300)}`],
    ['empty', ''],
  ])('encodes a frame of %s as its byte count and the text as Buffer.from encodes it', (_kind, text) => {
    const expected = Buffer.from(text, 'utf8');
    const frame = encodeFrame(text);
    expect(frame.readUInt32LE(0)).toBe(expected.length);
    expect(frame.subarray(4).equals(expected)).toBe(true);
  });

  it.each([1, 2, 3, 5, 7, 4096, 65_536, stream.length])(
    'reads frames split into reads of %i bytes',
    (size) => {
      const got: string[] = [];
      const reader = new FrameReader(1_000_000, (text) => got.push(text));
      feed(reader, stream, size);
      expect(got).toEqual(texts);
    },
  );

  it('hands a frame on only once its last byte has arrived', () => {
    const got: string[] = [];
    const reader = new FrameReader(100, (text) => got.push(text));
    const frame = encodeFrame('é€');
    feed(reader, frame.subarray(0, frame.length - 1), 64);
    expect(got).toEqual([]);
    feed(reader, frame.subarray(frame.length - 1), 64);
    expect(got).toEqual(['é€']);
  });

  it('refuses a frame over the bound before reading it, and stays closed', () => {
    const got: string[] = [];
    const reader = new FrameReader(10, (text) => got.push(text));
    feed(reader, encodeFrame('0123456789'), 64);
    expect(got).toEqual(['0123456789']);
    const header = encodeFrame('x'.repeat(11)).subarray(0, 4);
    expect(() => feed(reader, header, 64)).toThrow(
      "A sandbox payload frame of 11 bytes is over the bound of 10 bytes (the largest maxToolResultBytes of the worker's runs); the channel is out of step and is closed.",
    );
    // Nothing of the oversized frame was taken as a frame, and the reader stays failed.
    expect(reader.buffer().length).toBe(4);
    expect(() => reader.advance(0)).toThrow(/over the bound/);
    expect(got).toEqual(['0123456789']);
  });
});

describe('the kept buffer of large frames', () => {
  const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('lends one buffer at a time, reuses it once given back, and grows it for a larger frame', () => {
    const kept = new KeptBuffer();
    const first = kept.take(2_000_000);
    expect(first.length).toBe(2_000_000);
    // Lent: another take gets a fresh buffer, and giving that one back changes nothing.
    const other = kept.take(1_000_000);
    expect(other.buffer).not.toBe(first.buffer);
    kept.giveBack(other);
    expect(kept.take(1_000_000).buffer).not.toBe(first.buffer);
    kept.giveBack(first.subarray(0, 10)); // a view of it gives it back
    const again = kept.take(1_500_000);
    expect(again.buffer).toBe(first.buffer);
    expect(again.length).toBe(1_500_000);
    kept.giveBack(again);
    const larger = kept.take(3_000_000);
    expect(larger.buffer).not.toBe(first.buffer);
    expect(kept.heldBytes).toBe(3_000_000);
    kept.giveBack(larger);
  });

  it('lets its memory go once idle, but not while lent', async () => {
    const kept = new KeptBuffer(30);
    kept.giveBack(kept.take(1_000_000));
    expect(kept.heldBytes).toBe(1_000_000);
    await delay(80);
    expect(kept.heldBytes).toBe(0);
    const lent = kept.take(1_000_000);
    kept.giveBack(kept.take(1_000_000)); // a fresh one, not the kept one: no timer
    await delay(80);
    expect(kept.heldBytes).toBe(1_000_000);
    kept.giveBack(lent);
    expect(kept.take(1_000_000).buffer).toBe(lent.buffer);
  });

  it('encodes a large frame in the kept buffer it is given, and a small one elsewhere', () => {
    const kept = new KeptBuffer();
    const text = `${'é'.repeat(KEPT_BUFFER_MIN_BYTES / 3)}end`;
    const frame = encodeFrame(text, kept);
    expect(kept.heldBytes).toBe(4 + text.length * 3);
    expect(frame.readUInt32LE(0)).toBe(Buffer.byteLength(text));
    expect(frame.subarray(4).toString('utf8')).toBe(text);
    // Lent until given back: the next large frame is made in a fresh buffer.
    expect(encodeFrame(text, kept).buffer).not.toBe(frame.buffer);
    kept.giveBack(frame);
    expect(encodeFrame(text, kept).buffer).toBe(frame.buffer);
    expect(encodeFrame('small', kept).buffer).not.toBe(frame.buffer);
  });

  it('reads large frames one after another into the same buffer', () => {
    const texts = ['a', 'b', 'c'].map((letter) => letter.repeat(KEPT_BUFFER_MIN_BYTES + 10));
    const got: string[] = [];
    const bodies = new Set<ArrayBufferLike>();
    const reader = new FrameReader(10_000_000, (text) => got.push(text));
    for (const text of texts) {
      const frame = encodeFrame(text);
      feed(reader, frame.subarray(0, 4), 64);
      bodies.add(reader.buffer().buffer);
      feed(reader, frame.subarray(4), 65_536);
    }
    expect(got).toEqual(texts);
    expect(bodies.size).toBe(1);
  });
});
