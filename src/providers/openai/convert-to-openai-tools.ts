/**
 * @module
 * Maps provider-neutral tool definitions to Chat Completions `function` tools.
 */
import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions/completions.js';
import type { ToolDefinition } from '../language-model.js';

/** Converts tool definitions to Chat Completions tools; the parameters are always an object schema. */
export function convertToOpenAITools(tools: readonly ToolDefinition[]): ChatCompletionFunctionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    function: {
      name: tool.name,
      description: tool.description,
      parameters: { ...tool.inputSchema, type: 'object' },
    },
  }));
}
