/**
 * @module
 * `codecall demo`: name, summary and usage text, loaded without the command's implementation
 * (`codecall --help` and `codecall demo --help` read only this).
 */
import type { CommandHelp } from '../command.js';

/** `codecall demo --help`. */
export const demoHelp: CommandHelp = {
  name: 'demo',
  summary: 'Write the example expense MCP server and a configuration into a folder, to try codecall',
  usage: `Usage: codecall demo [<dir>] [--force]

Writes a working example into <dir> (default: ./codecall-demo) and prints the commands to try
in it. The files are the package's examples:

  codecall.json               a configuration that starts the expense server
  expense-server/server.mjs   the example expense MCP server (20 team members, 2,400 expense
                              line items, budgets by level); it imports codecall/testing
  scripts/over-budget.ts      a script for \`codecall exec\`
  scripts/tools.d.ts          the TypeScript declarations of the server's tools, for an editor

When the folder cannot resolve the package \`codecall\` (codecall installed globally, or linked
from a checkout), a link node_modules/codecall to this installation is written too, so the
server's import works. The written codecall.json is recorded as trusted (you asked for it), so
commands run in the folder start its server without asking.

Nothing is written when one of these files exists already, unless --force is given.

Options:
  --force   overwrite files that exist

Exit status: 0 written, 1 files exist (nothing written) or the folder cannot be written,
2 usage error.
`,
};
