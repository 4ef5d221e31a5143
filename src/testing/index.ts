/**
 * @module
 * Test doubles shipped as product (`codecall/testing`): a scripted language model and test MCP
 * servers for users' own tests.
 */
export { ScriptedLanguageModel, scriptedResponse, text, toolCall } from './scripted-model.js';
export type {
  ScriptedLanguageModelOptions,
  ScriptedResponder,
  ScriptedResponseOptions,
  ScriptedStep,
  ScriptedStepWithExpectation,
} from './scripted-model.js';
