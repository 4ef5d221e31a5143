/**
 * @module
 * Reads what a run starts from: a task (one string) or a conversation to continue (messages as
 * a previous `RunResult.messages` returned them, plus the user's next message). Checked here so
 * a malformed history fails with the index and field at fault, not inside a provider mapper.
 */
import { CodecallError } from '../../errors.js';
import type { Message } from '../../providers/language-model.js';

function invalid(field: string, message: string): CodecallError<'INVALID_ARGUMENT'> {
  return new CodecallError('INVALID_ARGUMENT', message, { details: { field } });
}

function checkMessage(message: unknown, index: number): void {
  const field = `messages[${index}]`;
  if (typeof message !== 'object' || message === null) {
    throw invalid(field, `${field} must be a message object ({ role, content }).`);
  }
  const { role, content, results } = message as { role?: unknown; content?: unknown; results?: unknown };
  if (role === 'user') {
    if (typeof content !== 'string')
      throw invalid(`${field}.content`, `${field}.content must be a string (a user message).`);
  } else if (role === 'assistant') {
    if (!Array.isArray(content)) {
      throw invalid(`${field}.content`, `${field}.content must be an array of text and tool_call parts.`);
    }
  } else if (role === 'tool') {
    if (!Array.isArray(results)) {
      throw invalid(`${field}.results`, `${field}.results must be an array of { toolCallId, content }.`);
    }
  } else {
    throw invalid(
      `${field}.role`,
      `${field}.role must be "user", "assistant" or "tool"; got ${JSON.stringify(role)}.`,
    );
  }
}

/** The conversation a run starts from (a copy); throws `INVALID_ARGUMENT` naming the field at fault. */
export function normalizeRunInput(input: string | readonly Message[]): Message[] {
  if (typeof input === 'string') {
    if (input.trim() === '') throw invalid('task', 'The task must be a non-empty string.');
    return [{ role: 'user', content: input }];
  }
  if (!Array.isArray(input) || input.length === 0) {
    throw invalid(
      'task',
      'The task must be a non-empty string or a non-empty array of messages (a previous result.messages plus the next user message).',
    );
  }
  input.forEach(checkMessage);
  const last = input.at(-1)!;
  if (last.role !== 'user') {
    throw invalid(
      `messages[${input.length - 1}].role`,
      `The last message must be the user's (role "user"); got "${last.role}". Append the user's next message.`,
    );
  }
  return structuredClone(input as Message[]);
}
