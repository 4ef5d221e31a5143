/**
 * @module
 * `codecall tools`: name, summary and usage text, loaded without the command's implementation
 * (`codecall --help` and `codecall tools --help` read only this).
 */
import type { CommandHelp } from '../command.js';

/** `codecall tools --help`. */
export const toolsHelp: CommandHelp = {
  name: 'tools',
  summary: 'List the tools of the configured MCP servers and who may call them',
  usage: `Usage: codecall tools [--config <path>] [--json | --declarations]

Lists the tools of every configured MCP server: qualified name (server.tool), the name scripts
use (tools.<server>.<tool>), who may call it (direct: the model; code: scripts), and a one-line
description, and the name \`codecall serve\` gives it when it passes it through ([serve: …]).
Under each server, how \`codecall serve\` names its prompts and resource URIs (when it has any).
Servers that fail to start are reported with the end of their stderr.

Options:
  --config <path>   configuration file (default: ./codecall.json, then ./.mcp.json)
  --json            print {"servers": [...], "tools": [...]} as JSON
  --declarations    print the TypeScript declarations of the tools scripts may call

Exit status: 0 all servers connected, 1 some server failed, 2 usage or configuration error.
`,
};
