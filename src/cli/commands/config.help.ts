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
disabled servers, other clients' allow/deny lists and the codecall rule each became (e.g.
"mcpServers.fs.disabledTools → fs: write_file never callable, from code included"), keys
other clients write that codecall ignores, and notices.

Reads the files Claude Desktop, Claude Code (.mcp.json, with permissions.allow/ask/deny),
Cursor, VS Code (.vscode/mcp.json), Windsurf, Cline, Gemini CLI (settings.json), Zed
(settings.json), opencode (opencode.json), OpenAI Codex (config.toml), Goose and Continue
(config.yaml) write; .toml and .yaml files are read as TOML and YAML. A file that yields no
server is an error naming what it found, unless it says "mcpServers": {}.

Options:
  --config <path>   configuration file (default: ./codecall.json, then ./.mcp.json)
  --json            print the report as JSON

Exit status: 0 the configuration is valid, 2 usage or configuration error.
`,
};
