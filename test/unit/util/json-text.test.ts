/**
 * @module
 * {@link utf8ByteLength} (the byte count of a JSON text result, checked against the result bound
 * before the text goes to the sandbox) agrees with `Buffer.byteLength` for every kind of text:
 * small ones, large ASCII ones counted step by step, and large ones whose first non-ASCII
 * character falls in a later step, at a step's edge, or makes the encoder stop at the end of its
 * buffer.
 */
import { describe, expect, it } from 'vitest';

import { COUNT_STEP_CHARS, JsonText, utf8ByteLength } from '../../../src/util/json-text.js';

const step = COUNT_STEP_CHARS;
const ascii = (chars: number) => 'a'.repeat(chars);

describe('utf8ByteLength', () => {
  it.each([
    ['small ASCII', '{"a":[1,2,3]}'],
    ['small, three bytes per unit', '€'.repeat(100)],
    ['small, lone surrogates', `a\ud800b\udc00c`],
    ['ASCII over several steps', ascii(3 * step + 17)],
    ['ASCII of exactly one step', ascii(step)],
    ['Latin-1 in a later step', `${ascii(2 * step + 5)}é${ascii(100)}`],
    ['three bytes per unit in a later step', `${ascii(step + 1)}€${ascii(step)}`],
    ['a surrogate pair across the edge of a step', `${ascii(step - 1)}😀${ascii(step)}`],
    ['a lone surrogate at the end of a step', `${ascii(step - 1)}\ud83d${ascii(10)}`],
    // The step's bytes before the pair fill its buffer but for three bytes: an encoder that
    // stops there has written as many bytes as the step has characters.
    ['a pair the encoder stops short of', `€${ascii(step - 3)}😀${ascii(10)}`],
    ['non-ASCII in the first step', `é${ascii(2 * step)}😀`],
  ])('counts %s as Buffer.byteLength does', (_kind, text) => {
    expect(utf8ByteLength(text)).toBe(Buffer.byteLength(text, 'utf8'));
  });

  it('gives JsonText its byte count', () => {
    const text = `[${ascii(step)}"€"]`;
    expect(new JsonText(text).bytes).toBe(Buffer.byteLength(text, 'utf8'));
  });
});
