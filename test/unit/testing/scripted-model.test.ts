/**
 * @module
 * The scripted model is product: it must record faithfully and fail loudly.
 */
import { describe, expect, it } from 'vitest';
import { isCodecallError } from '../../../src/errors.js';
import type { GenerateRequest } from '../../../src/providers/language-model.js';
import { ScriptedLanguageModel, scriptedResponse, text, toolCall } from '../../../src/testing/index.js';

function ask(content: string): GenerateRequest {
  return { messages: [{ role: 'user', content }], tools: [] };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(isCodecallError(error)).toBe(true);
    return (error as { code: string }).code;
  }
  throw new Error('expected a rejection');
}

describe('ScriptedLanguageModel', () => {
  it('plays its steps in order and records deep copies of every request', async () => {
    const model = new ScriptedLanguageModel([
      toolCall('execute_code', { code: 'console.log(2)' }),
      text('It is 2.'),
    ]);
    const request = ask('What is 1 + 1?');
    const first = await model.generate(request);
    expect(first.stopReason).toBe('tool_use');
    expect(first.content).toEqual([
      {
        type: 'tool_call',
        id: 'toolu_scripted_1_1',
        name: 'execute_code',
        input: { code: 'console.log(2)' },
      },
    ]);

    request.messages.push({ role: 'assistant', content: first.content });
    request.messages.push({ role: 'tool', results: [{ toolCallId: 'toolu_scripted_1_1', content: '2' }] });
    const second = await model.generate(request);
    expect(second).toEqual({
      content: [{ type: 'text', text: 'It is 2.' }],
      stopReason: 'end_turn',
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    });
    expect(model.requests).toHaveLength(2);
    expect(model.requests[0]!.messages).toHaveLength(1);
    expect(model.requests[1]!.messages).toHaveLength(3);
    expect(model.remaining).toBe(0);
    model.assertComplete();
  });

  it('fails with MODEL_SCRIPT_EXHAUSTED on a call past the script, and remembers it', async () => {
    const model = new ScriptedLanguageModel([text('only')]);
    await model.generate(ask('a'));
    expect(await codeOf(model.generate(ask('b')))).toBe('MODEL_SCRIPT_EXHAUSTED');
    expect(model.requests).toHaveLength(2);
    expect(() => model.assertComplete()).toThrow(/called 2 times but has only 1 step/);
  });

  it('fails with MODEL_SCRIPT_MISMATCH when an expectation returns false or throws', async () => {
    const model = new ScriptedLanguageModel([
      {
        label: 'asks about expenses',
        expect: (request) => JSON.stringify(request).includes('expenses'),
        response: text('x'),
      },
    ]);
    expect(await codeOf(model.generate(ask('weather')))).toBe('MODEL_SCRIPT_MISMATCH');

    const throwing = new ScriptedLanguageModel([
      {
        expect: (request) => {
          if (request.tools.length === 0) throw new Error('no tools were offered');
        },
        response: text('x'),
      },
    ]);
    const error = await throwing.generate(ask('hi')).catch((caught: unknown) => caught);
    expect((error as Error).message).toContain('no tools were offered');
    expect(() => throwing.assertComplete()).toThrow(/no tools were offered/);
  });

  it('passes a matching expectation through to its response', async () => {
    const model = new ScriptedLanguageModel([
      { expect: (request) => request.system === 'sys', response: text('ok') },
    ]);
    const response = await model.generate({ system: 'sys', messages: [], tools: [] });
    expect(response.content).toEqual([{ type: 'text', text: 'ok' }]);
    model.assertComplete();
  });

  it('assertComplete fails while steps remain', async () => {
    const model = new ScriptedLanguageModel([text('a'), text('b')]);
    await model.generate(ask('a'));
    expect(() => model.assertComplete()).toThrow(/1 unconsumed step/);
  });

  it('computes responses with a responder, which may throw like a provider', async () => {
    const model = new ScriptedLanguageModel([
      (request, step) => text(`step ${step}: ${(request.messages[0] as { content: string }).content}`),
      () => {
        throw new Error('simulated outage');
      },
    ]);
    expect((await model.generate(ask('hello'))).content).toEqual([{ type: 'text', text: 'step 1: hello' }]);
    await expect(model.generate(ask('again'))).rejects.toThrow('simulated outage');
  });

  it('hands out copies, so a caller cannot corrupt the script', async () => {
    const shared = text('same');
    const model = new ScriptedLanguageModel([shared, shared]);
    const first = await model.generate(ask('a'));
    (first.content[0] as { text: string }).text = 'mutated';
    expect((await model.generate(ask('b'))).content).toEqual([{ type: 'text', text: 'same' }]);
  });

  it('rejects with ABORTED when the signal has fired', async () => {
    const model = new ScriptedLanguageModel([text('a')]);
    expect(await codeOf(model.generate(ask('a'), { signal: AbortSignal.abort() }))).toBe('ABORTED');
  });

  it('builds responses tersely', () => {
    expect(toolCall('search_tools', { query: 'expenses' }, { id: 'call_1', text: 'Searching.' })).toEqual({
      content: [
        { type: 'text', text: 'Searching.' },
        { type: 'tool_call', id: 'call_1', name: 'search_tools', input: { query: 'expenses' } },
      ],
      stopReason: 'tool_use',
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    });
    expect(scriptedResponse([], { stopReason: 'max_tokens', usage: { outputTokens: 9 } })).toMatchObject({
      stopReason: 'max_tokens',
      usage: { outputTokens: 9, inputTokens: 0 },
    });
  });
});
