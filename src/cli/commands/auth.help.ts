/**
 * @module
 * `codecall auth`: name, summary and usage text, loaded without the command's implementation.
 */
import type { CommandHelp } from '../command.js';

/** `codecall auth --help`. */
export const authHelp: CommandHelp = {
  name: 'auth',
  summary: 'Log in to, inspect or forget the OAuth tokens of upstream MCP servers',
  usage: `Usage: codecall auth login <server> [--config <path>] [--timeout <ms>]
       codecall auth status [<server>] [--config <path>] [--json]
       codecall auth logout <server> [--config <path>]

For remote servers whose entry has an "oauth" section (mcpServers.<name>.oauth, see
docs/upstream-auth.md). Tokens are kept in the state folder ($CODECALL_STATE_DIR, else
$XDG_STATE_HOME/codecall, else ~/.local/state/codecall), under oauth/, one file per server, mode
0600; \`run\`, \`exec\`, \`serve\` and \`worker\` use and refresh them without asking anyone.

  login    the authorization_code grant: prints the authorization URL, listens on the loopback
           redirect (oauth.redirectUrl, default http://127.0.0.1:<free port>/callback), and stores
           the tokens once the browser comes back. A server that already accepts the stored
           token (or a client_credentials server, which needs no person) says so.
  status   per server: grant, whether a token is stored, when it was saved and expires, whether
           it can be refreshed. Never prints a token or a secret.
  logout   deletes the server's token file (tokens, client registration).

Options:
  --config <path>   configuration file (default: ./codecall.json, then ./.mcp.json)
  --timeout <ms>    how long login waits for the redirect (default 300000)
  --json            status as JSON

Exit status: 0 done, 1 the login failed, 2 usage or configuration error.
`,
};
