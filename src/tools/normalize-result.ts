/**
 * @module
 * Turns an MCP `CallToolResult` into the plain value a script receives:
 * - `structuredContent` when the server sent it;
 * - otherwise each content block: text parsed as JSON when it is a JSON object or array, else
 *   the text; images, audio and binary resources become small descriptors (type, MIME type,
 *   size), never base64; one block is returned as is, several as an array, none as `null`.
 * An `isError: true` result is not a value: {@link toolErrorText} extracts the server's message.
 *
 * For a script, {@link normalizeToolResultText} keeps a lone text block that looks like JSON as
 * a {@link JsonText}: the sandbox parses it once (falling back to the string when it is not
 * JSON), instead of the host parsing it, stringifying it again and the sandbox parsing it again.
 */
import { DEFAULT_TOOL_ERROR_MESSAGE_BYTES } from '../config/defaults.js';
import { JsonText } from '../util/json-text.js';

/** A content block as servers send it (untrusted, so loosely typed). */
interface ContentBlock {
  type?: unknown;
  text?: unknown;
  data?: unknown;
  mimeType?: unknown;
  uri?: unknown;
  name?: unknown;
  description?: unknown;
  resource?: unknown;
}

/** The parts of a `CallToolResult` codecall reads. */
export interface RawToolResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
}

/** What a script receives for a binary content block. */
export interface BinaryDescriptor {
  type: 'image' | 'audio' | 'resource';
  mimeType?: string;
  uri?: string;
  /** Decoded size of the omitted data. */
  bytes: number;
  note: string;
}

function base64Bytes(data: unknown): number {
  if (typeof data !== 'string') return 0;
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/** True when `text` starts (after white space) like a JSON object or array. */
function looksLikeJson(text: string): boolean {
  const first = /\S/.exec(text)?.[0];
  return first === '{' || first === '[';
}

function maybeJson(text: string): unknown {
  if (!looksLikeJson(text)) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function normalizeBlock(block: ContentBlock): unknown {
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? maybeJson(block.text) : '';
    case 'image':
    case 'audio': {
      const descriptor: BinaryDescriptor = {
        type: block.type,
        bytes: base64Bytes(block.data),
        note: `${block.type} data omitted`,
      };
      const mimeType = optionalString(block.mimeType);
      if (mimeType !== undefined) descriptor.mimeType = mimeType;
      return descriptor;
    }
    case 'resource': {
      const resource = (
        typeof block.resource === 'object' && block.resource !== null ? block.resource : {}
      ) as ContentBlock;
      const uri = optionalString(resource.uri);
      const mimeType = optionalString(resource.mimeType);
      if (typeof resource.text === 'string') {
        return {
          type: 'resource',
          ...(uri !== undefined && { uri }),
          ...(mimeType !== undefined && { mimeType }),
          text: resource.text,
        };
      }
      const descriptor: BinaryDescriptor = {
        type: 'resource',
        bytes: base64Bytes((resource as { blob?: unknown }).blob),
        note: 'binary resource data omitted',
      };
      if (uri !== undefined) descriptor.uri = uri;
      if (mimeType !== undefined) descriptor.mimeType = mimeType;
      return descriptor;
    }
    case 'resource_link': {
      const out: Record<string, string> = { type: 'resource_link' };
      for (const key of ['uri', 'name', 'mimeType', 'description'] as const) {
        const value = optionalString(block[key]);
        if (value !== undefined) out[key] = value;
      }
      return out;
    }
    default:
      return {
        type: typeof block.type === 'string' ? block.type : 'unknown',
        note: 'unsupported content omitted',
      };
  }
}

/** The value a script receives for a successful result. */
export function normalizeToolResult(result: RawToolResult): unknown {
  const structured = result.structuredContent;
  if (typeof structured === 'object' && structured !== null) return structured;
  const content = Array.isArray(result.content) ? (result.content as ContentBlock[]) : [];
  if (content.length === 0) return null;
  if (content.length === 1) return normalizeBlock(content[0] ?? {});
  return content.map((block) => normalizeBlock(block ?? {}));
}

/**
 * {@link normalizeToolResult} for a script's call: a result that is one text block that looks
 * like JSON comes back unparsed, as a {@link JsonText} (the sandbox parses it, and gets the
 * string when it is not valid JSON: the same value {@link normalizeToolResult} gives).
 */
export function normalizeToolResultText(result: RawToolResult): unknown {
  const structured = result.structuredContent;
  if (typeof structured === 'object' && structured !== null) return structured;
  const content = result.content;
  if (Array.isArray(content) && content.length === 1) {
    const block = (content[0] ?? {}) as ContentBlock;
    if (block.type === 'text' && typeof block.text === 'string' && looksLikeJson(block.text))
      return new JsonText(block.text);
  }
  return normalizeToolResult(result);
}

/** The server's message of an `isError: true` result, bounded to {@link DEFAULT_TOOL_ERROR_MESSAGE_BYTES}. */
export function toolErrorText(result: RawToolResult, maxBytes = DEFAULT_TOOL_ERROR_MESSAGE_BYTES): string {
  const content = Array.isArray(result.content) ? (result.content as ContentBlock[]) : [];
  let text = content
    .map((block) => (block && block.type === 'text' && typeof block.text === 'string' ? block.text : ''))
    .filter((t) => t !== '')
    .join('\n');
  if (text === '' && typeof result.structuredContent === 'object' && result.structuredContent !== null) {
    text = JSON.stringify(result.structuredContent);
  }
  if (text === '') text = 'the tool reported an error without a message';
  if (text.length > maxBytes)
    text = `${text.slice(0, maxBytes)}… [${text.length - maxBytes} more characters cut]`;
  return text;
}
