/**
 * @module
 * Maps a provider-neutral request to an Amazon Bedrock Converse request and its response back:
 * `text` / `toolUse` / `toolResult` content blocks (consecutive turns of one role merged, as the
 * API requires alternation), tool definitions as `toolSpec`s with JSON Schema, the system prompt
 * as a `system` text block. With prompt caching, a `cachePoint` follows the tools and the system
 * prompt (the stable prefix). Usage folds cache reads and writes into `inputTokens`, as for
 * Anthropic.
 */
import type {
  ContentBlock,
  ConverseCommandInput,
  ConverseCommandOutput,
  Message as BedrockMessage,
  SystemContentBlock,
  Tool,
} from '@aws-sdk/client-bedrock-runtime';
import { DEFAULT_PROVIDER_MAX_OUTPUT_TOKENS } from '../../config/defaults.js';
import { CodecallError } from '../../errors.js';
import type {
  ContentPart,
  GenerateRequest,
  GenerateResponse,
  Message,
  StopReason,
} from '../language-model.js';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

function convertOne(message: Message): { role: 'user' | 'assistant'; content: ContentBlock[] } {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: message.content === '' ? [] : [{ text: message.content }] };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content.flatMap((part): ContentBlock[] => {
          if (part.type === 'text') return part.text === '' ? [] : [{ text: part.text }];
          const input = isObject(part.input) ? part.input : { arguments: part.input };
          return [{ toolUse: { toolUseId: part.id, name: part.name, input: input as never } }];
        }),
      };
    case 'tool':
      return {
        role: 'user',
        content: message.results.map((result): ContentBlock => ({
          toolResult: {
            toolUseId: result.toolCallId,
            content: [{ text: result.content }],
            ...(result.isError === true ? { status: 'error' as const } : {}),
          },
        })),
      };
  }
}

/** Converts a conversation to Converse `messages`. */
export function convertToBedrockMessages(messages: readonly Message[]): BedrockMessage[] {
  const merged: BedrockMessage[] = [];
  for (const message of messages) {
    const converted = convertOne(message);
    if (converted.content.length === 0) continue;
    const previous = merged.at(-1);
    if (previous !== undefined && previous.role === converted.role)
      previous.content!.push(...converted.content);
    else merged.push(converted);
  }
  return merged;
}

/** Builds the Converse request for one {@link GenerateRequest}. */
export function buildBedrockRequest(
  modelId: string,
  request: GenerateRequest,
  options: { promptCaching: boolean },
): ConverseCommandInput {
  const cache = options.promptCaching;
  const tools: Tool[] = request.tools.map((tool) => ({
    toolSpec: {
      name: tool.name,
      description: tool.description,
      inputSchema: { json: { ...tool.inputSchema, type: 'object' } as never },
    },
  }));
  if (cache && tools.length > 0) tools.push({ cachePoint: { type: 'default' } });
  const system: SystemContentBlock[] =
    request.system === undefined || request.system === ''
      ? []
      : [{ text: request.system }, ...(cache ? [{ cachePoint: { type: 'default' as const } }] : [])];
  return {
    modelId,
    messages: convertToBedrockMessages(request.messages),
    ...(system.length === 0 ? {} : { system }),
    ...(tools.length === 0 ? {} : { toolConfig: { tools } }),
    inferenceConfig: {
      maxTokens: request.maxOutputTokens ?? DEFAULT_PROVIDER_MAX_OUTPUT_TOKENS,
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    },
  };
}

/** Converse `stopReason` → {@link StopReason}; guardrails and content filters are refusals. */
export function mapBedrockStopReason(reason: unknown): StopReason {
  switch (reason) {
    case 'end_turn':
    case 'tool_use':
    case 'max_tokens':
    case 'stop_sequence':
      return reason;
    case 'model_context_window_exceeded':
      return 'max_tokens';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'refusal';
    default:
      return 'other';
  }
}

/**
 * Converts one Converse response.
 *
 * @throws CodecallError `PROVIDER_REQUEST_FAILED` when the response carries no message.
 */
export function convertFromBedrockResponse(response: ConverseCommandOutput): GenerateResponse {
  const message = response.output?.message;
  if (message === undefined) {
    throw new CodecallError('PROVIDER_REQUEST_FAILED', 'Bedrock Converse response had no output message.', {
      details: { provider: 'Bedrock', retryable: false },
    });
  }
  const content = (message.content ?? []).flatMap((block): ContentPart[] => {
    if (typeof block.text === 'string') return block.text === '' ? [] : [{ type: 'text', text: block.text }];
    const use = block.toolUse;
    if (use !== undefined && typeof use.toolUseId === 'string' && typeof use.name === 'string') {
      return [{ type: 'tool_call', id: use.toolUseId, name: use.name, input: use.input ?? {} }];
    }
    return [];
  });
  const usage = response.usage;
  const cacheReadTokens = count(usage?.cacheReadInputTokens);
  const cacheWriteTokens = count(usage?.cacheWriteInputTokens);
  const { $metadata: _metadata, ...raw } = response;
  return {
    content,
    stopReason: mapBedrockStopReason(response.stopReason),
    usage: {
      inputTokens: count(usage?.inputTokens) + cacheReadTokens + cacheWriteTokens,
      outputTokens: count(usage?.outputTokens),
      cacheReadTokens,
      cacheWriteTokens,
    },
    raw,
  };
}
