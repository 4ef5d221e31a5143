import { describe, expect, expectTypeOf, it } from 'vitest';
import { CodecallError, isCodecallError, type AnyCodecallError } from '../../src/errors.js';

describe('CodecallError', () => {
  it('recognises its errors by brand and code, also from another module copy', () => {
    const error = new CodecallError('TOOL_TIMEOUT', 'slow', { details: { tool: 'a.b', timeoutMs: 5 } });
    expect(CodecallError.isInstance(error)).toBe(true);
    expect(CodecallError.isInstance(error, 'TOOL_TIMEOUT')).toBe(true);
    expect(CodecallError.isInstance(error, 'ABORTED')).toBe(false);
    expect(CodecallError.isInstance(error, ['ABORTED', 'TOOL_TIMEOUT'])).toBe(true);
    expect(CodecallError.isInstance(new Error('plain'))).toBe(false);
    expect(CodecallError.isInstance({ code: 'TOOL_TIMEOUT' }, 'TOOL_TIMEOUT')).toBe(false);
    // A copy made in another realm or module copy carries the brand symbol, not the class.
    const foreign = Object.assign(new Error('copy'), {
      code: 'ABORTED',
      details: {},
      [Symbol.for('codecall.error')]: true,
    });
    expect(foreign instanceof CodecallError).toBe(false);
    expect(CodecallError.isInstance(foreign, 'ABORTED')).toBe(true);
  });

  it('types the payload by code', () => {
    const error: unknown = new CodecallError('MAX_STEPS_EXCEEDED', 'x', { details: { maxSteps: 3 } });
    if (CodecallError.isInstance(error, 'MAX_STEPS_EXCEEDED')) {
      expectTypeOf(error.details.maxSteps).toEqualTypeOf<number | undefined>();
      expect(error.details.maxSteps).toBe(3);
    } else {
      expect.unreachable('isInstance refused its own code');
    }
    const other: unknown = new CodecallError('TOOL_INPUT_INVALID', 'bad', { details: { problems: ['x'] } });
    if (!isCodecallError(other)) return expect.unreachable('not recognised');
    const narrowed: AnyCodecallError = other;
    if (narrowed.code !== 'TOOL_INPUT_INVALID') return expect.unreachable('wrong code');
    expectTypeOf(narrowed.details.problems).toEqualTypeOf<string[] | undefined>();
    expect(narrowed.details.problems).toEqual(['x']);
  });
});
