/**
 * @module
 * Maps provider-neutral tool definitions to Anthropic `tools`, with a prompt-cache breakpoint
 * on the last one so a stable tool list is read from the cache on later requests.
 */
import type { Tool } from '@anthropic-ai/sdk/resources/messages/messages.js';
import type { ToolDefinition } from '../language-model.js';

/** Options of {@link convertToAnthropicTools}. */
export interface ConvertToAnthropicToolsOptions {
  /** Put `cache_control` on the last tool. */
  cache: boolean;
}

/** Converts tool definitions to Anthropic `tools`; the input schema is always an object schema. */
export function convertToAnthropicTools(
  tools: readonly ToolDefinition[],
  options: ConvertToAnthropicToolsOptions,
): Tool[] {
  return tools.map((tool, index) => ({
    name: tool.name,
    description: tool.description,
    input_schema: { ...tool.inputSchema, type: 'object' } as Tool.InputSchema,
    ...(options.cache && index === tools.length - 1 ? { cache_control: { type: 'ephemeral' as const } } : {}),
  }));
}
