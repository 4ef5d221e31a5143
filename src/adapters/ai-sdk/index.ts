/**
 * @module
 * `codecall/ai-sdk`: codecall inside the Vercel AI SDK, and the AI SDK's providers inside
 * codecall. {@link createCodecallTools} gives `generateText` / `streamText` the `search_tools`
 * and `execute_code` tools over a runtime; {@link fromAiSdkModel} lets any AI SDK provider model
 * drive `createOrchestrator`. `ai` is an optional peer dependency, loaded only by this entry.
 */
export { createCodecallTools } from './create-codecall-tools.js';
export type { CodecallAiSdkTools, CreateCodecallToolsOptions } from './create-codecall-tools.js';
export { fromAiSdkModel } from './ai-sdk-language-model.js';
export type { FromAiSdkModelOptions } from './ai-sdk-language-model.js';
export { convertToAiSdkCallOptions, convertToAiSdkPrompt } from './convert-to-ai-sdk-prompt.js';
export { mapAiSdkFinishReason, mapAiSdkResponse } from './map-ai-sdk-response.js';
