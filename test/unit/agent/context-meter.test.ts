/**
 * The savings meter: what entered the context is the real count of each request; tool results
 * the scripts consumed are counted once, as direct calling would have shown them (kept out);
 * definitions a direct request offers and this one did not carry are counted as deferred.
 */
import { describe, expect, it } from 'vitest';
import { ContextMeter } from '../../../src/agent/context-meter.js';
import {
  countMessageTokens,
  countTokens,
  countToolDefinitionTokens,
} from '../../../src/agent/count-tokens.js';
import type { GenerateRequest, Message, ToolDefinition } from '../../../src/providers/language-model.js';
import type { ToolCallRecord } from '../../../src/types.js';

const meta: ToolDefinition[] = [
  { name: 'search_tools', description: 'Find tools.', inputSchema: { type: 'object' } },
  { name: 'execute_code', description: 'Run code.', inputSchema: { type: 'object' } },
];
const catalog: ToolDefinition[] = [
  {
    name: 'expenses__get_expenses',
    description: 'Expense line items of a member for a quarter.',
    inputSchema: { type: 'object', properties: { member_id: { type: 'string' } } },
  },
  {
    name: 'expenses__flag_expense',
    description: 'Flag an expense for review.',
    inputSchema: { type: 'object', properties: { expense_id: { type: 'string' } } },
  },
];

function record(resultBytes: number, ok = true): ToolCallRecord {
  return { tool: 'expenses.get_expenses', ok, durationMs: 1, argsBytes: 2, resultBytes };
}

const conversation: Message[] = [
  { role: 'user', content: 'Who is over budget?' },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_call', id: 'a', name: 'execute_code', input: { code: 'console.log(1)' } },
    ],
  },
  { role: 'tool', results: [{ toolCallId: 'a', content: 'stdout:\n' + 'a lot of words '.repeat(50) }] },
];

describe('ContextMeter', () => {
  it('counts exactly what a request puts in the context (system, messages, definitions)', async () => {
    const request: GenerateRequest = { system: 'You complete tasks.', messages: conversation, tools: meta };
    const tokens = await new ContextMeter().measure(request);
    expect(tokens.contextTokens).toBe(countMessageTokens(request));
    expect(tokens.contextTokens).toBeGreaterThan(countTokens('a lot of words '.repeat(50)));
  });

  it('counts the definitions a direct request offers and this one did not carry, per request', async () => {
    const m = new ContextMeter({ directTools: () => catalog });
    const offered = [...meta, catalog[1]!];
    const request: GenerateRequest = { messages: conversation.slice(0, 1), tools: offered };
    const first = await m.measure(request);
    expect(first.deferredDefinitionTokens).toBe(countToolDefinitionTokens([catalog[0]!]));
    expect(first.contextTokens).toBe(countMessageTokens(request));
    await m.measure({ messages: conversation, tools: offered });
    expect(m.totals().toolDefinitionTokensDeferred).toBe(2 * countToolDefinitionTokens([catalog[0]!]));
    // Direct mode (no directTools): nothing is deferred.
    expect((await new ContextMeter().measure(request)).deferredDefinitionTokens).toBe(0);
  });

  it('counts the results scripts consumed once, as direct calling renders them; failures count nothing', async () => {
    const items = Array.from({ length: 200 }, (_, i) => ({ id: `exp-${i}`, amount: i * 1.5 }));
    const m = new ContextMeter();
    const counter = m.scriptResults();
    counter.onToolResult({ name: 'expenses.get_expenses', args: {}, result: { items }, ok: true });
    counter.onToolResult({ name: 'expenses.get_expenses', args: {}, result: 'plain text', ok: true });
    counter.onToolResult({
      name: 'expenses.get_expenses',
      args: {},
      result: new Error('x'.repeat(500)),
      ok: false,
    });
    await counter.finish([record(7_000), record(10), record(500, false)]);
    expect(m.totals()).toEqual({
      toolResultTokensKeptOut: countTokens(JSON.stringify({ items })) + countTokens('plain text'),
      toolResultBytesKeptOut: 7_010,
      toolDefinitionTokensDeferred: 0,
    });
    // A second script adds to the first.
    const again = m.scriptResults();
    again.onToolResult({ name: 'expenses.get_expenses', args: {}, result: 'plain text', ok: true });
    await again.finish([record(10)]);
    expect(m.totals().toolResultTokensKeptOut).toBe(
      countTokens(JSON.stringify({ items })) + 2 * countTokens('plain text'),
    );

    // The renderer is the direct mode's (e.g. cut like a direct result).
    const cut = new ContextMeter({ renderDirectResult: (value) => JSON.stringify(value).slice(0, 100) });
    const cutCounter = cut.scriptResults();
    cutCounter.onToolResult({ name: 'expenses.get_expenses', args: {}, result: { items }, ok: true });
    await cutCounter.finish([record(7_000)]);
    expect(cut.totals().toolResultTokensKeptOut).toBe(countTokens(JSON.stringify({ items }).slice(0, 100)));
  });

  it('renders a result only after the call returned to the script', async () => {
    const rendered: unknown[] = [];
    const m = new ContextMeter({ renderDirectResult: (value) => (rendered.push(value), 'x') });
    const counter = m.scriptResults();
    counter.onToolResult({ name: 'expenses.get_expenses', args: {}, result: { a: 1 }, ok: true });
    expect(rendered).toEqual([]);
    await counter.finish([record(7)]);
    expect(rendered).toEqual([{ a: 1 }]);
  });

  it('counts each message and definition once however many requests carry it', async () => {
    const counted: string[] = [];
    const m = new ContextMeter({
      directTools: () => catalog,
      countTexts: (texts) => {
        counted.push(...texts);
        return Promise.resolve(texts.map(countTokens));
      },
    });
    const big = 'word '.repeat(2_000);
    const message: Message = { role: 'tool', results: [{ toolCallId: 'x', content: big }] };
    const request: GenerateRequest = { messages: [conversation[0]!, message], tools: meta };
    const once = (await m.measure(request)).contextTokens;
    const twice = await m.measure({ ...request, messages: [...request.messages, message] });
    expect(twice.contextTokens).toBe(once + countTokens(big));
    expect(counted.filter((text) => text === big)).toHaveLength(1);
    expect(counted.filter((text) => text.includes('"expenses__get_expenses"'))).toHaveLength(1);
    expect(counted.filter((text) => text === (conversation[0] as { content: string }).content)).toHaveLength(
      1,
    );
  });
});
