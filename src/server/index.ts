/**
 * @module
 * codecall as an MCP server: the server factory and its stdio and Streamable HTTP front ends.
 * Curated exports only.
 */
export { CODECALL_SERVER_INSTRUCTIONS, createCodecallServer } from './create-codecall-server.js';
export type { CodecallServerOptions, ExecuteCodeEvent } from './create-codecall-server.js';
export { RunLimiter } from './run-limiter.js';
export type { RunLimiterOptions, RunRefusal } from './run-limiter.js';
export { startStdioServer } from './start-stdio-server.js';
export type { StdioServerHandle, StdioServerOptions } from './start-stdio-server.js';
export { MCP_HTTP_PATH, startHttpServer } from './start-http-server.js';
export type { HttpRoutes, HttpServerHandle, HttpServerOptions } from './start-http-server.js';
export { capYoungGeneration, collectWhenIdle, startHeapPolicy } from './heap-policy.js';
export type { HeapPolicyHandle, HeapPolicyOptions, YoungGenerationCap } from './heap-policy.js';
export { assertSafeBinding, checkHostAndOrigin, hasBearerToken, isLoopbackHost } from './http-security.js';
export type { HostOriginPolicy } from './http-security.js';
