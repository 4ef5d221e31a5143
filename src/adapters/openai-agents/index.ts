/**
 * @module
 * `codecall/openai-agents`: codecall inside the OpenAI Agents SDK. {@link createCodecallAgentTools}
 * gives an `Agent` the `search_tools` and `execute_code` tools over a runtime. `@openai/agents`
 * is an optional peer dependency, loaded only by this entry.
 */
export { createCodecallAgentTools } from './create-codecall-tools.js';
export type { CreateCodecallAgentToolsOptions } from './create-codecall-tools.js';
