/**
 * @module
 * Who may call a tool (`allowedCallers`), resolved per tool from the configuration and the
 * server's annotations, and enforced on the host for every call.
 *
 * Resolution, first match wins:
 * 0. another client's allow/deny list in the same file (`clientRules`: Windsurf's
 *    `disabledTools`, Gemini CLI's `includeTools`, …) that switches the tool off → `[]`, nobody
 * 1. `mcpServers.<server>.tools.<tool>.allowedCallers`
 * 2. `mcpServers.<server>.allowedCallers`
 * 3. the tool's annotations: `readOnlyHint: true` → `["direct", "code_execution"]`;
 *    `destructiveHint: true` (and not read-only) → `["direct"]` only
 * 4. otherwise `["direct", "code_execution"]`
 *
 * Annotations come from the server and are hints; the configuration is the authority.
 */
import type { ClientToolRule } from '../config/types.js';
import { CodecallError } from '../errors.js';
import type { ToolCaller } from '../types.js';

/**
 * Where a tool's `allowedCallers` came from; `client`: another client's allow/deny list
 * switched it off.
 */
export type AllowedCallersSource = 'tool' | 'server' | 'annotations' | 'default' | 'client';

/** The MCP tool annotations codecall reads (untrusted hints). */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** Input of {@link resolveAllowedCallers}. */
export interface ResolveAllowedCallersOptions {
  /** `tools.<tool>.allowedCallers` from the configuration. */
  tool?: readonly ToolCaller[] | undefined;
  /** The server's `allowedCallers` from the configuration. */
  server?: readonly ToolCaller[] | undefined;
  annotations?: ToolAnnotations | undefined;
  /** The client key that switches the tool off ({@link clientDisabledBy}); wins over everything. */
  disabledBy?: string | undefined;
}

/** Longest tool pattern of a client's list that is matched; the rest of a longer one is ignored. */
const MAX_TOOL_PATTERN_CHARS = 256;

/**
 * Whether `tool` matches a client's `pattern`, where `*` matches any run of characters. Linear
 * in the name for each literal piece: the first piece must start the name, the last must end it,
 * and each piece between is found leftmost after the one before (for `*`-only globs the leftmost
 * choice never loses a match). A backtracking `RegExp` built from `*a*a*a*b` took seconds per
 * tool name, on the host's event loop, at every catalog build.
 */
export function matchesToolPattern(pattern: string, tool: string): boolean {
  if (!pattern.includes('*')) return pattern === tool;
  const pieces = pattern.slice(0, MAX_TOOL_PATTERN_CHARS).split('*');
  if (pieces.length === 1) return pieces[0] === tool;
  const first = pieces[0]!;
  const last = pieces[pieces.length - 1]!;
  if (first.length + last.length > tool.length || !tool.startsWith(first) || !tool.endsWith(last))
    return false;
  let at = first.length;
  const end = tool.length - last.length;
  for (let i = 1; i < pieces.length - 1; i++) {
    const piece = pieces[i]!;
    if (piece === '') continue;
    const found = tool.indexOf(piece, at);
    if (found === -1 || found + piece.length > end) return false;
    at = found + piece.length;
  }
  return true;
}

/**
 * The key of the first of another client's lists that switches `tool` off (a `deny` list that
 * matches it, an `allowOnly` list that does not), or undefined.
 */
export function clientDisabledBy(
  server: { clientRules: readonly ClientToolRule[] },
  tool: string,
): string | undefined {
  for (const rule of server.clientRules) {
    const listed = rule.tools.some((pattern) => matchesToolPattern(pattern, tool));
    if (rule.effect === 'deny' ? listed : !listed) return rule.key;
  }
  return undefined;
}

/** Callers when neither configuration nor annotations restrict a tool. */
export const DEFAULT_ALLOWED_CALLERS: readonly ToolCaller[] = Object.freeze(['direct', 'code_execution']);
/** Callers of a tool annotated `destructiveHint: true` unless the configuration opens it. */
export const DESTRUCTIVE_ALLOWED_CALLERS: readonly ToolCaller[] = Object.freeze(['direct']);

/** Resolves a tool's callers and says where they came from. */
export function resolveAllowedCallers(options: ResolveAllowedCallersOptions): {
  allowedCallers: ToolCaller[];
  source: AllowedCallersSource;
  disabledBy?: string;
} {
  if (options.disabledBy !== undefined)
    return { allowedCallers: [], source: 'client', disabledBy: options.disabledBy };
  if (options.tool) return { allowedCallers: [...options.tool], source: 'tool' };
  if (options.server) return { allowedCallers: [...options.server], source: 'server' };
  const annotations = options.annotations;
  if (annotations?.readOnlyHint === true)
    return { allowedCallers: [...DEFAULT_ALLOWED_CALLERS], source: 'annotations' };
  if (annotations?.destructiveHint === true)
    return { allowedCallers: [...DESTRUCTIVE_ALLOWED_CALLERS], source: 'annotations' };
  return { allowedCallers: [...DEFAULT_ALLOWED_CALLERS], source: 'default' };
}

/** What {@link assertCallerAllowed} needs to know about a tool. */
export interface PolicyTarget {
  name: string;
  server: string;
  tool: string;
  allowedCallers: readonly ToolCaller[];
  allowedCallersSource: AllowedCallersSource;
  /** The client key that switched the tool off (`allowedCallersSource: "client"`). */
  disabledBy?: string | undefined;
}

const CALLER_WORDS: Record<ToolCaller, string> = {
  direct: 'by the model directly',
  code_execution: 'from code',
};

/**
 * Throws a model-readable `TOOL_NOT_ALLOWED` error when `caller` may not call the tool; the
 * message names the tool, why, and the configuration key that would open it. It never names the
 * configuration file: the message reaches scripts and clients, which must not learn host paths.
 */
export function assertCallerAllowed(target: PolicyTarget, caller: ToolCaller): void {
  if (target.allowedCallers.includes(caller)) return;
  if (target.disabledBy !== undefined)
    throw new CodecallError(
      'TOOL_NOT_ALLOWED',
      `Tool ${target.name} may not be called ${CALLER_WORDS[caller]}: ${target.disabledBy} switches it off ` +
        `(another MCP client's allow/deny list in the configuration, kept as codecall's policy). ` +
        `Only the user can allow it, by changing ${target.disabledBy}; do not retry it.`,
      {
        details: {
          tool: target.name,
          caller,
          allowedCallers: [],
          configKey: target.disabledBy,
          disabledBy: target.disabledBy,
        },
      },
    );
  const key = `mcpServers.${target.server}.tools.${JSON.stringify(target.tool).slice(1, -1)}.allowedCallers`;
  const why =
    target.allowedCallersSource === 'annotations'
      ? 'the server marks it destructive (destructiveHint)'
      : target.allowedCallersSource === 'server'
        ? `mcpServers.${target.server}.allowedCallers is ${JSON.stringify(target.allowedCallers)}`
        : `its allowedCallers is ${JSON.stringify(target.allowedCallers)}`;
  const opened = JSON.stringify([...new Set([...target.allowedCallers, caller])]);
  throw new CodecallError(
    'TOOL_NOT_ALLOWED',
    `Tool ${target.name} may not be called ${CALLER_WORDS[caller]}: ${why}. ` +
      `To allow it, the configuration must set ${key} to ${opened}.`,
    { details: { tool: target.name, caller, allowedCallers: [...target.allowedCallers], configKey: key } },
  );
}
