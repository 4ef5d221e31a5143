/**
 * @module
 * A tool result kept as the JSON text its server sent, so the host does not parse it, stringify
 * it again and have the sandbox parse it a third time: the sandbox parses the text once, itself.
 * A {@link ToolInvoker} may resolve with one when no host-side consumer needs the value; the
 * sandbox parses it, and a text that is not valid JSON reaches the script as the string itself
 * (as a text result that is not JSON always has).
 */

/**
 * Characters of a large text encoded per step by {@link utf8ByteLength}: its scratch buffer holds
 * one step's bytes (256 KiB, reused, so it stays in cache).
 */
export const COUNT_STEP_CHARS = 256 * 1024;
let countScratch: Buffer | undefined;

/**
 * UTF-8 bytes of `text`, as `Buffer.byteLength` counts them (a lone surrogate counts as the 3
 * bytes of U+FFFD). A large text is counted by encoding it a step at a time into one small
 * buffer, which uses the SIMD encoder: for a one-byte (Latin-1) string of ASCII, the usual JSON
 * text, that is about a third of what `Buffer.byteLength` takes (~0.5 against ~1.5 ms for
 * 10 MB on the bench machine; `Buffer.byteLength` takes V8's scalar count). A step that is all
 * ASCII writes exactly one byte per character; the first step that does not hands the rest to
 * `Buffer.byteLength` (it begins after ASCII, so never inside a surrogate pair). The one case
 * it is slower: a two-byte string (one with a character past U+00FF) that is ASCII for most of
 * its length, whose steps take V8's encoder (~11 against ~9.5 ms for 10 MB).
 */
export function utf8ByteLength(text: string): number {
  if (text.length < COUNT_STEP_CHARS) return Buffer.byteLength(text, 'utf8');
  // Four bytes of room past a step (the longest unit the encoder writes whole, a surrogate
  // pair): a step with any non-ASCII character then writes more bytes than it has characters,
  // whether all of it fits or the encoder stops at the buffer's end.
  const scratch = (countScratch ??= Buffer.allocUnsafeSlow(COUNT_STEP_CHARS + 4));
  for (let start = 0; start < text.length; start += COUNT_STEP_CHARS) {
    const end = Math.min(start + COUNT_STEP_CHARS, text.length);
    if (scratch.write(text.slice(start, end), 0, 'utf8') !== end - start) {
      return start + Buffer.byteLength(text.slice(start), 'utf8');
    }
  }
  return text.length;
}

/** JSON text passed through to the sandbox unparsed (see the module comment). */
export class JsonText {
  /** The text as the server sent it. */
  readonly text: string;
  #bytes: number | undefined;

  constructor(text: string) {
    this.text = text;
  }

  /** UTF-8 bytes of {@link JsonText.text}, counted once. */
  get bytes(): number {
    return (this.#bytes ??= utf8ByteLength(this.text));
  }

  /** The value: the text parsed, or the text itself when it is not valid JSON. */
  value(): unknown {
    try {
      return JSON.parse(this.text) as unknown;
    } catch {
      return this.text;
    }
  }

  /** Serialises as the value (a JSON text never becomes a string of JSON by accident). */
  toJSON(): unknown {
    return this.value();
  }

  /** True for a {@link JsonText} (host objects only: it never crosses into the sandbox). */
  static isInstance(value: unknown): value is JsonText {
    return value instanceof JsonText;
  }
}
