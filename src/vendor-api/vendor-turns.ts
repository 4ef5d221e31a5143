/**
 * @module
 * The dialect-neutral turn loop of the vendor endpoints: resume a paused script with the client's
 * answers, then ask the model behind until it answers, calls a client tool directly, or a script
 * pauses on a client tool. Search and scripts run here; what the client sees is a list of
 * {@link TurnOutput}s that each dialect (Anthropic, OpenAI) writes in its own shapes.
 */
import { renderDeclarations } from '../compile/index.js';
import { DEFAULT_VENDOR_CONTAINER_TTL_MS, DEFAULT_VENDOR_MAX_MODEL_TURNS } from '../config/defaults.js';
import { isCodecallError } from '../errors.js';
import {
  answerSearchTools,
  EXECUTE_CODE_NAME,
  executeCodeDefinition,
  SEARCH_TOOLS_NAME,
  searchToolsDefinition,
} from '../meta/index.js';
import type {
  LanguageModel,
  Message,
  StopReason,
  ToolDefinition,
  ToolResult,
} from '../providers/language-model.js';
import type { ExecutionResult, JsonSchema } from '../types.js';
import type { ToolResultAnswer } from './anthropic-request.js';
import {
  searchAnswerText,
  searchClientTools,
  type ClientSearchAnswer,
  type ClientSearchMode,
} from './client-tool-search.js';
import { newRunId } from './container-token.js';
import type { VendorContext } from './anthropic-messages.js';
import {
  CLIENT_NAMESPACE,
  clientQualifiedName,
  pendingClientCalls,
  recordClientAnswers,
  runScriptTurn,
  type ClientTool,
  type PendingClientCall,
  type ScriptTurn,
} from './script-turn.js';
import { invalid, VendorError } from './vendor-error.js';

/** A client tool with who may call it. */
export interface CallableClientTool extends ClientTool {
  direct: boolean;
  fromCode: boolean;
  /** Hidden from the model (and unbound in code) until a tool search loads it. */
  deferLoading: boolean;
}

/** The request's tool search tool, as the model behind sees it. */
export interface VendorToolSearch {
  /** The tool's name for the model (`tool_search_tool_bm25`, `tool_search`). */
  name: string;
  /** `server`: codecall searches the deferred tools; `client`: the call goes back to the client. */
  execution: 'server' | 'client';
  mode: ClientSearchMode;
  description: string;
  inputSchema: JsonSchema;
}

/** One thing the client sees, in order. */
export type TurnOutput =
  | { type: 'text'; text: string }
  | { type: 'code'; runId: string; code: string; expiresAt: number }
  | { type: 'client_calls'; runId: string; calls: PendingClientCall[]; expiresAt: number }
  | { type: 'code_result'; runId: string; result: ExecutionResult }
  | { type: 'direct_call'; id: string; name: string; input: unknown }
  /** A search codecall answered; the tools found are loaded from here on. */
  | { type: 'tool_search'; id: string; input: unknown; answer: ClientSearchAnswer }
  /** A search the client executes (OpenAI `execution: "client"`); the response ends with it. */
  | { type: 'tool_search_call'; id: string; input: unknown };

/** How the turns ended. */
export interface TurnsResult {
  outputs: TurnOutput[];
  /** `pause_turn`: the model-turn bound was reached. */
  stop: StopReason | 'pause_turn';
  usage: { input: number; output: number; cacheRead: number; cacheWrite: number };
}

/** A paused script to resume, with the client's answers. */
export interface ResumeScript {
  runId: string;
  code: string;
  /** The id the client knows the script by (its result answers this id in the model's history). */
  callId: string;
  answers: readonly ToolResultAnswer[];
  /** The client's id of the pending call at a journal index. */
  idOf(index: number): string;
  /** The request field the answers came in (`messages`, `input`), for errors. */
  param: string;
}

/** Options of {@link runVendorTurns}. */
export interface RunVendorTurnsOptions {
  context: VendorContext;
  model: LanguageModel;
  system?: string | undefined;
  messages: Message[];
  clientTools: readonly CallableClientTool[];
  /** The request's tool search tool, if any. */
  toolSearch?: VendorToolSearch | undefined;
  /** Names of deferred tools earlier searches of the conversation loaded. */
  loaded?: ReadonlySet<string> | undefined;
  maxOutputTokens?: number | undefined;
  resume?: ResumeScript | undefined;
  signal?: AbortSignal | undefined;
  /** The text of a script result the model behind reads. */
  resultText(result: ExecutionResult): string;
}

const GONE =
  "the paused script is gone (expired, pushed out by newer paused scripts, or kept by another process that shares no store with this one: serve.vendorJournalDir or the jobs backend's Redis/PostgreSQL); start the turn again without it.";

/** Runs the turns of one request. */
export async function runVendorTurns(options: RunVendorTurnsOptions): Promise<TurnsResult> {
  const { context, model, messages, signal } = options;
  const ttl = context.containerTtlMs ?? DEFAULT_VENDOR_CONTAINER_TTL_MS;
  const loaded = new Set(options.loaded ?? []);
  const visible = (t: CallableClientTool): boolean => !t.deferLoading || loaded.has(t.name);
  const codeTools = (): CallableClientTool[] => options.clientTools.filter((t) => t.fromCode && visible(t));
  const search = options.toolSearch;
  const deferred = options.clientTools.filter((t) => t.deferLoading);
  const out: TurnsResult = {
    outputs: [],
    stop: 'end_turn',
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  };

  /** Runs or resumes a script; undefined when it paused (the outputs then end the response). */
  const script = async (
    runId: string,
    code: string,
    replay: boolean,
    expiresAt: number,
  ): Promise<ExecutionResult | undefined> => {
    const opened = await context.paused.open(runId, { create: !replay, expiresAt });
    if (opened === undefined) throw invalid('container', GONE);
    let turn: ScriptTurn;
    try {
      turn = await runScriptTurn({
        runtime: context.runtime,
        code,
        journal: opened.journal,
        replay,
        clientTools: codeTools(),
        signal,
        approver: context.approver,
      });
    } finally {
      await opened.release();
    }
    if (turn.kind === 'done') {
      await context.paused.drop(runId);
      out.outputs.push({ type: 'code_result', runId, result: turn.result });
      return turn.result;
    }
    out.outputs.push({ type: 'client_calls', runId, calls: turn.calls, expiresAt });
    out.stop = 'tool_use';
    return undefined;
  };

  const resume = options.resume;
  if (resume !== undefined) {
    const expiresAt = Date.now() + ttl;
    const opened = await context.paused.open(resume.runId, { create: false, expiresAt });
    if (opened === undefined) throw invalid('container', GONE);
    try {
      const pending = await pendingClientCalls(opened.journal);
      const ids = new Map(pending.map((p) => [resume.idOf(p.index), p]));
      const byId = new Map(resume.answers.map((a) => [a.toolUseId, a]));
      // Answers to calls of earlier pauses (a Responses client sends its whole history) are in the journal already.
      const answered = new Set(
        (await opened.journal.entries()).flatMap((e) =>
          e.type === 'finished' ? [resume.idOf(e.index)] : [],
        ),
      );
      const stray = resume.answers.find((a) => !ids.has(a.toolUseId) && !answered.has(a.toolUseId));
      if (stray !== undefined)
        throw invalid(
          resume.param,
          `the answer to ${stray.toolUseId} answers no call the paused script is waiting for.`,
        );
      const missing = [...ids.keys()].filter((id) => !byId.has(id));
      if (missing.length > 0)
        throw invalid(
          resume.param,
          `the paused script waits for answers to ${missing.join(', ')}; send one for each call.`,
        );
      await recordClientAnswers(
        opened.journal,
        [...ids].map(([id, p]) => {
          const answer = byId.get(id)!;
          return answer.ok
            ? { index: p.index, ok: true, result: answer.value }
            : { index: p.index, ok: false, error: answer.text };
        }),
      );
    } finally {
      await opened.release();
    }
    const result = await script(resume.runId, resume.code, true, expiresAt);
    if (result === undefined) return out;
    messages.push({
      role: 'tool',
      results: [{ toolCallId: resume.callId, content: options.resultText(result) }],
    });
  }

  const limits = context.runtime.config.sandbox.limits;
  const execute = executeCodeDefinition({
    wallTimeMs: limits.wallTimeMs,
    maxToolCalls: limits.maxToolCalls,
    maxStdoutBytes: limits.maxStdoutBytes,
  });
  const reserved = new Set([EXECUTE_CODE_NAME, SEARCH_TOOLS_NAME, ...(search ? [search.name] : [])]);
  const clash = options.clientTools.find((t) => reserved.has(t.name));
  if (clash !== undefined)
    throw invalid('tools', `"${clash.name}" is a codecall tool name; rename the client tool.`);
  /** The model's tools: the meta-tools, the search tool, and the client's tools it may see now. */
  const toolsNow = (): ToolDefinition[] => {
    const inCode = codeTools();
    const declared =
      inCode.length > 0
        ? renderDeclarations(
            inCode.map((t) => ({
              name: clientQualifiedName(t.member),
              namespace: CLIENT_NAMESPACE,
              member: t.member,
              description: t.description,
              inputSchema: t.inputSchema,
            })),
            { callTool: false },
          )
        : '';
    const tools: ToolDefinition[] = [
      searchToolsDefinition(),
      {
        name: EXECUTE_CODE_NAME,
        description:
          declared === ''
            ? execute.description
            : `${execute.description}\nThe client's tools, callable from code:\n${declared}`,
        inputSchema: execute.inputSchema,
      },
    ];
    if (search !== undefined)
      tools.push({ name: search.name, description: search.description, inputSchema: search.inputSchema });
    for (const tool of options.clientTools)
      if (tool.direct && visible(tool))
        tools.push({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema });
    return tools;
  };

  const maxTurns = context.maxModelTurns ?? DEFAULT_VENDOR_MAX_MODEL_TURNS;
  for (let turn = 0; turn < maxTurns; turn++) {
    let response;
    try {
      response = await model.generate(
        {
          ...(options.system !== undefined ? { system: options.system } : {}),
          messages,
          tools: toolsNow(),
          ...(options.maxOutputTokens !== undefined ? { maxOutputTokens: options.maxOutputTokens } : {}),
        },
        signal ? { signal } : {},
      );
    } catch (error) {
      if (isCodecallError(error))
        throw new VendorError(
          'api_error',
          `The model behind (${model.provider}:${model.modelId}) failed: ${error.message}`,
        );
      throw error;
    }
    out.usage.input += response.usage.inputTokens;
    out.usage.output += response.usage.outputTokens;
    out.usage.cacheRead += response.usage.cacheReadTokens;
    out.usage.cacheWrite += response.usage.cacheWriteTokens;
    messages.push({ role: 'assistant', content: response.content });
    const results: ToolResult[] = [];
    let direct = false;
    for (const part of response.content) {
      if (part.type === 'text') {
        if (part.text !== '') out.outputs.push({ type: 'text', text: part.text });
      } else if (part.name === SEARCH_TOOLS_NAME) {
        const answer = await answerSearchTools(context.runtime, part.input, {
          maxToolResultBytes: context.maxToolResultBytes,
        });
        results.push({
          toolCallId: part.id,
          content: answer.text,
          ...(answer.isError ? { isError: true } : {}),
        });
      } else if (search !== undefined && part.name === search.name) {
        if (search.execution === 'client') {
          out.outputs.push({ type: 'tool_search_call', id: part.id, input: part.input });
          direct = true;
          continue;
        }
        const answer = searchClientTools({
          runtime: context.runtime,
          tools: deferred,
          input: part.input,
          mode: search.mode,
        });
        if (answer.ok) for (const name of answer.names) loaded.add(name);
        out.outputs.push({ type: 'tool_search', id: part.id, input: part.input, answer });
        results.push({
          toolCallId: part.id,
          content: searchAnswerText(answer, deferred),
          ...(answer.ok ? {} : { isError: true }),
        });
      } else if (part.name === EXECUTE_CODE_NAME) {
        const input = part.input as { code?: unknown } | undefined;
        const code = typeof input?.code === 'string' ? input.code : '';
        const runId = newRunId();
        const expiresAt = Date.now() + ttl;
        out.outputs.push({ type: 'code', runId, code, expiresAt });
        const result = await script(runId, code, false, expiresAt);
        if (result === undefined) return out;
        results.push({ toolCallId: part.id, content: options.resultText(result) });
      } else if (options.clientTools.some((t) => t.direct && visible(t) && t.name === part.name)) {
        out.outputs.push({ type: 'direct_call', id: part.id, name: part.name, input: part.input });
        direct = true;
      } else {
        results.push({ toolCallId: part.id, content: `No tool "${part.name}" is offered.`, isError: true });
      }
    }
    if (direct) {
      out.stop = 'tool_use';
      return out;
    }
    if (results.length === 0) {
      out.stop = response.stopReason;
      return out;
    }
    messages.push({ role: 'tool', results });
  }
  out.stop = 'pause_turn';
  return out;
}
