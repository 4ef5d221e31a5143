/**
 * @module
 * The call gate: the checks every tool call passes on the host before it reaches its server.
 * Caller policy (`allowedCallers`), the input schema (compiled validators cached per server and
 * dropped when its tool list changes) and approval (`requireApproval`, the approver, its timeout
 * and the audit trail). A refused call rejects with a `CodecallError` written for the model.
 */
import type { ToolCaller } from '../types.js';
import { awaitApproval, needsApproval, type ApprovalRecord, type Approver } from './approval.js';
import { assertCallerAllowed } from './policy.js';
import type { ServerConnection } from './server-connection.js';
import type { CatalogTool } from './tool-pool-types.js';
import { InputValidatorCache, type InputValidator } from './validate-input.js';

/** Input-schema warnings (skipped patterns, schemas that cannot be checked) kept per server. */
const MAX_VALIDATOR_WARNINGS_PER_SERVER = 50;

/** How the gate decides calls that need approval. */
export interface CallGateApproval {
  /** Decides calls that bring no approver of their own. */
  approver: Approver | undefined;
  /** Time a call waits for approval. */
  timeoutMs: number;
  /** Told every decision (the audit trail). */
  onDecision: ((record: ApprovalRecord) => void) | undefined;
}

/** What one call brings to the gate (a subset of `ToolCallOptions`). */
export interface GateCall {
  caller: ToolCaller;
  signal?: AbortSignal | undefined;
  approver?: Approver | undefined;
  runId?: string | undefined;
  callIndex?: number | undefined;
  line?: number | undefined;
}

/** Host-side checks of a call: policy, input validation, approval. */
export class CallGate {
  readonly #approval: CallGateApproval;
  readonly #validatorCacheMaxEntries: number;
  /** Input validators per server, and the tool list they were compiled for. */
  readonly #validators = new Map<ServerConnection, { listed: unknown; cache: InputValidatorCache }>();
  readonly #reported = new WeakSet<InputValidator>();

  constructor(approval: CallGateApproval, validatorCacheMaxEntries: number) {
    this.#approval = approval;
    this.#validatorCacheMaxEntries = validatorCacheMaxEntries;
  }

  /** The approver of calls that bring none. */
  get approver(): Approver | undefined {
    return this.#approval.approver;
  }

  /**
   * Checks one call of `tool` (served by `connection`) and resolves with its input (`{}` for
   * undefined arguments) once it may go: `TOOL_NOT_ALLOWED`, `TOOL_INPUT_INVALID`,
   * `APPROVAL_DENIED` or `APPROVAL_TIMEOUT` otherwise.
   */
  async admit(
    tool: CatalogTool,
    connection: ServerConnection,
    args: unknown,
    call: GateCall,
  ): Promise<unknown> {
    assertCallerAllowed(tool, call.caller);
    const input = args === undefined ? {} : args;
    const validator = this.#validatorsOf(connection).get(tool.name, tool.inputSchema);
    this.#report(connection, tool.name, validator);
    validator.validate(input);
    if (tool.requireApproval !== undefined && needsApproval({ requireApproval: tool.requireApproval }, input))
      await awaitApproval(
        {
          ...tool,
          requireApproval: tool.requireApproval,
          requireApprovalSource: tool.requireApprovalSource ?? 'default',
        },
        {
          args: input,
          caller: call.caller,
          approver: call.approver ?? this.#approval.approver,
          timeoutMs: this.#approval.timeoutMs,
          signal: call.signal,
          runId: call.runId,
          callIndex: call.callIndex,
          line: call.line,
          onDecision: this.#approval.onDecision,
        },
      );
    return input;
  }

  /** Drops the validators of every server whose tool list was replaced (list_changed, reconnect). */
  forgetStale(connections: readonly ServerConnection[]): void {
    for (const connection of connections) {
      const validators = this.#validators.get(connection);
      if (validators && validators.listed !== connection.tools) {
        validators.cache.clear();
        validators.listed = connection.tools;
      }
    }
  }

  /** Compiled input validators held for `connection`. */
  validatorCount(connection: ServerConnection): number {
    return this.#validators.get(connection)?.cache.size ?? 0;
  }

  /** Drops every validator (the pool closed). */
  clear(): void {
    this.#validators.clear();
  }

  /** The input validators of one server's current tool list. */
  #validatorsOf(connection: ServerConnection): InputValidatorCache {
    let validators = this.#validators.get(connection);
    if (!validators) {
      validators = {
        listed: connection.tools,
        cache: new InputValidatorCache({ maxEntries: this.#validatorCacheMaxEntries }),
      };
      this.#validators.set(connection, validators);
    }
    return validators.cache;
  }

  /** Tells `serverStatus()` once why a tool's arguments are not (fully) checked on the host. */
  #report(connection: ServerConnection, toolName: string, validator: InputValidator): void {
    if (this.#reported.has(validator)) return;
    this.#reported.add(validator);
    const notes = validator.ok ? validator.warnings : [validator.reason, ...validator.warnings];
    for (const note of notes) {
      if (connection.warnings.length >= MAX_VALIDATOR_WARNINGS_PER_SERVER) break;
      connection.warnings.push(`${toolName}: input schema: ${note}`);
    }
  }
}
