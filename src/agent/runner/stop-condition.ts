/**
 * @module
 * Stop conditions of a run (`stopWhen`), in the AI SDK's style: checked after every step that
 * called tools; when one holds, the run ends with that step's text as its answer, instead of
 * asking the model again. `maxSteps` still bounds every run (and then throws).
 */
import type { AgentStep } from '../types.js';

/** What a stop condition sees: the steps so far (the last one just finished). */
export interface StopConditionOptions {
  steps: readonly AgentStep[];
}

/** True to end the run after the step that just finished. */
export type StopCondition = (options: StopConditionOptions) => boolean | PromiseLike<boolean>;

/**
 * Stops once the run has made `count` steps (model requests).
 *
 * @example
 * ```ts
 * const agent = await createOrchestrator({ model: 'demo', stopWhen: stepCountIs(3) });
 * ```
 */
export function stepCountIs(count: number): StopCondition {
  return ({ steps }) => steps.length >= count;
}

/**
 * Stops after a step in which the model called the tool named `name` (a meta-tool such as
 * `execute_code`, or a direct tool's model-facing name).
 *
 * @example
 * ```ts
 * const agent = await createOrchestrator({ model: 'demo', stopWhen: hasToolCall('execute_code') });
 * ```
 */
export function hasToolCall(name: string): StopCondition {
  return ({ steps }) => steps.at(-1)?.toolCalls.some((call) => call.name === name) ?? false;
}

/** True when any of `conditions` holds (each awaited in order). */
export async function isStopConditionMet(
  conditions: readonly StopCondition[],
  steps: readonly AgentStep[],
): Promise<boolean> {
  for (const condition of conditions) {
    if (await condition({ steps })) return true;
  }
  return false;
}
