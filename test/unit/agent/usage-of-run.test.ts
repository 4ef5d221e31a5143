import { describe, expect, it } from 'vitest';
import { usagesOfRun } from '../../../src/agent/usage-of-run.js';
import type { AgentStep } from '../../../src/agent/types.js';

type Call = { kind: string; input?: unknown; tool?: string; isError?: boolean };

/** A step with only the fields usagesOfRun reads. */
function step(calls: Call[], scripts: Array<Array<[string, boolean]>> = []): AgentStep {
  return {
    toolCalls: calls.map((c, i) => ({
      id: `c${i}`,
      name: c.kind,
      input: c.input,
      kind: c.kind,
      ...(c.tool ? { tool: c.tool } : {}),
      content: '',
      isError: c.isError ?? false,
      durationMs: 0,
    })),
    executions: scripts.map((calls, i) => ({
      toolCallId: `e${i}`,
      code: '',
      result: { toolCalls: calls.map(([tool, ok]) => ({ tool, ok })) },
    })),
  } as unknown as AgentStep;
}

describe('usagesOfRun', () => {
  it('pairs each search query with the tools called after it, from code and directly', () => {
    const usages = usagesOfRun([
      step([{ kind: 'direct', tool: 'a.before' }]),
      step([{ kind: 'search_tools', input: { query: 'team expenses' } }]),
      step(
        [{ kind: 'execute_code' }],
        [
          [
            ['x.members', true],
            ['x.expenses', true],
            ['x.broken', false],
          ],
        ],
      ),
      step([{ kind: 'search_tools', input: { query: 'flag one' } }]),
      step([
        { kind: 'direct', tool: 'x.flag' },
        { kind: 'direct', tool: 'x.failed', isError: true },
      ]),
      step([{ kind: 'search_tools', input: { query: 'nothing after' } }]),
      step([{ kind: 'search_tools', input: { query: 'bad' }, isError: true }]),
    ]);
    expect(usages).toEqual([
      { query: 'team expenses', tools: ['x.members', 'x.expenses', 'x.flag'] },
      { query: 'flag one', tools: ['x.flag'] },
    ]);
  });
});
