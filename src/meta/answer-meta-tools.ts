/**
 * @module
 * The answers of `search_tools` and `execute_code` as text for a model, for a surface that
 * offers just those two tools over a {@link CodecallRuntime} (the framework adapters): the same
 * input parsing, search rendering, output formatting and byte bound as the agent loop. A bad
 * input or a failed script is an answer with `isError`, never a throw.
 */
import { isCodecallError } from '../errors.js';
import { formatResultForModel, type CodecallRuntime } from '../execute/index.js';
import type { ExecutionResult } from '../types.js';
import { cutToBytes } from './cut-to-bytes.js';
import { parseExecuteCodeInput, parseSearchToolsInput } from './meta-tools.js';
import { renderSearchResult } from './render-search-result.js';

/** What a meta-tool answered. */
export interface MetaToolAnswer {
  /** The text the model reads (cut at `maxToolResultBytes`). */
  text: string;
  /** True when the model should read it as an error to recover from. */
  isError: boolean;
  /** The full execution result, for `execute_code` when the script ran. */
  execution?: ExecutionResult;
}

/** Options of {@link answerSearchTools} and {@link answerExecuteCode}. */
export interface AnswerMetaToolOptions {
  /** Bytes of the answer text; longer text is cut with a marker. */
  maxToolResultBytes: number;
  /** Cancels a running script. */
  signal?: AbortSignal | undefined;
  /**
   * Owner of the sessions `execute_code` names (sessions of different owners never share state).
   * @defaultValue `''`
   */
  sessionOwner?: string | undefined;
}

/**
 * Answers a `search_tools` call (untrusted input) from the runtime's live catalog, the way the
 * agent loop and `codecall serve` do: through {@link CodecallRuntime.findTools} (off the event
 * loop on the search worker for large catalogs, with embeddings when configured).
 */
export async function answerSearchTools(
  runtime: CodecallRuntime,
  input: unknown,
  options: AnswerMetaToolOptions,
): Promise<MetaToolAnswer> {
  const parsed = parseSearchToolsInput(input);
  if ('error' in parsed) return { text: parsed.error, isError: true };
  try {
    const result = await runtime.findTools(parsed.query, {
      ...(parsed.limit !== undefined ? { limit: parsed.limit } : {}),
      ...(parsed.regex !== undefined ? { regex: parsed.regex } : {}),
    });
    const text = renderSearchResult(result, { query: parsed.query });
    return { text: cutToBytes(text, options.maxToolResultBytes), isError: false };
  } catch (error) {
    const message = isCodecallError(error) ? error.message : `Search failed: ${String(error)}`;
    return { text: cutToBytes(message, options.maxToolResultBytes), isError: true };
  }
}

/** Runs an `execute_code` call (untrusted input) in the sandbox; only its output is answered. */
export async function answerExecuteCode(
  runtime: CodecallRuntime,
  input: unknown,
  options: AnswerMetaToolOptions,
): Promise<MetaToolAnswer> {
  const parsed = parseExecuteCodeInput(input);
  if ('error' in parsed) return { text: parsed.error, isError: true };
  const execution = await runtime.execute(parsed.code, {
    ...(options.signal ? { signal: options.signal } : {}),
    ...(parsed.session !== undefined ? { session: parsed.session } : {}),
    ...(options.sessionOwner !== undefined ? { sessionOwner: options.sessionOwner } : {}),
  });
  return {
    text: cutToBytes(formatResultForModel(execution), options.maxToolResultBytes),
    isError: execution.status === 'error',
    execution,
  };
}
