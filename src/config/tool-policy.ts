/**
 * @module
 * The policy of one tool of a resolved server: the one the file lists for it, else the server's.
 */
import type { ServerConfig, ToolPolicyConfig } from './types.js';

/**
 * The resolved policy of `tool` on `server`: `server.tools[tool]` when the file lists the tool
 * (an own key only: a tool named `__proto__` or `constructor` is never a built-in), else the
 * server's values (`deferLoading`, `toolTimeoutMs`; callers and approval left to the server).
 */
export function toolPolicyOf(
  server: Pick<ServerConfig, 'tools' | 'deferLoading' | 'toolTimeoutMs'>,
  tool: string,
): ToolPolicyConfig {
  if (Object.hasOwn(server.tools, tool)) return server.tools[tool]!;
  return {
    allowedCallers: undefined,
    requireApproval: undefined,
    deferLoading: server.deferLoading,
    inputExamples: [],
    timeoutMs: server.toolTimeoutMs,
  };
}
