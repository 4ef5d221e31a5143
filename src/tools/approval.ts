/**
 * @module
 * Approvals of tool calls: which calls need one (`requireApproval`, resolved per tool like
 * `allowedCallers`), and the gate every call of the pool passes through. Where the answer comes
 * from is injected (an {@link Approver}: a library callback, a terminal prompt, MCP elicitation);
 * the gate bounds the wait, turns a deny or a timeout into a typed error the script can catch,
 * and reports every decision for the audit trail.
 *
 * Resolution of `requireApproval`, first match wins:
 * 1. `mcpServers.<server>.tools.<tool>.requireApproval`
 * 2. `mcpServers.<server>.requireApproval`
 * 3. `true` for a tool annotated `destructiveHint: true` (and not `readOnlyHint`), whoever may
 *    call it (a direct-only tool too), unless `approvals.requireForDestructive` is `false`
 * 4. otherwise `false`
 */
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { RequireApproval } from '../config/types.js';
import { CodecallError } from '../errors.js';
import type { ToolCaller } from '../types.js';
import { setLongTimeout } from '../util/long-timeout.js';
import type { ToolAnnotations } from './policy.js';

/** Where a tool's `requireApproval` came from. */
export type RequireApprovalSource = 'tool' | 'server' | 'annotations' | 'default';

/** Who or what decided an approval. */
export type ApprovalDecider =
  /** A library callback (`onApproval`) or a `stream()` consumer. */
  | 'callback'
  /** A person at the terminal of `codecall run` / `exec`. */
  | 'tty'
  /** `--approve <tool|all>` on the command line. */
  | 'flag'
  /** The MCP client of `codecall serve`, through `elicitation/create`. */
  | 'elicitation'
  /** A decision recorded for a waiting job (`codecall jobs approve`, `POST /v1/jobs/:id/approvals`). */
  | 'jobs-api'
  /** Nobody could be asked (no approver, no terminal, a client without elicitation). */
  | 'policy'
  /** Nobody answered within the approval timeout. */
  | 'timeout'
  /** The run was cancelled while the call waited. */
  | 'cancelled';

/** The outcome of one approval. */
export type ApprovalOutcome = 'approved' | 'denied' | 'timeout' | 'cancelled';

/** What an {@link Approver} is asked. */
export interface ApprovalRequest {
  /** Qualified name, `server.tool`. */
  tool: string;
  /** The server's key in `mcpServers`. */
  server: string;
  /** The arguments of the call (checked against the tool's input schema already). */
  args: unknown;
  /** Who made the call: the model directly, or a script. */
  caller: ToolCaller;
  /** Why the call needs approval (the configuration key or the annotation). */
  reason: string;
  /** The run that made the call (scripts: one id per execution), when known. */
  runId?: string;
  /** 0-based index of the call among its run's tool calls, in dispatch order, when known. */
  callIndex?: number;
  /**
   * The line of the model's script (1-based) that made the call, when known: calls from code
   * of tools that may need approval report it (as the script's own stack says it).
   */
  line?: number;
  /** Aborted when the answer is no longer wanted (timeout, run cancelled): withdraw the question. */
  signal: AbortSignal;
}

/** An answer with its provenance; a bare boolean means `{ approved, decidedBy: "callback" }`. */
export interface ApprovalDecision {
  approved: boolean;
  /** @defaultValue `"callback"` */
  decidedBy?: ApprovalDecider;
  /** Why (shown to the script on a deny). */
  reason?: string;
}

/** Decides whether a call may run. Its errors count as a deny. */
export type Approver = (
  request: ApprovalRequest,
) => Promise<boolean | ApprovalDecision> | boolean | ApprovalDecision;

/** One decision, as recorded for the audit trail. */
export interface ApprovalRecord {
  /** Qualified name, `server.tool`. */
  tool: string;
  /** sha256 (hex) of the arguments' JSON. */
  argsSha256: string;
  outcome: ApprovalOutcome;
  decidedBy: ApprovalDecider;
  /** Why, when given (a deny's reason, the approver's failure). */
  reason?: string;
  caller: ToolCaller;
  /** Milliseconds since the epoch when the decision was made. */
  at: number;
  runId?: string;
  callIndex?: number;
  /** The script line that made the call, when known. */
  line?: number;
}

/** What the gate needs to know about a tool. */
export interface ApprovalTarget {
  name: string;
  server: string;
  tool: string;
  requireApproval: RequireApproval;
  requireApprovalSource: RequireApprovalSource;
}

/** Input of {@link resolveRequireApproval}. */
export interface ResolveRequireApprovalOptions {
  tool?: RequireApproval | undefined;
  server?: RequireApproval | undefined;
  annotations?: ToolAnnotations | undefined;
  /**
   * Whether the destructive default applies (`approvals.requireForDestructive`).
   * @defaultValue true
   */
  requireForDestructive?: boolean | undefined;
}

/** Resolves a tool's `requireApproval` and says where it came from (see the module comment). */
export function resolveRequireApproval(options: ResolveRequireApprovalOptions): {
  requireApproval: RequireApproval;
  source: RequireApprovalSource;
} {
  if (options.tool !== undefined) return { requireApproval: options.tool, source: 'tool' };
  if (options.server !== undefined) return { requireApproval: options.server, source: 'server' };
  const annotations = options.annotations;
  if (
    options.requireForDestructive !== false &&
    annotations?.destructiveHint === true &&
    annotations.readOnlyHint !== true
  )
    return { requireApproval: true, source: 'annotations' };
  return { requireApproval: false, source: 'default' };
}

/** The value at a JSON pointer (RFC 6901) of `value`, own properties only; `undefined` when absent. */
function valueAt(value: unknown, pointer: string): unknown {
  if (pointer === '') return value;
  let current = value;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (typeof current !== 'object' || current === null) return undefined;
    if (Array.isArray(current)) {
      if (!/^(0|[1-9]\d*)$/.test(key)) return undefined;
      current = current[Number(key)];
    } else {
      if (!Object.hasOwn(current, key)) return undefined;
      current = (current as Record<string, unknown>)[key];
    }
  }
  return current;
}

/** True when a call of `target` with `args` needs approval. */
export function needsApproval(target: Pick<ApprovalTarget, 'requireApproval'>, args: unknown): boolean {
  const rule = target.requireApproval;
  if (typeof rule === 'boolean') return rule;
  const found = valueAt(args, rule.pointer);
  return found !== undefined && rule.values.some((value) => isDeepStrictEqual(value, found));
}

/** The configuration key that sets `target`'s `requireApproval`. */
export function approvalConfigKey(target: Pick<ApprovalTarget, 'server' | 'tool'>): string {
  return `mcpServers.${target.server}.tools.${JSON.stringify(target.tool).slice(1, -1)}.requireApproval`;
}

/** Why `target` needs approval, in words. */
export function approvalReason(target: ApprovalTarget): string {
  switch (target.requireApprovalSource) {
    case 'annotations':
      return 'the server marks it destructive (destructiveHint); approvals.requireForDestructive: false turns that default off';
    case 'server':
      return `mcpServers.${target.server}.requireApproval is ${JSON.stringify(target.requireApproval)}`;
    default:
      return `${approvalConfigKey(target)} is ${JSON.stringify(target.requireApproval)}`;
  }
}

/** sha256 (hex) of the arguments' JSON. */
export function hashArguments(args: unknown): string {
  let json: string;
  try {
    json = JSON.stringify(args) ?? 'undefined';
  } catch {
    json = String(args);
  }
  return createHash('sha256').update(json).digest('hex');
}

/** Everything {@link awaitApproval} needs besides the target. */
export interface AwaitApprovalOptions {
  args: unknown;
  caller: ToolCaller;
  /** Asked for the answer; none: the call is denied with a message saying how to allow it. */
  approver: Approver | undefined;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  runId?: string | undefined;
  callIndex?: number | undefined;
  line?: number | undefined;
  /** Told every decision (errors it throws are ignored). */
  onDecision?: ((record: ApprovalRecord) => void) | undefined;
}

/**
 * Waits for the approval of one call. Resolves when approved; rejects with `APPROVAL_DENIED`,
 * `APPROVAL_TIMEOUT` or `ABORTED` (the run was cancelled) otherwise. Every outcome is reported
 * to `onDecision`.
 */
export async function awaitApproval(target: ApprovalTarget, options: AwaitApprovalOptions): Promise<void> {
  const reason = approvalReason(target);
  const configKey = approvalConfigKey(target);
  const record = (outcome: ApprovalOutcome, decidedBy: ApprovalDecider, why?: string): void => {
    try {
      options.onDecision?.({
        tool: target.name,
        argsSha256: hashArguments(options.args),
        outcome,
        decidedBy,
        ...(why !== undefined ? { reason: why } : {}),
        caller: options.caller,
        at: Date.now(),
        ...(options.runId !== undefined ? { runId: options.runId } : {}),
        ...(options.callIndex !== undefined ? { callIndex: options.callIndex } : {}),
        ...(options.line !== undefined ? { line: options.line } : {}),
      });
    } catch {
      // The audit listener never fails a call.
    }
  };
  const denied = (decidedBy: ApprovalDecider, why: string): CodecallError<'APPROVAL_DENIED'> =>
    new CodecallError(
      'APPROVAL_DENIED',
      `Tool ${target.name} was not approved (${why}). The call did not run. It needs approval because ${reason}.`,
      { details: { tool: target.name, decidedBy, reason: why, configKey } },
    );
  if (!options.approver) {
    const why = `nobody can approve calls here; give an approver (onApproval, --approve ${target.name}) or set ${configKey} to false`;
    record('denied', 'policy', why);
    throw denied('policy', why);
  }
  if (options.signal?.aborted) {
    record('cancelled', 'cancelled', 'the run was cancelled');
    throw new CodecallError(
      'ABORTED',
      `The call of ${target.name} was cancelled while it waited for approval.`,
      {
        details: { tool: target.name },
      },
    );
  }
  const asked = new AbortController();
  let settle!: (
    value: { kind: 'answer'; answer: boolean | ApprovalDecision } | { kind: 'error'; error: unknown },
  ) => void;
  const outcome = new Promise<
    | { kind: 'answer'; answer: boolean | ApprovalDecision }
    | { kind: 'error'; error: unknown }
    | { kind: 'timeout' }
    | { kind: 'cancelled' }
  >((resolve) => {
    settle = resolve;
    const timer = setLongTimeout(() => resolve({ kind: 'timeout' }), options.timeoutMs);
    const onAbort = (): void => resolve({ kind: 'cancelled' });
    options.signal?.addEventListener('abort', onAbort, { once: true });
    asked.signal.addEventListener(
      'abort',
      () => {
        timer.cancel();
        options.signal?.removeEventListener('abort', onAbort);
      },
      { once: true },
    );
  });
  const request: ApprovalRequest = {
    tool: target.name,
    server: target.server,
    args: options.args,
    caller: options.caller,
    reason,
    ...(options.runId !== undefined ? { runId: options.runId } : {}),
    ...(options.callIndex !== undefined ? { callIndex: options.callIndex } : {}),
    ...(options.line !== undefined ? { line: options.line } : {}),
    signal: asked.signal,
  };
  try {
    Promise.resolve(options.approver(request)).then(
      (answer) => settle({ kind: 'answer', answer }),
      (error: unknown) => settle({ kind: 'error', error }),
    );
  } catch (error) {
    settle({ kind: 'error', error });
  }
  const result = await outcome;
  asked.abort();
  switch (result.kind) {
    case 'timeout': {
      record('timeout', 'timeout', `no answer within ${options.timeoutMs} ms`);
      throw new CodecallError(
        'APPROVAL_TIMEOUT',
        `Tool ${target.name} was not approved within ${options.timeoutMs} ms; the call did not run. It needs approval because ${reason}.`,
        { details: { tool: target.name, timeoutMs: options.timeoutMs, configKey } },
      );
    }
    case 'cancelled':
      record('cancelled', 'cancelled', 'the run was cancelled');
      throw new CodecallError(
        'ABORTED',
        `The call of ${target.name} was cancelled while it waited for approval.`,
        { details: { tool: target.name } },
      );
    case 'error': {
      const why = `the approver failed: ${result.error instanceof Error ? result.error.message : String(result.error)}`;
      record('denied', 'callback', why);
      throw denied('callback', why);
    }
    case 'answer': {
      const answer = result.answer;
      const decision: ApprovalDecision =
        typeof answer === 'boolean' ? { approved: answer } : (answer ?? { approved: false });
      const decidedBy = decision.decidedBy ?? 'callback';
      if (decision.approved === true) {
        record('approved', decidedBy, decision.reason);
        return;
      }
      const why = decision.reason ?? `denied by ${decidedBy}`;
      record('denied', decidedBy, why);
      throw denied(decidedBy, why);
    }
  }
}
