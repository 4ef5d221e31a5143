/**
 * @module
 * Query feedback from one agent run: each successful `search_tools` query, paired with the MCP
 * tools the run called after it (from code or directly). What search learns with
 * `recordUsage({ query, tools })`.
 */
import type { AgentStep } from './types.js';

/** One query of a run and the tools called after it. */
export interface RunUsage {
  query: string;
  tools: string[];
}

/** The `(query, tools called after it)` pairs of a run's steps, in order; queries without later calls are left out. */
export function usagesOfRun(steps: readonly AgentStep[]): RunUsage[] {
  const queries: Array<{ query: string; from: number }> = [];
  const used: string[] = [];
  for (const step of steps) {
    for (const call of step.toolCalls) {
      const input = call.input as { query?: unknown } | undefined;
      if (call.kind === 'search_tools' && !call.isError && typeof input?.query === 'string') {
        queries.push({ query: input.query, from: used.length });
      } else if (call.kind === 'direct' && !call.isError && call.tool !== undefined) {
        used.push(call.tool);
      }
    }
    for (const execution of step.executions) {
      for (const toolCall of execution.result.toolCalls) if (toolCall.ok) used.push(toolCall.tool);
    }
  }
  return queries
    .map(({ query, from }) => ({ query, tools: [...new Set(used.slice(from))] }))
    .filter((usage) => usage.tools.length > 0);
}
