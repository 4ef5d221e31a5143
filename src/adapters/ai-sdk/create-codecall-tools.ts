/**
 * @module
 * codecall's two meta-tools as AI SDK tools: `search_tools` and `execute_code` over an open
 * {@link CodecallRuntime}, with the descriptions, input schemas, search rendering, output
 * formatting and byte bound the agent loop uses. Give them to `generateText` / `streamText` with
 * any AI SDK provider and the model gets programmatic tool calling over every MCP server.
 */
import { jsonSchema, tool, type Tool } from 'ai';
import type { CodecallRuntime } from '../../execute/index.js';
import {
  answerExecuteCode,
  answerSearchTools,
  executeCodeDefinition,
  searchToolsDefinition,
  type ExecuteCodeInput,
  type SearchToolsInput,
} from '../../meta/index.js';
import type { ExecutionResult } from '../../types.js';
import { checkToolsOptions } from '../tools-options.js';

/** Options of {@link createCodecallTools}. */
export interface CreateCodecallToolsOptions {
  /**
   * Bytes of one tool answer put in the context; longer text is cut with a marker.
   * @defaultValue `DEFAULT_AGENT_MAX_TOOL_RESULT_BYTES` (262,144)
   */
  maxToolResultBytes?: number;
  /** Told after each `execute_code` run with its full result (stdout, status, every MCP call). */
  onExecution?: (result: ExecutionResult) => void;
}

/** The tools {@link createCodecallTools} returns, keyed by their model-facing names. */
export type CodecallAiSdkTools = {
  search_tools: Tool<SearchToolsInput, string>;
  execute_code: Tool<ExecuteCodeInput, string>;
};

/**
 * `search_tools` and `execute_code` as AI SDK tools over `runtime` (which the caller owns).
 *
 * @example
 * ```ts
 * import { generateText, stepCountIs } from 'ai';
 * import { createCodecallTools } from 'codecall/ai-sdk';
 *
 * const runtime = await CodecallRuntime.open({ load: { path: 'codecall.json' } });
 * const { text } = await generateText({
 *   model,
 *   tools: createCodecallTools(runtime),
 *   stopWhen: stepCountIs(10),
 *   prompt: 'Which team members exceeded their Q3 travel budget?',
 * });
 * ```
 */
export function createCodecallTools(
  runtime: CodecallRuntime,
  options: CreateCodecallToolsOptions = {},
): CodecallAiSdkTools {
  const { maxToolResultBytes } = checkToolsOptions(options);
  const search = searchToolsDefinition();
  const execute = executeCodeDefinition({
    ...runtime.config.sandbox.limits,
    store: runtime.scriptStore !== undefined,
  });
  return {
    search_tools: tool({
      description: search.description,
      inputSchema: jsonSchema<SearchToolsInput>(search.inputSchema as Parameters<typeof jsonSchema>[0]),
      execute: async (input) => (await answerSearchTools(runtime, input, { maxToolResultBytes })).text,
    }),
    execute_code: tool({
      description: execute.description,
      inputSchema: jsonSchema<ExecuteCodeInput>(execute.inputSchema as Parameters<typeof jsonSchema>[0]),
      execute: async (input, { abortSignal }) => {
        const answer = await answerExecuteCode(runtime, input, { maxToolResultBytes, signal: abortSignal });
        if (answer.execution) options.onExecution?.(answer.execution);
        return answer.text;
      },
    }),
  };
}
