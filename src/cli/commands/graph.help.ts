/**
 * @module
 * `codecall graph`: name, summary and usage text, loaded without the command's implementation
 * (`codecall --help` and `codecall graph --help` read only this).
 */
import type { CommandHelp } from '../command.js';

/** Edges printed when `--limit` is not given (the strongest by count). */
export const DEFAULT_GRAPH_EDGE_LIMIT = 500;

/** `codecall graph --help`. */
export const graphHelp: CommandHelp = {
  name: 'graph',
  summary: 'Show the tool graph learned from usage (text, mermaid, dot, svg or json)',
  usage: `Usage: codecall graph [--format text|mermaid|dot|svg|json] [--out <file>] [--min-count N]
                     [--inferred] [--limit N] [--config <path>] [--history <path>]

Shows what tool search learned from past runs: an edge A → B counts the runs in which B was
called right after A; its probability is count / (all transitions out of A), and its weight is
what search uses (shrunk when evidence is thin). Reads the usage history only; --inferred also
starts the configured servers to add the edges their schemas imply (cold start).

Options:
  --format <f>       text (default), mermaid, dot (Graphviz's language), svg (a picture, drawn
                     without a system Graphviz: needs \`npm install @viz-js/viz\`) or json
  --out <file>       write to <file> instead of standard output (says where on stderr)
  --min-count <n>    leave out observed edges seen in fewer runs (default 1)
  --inferred         include edges inferred from the tools' schemas (starts the servers)
  --limit <n>        print at most n edges, strongest first (default ${DEFAULT_GRAPH_EDGE_LIMIT})
  --config <path>    configuration file (default: ./codecall.json, then ./.mcp.json)
  --history <path>   usage history store (default: the configuration's history.path)

Examples:
  codecall graph --format mermaid --min-count 3 > graph.mmd
  codecall graph --format svg --out graph.svg
  codecall graph --format dot | dot -Tpng > graph.png    (needs Graphviz installed)
`,
};
