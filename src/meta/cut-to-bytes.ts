/**
 * @module
 * Bounds a tool result's text before it enters a model's context, with a marker that tells the
 * model how to ask for less. Used by the agent loop and the framework adapters alike.
 */

/**
 * Cuts `text` to at most `maxBytes` UTF-8 bytes, with a marker that tells the model how to ask for less.
 *
 * @example
 * ```ts
 * const shown = cutToBytes(JSON.stringify(rows), 262_144);
 * ```
 */
export function cutToBytes(text: string, maxBytes: number): string {
  const bytes = Buffer.byteLength(text);
  if (bytes <= maxBytes) return text;
  let kept = Buffer.from(text).subarray(0, maxBytes).toString('utf8');
  if (kept.endsWith('\uFFFD')) kept = kept.slice(0, -1);
  return `${kept}\n… [cut: this result is ${bytes} bytes; only the first ${maxBytes} are shown. Ask for less: filter, paginate or select fields.]`;
}
