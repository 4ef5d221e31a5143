/**
 * @module
 * Maps a provider-neutral request to Gemini `generateContent` parameters: the conversation to
 * `contents` (`user` / `model` turns of parts), tool calls to `functionCall` parts (with the
 * `thoughtSignature` the model gave them), tool results to `functionResponse` parts (named by the
 * call they answer, `{output}` or `{error}`), tool definitions to one `functionDeclarations` tool
 * with JSON Schema parameters, and the system prompt to `systemInstruction`. Automatic function
 * calling is off: the agent runs the tools.
 */
import type { Content, GenerateContentParameters, Part } from '@google/genai';
import { DEFAULT_PROVIDER_MAX_OUTPUT_TOKENS } from '../../config/defaults.js';
import type { GenerateRequest, Message } from '../language-model.js';

/** Ids codecall made up for calls Gemini sent without one; never sent back as ids. */
export const GEMINI_SYNTHETIC_ID_PREFIX = 'gemini-call-';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function callId(id: string): { id?: string } {
  return id.startsWith(GEMINI_SYNTHETIC_ID_PREFIX) ? {} : { id };
}

function convertOne(message: Message, names: Map<string, string>): Content {
  switch (message.role) {
    case 'user':
      return { role: 'user', parts: [{ text: message.content }] };
    case 'assistant':
      return {
        role: 'model',
        parts: message.content.flatMap((part): Part[] => {
          if (part.type === 'text') return part.text === '' ? [] : [{ text: part.text }];
          names.set(part.id, part.name);
          const signature = part.providerData?.['thoughtSignature'];
          return [
            {
              functionCall: {
                ...callId(part.id),
                name: part.name,
                // The API requires an object; a model's unparseable arguments go back as one.
                args: isObject(part.input) ? part.input : { arguments: part.input },
              },
              ...(typeof signature === 'string' ? { thoughtSignature: signature } : {}),
            },
          ];
        }),
      };
    case 'tool':
      return {
        role: 'user',
        parts: message.results.map((result): Part => ({
          functionResponse: {
            ...callId(result.toolCallId),
            name: names.get(result.toolCallId) ?? 'unknown_tool',
            response: result.isError === true ? { error: result.content } : { output: result.content },
          },
        })),
      };
  }
}

/** Converts a conversation to Gemini `contents`, merging consecutive turns of one role. */
export function convertToGeminiContents(messages: readonly Message[]): Content[] {
  const names = new Map<string, string>();
  const contents: Content[] = [];
  for (const message of messages) {
    const content = convertOne(message, names);
    if (content.parts === undefined || content.parts.length === 0) continue;
    const previous = contents.at(-1);
    if (previous !== undefined && previous.role === content.role) previous.parts!.push(...content.parts);
    else contents.push(content);
  }
  return contents;
}

/** Builds the `generateContent` parameters for one request (`abortSignal` is added per attempt). */
export function buildGeminiRequest(modelId: string, request: GenerateRequest): GenerateContentParameters {
  const system = request.system;
  return {
    model: modelId,
    contents: convertToGeminiContents(request.messages),
    config: {
      ...(system === undefined || system === '' ? {} : { systemInstruction: system }),
      ...(request.tools.length === 0
        ? {}
        : {
            tools: [
              {
                functionDeclarations: request.tools.map((tool) => ({
                  name: tool.name,
                  description: tool.description,
                  parametersJsonSchema: { ...tool.inputSchema, type: 'object' },
                })),
              },
            ],
          }),
      maxOutputTokens: request.maxOutputTokens ?? DEFAULT_PROVIDER_MAX_OUTPUT_TOKENS,
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
      automaticFunctionCalling: { disable: true },
    },
  };
}
