/**
 * @module
 * The plain data the stores keep and return. Store imports no capability folder: search's
 * `ToolSearchState` and `ToolUsage` have the same shapes, and execute/ converts between them.
 */
import type { ResultShape } from '../util/result-shape.js';

/** The aggregated counts of recorded runs: what the tool graph learns from. */
export interface GraphCounts {
  /** Runs (call sequences) recorded. */
  sequences: number;
  /** `[from, to, count]`: runs in which `to` was called right after `from`. */
  transitions: Array<[from: string, to: string, count: number]>;
}

/** One use of search: a query and the tools the run then called (query feedback). */
export interface QueryUsage {
  /** The `search_tools` query. */
  query: string;
  /** Tools the run called after it (any order; repeats count once). */
  tools: readonly string[];
}

/** Options of `QueryUsageStore.listUsages`. */
export interface ListUsagesOptions {
  /** @defaultValue `DEFAULT_STORE_MAX_USAGES` (every kept use) */
  limit?: number;
}

/** One approval decision as the audit trail keeps it. */
export interface ApprovalAuditEntry {
  /** Qualified tool name, `server.tool`. */
  tool: string;
  /** sha256 (hex) of the arguments' JSON (the arguments themselves are not kept). */
  argsSha256: string;
  /** `approved`, `denied`, `timeout` or `cancelled`. */
  outcome: string;
  /** Who or what decided: `callback`, `tty`, `flag`, `elicitation`, `policy`, `timeout`, `cancelled`. */
  decidedBy: string;
  reason?: string;
  /** `direct` or `code_execution`. */
  caller: string;
  /** Milliseconds since the epoch. */
  at: number;
  runId?: string;
  callIndex?: number;
  /** The script line (1-based) that made the call, when known. */
  line?: number;
}

/** Options of `ApprovalAuditStore.listApprovals`. */
export interface ListApprovalsOptions {
  /** @defaultValue `DEFAULT_APPROVALS_LIST_LIMIT` */
  limit?: number;
}

/** Bounds of one `ScriptValueStore.setValue`. */
export interface StoreValueLimits {
  /** Bytes the namespace may hold: UTF-8 of every key plus its value's JSON. */
  maxNamespaceBytes: number;
}

/** A tool's learned result shape, as the history keeps it (docs/data.md: never a value of a result). */
export interface LearnedShape {
  /** Qualified tool name, `server.tool`. */
  tool: string;
  /** The shape; `shape.seen` is how many results it was learned from. */
  shape: ResultShape;
}
