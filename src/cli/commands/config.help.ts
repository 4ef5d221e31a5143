/**
 * @module
 * `codecall config`: name, summary and usage text, loaded without the command's implementation
 * (`codecall --help` and `codecall config --help` read only this).
 */
import type { CommandHelp } from '../command.js';

/** `codecall config --help`. */
export const configHelp: CommandHelp = {
  name: 'config',
  summary: 'Check a configuration file and print what was understood (starts no server)',
  usage: `Usage: codecall config check [--config <path>] [--json]

Reads and validates the configuration without starting any server, and prints what was
understood: the file, each server (transport, command or url as written, with \${VAR}
unexpanded; the names of env variables and headers, never their values), the policies,
disabled servers, keys other clients write that codecall ignores, and notices.

Reads the files Claude Desktop, Claude Code (.mcp.json), Cursor, VS Code (.vscode/mcp.json),
Windsurf and Cline write.

Options:
  --config <path>   configuration file (default: ./codecall.json, then ./.mcp.json)
  --json            print the report as JSON

Exit status: 0 the configuration is valid, 2 usage or configuration error.
`,
};
