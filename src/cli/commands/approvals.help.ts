/**
 * @module
 * `codecall approvals`: name, summary and usage text, loaded without the command's implementation.
 */
import { DEFAULT_APPROVALS_LIST_LIMIT } from '../../config/defaults.js';
import type { CommandHelp } from '../command.js';

/** `codecall approvals --help`. */
export const approvalsHelp: CommandHelp = {
  name: 'approvals',
  summary: 'List the approval decisions of tool calls (the audit trail)',
  usage: `Usage: codecall approvals [--json] [--limit N] [--config <path>] [--history <path>]

Lists the newest approval decisions of tool calls that needed approval (requireApproval), newest
first: when, the tool, the outcome (approved, denied, timeout, cancelled), who or what decided
(callback, tty, flag, elicitation, policy, timeout, cancelled), the caller, the run and call
index, and the sha256 of the arguments (the arguments themselves are not kept).

Options:
  --json             print one JSON object: { approvals: [...] }
  --limit <n>        at most n decisions (default ${DEFAULT_APPROVALS_LIST_LIMIT})
  --config <path>    configuration file (default: ./codecall.json, then ./.mcp.json)
  --history <path>   history store (default: the configuration's history.path)
`,
};
