/**
 * @module
 * Checks every store runs on what it is given (names and queries come from model code: untrusted),
 * and the errors every store raises alike.
 */
import { DEFAULT_APPROVALS_LIST_LIMIT, DEFAULT_STORE_MAX_USAGES } from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import type { ApprovalAuditEntry, QueryUsage } from './types.js';

/** Bytes a kept value counts against its namespace: its key and its JSON, in UTF-8. */
export function storedBytes(key: string, json: string): number {
  return Buffer.byteLength(key) + Buffer.byteLength(json);
}

/** The `STORE_LIMIT` error of a write that would put its namespace over its limit. */
export function namespaceLimitError(key: string, used: number, adding: number, limit: number): CodecallError {
  return new CodecallError(
    'STORE_LIMIT',
    `store.set refused: this configuration's store holds ${used} bytes and this value would make it ${used + adding}; the limit is ${limit} bytes (store.maxNamespaceBytes). Remove values you no longer need with store.set(key, undefined), or keep less.`,
    { details: { key, limit, used, adding, configKey: 'store.maxNamespaceBytes' } },
  );
}

/** Checks an audit entry's fields (strings, a finite time) before it is stored. */
export function checkApprovalEntry(entry: unknown): ApprovalAuditEntry {
  const e = entry as Partial<ApprovalAuditEntry> | null;
  const ok =
    typeof e === 'object' &&
    e !== null &&
    typeof e.tool === 'string' &&
    typeof e.argsSha256 === 'string' &&
    typeof e.outcome === 'string' &&
    typeof e.decidedBy === 'string' &&
    typeof e.caller === 'string' &&
    Number.isFinite(e.at) &&
    (e.reason === undefined || typeof e.reason === 'string') &&
    (e.runId === undefined || typeof e.runId === 'string') &&
    (e.callIndex === undefined || Number.isSafeInteger(e.callIndex)) &&
    (e.line === undefined || Number.isSafeInteger(e.line));
  if (!ok)
    throw new CodecallError(
      'INVALID_ARGUMENT',
      'An approval entry needs tool, argsSha256, outcome, decidedBy, caller (strings) and at (milliseconds).',
      { details: { field: 'entry' } },
    );
  return e as ApprovalAuditEntry;
}

/** The entry as stored: only the contract's fields (an extra field is not kept by any backend). */
export function approvalFields(entry: ApprovalAuditEntry): ApprovalAuditEntry {
  return {
    tool: entry.tool,
    argsSha256: entry.argsSha256,
    outcome: entry.outcome,
    decidedBy: entry.decidedBy,
    ...(entry.reason !== undefined ? { reason: entry.reason } : {}),
    caller: entry.caller,
    at: entry.at,
    ...(entry.runId !== undefined ? { runId: entry.runId } : {}),
    ...(entry.callIndex !== undefined ? { callIndex: entry.callIndex } : {}),
    ...(entry.line !== undefined ? { line: entry.line } : {}),
  };
}

/** Checks a `limit` of a list: a positive integer, or `fallback` when undefined. */
function checkLimit(limit: unknown, fallback: number): number {
  if (limit === undefined) return fallback;
  if (!Number.isSafeInteger(limit) || (limit as number) < 1)
    throw new CodecallError('INVALID_ARGUMENT', `limit must be a positive integer; got ${String(limit)}.`, {
      details: { field: 'limit', value: limit },
    });
  return limit as number;
}

/** Checks a `limit` of `listApprovals`. */
export function checkApprovalsLimit(limit: unknown): number {
  return checkLimit(limit, DEFAULT_APPROVALS_LIST_LIMIT);
}

/** Checks a `limit` of `listUsages`. */
export function checkUsagesLimit(limit: unknown): number {
  return checkLimit(limit, DEFAULT_STORE_MAX_USAGES);
}

/** Checks `sequence` is an array of strings (names are untrusted: they come from model code). */
export function checkSequence(sequence: unknown): readonly string[] {
  if (!Array.isArray(sequence) || sequence.some((name) => typeof name !== 'string')) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      'A usage sequence must be an array of tool names (strings) in call order.',
      { details: { field: 'sequence' } },
    );
  }
  return sequence as readonly string[];
}

/** Checks `usage` is `{ query: string, tools: string[] }` (untrusted: it comes from model output). */
export function checkUsage(usage: unknown): QueryUsage {
  const u = usage as Partial<QueryUsage> | null;
  if (
    typeof u !== 'object' ||
    u === null ||
    typeof u.query !== 'string' ||
    !Array.isArray(u.tools) ||
    u.tools.some((name) => typeof name !== 'string')
  ) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      'A usage must be { query: string, tools: string[] } (the tools the run called after the query).',
      { details: { field: 'usage' } },
    );
  }
  return u as QueryUsage;
}

/** Parses a stored `[query, tools]` JSON pair; undefined for anything else (a damaged entry is skipped). */
export function parseUsage(query: string, toolsJson: unknown): QueryUsage | undefined {
  let tools: unknown = toolsJson;
  if (typeof toolsJson === 'string') {
    try {
      tools = JSON.parse(toolsJson);
    } catch {
      return undefined;
    }
  }
  return Array.isArray(tools) && tools.every((t) => typeof t === 'string')
    ? { query, tools: tools as string[] }
    : undefined;
}

/** Checks the options every shared (Redis, PostgreSQL) store takes: its namespace and its bounds. */
export function checkSharedHistoryOptions(namespace: string, counts: Record<string, number>): void {
  if (typeof namespace !== 'string' || !/^[A-Za-z0-9_.-]{1,128}$/.test(namespace))
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `The history namespace "${String(namespace)}" must be 1-128 letters, digits, "_", "." or "-".`,
      { details: { field: 'namespace', value: namespace } },
    );
  for (const [field, value] of Object.entries(counts))
    if (!Number.isSafeInteger(value) || value < 1)
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `${field} must be a positive integer; got ${String(value)}.`,
        {
          details: { field, value },
        },
      );
}

/** The error of a call on a closed store. */
export function closedError(backend = 'usage history store'): CodecallError {
  return new CodecallError('CLOSED', `The ${backend} is closed. Open a new one.`);
}

/**
 * What went wrong in an ioredis `MULTI … EXEC`, or undefined when every command succeeded:
 * `exec()` resolves (it does not reject) with each command's error, and with `null` when the
 * transaction was aborted.
 */
export function redisExecError(results: Array<[Error | null, unknown]> | null): Error | undefined {
  if (results === null) return new Error('the Redis transaction was aborted');
  return results.find(([error]) => error !== null)?.[0] ?? undefined;
}
