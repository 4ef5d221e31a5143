/**
 * @module
 * The savings meter: counts what each model request puts in the context, and what code mode kept
 * out of it — measured, not estimated against an imagined direct run.
 *
 * - **Context tokens** (both modes): system prompt + every message + every tool definition of
 *   the request, counted with `o200k_base`, summed over requests.
 * - **Tool-result tokens kept out** (code mode): the results the scripts consumed in the sandbox,
 *   each counted once as a direct tool call would have shown it (`renderDirectResult`: JSON text,
 *   cut like a direct result), from the runs' `onToolResult` events; plus their size in bytes.
 *   None of them entered the context (what a script printed of them is in the context tokens).
 * - **Tool-definition tokens deferred** (code mode): per request, the definitions a direct-mode
 *   request offers (`directTools`) that this request did not carry, summed over requests.
 *
 * How code mode compares with direct mode is not something one run can know: a competent direct
 * model filters and paginates, so it reads far less than a script that scans everything. Compare
 * a measured direct run with {@link compareRuns}.
 *
 * Counting never runs on the tool-call path nor on the host's event loop: texts go to a worker
 * thread ({@link countTokensOffThread}); a script's results are rendered after they reached the
 * script (`setImmediate`). Every message and definition is counted once (cached by identity).
 */
import type { ToolResultEvent, ToolResultListener } from '../execute/index.js';
import type { GenerateRequest, Message, ToolDefinition } from '../providers/language-model.js';
import type { ToolCallRecord } from '../types.js';
import { countTokensOffThread } from './count-tokens.js';
import type { SavingsReport } from './types.js';

/** Tokens of one request. */
export interface RequestTokens {
  /** Everything the request put in the context: system prompt, messages, tool definitions. */
  contextTokens: number;
  /** Definitions a direct-mode request carries that this request did not (0 in direct mode). */
  deferredDefinitionTokens: number;
}

/** Options of {@link ContextMeter}. */
export interface ContextMeterOptions {
  /**
   * Every tool definition a direct-mode request offers. Omit in direct mode (nothing is deferred).
   * @defaultValue none
   */
  directTools?: () => readonly ToolDefinition[];
  /**
   * A tool result as a direct-mode run would put it in the context.
   * @defaultValue strings as they are, anything else as JSON
   */
  renderDirectResult?: (value: unknown) => string;
  /**
   * Counts the tokens of each text.
   * @defaultValue {@link countTokensOffThread} (o200k_base on a worker thread)
   */
  countTexts?: (texts: readonly string[]) => Promise<number[]>;
}

/** Counts one script's tool results; see {@link ContextMeter.scriptResults}. */
export interface ScriptResultsCounter {
  /** Pass as `onToolResult` of the script's run. */
  readonly onToolResult: ToolResultListener;
  /** After the run: waits for the counts still in flight and adds them to the meter. */
  finish(calls: readonly ToolCallRecord[]): Promise<void>;
}

function renderJson(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

/** The texts whose token counts add up to a message's (as `countMessageTokens` counts it). */
function messageTexts(message: Message): string[] {
  switch (message.role) {
    case 'user':
      return [message.content];
    case 'assistant':
      return message.content.flatMap((part) =>
        part.type === 'text'
          ? [part.text]
          : [part.name, typeof part.input === 'string' ? part.input : JSON.stringify(part.input ?? {})],
      );
    case 'tool':
      return message.results.map((result) => result.content);
  }
}

/** The text of a definition as a provider sends it (see `countToolDefinitionTokens`). */
function definitionText(tool: ToolDefinition): string {
  return JSON.stringify({ name: tool.name, description: tool.description, input_schema: tool.inputSchema });
}

const sum = (counts: readonly number[]): number => counts.reduce((total, n) => total + n, 0);

/** Counts the tokens of a run's requests and what its scripts kept out; one meter per run. */
export class ContextMeter {
  readonly #options: ContextMeterOptions;
  readonly #countTexts: (texts: readonly string[]) => Promise<number[]>;
  readonly #messages = new WeakMap<Message, number>();
  readonly #definitions = new WeakMap<ToolDefinition, number>();
  readonly #systems = new Map<string, number>();
  #toolResultTokensKeptOut = 0;
  #toolResultBytesKeptOut = 0;
  #toolDefinitionTokensDeferred = 0;
  /** Requests are measured one after another, so the caches never hold a count in flight. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: ContextMeterOptions = {}) {
    this.#options = options;
    this.#countTexts = options.countTexts ?? countTokensOffThread;
  }

  /** What the meter counted so far, except the context tokens (the sum of each request's). */
  totals(): Omit<SavingsReport, 'contextTokens' | 'tokenizer'> {
    return {
      toolResultTokensKeptOut: this.#toolResultTokensKeptOut,
      toolResultBytesKeptOut: this.#toolResultBytesKeptOut,
      toolDefinitionTokensDeferred: this.#toolDefinitionTokensDeferred,
    };
  }

  /**
   * Counts the tool results of one script (`onToolResult`) as direct calling would have shown
   * them, and adds them when the run is over (`finish`). A failed call delivered nothing and
   * counts nothing. The result is rendered after it reached the script (`setImmediate`) and
   * counted on the worker thread.
   */
  scriptResults(): ScriptResultsCounter {
    const render = this.#options.renderDirectResult ?? renderJson;
    const pending: Promise<number>[] = [];
    return {
      onToolResult: (event: ToolResultEvent) => {
        if (!event.ok) return;
        pending.push(
          new Promise<string>((resolve) => setImmediate(() => resolve(render(event.result))))
            .then((text) => this.#countTexts([text]))
            .then(sum),
        );
      },
      finish: async (calls) => {
        const counts = await Promise.all(pending);
        this.#toolResultTokensKeptOut += sum(counts);
        for (const call of calls) if (call.ok) this.#toolResultBytesKeptOut += call.resultBytes;
      },
    };
  }

  /** Counts one request (texts not seen before, in one batch). */
  measure(request: GenerateRequest): Promise<RequestTokens> {
    const measured = this.#queue.then(() => this.#measure(request));
    this.#queue = measured.catch(() => {});
    return measured;
  }

  async #measure(request: GenerateRequest): Promise<RequestTokens> {
    const direct = this.#options.directTools?.() ?? [];
    const texts: string[] = [];
    const assign: ((counts: number[], at: number) => number)[] = [];
    const system = request.system;
    if (system !== undefined && !this.#systems.has(system)) {
      texts.push(system);
      assign.push((counts, at) => {
        this.#systems.set(system, counts[at]!);
        return 1;
      });
    }
    for (const message of request.messages) {
      if (this.#messages.has(message)) continue;
      const parts = messageTexts(message);
      // Claimed now, so a message repeated within one request is counted once.
      this.#messages.set(message, 0);
      texts.push(...parts);
      assign.push((counts, at) => {
        this.#messages.set(message, sum(counts.slice(at, at + parts.length)));
        return parts.length;
      });
    }
    for (const tool of [...request.tools, ...direct]) {
      if (this.#definitions.has(tool)) continue;
      this.#definitions.set(tool, 0);
      texts.push(definitionText(tool));
      assign.push((counts, at) => {
        this.#definitions.set(tool, counts[at]!);
        return 1;
      });
    }
    if (texts.length > 0) {
      const counts = await this.#countTexts(texts);
      let at = 0;
      for (const apply of assign) at += apply(counts, at);
    }

    let contextTokens = system === undefined ? 0 : this.#systems.get(system)!;
    for (const message of request.messages) contextTokens += this.#messages.get(message)!;
    const offered = new Set<string>();
    for (const tool of request.tools) {
      contextTokens += this.#definitions.get(tool)!;
      offered.add(tool.name);
    }
    let deferredDefinitionTokens = 0;
    for (const tool of direct) {
      if (!offered.has(tool.name)) deferredDefinitionTokens += this.#definitions.get(tool)!;
    }
    this.#toolDefinitionTokensDeferred += deferredDefinitionTokens;
    return { contextTokens, deferredDefinitionTokens };
  }
}
