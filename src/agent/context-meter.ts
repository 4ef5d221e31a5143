/**
 * @module
 * The savings meter: counts the tokens each model request puts in the context, and what the same
 * request would have held with direct tool calling.
 *
 * - **Context tokens** (both modes): system prompt + every message + every tool definition of
 *   the request, counted with `o200k_base` ({@link countMessageTokens}), summed over steps.
 * - **Direct-calling estimate** (code mode): for each step, the direct-mode system prompt + the
 *   definitions of every tool in the catalog + the conversation without the meta-tools (the
 *   user's words, the model's text, its direct tool calls and their results) + every tool result
 *   the scripts of earlier steps consumed. Those results are counted exactly, as direct calling
 *   would have put them in the context (`renderDirectResult`: JSON text, cut like a direct
 *   result), from the run's `onToolResult` events ({@link ContextMeter.scriptResults}). Only when a
 *   run reports no events (a runtime that ignores `onToolResult`) are they estimated from their
 *   size (`ToolCallRecord.resultBytes`) at {@link DIRECT_ESTIMATE_BYTES_PER_TOKEN} bytes per token.
 *   The estimate is a lower bound: it assumes the direct run needs no more steps than the code
 *   run, and leaves out the arguments of the calls the scripts made.
 *
 * Every message is counted once (cached by identity), so a run with large results stays linear.
 */
import type { ToolResultEvent, ToolResultListener } from '../execute/index.js';
import type { GenerateRequest, Message, ToolDefinition } from '../providers/language-model.js';
import type { ToolCallRecord } from '../types.js';
import { countMessageTokens, countTokens, countToolDefinitionTokens } from './count-tokens.js';

/**
 * Bytes of JSON tool result per token assumed by the direct-calling estimate when a run reports
 * no `onToolResult` events (the fallback; normally results are counted exactly). Measured with
 * `o200k_base`: 3.5 on the example expense line items, 3.7 on its member list; 4 errs low, so
 * the estimate (and the savings it reports) is conservative.
 */
export const DIRECT_ESTIMATE_BYTES_PER_TOKEN = 4;

/** Tokens of one request: what entered the context, and the direct-calling counterpart. */
export interface RequestTokens {
  contextTokens: number;
  directEstimateTokens: number;
}

/** Options of {@link ContextMeter}. */
export interface ContextMeterOptions {
  /** Names of the meta-tools (`search_tools`, `execute_code`), left out of the estimate. */
  metaToolNames: ReadonlySet<string>;
  /** The system prompt a direct-mode run would send. */
  directSystem: string;
  /** Every tool as a direct-mode run would offer it. */
  directTools: () => readonly ToolDefinition[];
  /**
   * A tool result as a direct-mode run would put it in the context.
   * @defaultValue strings as they are, anything else as JSON
   */
  renderDirectResult?: (value: unknown) => string;
}

/** Counts one script's tool results; see {@link ContextMeter.scriptResults}. */
export interface ScriptResultsCounter {
  /** Pass as `onToolResult` of the script's run. */
  readonly onToolResult: ToolResultListener;
  /**
   * After the run: waits for the counts still in flight, then adds the counted tokens (or the
   * size-based fallback) for later requests.
   */
  finish(calls: readonly ToolCallRecord[]): Promise<void>;
}

function renderJson(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

interface MessageTokens {
  full: number;
  direct: number;
}

/** Counts the tokens of a run's requests; one meter per run. */
export class ContextMeter {
  readonly #options: ContextMeterOptions;
  readonly #messages = new WeakMap<Message, MessageTokens>();
  readonly #definitions = new WeakMap<ToolDefinition, number>();
  readonly #metaCallIds = new Set<string>();
  readonly #systems = new Map<string, number>();
  #scriptResultTokens = 0;
  #directToolTokens: number | undefined;

  constructor(options: ContextMeterOptions) {
    this.#options = options;
  }

  /**
   * Counts the tool results of one script exactly (`onToolResult`), then adds them for later
   * requests (`finish`). A failed call delivers nothing and counts nothing. Counting is deferred
   * past the tool-call bridge (`setImmediate`), so a result reaches the script before it is
   * tokenized rather than after.
   */
  scriptResults(): ScriptResultsCounter {
    const render = this.#options.renderDirectResult ?? renderJson;
    let tokens = 0;
    let events = 0;
    const pending: Promise<void>[] = [];
    return {
      onToolResult: (event: ToolResultEvent) => {
        events++;
        if (!event.ok) return;
        pending.push(
          new Promise((resolve) =>
            setImmediate(() => {
              tokens += countTokens(render(event.result));
              resolve();
            }),
          ),
        );
      },
      finish: async (calls) => {
        await Promise.all(pending);
        if (events > 0) this.#scriptResultTokens += tokens;
        else this.addScriptResults(calls);
      },
    };
  }

  /**
   * Tokens of a script's consumed tool results estimated from their size (the fallback of
   * {@link ContextMeter.scriptResults}), for later requests.
   */
  addScriptResults(calls: readonly ToolCallRecord[]): void {
    let bytes = 0;
    for (const call of calls) if (call.ok) bytes += call.resultBytes;
    this.#scriptResultTokens += Math.ceil(bytes / DIRECT_ESTIMATE_BYTES_PER_TOKEN);
  }

  /** Counts one request. In `direct` mode pass `measuredOnly` (the estimate is the count). */
  measure(request: GenerateRequest, measuredOnly: boolean): RequestTokens {
    let contextTokens = this.#system(request.system);
    let direct = 0;
    for (const message of request.messages) {
      const tokens = this.#message(message);
      contextTokens += tokens.full;
      direct += tokens.direct;
    }
    for (const tool of request.tools) contextTokens += this.#definition(tool);
    if (measuredOnly) return { contextTokens, directEstimateTokens: contextTokens };
    this.#directToolTokens ??= countToolDefinitionTokens(this.#options.directTools());
    const directEstimateTokens =
      this.#system(this.#options.directSystem) + this.#directToolTokens + direct + this.#scriptResultTokens;
    return { contextTokens, directEstimateTokens };
  }

  #system(text: string | undefined): number {
    if (text === undefined) return 0;
    let tokens = this.#systems.get(text);
    if (tokens === undefined) {
      tokens = countTokens(text);
      this.#systems.set(text, tokens);
    }
    return tokens;
  }

  #definition(tool: ToolDefinition): number {
    let tokens = this.#definitions.get(tool);
    if (tokens === undefined) {
      tokens = countToolDefinitionTokens([tool]);
      this.#definitions.set(tool, tokens);
    }
    return tokens;
  }

  #message(message: Message): MessageTokens {
    const known = this.#messages.get(message);
    if (known !== undefined) return known;
    const full = countMessageTokens({ messages: [message], tools: [] });
    let direct: number;
    switch (message.role) {
      case 'user':
        direct = full;
        break;
      case 'assistant': {
        const kept = message.content.filter((part) => {
          if (part.type !== 'tool_call' || !this.#options.metaToolNames.has(part.name)) return true;
          this.#metaCallIds.add(part.id);
          return false;
        });
        direct =
          kept.length === message.content.length
            ? full
            : countMessageTokens({ messages: [{ role: 'assistant', content: kept }], tools: [] });
        break;
      }
      case 'tool': {
        const kept = message.results.filter((result) => !this.#metaCallIds.has(result.toolCallId));
        direct =
          kept.length === message.results.length
            ? full
            : countMessageTokens({ messages: [{ role: 'tool', results: kept }], tools: [] });
        break;
      }
    }
    const tokens = { full, direct };
    this.#messages.set(message, tokens);
    return tokens;
  }
}
