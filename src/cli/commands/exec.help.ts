/**
 * @module
 * `codecall exec`: name, summary and usage text, loaded without the command's implementation
 * (`codecall --help` and `codecall exec --help` read only this).
 */
import type { CommandHelp } from '../command.js';

/** `codecall exec --help`. */
export const execHelp: CommandHelp = {
  name: 'exec',
  summary: 'Run a JS/TS script in the sandbox against the configured MCP servers',
  usage: `Usage: codecall exec <file | -> [--config <path>] [--json] [--quiet] [--approve <tool | all>]
                     [--journal <file> | --resume <file> [--repeat-in-doubt]]

Runs a JavaScript or TypeScript script in the sandbox against the configured MCP servers.
Tools are async functions: await tools.<server>.<tool>(args), or callTool("server.tool", args).
Only what the script prints comes back.

Options:
  --config <path>   configuration file (default: ./codecall.json, then ./.mcp.json)
  --json            print one JSON object: status, stdout, stderr, error, toolCalls, stats
  --quiet           no progress on stderr. When stderr is a terminal, each tool call that
                    finishes is reported there while the script runs ("codecall exec:
                    ✓ server.tool · 1.2 s", calls close together counted into one line);
                    when it is not (a pipe, a file, CI), nothing is, with or without --quiet
  --journal <file>  record every tool call and its result in <file> (JSON lines, fsynced
                    before the script sees the result), so an interrupted run can be resumed
  --resume <file>   re-run the script of that journal: calls it recorded are answered from it
                    without calling their servers, later calls run and are appended; stops with
                    REPLAY_DIVERGED if the script makes other calls than the journaled run.
                    One process uses a journal at a time (<file>.lock names it): another is
                    refused with JOURNAL_LOCKED; a lock left by a killed process is taken over
  --repeat-in-doubt with --resume: call again a tool whose call was in flight when the run
                    stopped (it may have happened); without it only tools annotated
                    idempotentHint or readOnlyHint are, and others stop with REPLAY_IN_DOUBT
  --approve <tool>  approve calls of server.tool that need approval (requireApproval) without
                    asking; repeatable; "all" approves every call. Without it, a terminal is asked
                    (y/N on stderr) and without a terminal such calls are denied (APPROVAL_DENIED)

Upstream questions: when an MCP server asks for input during a call (an elicitation form: a
2026-07-28 server's input_required, a 2025-11-25 server's elicitation/create), a terminal is
asked on stderr ([a]nswer, [d]ecline or [c]ancel, then one line per field: text, number, y/n,
or a choice by number; an empty line takes the default). Without a terminal the call fails
with a message saying so; run the command in a terminal, or use an MCP client (codecall serve).

Exit status: 0 the script succeeded, 1 it failed or could not be replayed (the reason on
stderr), 2 usage or configuration error, 130 interrupted by SIGINT (Ctrl-C), 143 by SIGTERM
(servers and sandboxes are closed first; a second signal exits at once).

Each run's tool calls are recorded in the usage history that ranks search (codecall graph).
`,
};
