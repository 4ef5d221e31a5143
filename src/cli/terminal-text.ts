/**
 * @module
 * Makes untrusted text safe to print on a terminal. Scripts, MCP server names, descriptions and
 * stderr may carry control sequences (clear screen, window title, OSC 52 clipboard writes,
 * cursor moves that hide lines); human output shows every C0/C1 control character except tab
 * and newline as a visible stand-in instead of sending it. `--json` output is never passed
 * through here: JSON.stringify already escapes controls, and it must stay exact.
 */

/** C0 controls except tab and newline, DEL, C1 controls, and bidi overrides (Trojan Source). */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/gu;

function visible(char: string): string {
  const code = char.charCodeAt(0);
  // U+2400 CONTROL PICTURES: ␀ … ␟; ␡ for DEL; escape notation for the rest.
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  if (code === 0x7f) return '\u2421';
  return `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * Returns `text` with control characters rendered visibly (`\x1b` → `␛`, `\x07` → `␇`, C1 and
 * bidi controls as `\u009b`-style escapes); tab, newline and a `\r` that ends a line (`\r\n`)
 * pass as they are.
 *
 * @example
 * ```ts
 * neutralizeControls('\x1b]0;pwned\x07hi\n'); // '␛]0;pwned␇hi\n'
 * ```
 */
export function neutralizeControls(text: string): string {
  return text.replace(UNSAFE, (char, offset: number) =>
    char === '\r' && text.charCodeAt(offset + 1) === 0x0a ? char : visible(char),
  );
}
