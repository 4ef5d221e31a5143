/**
 * @module
 * Folds the events of a streamed Converse response (`ConverseStream`: `messageStart`,
 * `contentBlockStart` / `Delta` / `Stop`, `messageStop`, then `metadata` with usage) into the
 * response a non-streamed request returns, reporting text deltas as they come. Tool-call input
 * arrives as JSON fragments and is parsed when the stream ends (unparseable input stays the raw
 * string, as the agent reports it to the model). Unknown events and block kinds are ignored; a
 * stream that ends before `messageStop` is an error, not a shorter answer; an exception event
 * the SDK passes through (`modelStreamErrorException`, `throttlingException`, …) ends it with
 * that error.
 */
import type { ContentBlock, ConverseCommandOutput } from '@aws-sdk/client-bedrock-runtime';
import { CodecallError } from '../../errors.js';

interface Block {
  text?: string;
  toolUseId?: string;
  name?: string;
  /** Concatenated `toolUse.input` fragments of a tool-use block. */
  json?: string;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

function parseInput(json: string | undefined): unknown {
  if (json === undefined || json.trim() === '') return {};
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return json;
  }
}

/** Exception members of a `ConverseStream` event (the SDK usually throws them itself). */
const EXCEPTIONS = [
  'internalServerException',
  'modelStreamErrorException',
  'validationException',
  'throttlingException',
  'serviceUnavailableException',
] as const;

/** Accumulates one streamed Converse response; see the module comment. */
export class BedrockStreamAccumulator {
  readonly #blocks: Block[] = [];
  readonly #onTextDelta: ((text: string) => void) | undefined;
  #stopReason: unknown;
  #usage: Record<string, unknown> | undefined;
  #metrics: Record<string, unknown> | undefined;
  #started = false;
  #stopped = false;

  constructor(onTextDelta: ((text: string) => void) | undefined) {
    this.#onTextDelta = onTextDelta;
  }

  #block(index: unknown): Block | undefined {
    if (typeof index !== 'number' || !Number.isSafeInteger(index) || index < 0) return undefined;
    return (this.#blocks[index] ??= {});
  }

  /** Takes one event of the SDK's `response.stream` (a union: one member set per event). */
  add(event: unknown): void {
    const e = record(event);
    if (e['messageStart'] !== undefined) {
      this.#started = true;
      return;
    }
    const start = record(e['contentBlockStart']);
    if (e['contentBlockStart'] !== undefined) {
      const block = this.#block(start['contentBlockIndex']);
      const toolUse = record(record(start['start'])['toolUse']);
      if (
        block !== undefined &&
        typeof toolUse['toolUseId'] === 'string' &&
        typeof toolUse['name'] === 'string'
      ) {
        block.toolUseId = toolUse['toolUseId'];
        block.name = toolUse['name'];
      }
      return;
    }
    if (e['contentBlockDelta'] !== undefined) {
      const delta = record(e['contentBlockDelta']);
      const block = this.#block(delta['contentBlockIndex']);
      const part = record(delta['delta']);
      if (block === undefined) return;
      if (typeof part['text'] === 'string') {
        block.text = (block.text ?? '') + part['text'];
        if (part['text'] !== '') this.#onTextDelta?.(part['text']);
      } else {
        const input = record(part['toolUse'])['input'];
        if (typeof input === 'string') block.json = (block.json ?? '') + input;
      }
      return;
    }
    if (e['messageStop'] !== undefined) {
      this.#stopped = true;
      this.#stopReason = record(e['messageStop'])['stopReason'];
      return;
    }
    if (e['metadata'] !== undefined) {
      const metadata = record(e['metadata']);
      this.#usage = record(metadata['usage']);
      this.#metrics = record(metadata['metrics']);
      return;
    }
    for (const name of EXCEPTIONS) {
      if (e[name] === undefined) continue;
      const message = record(e[name])['message'];
      throw new CodecallError(
        'PROVIDER_REQUEST_FAILED',
        `Bedrock stream error: ${name}: ${typeof message === 'string' ? message : 'no message'}`,
        { details: { provider: 'Bedrock', retryable: false, errorType: name } },
      );
    }
  }

  /**
   * The whole response, shaped like a non-streamed Converse response.
   *
   * @throws CodecallError `PROVIDER_REQUEST_FAILED` when the stream ended before `messageStop`
   * (the connection closed early: the answer is cut).
   */
  finish(): ConverseCommandOutput {
    if (!this.#started || !this.#stopped) {
      throw new CodecallError(
        'PROVIDER_REQUEST_FAILED',
        `Bedrock stream ended before ${this.#started ? 'messageStop' : 'messageStart'}: the answer is incomplete.`,
        { details: { provider: 'Bedrock', retryable: false } },
      );
    }
    const content = this.#blocks.flatMap((block): ContentBlock[] => {
      if (block === undefined) return [];
      if (block.toolUseId !== undefined && block.name !== undefined) {
        return [
          {
            toolUse: { toolUseId: block.toolUseId, name: block.name, input: parseInput(block.json) as never },
          },
        ];
      }
      return block.text === undefined ? [] : [{ text: block.text }];
    });
    return {
      output: { message: { role: 'assistant', content } },
      stopReason: this.#stopReason,
      ...(this.#usage === undefined ? {} : { usage: this.#usage }),
      ...(this.#metrics === undefined ? {} : { metrics: this.#metrics }),
      $metadata: {},
    } as unknown as ConverseCommandOutput;
  }
}
