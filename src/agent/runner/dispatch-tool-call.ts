/**
 * @module
 * One tool call the model made, answered: `search_tools` (ranked tools rendered as text),
 * `execute_code` (the script run in the sandbox; only its output returns), a direct MCP tool,
 * or guidance for an unknown tool or unreadable arguments. Failures are results the model can
 * read, never throws — except when the run itself is stopped.
 */
import { isCodecallError } from '../../errors.js';
import { formatResultForModel, type CodecallRuntime } from '../../execute/index.js';
import {
  cutToBytes,
  EXECUTE_CODE_NAME,
  parseExecuteCodeInput,
  parseSearchToolsInput,
  renderSearchResult,
  SEARCH_TOOLS_NAME,
} from '../../meta/index.js';
import type { ToolCallPart } from '../../providers/language-model.js';
import type { Approver, CatalogTool } from '../../tools/index.js';
import type { ContextMeter } from '../context-meter.js';
import type { AgentEvent, AgentExecution, AgentMode, AgentToolCall } from '../types.js';
import type { RunTelemetry, TraceScope } from './run-telemetry.js';
import type { Offer } from './tool-offer.js';

/** Tool names listed in an "unknown tool" message. */
const MAX_NAMES_LISTED = 20;
/** Characters of malformed arguments quoted back to the model. */
const MAX_QUOTED_INPUT_CHARS = 200;

/** What a dispatched call produced. */
export interface DispatchOutcome {
  call: AgentToolCall;
  execution?: AgentExecution;
}

/** The session `execute_code` runs in when the model names none: one per agent run. */
export const RUN_SESSION_NAME = 'main';

/** Everything one call needs from its run. */
export interface DispatchContext {
  runtime: CodecallRuntime;
  mode: AgentMode;
  maxToolResultBytes: number;
  offerFoundDirectTools: boolean;
  /** Owner of this run's sandbox sessions (one per run; closed when the run ends). */
  sessionOwner: string;
  step: number;
  offer: Offer;
  signal: AbortSignal;
  meter: ContextMeter;
  /** Direct-only tools searches found (grows as searches find more). */
  found: string[];
  emit: (event: AgentEvent) => void;
  telemetry: RunTelemetry;
  trace: TraceScope | undefined;
  /** Awaited after each call ends (`onToolCall`), and after each script (`onExecution`). */
  onToolCall?: ((call: AgentToolCall) => void | PromiseLike<void>) | undefined;
  onExecution?: ((execution: AgentExecution) => void | PromiseLike<void>) | undefined;
  /** Decides the calls that need approval (scripts' and direct ones). */
  approver?: Approver | undefined;
}

/** A value as the model reads it. */
export function renderValue(value: unknown): string {
  if (value === null || value === undefined) return '(no content)';
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? '(no content)';
}

function errorText(error: unknown): string {
  if (isCodecallError(error)) return error.message;
  return `The call failed unexpectedly: ${error instanceof Error ? error.message : String(error)}`;
}

function quote(input: string): string {
  return JSON.stringify(
    input.length > MAX_QUOTED_INPUT_CHARS ? `${input.slice(0, MAX_QUOTED_INPUT_CHARS)}…` : input,
  );
}

/** Answers one tool call; see the module comment. */
export async function dispatchToolCall(
  part: ToolCallPart,
  context: DispatchContext,
): Promise<DispatchOutcome> {
  const { runtime, step, offer, signal, emit } = context;
  const started = performance.now();
  const span = context.telemetry.startToolCall(context.trace, part.id, part.name, part.input);
  emit({ type: 'tool-call-start', step, id: part.id, name: part.name, input: part.input });
  const finish = async (
    kind: AgentToolCall['kind'],
    content: string,
    isError: boolean,
    extra: { tool?: string; execution?: AgentExecution } = {},
  ): Promise<DispatchOutcome> => {
    const call: AgentToolCall = {
      id: part.id,
      name: part.name,
      input: part.input,
      kind,
      ...(extra.tool !== undefined ? { tool: extra.tool } : {}),
      content: cutToBytes(content, context.maxToolResultBytes),
      isError,
      durationMs: performance.now() - started,
    };
    context.telemetry.endToolCall(span, call);
    emit({ type: 'tool-call-end', step, call });
    await context.onToolCall?.(call);
    return extra.execution ? { call, execution: extra.execution } : { call };
  };

  if (typeof part.input === 'string') {
    return finish(
      'invalid',
      `The arguments of ${part.name} were not valid JSON: ${quote(part.input)}. Send one JSON object that matches the tool's input schema.`,
      true,
    );
  }
  const isMeta =
    context.mode === 'code' &&
    (part.name === SEARCH_TOOLS_NAME || part.name === EXECUTE_CODE_NAME) &&
    offer.definitions.some((definition) => definition.name === part.name);
  if (isMeta && part.name === SEARCH_TOOLS_NAME) {
    const input = parseSearchToolsInput(part.input);
    if ('error' in input) return finish('search_tools', input.error, true);
    try {
      const result = await runtime.findTools(input.query, {
        ...(input.limit !== undefined ? { limit: input.limit } : {}),
        ...(input.regex !== undefined ? { regex: input.regex } : {}),
      });
      const found = context.found;
      if (context.offerFoundDirectTools) {
        for (const hit of result.hits) {
          const tool = hit.tool;
          if (
            tool.allowedCallers.includes('direct') &&
            !tool.allowedCallers.includes('code_execution') &&
            !found.includes(tool.name)
          ) {
            found.push(tool.name);
          }
        }
      }
      const offered = new Set(offer.direct.values());
      const directName = (tool: CatalogTool): string | undefined =>
        offered.has(tool) || found.includes(tool.name) ? offer.names.get(tool.name) : undefined;
      return finish('search_tools', renderSearchResult(result, { query: input.query, directName }), false);
    } catch (error) {
      return finish('search_tools', errorText(error), true);
    }
  }
  if (isMeta) {
    const input = parseExecuteCodeInput(part.input);
    if ('error' in input) return finish('execute_code', input.error, true);
    emit({ type: 'execution-start', step, toolCallId: part.id, code: input.code });
    const counter = context.meter.scriptResults();
    const calls = context.telemetry.scriptCalls(span);
    const result = await runtime.execute(input.code, {
      signal,
      ...(context.approver ? { approver: context.approver } : {}),
      session: input.session ?? RUN_SESSION_NAME,
      sessionOwner: context.sessionOwner,
      onToolResult: (event) => {
        calls.onToolResult();
        counter.onToolResult(event);
      },
    });
    calls.finish(result.toolCalls);
    await counter.finish(result.toolCalls);
    const execution: AgentExecution = { toolCallId: part.id, code: input.code, result };
    emit({ type: 'execution-end', step, execution });
    await context.onExecution?.(execution);
    return finish('execute_code', formatResultForModel(result), result.status === 'error', { execution });
  }

  const tool = offer.direct.get(part.name);
  if (tool === undefined) return finish('invalid', unknownToolMessage(part.name, offer, context.mode), true);
  const input = part.input ?? {};
  if (typeof input !== 'object' || Array.isArray(input)) {
    return finish(
      'invalid',
      `The arguments of ${part.name} must be one JSON object; got ${Array.isArray(input) ? 'an array' : JSON.stringify(input)}.`,
      true,
      { tool: tool.name },
    );
  }
  let value: unknown;
  try {
    value = await runtime.callTool(tool.name, input, {
      signal,
      caller: 'direct',
      ...(context.approver ? { approver: context.approver } : {}),
    });
  } catch (error) {
    if (signal.aborted) throw error;
    return finish('direct', errorText(error), true, { tool: tool.name });
  }
  return finish('direct', renderValue(value), false, { tool: tool.name });
}

/** What the model reads when it calls a tool it does not have: where the tool is, or what it has. */
export function unknownToolMessage(name: string, offer: Offer, mode: AgentMode): string {
  const available = offer.definitions.map((d) => d.name);
  const listed =
    available.length > MAX_NAMES_LISTED
      ? `${available.slice(0, MAX_NAMES_LISTED).join(', ')} and ${available.length - MAX_NAMES_LISTED} more`
      : available.join(', ');
  const target = offer.catalog.find(
    (tool) => tool.name === name || offer.names.get(tool.name) === name || tool.tool === name,
  );
  if (target && mode === 'code') {
    if (target.allowedCallers.includes('code_execution')) {
      return `${name} is not one of your tools. Call it from ${EXECUTE_CODE_NAME}: \`await tools.${target.namespace}.${target.member}(args)\` (${SEARCH_TOOLS_NAME} shows its declaration).`;
    }
    if (target.allowedCallers.includes('direct')) {
      return `${name} is not one of your tools yet. Find it with ${SEARCH_TOOLS_NAME} (e.g. query ${JSON.stringify(target.tool)}); then call it directly as "${offer.names.get(target.name)}".`;
    }
  }
  if (target) {
    return `${target.name} may not be called by the model directly (allowedCallers). Your tools are: ${listed}.`;
  }
  return `Unknown tool "${name}". Your tools are: ${listed}.`;
}
