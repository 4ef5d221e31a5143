import { runInNewContext } from 'node:vm';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { SignalInterrupt, UsageError } from '../../src/cli/command.js';
import { CodecallError, isCodecallError, isErrorLike, type AnyCodecallError } from '../../src/errors.js';
import { ToolEmbeddings } from '../../src/search/embeddings.js';

/** Evaluates `source` in a fresh `node:vm` context: its `Error` is another realm's. */
function otherRealm(source: string): unknown {
  return runInNewContext(source);
}

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
      expectTypeOf(error.details.maxSteps).toEqualTypeOf<number>();
      expect(error.details.maxSteps).toBe(3);
    } else {
      expect.unreachable('isInstance refused its own code');
    }
    const other: unknown = new CodecallError('TOOL_INPUT_INVALID', 'bad', {
      details: { tool: 'a.b', problems: ['x'] },
    });
    if (!isCodecallError(other)) return expect.unreachable('not recognised');
    const narrowed: AnyCodecallError = other;
    if (narrowed.code !== 'TOOL_INPUT_INVALID') return expect.unreachable('wrong code');
    expectTypeOf(narrowed.details.problems).toEqualTypeOf<string[]>();
    expect(narrowed.details.problems).toEqual(['x']);
  });

  it('requires the payload of a code whose fields every thrower sets', () => {
    // @ts-expect-error TOOL_TIMEOUT's payload (tool, timeoutMs) is required.
    expect(new CodecallError('TOOL_TIMEOUT', 'slow').details).toEqual({});
    // @ts-expect-error ...and complete.
    expect(new CodecallError('TOOL_TIMEOUT', 'slow', { details: { tool: 'a.b' } }).code).toBe('TOOL_TIMEOUT');
    // @ts-expect-error INVALID_ARGUMENT names its field.
    expect(new CodecallError('INVALID_ARGUMENT', 'bad', { details: {} }).code).toBe('INVALID_ARGUMENT');
    // @ts-expect-error CONFIG_INVALID lists its issues.
    expect(new CodecallError('CONFIG_INVALID', 'bad', { details: { file: 'x' } }).code).toBe(
      'CONFIG_INVALID',
    );
    // @ts-expect-error The job codes name the job.
    expect(new CodecallError('JOB_NOT_FOUND', 'gone').code).toBe('JOB_NOT_FOUND');
    // @ts-expect-error A bad search query is given back.
    expect(new CodecallError('SEARCH_INVALID_QUERY', 'bad', { details: { pattern: '(' } }).code).toBe(
      'SEARCH_INVALID_QUERY',
    );
    // A code without required fields takes no options at all.
    expect(new CodecallError('CLOSED', 'closed').details).toEqual({});
  });

  it('recognises an error made in another realm (node:vm), where instanceof fails', () => {
    const foreign = otherRealm(
      `Object.assign(new Error('copy'), { code: 'ABORTED', details: {}, [Symbol.for('codecall.error')]: true })`,
    );
    expect(foreign instanceof Error).toBe(false);
    expect(foreign instanceof CodecallError).toBe(false);
    expect(isCodecallError(foreign)).toBe(true);
    expect(CodecallError.isInstance(foreign, 'ABORTED')).toBe(true);
    expect(isErrorLike(foreign)).toBe(true);
    expect(isErrorLike({ message: 'no name' })).toBe(false);
    expect(isErrorLike('Error: text')).toBe(false);
  });

  it('the CLI recognises its usage errors and signal interrupts from another realm', () => {
    const usage = otherRealm(`Object.assign(new Error('bad flag'), { name: 'UsageError' })`);
    const interrupt = otherRealm(
      `Object.assign(new Error('received SIGINT'), { name: 'SignalInterrupt', signal: 'SIGINT' })`,
    );
    expect(usage instanceof UsageError).toBe(false);
    expect(UsageError.isInstance(usage)).toBe(true);
    expect(UsageError.isInstance(new Error('bad flag'))).toBe(false);
    expect(SignalInterrupt.isInstance(interrupt)).toBe(true);
    expect(SignalInterrupt.isInstance(usage)).toBe(false);
    expect(SignalInterrupt.isInstance(new SignalInterrupt('SIGTERM'))).toBe(true);
  });

  it('embeddings pass on a codecall error of another realm as it is, not wrapped as the embedder failing', async () => {
    const foreign = otherRealm(
      `Object.assign(new Error('budget gone'), { code: 'ABORTED', details: {}, [Symbol.for('codecall.error')]: true })`,
    );
    const embeddings = new ToolEmbeddings(() => Promise.reject(foreign as Error));
    await expect(embeddings.embedQuery('hello')).rejects.toBe(foreign);
  });
});
