/**
 * @module
 * codecall's two meta-tools as OpenAI Agents SDK function tools: `search_tools` and
 * `execute_code` over an open {@link CodecallRuntime}, with the descriptions, input schemas,
 * search rendering, output formatting and byte bound the agent loop uses. Give them to an
 * `Agent` and its model gets programmatic tool calling over every MCP server.
 */
import { tool, type FunctionTool } from '@openai/agents';
import type { CodecallRuntime } from '../../execute/index.js';
import {
  answerExecuteCode,
  answerSearchTools,
  EXECUTE_CODE_NAME,
  executeCodeDefinition,
  SEARCH_TOOLS_NAME,
  searchToolsDefinition,
  type MetaToolDefinition,
} from '../../meta/index.js';
import type { ExecutionResult } from '../../types.js';
import { checkToolsOptions } from '../tools-options.js';

/** Options of {@link createCodecallAgentTools}. */
export interface CreateCodecallAgentToolsOptions {
  /**
   * Bytes of one tool answer put in the context; longer text is cut with a marker.
   * @defaultValue `DEFAULT_AGENT_MAX_TOOL_RESULT_BYTES` (262,144)
   */
  maxToolResultBytes?: number;
  /** Told after each `execute_code` run with its full result (stdout, status, every MCP call). */
  onExecution?: (result: ExecutionResult) => void;
}

/** A non-strict JSON object schema, as the Agents SDK types it. */
interface NonStrictObjectSchema {
  type: 'object';
  properties: Record<string, never>;
  required: never[];
  additionalProperties: true;
}

/**
 * The schema of a meta-tool as a non-strict Agents SDK schema (optional fields stay optional;
 * the SDK passes it to the model as is).
 */
function parameters(definition: MetaToolDefinition): NonStrictObjectSchema {
  return definition.inputSchema as unknown as NonStrictObjectSchema;
}

/**
 * `search_tools` and `execute_code` as Agents SDK tools over `runtime` (which the caller owns).
 *
 * @example
 * ```ts
 * import { Agent, run } from '@openai/agents';
 * import { createCodecallAgentTools } from 'codecall/openai-agents';
 *
 * const runtime = await CodecallRuntime.open({ load: { path: 'codecall.json' } });
 * const agent = new Agent({ name: 'analyst', model: 'gpt-4.1', tools: createCodecallAgentTools(runtime) });
 * const result = await run(agent, 'Which team members exceeded their Q3 travel budget?');
 * ```
 */
export function createCodecallAgentTools(
  runtime: CodecallRuntime,
  options: CreateCodecallAgentToolsOptions = {},
): FunctionTool<unknown, NonStrictObjectSchema, string>[] {
  const { maxToolResultBytes } = checkToolsOptions(options);
  const search = searchToolsDefinition();
  const execute = executeCodeDefinition({
    ...runtime.config.sandbox.limits,
    store: runtime.scriptStore !== undefined,
  });
  return [
    tool({
      name: SEARCH_TOOLS_NAME,
      description: search.description,
      parameters: parameters(search),
      strict: false,
      execute: async (input) => (await answerSearchTools(runtime, input, { maxToolResultBytes })).text,
    }),
    tool({
      name: EXECUTE_CODE_NAME,
      description: execute.description,
      parameters: parameters(execute),
      strict: false,
      execute: async (input, _context, details) => {
        const signal = details?.signal;
        const answer = await answerExecuteCode(runtime, input, { maxToolResultBytes, signal });
        if (answer.execution) options.onExecution?.(answer.execution);
        return answer.text;
      },
    }),
  ];
}
