/**
 * The savings meter: what entered the context is the real count of each request; the
 * direct-calling estimate drops the meta-tools, adds every tool definition and every result the
 * scripts consumed.
 */
import { describe, expect, it } from 'vitest';
import { ContextMeter, DIRECT_ESTIMATE_BYTES_PER_TOKEN } from '../../../src/agent/context-meter.js';
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

function meter(): ContextMeter {
  return new ContextMeter({
    metaToolNames: new Set(['search_tools', 'execute_code']),
    directSystem: 'Use the tools.',
    directTools: () => catalog,
  });
}

function record(resultBytes: number, ok = true): ToolCallRecord {
  return { tool: 'expenses.get_expenses', ok, durationMs: 1, argsBytes: 2, resultBytes };
}

describe('ContextMeter', () => {
  it('counts exactly what a request puts in the context', () => {
    const request: GenerateRequest = {
      system: 'You complete tasks.',
      messages: [{ role: 'user', content: 'Who is over budget?' }],
      tools: meta,
    };
    expect(meter().measure(request, false).contextTokens).toBe(countMessageTokens(request));
  });

  it('in direct mode, the estimate is the measured count', () => {
    const request: GenerateRequest = { messages: [{ role: 'user', content: 'Hi' }], tools: catalog };
    const tokens = meter().measure(request, true);
    expect(tokens.directEstimateTokens).toBe(tokens.contextTokens);
  });

  it('estimates direct calling: all definitions, no meta-tool traffic, consumed script results', () => {
    const m = meter();
    const user: Message = { role: 'user', content: 'Who is over budget?' };
    const assistant: Message = {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_call', id: 'a', name: 'execute_code', input: { code: 'x'.repeat(400) } },
        { type: 'tool_call', id: 'b', name: 'expenses__flag_expense', input: { expense_id: 'exp-1' } },
      ],
    };
    const results: Message = {
      role: 'tool',
      results: [
        { toolCallId: 'a', content: 'stdout:\n' + 'a lot of words '.repeat(50) },
        { toolCallId: 'b', content: '{"flagged":"exp-1"}' },
      ],
    };
    const first = m.measure({ system: 'S', messages: [user], tools: meta }, false);
    const base = countTokens('Use the tools.') + countToolDefinitionTokens(catalog);
    expect(first.directEstimateTokens).toBe(base + countTokens(user.content));

    m.addScriptResults([record(40_000), record(4_000, false)]);
    const second = m.measure({ system: 'S', messages: [user, assistant, results], tools: meta }, false);
    const directConversation = countMessageTokens({
      messages: [
        user,
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Let me look.' },
            { type: 'tool_call', id: 'b', name: 'expenses__flag_expense', input: { expense_id: 'exp-1' } },
          ],
        },
        { role: 'tool', results: [{ toolCallId: 'b', content: '{"flagged":"exp-1"}' }] },
      ],
      tools: [],
    });
    // Failed calls deliver nothing, so only the 40,000 bytes count.
    expect(second.directEstimateTokens).toBe(
      base + directConversation + 40_000 / DIRECT_ESTIMATE_BYTES_PER_TOKEN,
    );
    expect(second.contextTokens).toBe(
      countMessageTokens({ system: 'S', messages: [user, assistant, results], tools: meta }),
    );
  });

  it('counts script results exactly from onToolResult, as direct calling renders them', async () => {
    const items = Array.from({ length: 200 }, (_, i) => ({
      id: `exp-${i}`,
      amount: i * 1.5,
      category: 'travel',
    }));
    const user: Message = { role: 'user', content: 'Sum it.' };
    const request: GenerateRequest = { messages: [user], tools: meta };
    const before = meter().measure(request, false).directEstimateTokens;

    const exact = meter();
    const counter = exact.scriptResults();
    counter.onToolResult({ name: 'expenses.get_expenses', args: {}, result: { items }, ok: true });
    counter.onToolResult({ name: 'expenses.get_expenses', args: {}, result: 'plain text', ok: true });
    // A failed call delivered nothing.
    counter.onToolResult({
      name: 'expenses.get_expenses',
      args: {},
      result: new Error('x'.repeat(500)),
      ok: false,
    });
    await counter.finish([record(999_999), record(999_999), record(10, false)]);
    expect(exact.measure(request, false).directEstimateTokens).toBe(
      before + countTokens(JSON.stringify({ items })) + countTokens('plain text'),
    );

    // The renderer is the direct mode's (e.g. cut like a direct result).
    const cut = new ContextMeter({
      metaToolNames: new Set(['search_tools', 'execute_code']),
      directSystem: 'Use the tools.',
      directTools: () => catalog,
      renderDirectResult: (value) => JSON.stringify(value).slice(0, 100),
    });
    const cutCounter = cut.scriptResults();
    cutCounter.onToolResult({ name: 'expenses.get_expenses', args: {}, result: { items }, ok: true });
    await cutCounter.finish([record(999_999)]);
    expect(cut.measure(request, false).directEstimateTokens).toBe(
      before + countTokens(JSON.stringify({ items }).slice(0, 100)),
    );

    // No events (a runtime that ignores onToolResult): the size-based fallback.
    const fallback = meter();
    await fallback.scriptResults().finish([record(40_000), record(4_000, false)]);
    expect(fallback.measure(request, false).directEstimateTokens).toBe(
      before + 40_000 / DIRECT_ESTIMATE_BYTES_PER_TOKEN,
    );
  });

  it('counts a message once however many requests carry it (same total)', () => {
    const m = meter();
    const big: Message = { role: 'tool', results: [{ toolCallId: 'x', content: 'word '.repeat(2_000) }] };
    const request: GenerateRequest = { messages: [{ role: 'user', content: 'go' }, big], tools: [] };
    const once = m.measure(request, true).contextTokens;
    expect(m.measure({ ...request, messages: [...request.messages] }, true).contextTokens).toBe(once);
  });
});
