/**
 * @module
 * countTokens is a real BPE count (o200k_base): exact on ordinary text, bounded on hostile runs,
 * and countMessageTokens adds up every part of a request.
 */
import { createRequire } from 'node:module';
import { Tiktoken, type TiktokenBPE } from 'js-tiktoken/lite';
import { describe, expect, it } from 'vitest';
import {
  countMessageTokens,
  countTokens,
  countTokensOffThread,
  countToolDefinitionTokens,
  estimateTokens,
  tokenizerName,
} from '../../../src/agent/count-tokens.js';
import type { GenerateRequest } from '../../../src/providers/language-model.js';

const reference = new Tiktoken(createRequire(import.meta.url)('js-tiktoken/ranks/o200k_base') as TiktokenBPE);
const exact = (text: string): number => reference.encode(text, [], []).length;

describe('countTokens', () => {
  it('counts with o200k_base when js-tiktoken is installed; the estimate is a length rule', () => {
    expect(tokenizerName()).toBe('o200k_base');
    expect(countTokens('a'.repeat(40) + ' ' + 'b'.repeat(39))).not.toBe(estimateTokens('x'.repeat(80)));
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('Hello, world!')).toBe(4);
    expect(estimateTokens('x'.repeat(400))).toBe(100);
  });

  it('counts known strings with the o200k_base vocabulary', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('Hello, world!')).toBe(4);
    expect(countTokens('hello')).toBe(1);
  });

  it('matches the tokenizer exactly on ordinary prose, code and JSON', () => {
    const rows = Array.from({ length: 500 }, (_, i) => ({
      id: i,
      employee: `Employee ${i}`,
      amount: i * 3.17,
      note: 'Lunch with client',
    }));
    const samples = [
      'The quick brown fox jumps over the lazy dog.\n'.repeat(50),
      'const total = rows.reduce((sum, row) => sum + row.amount, 0);\nconsole.log(total.toFixed(2));',
      JSON.stringify(rows),
      JSON.stringify(rows, null, 2),
      'Ünïcödé — 日本語のテキスト, emoji 🎉🎉 and <|endoftext|> as plain text',
    ];
    for (const sample of samples) expect(countTokens(sample)).toBe(exact(sample));
  });

  it('stays close on hostile long runs and finishes on 200 KB of them', () => {
    const letters = 'a'.repeat(200_000);
    // Runs short enough for the reference tokenizer (quadratic on them) to finish quickly.
    const mixed = `${'x'.repeat(600)} then ${'='.repeat(600)} and ${' '.repeat(600)} end`;
    expect(countTokens(letters)).toBeGreaterThan(0);
    expect(countTokens('=-'.repeat(100_000))).toBeGreaterThan(0);
    const estimate = countTokens(mixed);
    const truth = exact(mixed);
    expect(Math.abs(estimate - truth) / truth).toBeLessThan(0.35);
  });
});

describe('countTokensOffThread', () => {
  it('counts like countTokens, on a worker thread: the event loop of the caller keeps turning', async () => {
    const rows = JSON.stringify(
      Array.from({ length: 6_000 }, (_, i) => ({ id: `exp-${i}`, amount: i * 3.17, merchant: 'Delta' })),
    );
    const texts = ['', 'Hello, world!', rows];
    // Warm up (the worker loads the ranks once).
    expect(await countTokensOffThread(['Hello, world!'])).toEqual([4]);
    let turns = 0;
    let counting = true;
    const spin = (): void => {
      turns++;
      if (counting) setImmediate(spin);
    };
    setImmediate(spin);
    const counts = await countTokensOffThread(texts);
    counting = false;
    expect(counts).toEqual(texts.map(exact));
    // Counting ~300 KB of JSON takes tens of ms; counted here, the loop would turn once or twice.
    expect(turns).toBeGreaterThan(20);
  });
});

describe('countMessageTokens', () => {
  const tools = [
    {
      name: 'execute_code',
      description: 'Run JavaScript that calls tools.',
      inputSchema: { type: 'object', properties: { code: { type: 'string' } } },
    },
  ];
  const request: GenerateRequest = {
    system: 'You are careful.',
    tools,
    messages: [
      { role: 'user', content: 'Sum the expenses.' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Running.' },
          { type: 'tool_call', id: 'c1', name: 'execute_code', input: { code: 'console.log(42)' } },
        ],
      },
      { role: 'tool', results: [{ toolCallId: 'c1', content: '42' }] },
    ],
  };

  it('adds system, messages, tool calls, tool results and tool definitions', () => {
    const expected =
      exact('You are careful.') +
      exact('Sum the expenses.') +
      exact('Running.') +
      exact('execute_code') +
      exact(JSON.stringify({ code: 'console.log(42)' })) +
      exact('42') +
      exact(
        JSON.stringify({
          name: 'execute_code',
          description: 'Run JavaScript that calls tools.',
          input_schema: tools[0]!.inputSchema,
        }),
      );
    expect(countMessageTokens(request)).toBe(expected);
    expect(countToolDefinitionTokens(tools)).toBeGreaterThan(10);
  });

  it('grows with a large tool result', () => {
    const big: GenerateRequest = {
      ...request,
      messages: [
        ...request.messages,
        {
          role: 'tool',
          results: [
            {
              toolCallId: 'c2',
              content: JSON.stringify(Array.from({ length: 2_000 }, (_, i) => ({ row: i }))),
            },
          ],
        },
      ],
    };
    const content = (big.messages.at(-1) as { results: { content: string }[] }).results[0]!.content;
    expect(countMessageTokens(big) - countMessageTokens(request)).toBe(exact(content));
    expect(exact(content)).toBeGreaterThan(5_000);
  });
});
