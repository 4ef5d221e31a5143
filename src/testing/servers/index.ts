/**
 * @module
 * In-process MCP servers for tests (codecall's and yours): the expense server over seeded data,
 * a misbehaving server, and helpers to serve them in memory or over Streamable HTTP.
 */
export { CATEGORIES, createExpenseData, LEVELS, overBudgetMembers, QUARTERS } from './expense-data.js';
export type {
  Category,
  ExpenseData,
  ExpenseDataOptions,
  ExpenseItem,
  Level,
  LevelBudget,
  Quarter,
  TeamMember,
} from './expense-data.js';
export { createExpenseServer, MAX_EXPENSES_PAGE } from './expense-server.js';
export type { ExpenseServerOptions } from './expense-server.js';
export { createMisbehavingServer } from './misbehaving-server.js';
export type { MisbehavingServerOptions, MisbehavingServerProbe } from './misbehaving-server.js';
export { CONFORMANCE_PNG_BASE64, createConformanceServer } from './conformance-server.js';
export type { ConformanceServerOptions } from './conformance-server.js';
export { inMemoryTransport } from './in-memory.js';
export { serveHttp } from './serve-http.js';
export type { HttpMcpEndpoint, ServeHttpOptions } from './serve-http.js';
export { runTestServer } from './run-test-server.js';
export type { RunTestServerOptions } from './run-test-server.js';
