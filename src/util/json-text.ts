/**
 * @module
 * A tool result kept as the JSON text its server sent, so the host does not parse it, stringify
 * it again and have the sandbox parse it a third time: the sandbox parses the text once, itself.
 * A {@link ToolInvoker} may resolve with one when no host-side consumer needs the value; the
 * sandbox parses it, and a text that is not valid JSON reaches the script as the string itself
 * (as a text result that is not JSON always has).
 */

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
    return (this.#bytes ??= Buffer.byteLength(this.text));
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
