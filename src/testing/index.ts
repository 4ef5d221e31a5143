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
export {
  CATEGORIES,
  createExpenseData,
  createExpenseServer,
  createMisbehavingServer,
  inMemoryTransport,
  LEVELS,
  MAX_EXPENSES_PAGE,
  overBudgetMembers,
  QUARTERS,
  runTestServer,
  serveHttp,
} from './servers/index.js';
export type {
  Category,
  ExpenseData,
  ExpenseDataOptions,
  ExpenseItem,
  ExpenseServerOptions,
  HttpMcpEndpoint,
  Level,
  LevelBudget,
  MisbehavingServerOptions,
  MisbehavingServerProbe,
  Quarter,
  RunTestServerOptions,
  ServeHttpOptions,
  TeamMember,
} from './servers/index.js';
