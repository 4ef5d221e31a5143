/**
 * @module
 * Test helpers: compile model code and run it in a real pool, with plain async functions as
 * tools (the sandbox needs no MCP).
 */
import { expect } from 'vitest';

import { compileScript } from '../../../src/compile/index.js';
import type { SandboxLimits, SandboxPool } from '../../../src/isolate/index.js';
import type { ExecutionResult, SandboxToolBinding, ToolInvocation } from '../../../src/types.js';

export type ToolFn = (args: Record<string, unknown>, invocation: ToolInvocation) => unknown;

/** Binds `{ 'server.tool': fn }` as tools `tools.server.tool`. */
export function toolset(fns: Record<string, ToolFn>): {
  tools: SandboxToolBinding[];
  invoke: (call: ToolInvocation) => Promise<unknown>;
} {
  const tools = Object.keys(fns).map((name) => {
    const [namespace, member] = name.split('.') as [string, string];
    return { name, namespace, member };
  });
  return {
    tools,
    invoke: async (call) => {
      const fn = fns[call.name];
      if (!fn) throw new Error(`no such tool ${call.name}`);
      return fn(call.args as Record<string, unknown>, call);
    },
  };
}

export interface RunOptions {
  tools?: Record<string, ToolFn>;
  limits?: Partial<SandboxLimits>;
  signal?: AbortSignal;
  /** Runs in this session (compiled with `persistTopLevel`). */
  session?: string;
  sessionOwner?: string;
}

/** Compiles `source` (must compile) and runs it. */
export async function runScript(
  pool: SandboxPool,
  source: string,
  options: RunOptions = {},
): Promise<ExecutionResult> {
  const compiled = compileScript(source, { persistTopLevel: options.session !== undefined });
  if (!compiled.ok) expect.fail(`compile failed: ${compiled.error.message}`);
  const { tools, invoke } = toolset(options.tools ?? {});
  const run: Parameters<SandboxPool['run']>[0] = { code: compiled.code, tools, invoke };
  if (options.limits) run.limits = options.limits;
  if (options.signal) run.signal = options.signal;
  if (options.session !== undefined) run.session = options.session;
  if (options.sessionOwner !== undefined) run.sessionOwner = options.sessionOwner;
  return pool.run(run);
}
