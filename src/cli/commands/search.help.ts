/**
 * @module
 * `codecall search`: name, summary and usage text, loaded without the command's implementation
 * (`codecall --help` and `codecall search --help` read only this).
 */
import type { CommandHelp } from '../command.js';

/** Hits shown when `--limit` is not given and the configuration sets no `search.limit`. */
export const DEFAULT_CLI_SEARCH_LIMIT = 10;

/** `codecall search --help`. */
export const searchHelp: CommandHelp = {
  name: 'search',
  summary: 'Rank the configured tools for a query (BM25 + the learned tool graph, or --regex)',
  usage: `Usage: codecall search "<query>" [--limit N] [--regex] [--json] [--config <path>] [--history <path>]

Ranks the tools of the configured MCP servers for a query, the way the model's search_tools does:
BM25 over names, servers, descriptions and parameters, plus the tool graph learned from past runs
(usage history), with the reasons behind each hit and the most likely call chains.

The query can be a sentence ("total travel expenses per team member"), keywords, or a tool name.

Options:
  --limit <n>        hits to show (default: the configuration's search.limit, else ${DEFAULT_CLI_SEARCH_LIMIT})
  --regex            read the query as a regular expression (Python re syntax; (?i) for
                     case-insensitive) tested against names, descriptions and argument names
  --json             print { hits, chains, truncated } as JSON
  --config <path>    configuration file (default: ./codecall.json, then ./.mcp.json)
  --history <path>   usage history store (default: the configuration's history.path,
                     .codecall/history.sqlite next to the configuration file)

Exit status: 0 done, 1 some server failed to start (results cover the others), 2 usage,
configuration or query error.
`,
};
