/**
 * @module
 * `codecall serve`: name, summary and usage text, loaded without the command's implementation
 * (`codecall --help` and `codecall serve --help` read only this).
 */
import {
  DEFAULT_SERVE_HOST,
  DEFAULT_SERVE_MAX_CONCURRENT_RUNS,
  DEFAULT_SERVE_PORT,
} from '../../config/defaults.js';
import type { CommandHelp } from '../command.js';

/** Environment variable holding the bearer token of `codecall serve --http`. */
export const SERVE_TOKEN_ENV = 'CODECALL_SERVE_TOKEN';

/** `codecall serve --help`. */
export const serveHelp: CommandHelp = {
  name: 'serve',
  summary: 'Serve search_tools and execute_code as an MCP server (stdio or Streamable HTTP)',
  usage: `Usage: codecall serve [--config <path>] [--http [--host <addr>] [--port <n>] [--token <secret>]]

Serves codecall as an MCP server: search_tools (find tools, with their TypeScript declarations),
execute_code (run a script that calls them; only what it prints comes back), and the tools the
configuration opens to direct calls (allowedCallers "direct", deferLoading false).

Options:
  --config <path>            configuration file (default: ./codecall.json, then ./.mcp.json)
  --http                     serve Streamable HTTP at /mcp instead of stdio
  --host <addr>              interface to bind (default ${DEFAULT_SERVE_HOST}); anything but loopback
                             requires a bearer token
  --port <n>                 port (default ${DEFAULT_SERVE_PORT}; 0 picks a free one, printed on stderr)
  --token <secret>           require "Authorization: Bearer <secret>" (default: $${SERVE_TOKEN_ENV})
  --allow-origin <origin>    also accept this browser Origin (repeatable; loopback origins always pass)
  --max-concurrent-runs <n>  execute_code runs at once (default ${DEFAULT_SERVE_MAX_CONCURRENT_RUNS})
  --no-pass-through          expose only search_tools and execute_code
  --legacy-sse               with --http: also serve the legacy HTTP+SSE transport (GET /sse,
                             POST /messages) for clients older than Streamable HTTP
  --mcp-2026[=false]         answer MCP 2026-07-28 clients too (default on, serve.mcp2026; stateless
                             over --http, over stdio the opening message decides): needs
                             npm install @modelcontextprotocol/server; --mcp-2026=false (or
                             --no-mcp-2026) answers every client as 2025-11-25 (docs/mcp-2026.md)
  --redis <url>              with --http: keep jobs (/v1/jobs) on this Redis for \`codecall worker\`
                             processes, instead of running them in this process (see docs/jobs.md)
  --dashboard                with --http and a BullMQ queue: the @bull-board dashboard at /admin/queues
                             and the approvals page at /admin/approvals, behind the token (a browser
                             opens /admin/queues?token=<token> once)
  --trust                    start the servers of a configuration found in the working directory

Unset options come from the configuration's "serve" section (host, port, token, allowedOrigins,
maxConcurrentRuns, waitForServersMs; e.g. "token": "\${CODECALL_TOKEN}"), then the defaults above.
MCP servers connect in the background: clients get an answer at once and tools/list_changed as
servers join (serve.waitForServersMs waits for them up to a bound first). A call naming a tool of
a server still starting waits for it; search_tools waits up to serve.searchWaitForServersMs.
Scripts' store is per client (each HTTP session's own) unless "store": {"scope": "shared"}.

MCP revisions: 2025-11-25 and, with @modelcontextprotocol/server installed, 2026-07-28 (over --http
stateless, so nodes behind a load balancer are interchangeable; approvals through input_required;
resources, prompts and completion pass through as for 2025 clients). Every node needs the same
$CODECALL_REQUEST_STATE_KEY (32+ bytes) to resume a run another node paused on an approval, and
--redis (or a jobs connection) to share its journal (see docs/mcp-2026.md). A 2026 client that
declares the Tasks extension gets execute_code as a task on the jobs (tasks/get, tasks/update,
tasks/cancel; serve.taskTtlMs, serve.maxTasksPerClient).

Vendor endpoints (--http): POST /v1/messages (Anthropic) and /v1/responses (OpenAI) with programmatic
tool calling. A script paused on a client's tool resumes on any node with the same serve.vendorSecret
and a shared store: serve.vendorJournalDir, else the jobs backend's Redis or PostgreSQL
(jobs.connection, --redis), else memory (see docs/vendor-endpoints.md).

Register it in an MCP client as: {"command": "codecall", "args": ["serve", "--config", "/abs/codecall.json"]}
(after \`npm link\` or a global install of the packed tarball; see the README's install section).
Logs go to stderr. Stops on SIGINT/SIGTERM (or when the stdio client disconnects).
`,
};
